use contract::api::ControlPlaneSpecCommon;
use serde::{Deserialize, Serialize};

use super::GKEClusterSpec;

/// The GKE cluster itself: version, endpoint access, logging, encryption, workload identity,
/// release channel, private nodes. Publishes the endpoint in `spec.controlPlaneEndpoint` and the
/// kubeconfig Secrets `<cluster>-kubeconfig` (a Google OAuth access token, refreshed before it
/// expires) and `<cluster>-user-kubeconfig` (`gke-gcloud-auth-plugin`, one context per endpoint:
/// public, private and DNS).
///
/// The cluster is regional (its control plane spans the region's zones; its nodes run in the
/// GKECluster's zones). GKE cannot create a cluster without nodes, so it is created with a
/// one-node pool named `capi-bootstrap`, removed as soon as the cluster runs: the cluster's
/// nodes are its GKEMachinePools'.
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::GKE_CLUSTER.cel_validation("cloudName", "spec.cloudName"))]
pub struct GKEControlPlaneSpec {
    /// Version, endpoint, access, logging, encryption, OIDC issuer, cloud name, as on every
    /// cloud.
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
    /// Only for a Cluster without a GKECluster (bring-your-own network): the project, region,
    /// network, identity and labels, as a GKECluster's spec. Ignored when the Cluster has a
    /// GKECluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GKEClusterSpec>,
    /// What only GKE has.
    #[serde(default)]
    pub gke: GKEControlPlaneOptions,
}

/// GKE release channels.
#[derive(schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseChannel {
    /// Newest versions first.
    #[serde(rename = "Rapid")]
    Rapid,
    /// The default channel.
    #[serde(rename = "Regular")]
    Regular,
    /// Versions proven longest.
    #[serde(rename = "Stable")]
    Stable,
    /// Long-term support.
    #[serde(rename = "Extended")]
    Extended,
}

/// GKE-only control-plane options.
#[provider_runtime::block]
pub struct GKEControlPlaneOptions {
    /// Enrol the cluster in a release channel. GKE then upgrades it on its own schedule within
    /// the channel's versions; spec.version must be one the channel offers. Default: no channel
    /// (Cluster API decides every upgrade).
    pub release_channel: Option<ReleaseChannel>,
    /// The workload identity pool, when spec.oidcIssuer.enabled: `<project>.svc.id.goog`
    /// (default, the cluster's project) or a fleet host project's.
    #[schemars(length(min = 14, max = 63))]
    #[x_kube(validation = Rule::new("self.endsWith('.svc.id.goog')").message("spec.gke.workloadIdentityPool must be <project>.svc.id.goog"))]
    pub workload_identity_pool: Option<String>,
    /// More authorized networks of the control plane, with names (they apply to the private
    /// endpoint too); spec.endpointAccess.publicCIDRs are added unnamed.
    #[schemars(length(max = 50))]
    pub authorized_networks: Vec<AuthorizedNetwork>,
    /// Nodes get internal IP addresses only (they reach the internet through the GKECluster's
    /// Cloud NAT). Immutable on GKE.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.gke.privateNodes is immutable on GKE"))]
    pub private_nodes: bool,
    /// Whether the DNS-based endpoint accepts traffic from outside the cluster's network.
    /// Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dns_endpoint_external_traffic: bool,
    /// A JSON merge patch applied to the Cluster body of GKE CreateCluster requests, for
    /// features no typed field covers yet (e.g. `{"addonsConfig": {"gcsFuseCsiDriverConfig":
    /// {"enabled": true}}}`). The user's responsibility; every field the provider itself sends
    /// wins. Applied when the cluster is created; status.requestOverrides shows when.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

/// One authorized network.
#[provider_runtime::block]
pub struct AuthorizedNetwork {
    /// The block, e.g. 10.10.0.0/16.
    #[serde(rename = "cidrBlock")]
    #[schemars(length(max = 43))]
    #[x_kube(validation = Rule::new("isCIDR(self)").message("spec.gke.authorizedNetworks[].cidrBlock must be a CIDR block"))]
    pub cidr_block: String,
    /// A name shown in the console.
    #[schemars(length(max = 100))]
    pub display_name: Option<String>,
}

/// What GKE reports beyond the shared status.
#[provider_runtime::block]
pub struct GKEControlPlaneObserved {
    /// The cluster's location.
    pub location: String,
    /// GKE's full version of the control plane, e.g. 1.33.5-gke.1201000.
    pub master_version: Option<String>,
    /// GKE's status word (RUNNING, RECONCILING, …).
    pub state: Option<String>,
}
