use contract::api::ControlPlaneSpecCommon;
use serde::{Deserialize, Serialize};

use super::OKEClusterSpec;

/// The OKE cluster itself: version, endpoint access, cluster type, pod networking, Vault
/// encryption of Secrets, OIDC discovery. Publishes the endpoint in
/// `spec.controlPlaneEndpoint` (OKE serves on port 6443) and the kubeconfig Secrets
/// `<cluster>-kubeconfig` (a token of `oci ce cluster generate-token`'s form, signed with the
/// provider's API key and refreshed before OCI's five minutes run out) and
/// `<cluster>-user-kubeconfig` (`oci ce cluster generate-token`, one context per endpoint:
/// an OKE cluster always has a private endpoint in its endpoint subnet, and a public one when
/// `endpointAccess.public`).
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::OKE_CLUSTER.cel_validation("cloudName", "spec.cloudName"))]
pub struct OKEControlPlaneSpec {
    /// Version, endpoint, access, encryption, OIDC issuer, cloud name, as on every cloud.
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
    /// Only for a Cluster without an OKECluster (bring-your-own network): the compartment,
    /// region, network, identity and tags, as an OKECluster's spec. Ignored when the Cluster has
    /// an OKECluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<OKEClusterSpec>,
    /// What only OKE has.
    #[serde(default)]
    pub oke: OKEControlPlaneOptions,
}

/// OKE's cluster types.
#[derive(
    schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
#[serde(rename_all = "lowercase")]
pub enum ClusterType {
    /// `BASIC_CLUSTER`: no charge for the control plane, no enhanced features.
    #[default]
    Basic,
    /// `ENHANCED_CLUSTER`: virtual nodes, add-ons, OIDC discovery, a financially backed SLA.
    Enhanced,
}

/// How pods get their addresses.
#[derive(
    schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum CniType {
    /// `OCI_VCN_IP_NATIVE`: pods get addresses of the nodes' subnets (OKE's default).
    #[default]
    #[serde(rename = "vcnNative")]
    VcnNative,
    /// `FLANNEL_OVERLAY`: pods get addresses of `podsCIDR`, an overlay.
    #[serde(rename = "flannel")]
    Flannel,
}

/// OKE-only control-plane options.
#[provider_runtime::block]
pub struct OKEControlPlaneOptions {
    /// basic (default) or enhanced. A basic cluster can become enhanced, not back.
    #[serde(default)]
    #[x_kube(validation = Rule::new("self == oldSelf || self == 'enhanced'").message("spec.oke.clusterType can go from basic to enhanced only: OKE does not turn an enhanced cluster back into a basic one"))]
    pub cluster_type: ClusterType,
    /// How pods get addresses: vcnNative (default, OKE's VCN-native pod networking) or
    /// flannel. Immutable.
    #[serde(default)]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.cniType is immutable on OKE"))]
    pub cni_type: CniType,
    /// The pods' block of the flannel overlay (default 10.244.0.0/16). Immutable.
    #[serde(default, rename = "podsCIDR", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 43))]
    #[x_kube(validation = Rule::new("isCIDR(self)").message("spec.oke.podsCIDR must be a CIDR block such as 10.244.0.0/16"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.podsCIDR is immutable on OKE"))]
    pub pods_cidr: Option<String>,
    /// The Services' block (default 10.96.0.0/16). Immutable.
    #[serde(
        default,
        rename = "servicesCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 43))]
    #[x_kube(validation = Rule::new("isCIDR(self)").message("spec.oke.servicesCIDR must be a CIDR block such as 10.96.0.0/16"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.oke.servicesCIDR is immutable on OKE"))]
    pub services_cidr: Option<String>,
    /// A JSON merge patch applied to the body of the CreateCluster request, for features no
    /// typed field covers yet (e.g. `{"options": {"admissionControllerOptions":
    /// {"isPodSecurityPolicyEnabled": false}}}`). The user's responsibility; every field the
    /// provider itself sends wins. status.requestOverrides shows when it was applied.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

/// What OKE reports beyond the shared status.
#[provider_runtime::block]
pub struct OKEControlPlaneObserved {
    /// OKE's lifecycleState (ACTIVE, UPDATING, …).
    pub lifecycle_state: Option<String>,
    /// OKE's exact Kubernetes version, e.g. v1.33.1.
    pub kubernetes_version: Option<String>,
    /// The versions OKE offers to upgrade to.
    pub available_upgrades: Vec<String>,
    /// BASIC_CLUSTER or ENHANCED_CLUSTER.
    pub cluster_type: Option<String>,
    /// The VCN the cluster is in.
    #[serde(default, rename = "vcnID", skip_serializing_if = "Option::is_none")]
    pub vcn_id: Option<String>,
}
