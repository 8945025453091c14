use contract::api::ControlPlaneSpecCommon;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::AKSClusterSpec;

/// The AKS managed cluster itself: version, endpoint access, SKU tier, network plugin and
/// policy, Microsoft Entra ID and Azure RBAC, Key Vault encryption of Secrets, OIDC issuer and
/// workload identity. Publishes the endpoint in `spec.controlPlaneEndpoint` and the kubeconfig
/// Secrets `<cluster>-kubeconfig` (a Microsoft Entra token for AKS's server application,
/// refreshed before it expires; never the static admin credential) and
/// `<cluster>-user-kubeconfig` (`kubelogin`).
///
/// AKS cannot run a cluster without a System node pool, so the control plane owns one
/// (`aks.systemPool`, named `system` unless `aks.systemPool.name` says otherwise, created
/// tainted `CriticalAddonsOnly` so workloads land on the AKSMachinePools' User pools) and keeps
/// its version with the control plane's.
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::AKS_CLUSTER.cel_validation("cloudName", "spec.cloudName"))]
pub struct AKSControlPlaneSpec {
    /// Version, endpoint, access, encryption, OIDC issuer, cloud name, as on every cloud.
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
    /// Only for a Cluster without an AKSCluster (bring-your-own network): the subscription,
    /// resource group, location, network, identity and tags, as an AKSCluster's spec. Ignored
    /// when the Cluster has an AKSCluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<AKSClusterSpec>,
    /// What only AKS has.
    #[serde(default)]
    pub aks: AKSControlPlaneOptions,
}

/// The AKS pricing tiers.
#[derive(
    schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum SkuTier {
    /// No uptime SLA.
    #[default]
    Free,
    /// The uptime SLA.
    Standard,
    /// Standard with long-term support.
    Premium,
}

/// AKS network plugins.
#[derive(
    schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
#[serde(rename_all = "lowercase")]
pub enum NetworkPlugin {
    /// Azure CNI (overlay: Pods get addresses from a private range, not the subnet).
    #[default]
    Azure,
    /// kubenet.
    Kubenet,
    /// No CNI (bring your own).
    None,
}

/// AKS network policy engines.
#[derive(schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NetworkPolicy {
    /// Azure Network Policy Manager.
    Azure,
    /// Calico.
    Calico,
    /// Cilium (with the Cilium dataplane).
    Cilium,
}

/// AKS-only control-plane options.
#[provider_runtime::block]
pub struct AKSControlPlaneOptions {
    /// The pricing tier: Free (default), Standard (uptime SLA) or Premium.
    #[serde(default)]
    pub sku: SkuTier,
    /// The network plugin (default azure, as overlay). Immutable.
    #[serde(default)]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.networkPlugin is immutable on AKS"))]
    pub network_plugin: NetworkPlugin,
    /// The network policy engine (default none). Immutable here.
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.networkPolicy is immutable on AKS here"))]
    pub network_policy: Option<NetworkPolicy>,
    /// Authorize Kubernetes API calls with Azure RBAC role assignments (default true); when
    /// false, Kubernetes RBAC bound to Entra users and groups decides.
    #[serde(default = "yes", rename = "azureRBAC")]
    pub azure_rbac: bool,
    /// Entra groups made cluster admins (their object ids).
    #[serde(
        default,
        rename = "adminGroupObjectIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 32), inner(length(min = 36, max = 36)))]
    pub admin_group_object_ids: Vec<String>,
    /// Keep the cluster's static local accounts (`listClusterAdminCredential`). Default false:
    /// only Entra identities reach the API server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local_accounts: bool,
    /// The DNS prefix of the API server's name (default derived from the cluster's name).
    /// Immutable.
    #[schemars(length(min = 1, max = 54))]
    #[x_kube(validation = Rule::new("self.matches('^[a-zA-Z0-9]$|^[a-zA-Z0-9][a-zA-Z0-9-]{0,52}[a-zA-Z0-9]$')").message("spec.aks.dnsPrefix must be 1 to 54 letters, digits and hyphens, starting and ending with a letter or digit"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.dnsPrefix is immutable on AKS"))]
    pub dns_prefix: Option<String>,
    /// The System node pool AKS needs.
    #[serde(default)]
    pub system_pool: SystemPool,
    /// A JSON merge patch applied to the managed cluster body of AKS PUT requests that create
    /// it, for features no typed field covers yet (e.g. `{"properties": {"addonProfiles":
    /// {"azurepolicy": {"enabled": true}}}}`). The user's responsibility; every field the
    /// provider itself sends wins. status.requestOverrides shows when it was applied.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

fn yes() -> bool {
    true
}

/// The control plane's System node pool.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = contract::naming::AKS_AGENT_POOL.cel_validation("name", "spec.aks.systemPool.name"))]
pub struct SystemPool {
    /// The agent pool's name (default `system`): name an adopted cluster's existing System
    /// pool here. No AKSMachinePool may manage this pool. Immutable.
    #[serde(default = "default_system_name")]
    #[schemars(length(min = 1, max = 12))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.systemPool.name is immutable"))]
    pub name: String,
    /// VM size (at least 2 vCPUs and 4 GiB). Immutable.
    #[serde(default = "default_system_size")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.systemPool.vmSize is immutable on AKS"))]
    pub vm_size: String,
    /// Node count, 1 to 100.
    #[serde(default = "default_system_count")]
    #[schemars(range(min = 1, max = 100))]
    pub count: i32,
}

fn default_system_name() -> String {
    "system".into()
}

fn default_system_size() -> String {
    "Standard_D2s_v5".into()
}

fn default_system_count() -> i32 {
    1
}

impl Default for SystemPool {
    fn default() -> Self {
        Self {
            name: default_system_name(),
            vm_size: default_system_size(),
            count: default_system_count(),
        }
    }
}

/// What AKS reports beyond the shared status.
#[provider_runtime::block]
pub struct AKSControlPlaneObserved {
    /// The cluster's location.
    pub location: String,
    /// The resource group AKS keeps the nodes' resources in.
    pub node_resource_group: Option<String>,
    /// The API server's name.
    pub fqdn: Option<String>,
    /// AKS's full version of the control plane, e.g. 1.33.3.
    pub kubernetes_version: Option<String>,
    /// AKS's provisioningState (Succeeded, Updating, …).
    pub provisioning_state: Option<String>,
    /// The System pool's version.
    pub system_pool_version: Option<String>,
}
