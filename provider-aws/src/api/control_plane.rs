use contract::api::ControlPlaneSpecCommon;
use serde::{Deserialize, Serialize};

use super::EKSClusterSpec;

/// The EKS cluster itself: version, endpoint access, logging, encryption, add-ons, OIDC issuer,
/// access entries. Publishes the endpoint in `spec.controlPlaneEndpoint` and the kubeconfig
/// Secrets `<cluster>-kubeconfig` and `<cluster>-user-kubeconfig`.
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::EKS_CLUSTER.cel_validation("cloudName", "spec.cloudName"))]
pub struct EKSControlPlaneSpec {
    /// Version, endpoint, access, logging, encryption, add-ons, OIDC issuer, cloud name, as on
    /// every cloud.
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
    /// Only for a Cluster without an EKSCluster (bring-your-own network): the region, the
    /// network ids (spec.infrastructure.network.subnetIDs, at least two zones), identity and
    /// tags. Ignored when the Cluster has an EKSCluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<EKSClusterSpec>,
    /// What only EKS has.
    pub eks: EKSControlPlaneOptions,
}

/// EKS-only control-plane options.
#[provider_runtime::block]
pub struct EKSControlPlaneOptions {
    /// The IAM role EKS uses to manage the cluster (`arn:aws:iam::<account>:role/<name>`).
    /// Required to create a cluster; a cluster being adopted keeps the role it has, so it may
    /// be left out then.
    #[serde(rename = "roleARN")]
    #[schemars(length(min = 20, max = 2048))]
    #[x_kube(validation = kube::core::Rule::new("self.startsWith('arn:')").message("spec.eks.roleARN must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/eks-cluster"))]
    pub role_arn: Option<String>,
    /// Who may call the cluster's API, as EKS access entries.
    pub access: Option<EKSAccess>,
    /// The service CIDR of the cluster (EKS default 10.100.0.0/16 or 172.20.0.0/16). Immutable.
    #[serde(
        rename = "serviceCIDR",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 43))]
    #[x_kube(validation = kube::core::Rule::new("isCIDR(self)").message("spec.eks.serviceCIDR must be a CIDR block such as 10.100.0.0/16"))]
    #[x_kube(validation = kube::core::Rule::new("self == oldSelf").message("spec.eks.serviceCIDR is immutable"))]
    pub service_cidr: Option<String>,
    /// Additional security groups for the control plane's network interfaces.
    #[serde(
        rename = "securityGroupIDs",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 5), inner(length(min = 1, max = 64)))]
    pub security_group_ids: Vec<String>,
    /// A JSON merge patch applied to the body of EKS CreateCluster requests, for features no
    /// typed field covers yet (e.g. `{"upgradePolicy": {"supportType": "STANDARD"}}`). The
    /// user's responsibility; every field the provider itself sends wins. Applied when the
    /// cluster is created; status.requestOverrides shows when.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

/// EKS access configuration.
#[provider_runtime::block]
pub struct EKSAccess {
    /// API (access entries only) or API_AND_CONFIG_MAP. Default API.
    pub authentication_mode: Option<AuthenticationMode>,
    /// Make the identity that creates the cluster its administrator. Default true; the
    /// provider's kubeconfig uses that identity. Immutable after creation in EKS.
    pub bootstrap_cluster_creator_admin: Option<bool>,
    /// Access entries: IAM principals and what they may do.
    #[schemars(length(max = 64), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["principalARN"]))]
    pub entries: Vec<AccessEntry>,
}

/// EKS authentication modes.
#[derive(schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthenticationMode {
    /// Access entries only.
    #[serde(rename = "API")]
    Api,
    /// Access entries and the aws-auth ConfigMap.
    #[serde(rename = "API_AND_CONFIG_MAP")]
    ApiAndConfigMap,
}

/// One access entry.
#[provider_runtime::block]
pub struct AccessEntry {
    /// The IAM user or role ARN.
    #[serde(rename = "principalARN")]
    #[schemars(length(min = 20, max = 2048))]
    pub principal_arn: String,
    /// Kubernetes groups the principal is in.
    #[schemars(length(max = 32), inner(length(min = 1, max = 256)))]
    pub kubernetes_groups: Vec<String>,
    /// Kubernetes user name; default from the ARN.
    #[schemars(length(min = 1, max = 256))]
    pub username: Option<String>,
    /// EKS access policy ARNs associated cluster-wide (e.g.
    /// arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy).
    #[serde(rename = "policyARNs", default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16), inner(length(min = 1, max = 2048)))]
    pub policy_arns: Vec<String>,
}

/// What EKS reports of a cluster beyond the shared status.
#[provider_runtime::block]
pub struct EKSControlPlaneObserved {
    /// EKS's platform version (eks.N).
    pub platform_version: Option<String>,
    /// The cluster's OIDC issuer URL.
    #[serde(
        rename = "oidcIssuerURL",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub oidc_issuer_url: Option<String>,
}
