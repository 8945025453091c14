//! The ARM answers the provider reads, as typed shapes: one struct per answer (or part of one),
//! read with [`provider_runtime::read_answer`] under the operation's ARM name
//! (`ManagedClusters_Get`, `AgentPools_Get`, …).
//!
//! A field is required here when ARM always returns it and a decision rests on it: an answer
//! without it is refused with the field's path, never read as a default. Every other field is an
//! `Option`, and the code reading it says what its absence means. Fields the provider does not
//! read are not modelled and are ignored, so new fields ARM adds change nothing.
//!
//! Microsoft's published examples of these operations are held under
//! `provider-azure/tests/rest-examples/`, and `tests/rest_examples.rs` reads each one through
//! these types.

use std::collections::BTreeMap;

use provider_runtime::CloudError;
use serde::Deserialize;

/// Resource tags, as ARM answers them (`None` when the resource has none).
pub type Tags = Option<BTreeMap<String, String>>;

/// The tags of a resource, an absent set read as none.
pub fn tags(tags: &Tags) -> BTreeMap<String, String> {
    tags.clone().unwrap_or_default()
}

/// The refusal of an answer that lacks `field` where the provider needs it.
pub fn lacking(operation: &str, field: &str) -> CloudError {
    CloudError::Transient(format!("{operation}: the answer has no `{field}`"))
}

/// One page of a list (`value`, and `nextLink` while more follow).
#[derive(Debug, Clone, Deserialize)]
pub struct Page<T> {
    /// The items of this page.
    pub value: Vec<T>,
    /// The next page's URL; absent, null or empty on the last page.
    #[serde(rename = "nextLink")]
    pub next_link: Option<String>,
}

/// A resource read for its ARM id only (the answer of a PUT that created it).
#[derive(Debug, Clone, Deserialize)]
pub struct Identified {
    /// The ARM id.
    pub id: String,
}

/// A resource read for its name only (an item of `ManagedClusters_ListByResourceGroup`).
#[derive(Debug, Clone, Deserialize)]
pub struct Named {
    /// The resource's name.
    pub name: String,
}

/// ARM's error answer: `{"error": {"code", "message"}}`. Read leniently: a body of another
/// shape (a proxy's page) is explained by its HTTP status instead.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ErrorAnswer {
    /// The error.
    pub error: Option<ErrorDetail>,
}

/// An error's code and message.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ErrorDetail {
    /// ARM's error code.
    pub code: Option<String>,
    /// What ARM says.
    pub message: Option<String>,
}

/// An `Azure-AsyncOperation` status resource (`Operations_Get`).
#[derive(Debug, Clone, Deserialize)]
pub struct OperationStatus {
    /// `InProgress`, `Succeeded`, `Failed`, `Canceled` (or a service's own running state).
    pub status: String,
    /// Why it failed, when it did.
    pub error: Option<ErrorDetail>,
}

/// A managed cluster (`ManagedClusters_Get`).
#[derive(Debug, Clone, Deserialize)]
pub struct ManagedCluster {
    /// The ARM id.
    pub id: String,
    /// The region.
    pub location: String,
    /// The ETag a change is guarded by; absent means the change is sent unguarded.
    #[serde(rename = "eTag")]
    pub etag: Option<String>,
    /// The tags.
    pub tags: Tags,
    /// The SKU; absent means AKS's default tier, Free.
    pub sku: Option<ClusterSku>,
    /// The properties.
    pub properties: ClusterProperties,
}

/// A managed cluster's SKU.
#[derive(Debug, Clone, Deserialize)]
pub struct ClusterSku {
    /// `Free`, `Standard` or `Premium`; absent means Free.
    pub tier: Option<String>,
}

/// The AKS tier when a cluster's answer names none.
pub const DEFAULT_TIER: &str = "Free";

/// A managed cluster's properties, the ones the provider reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProperties {
    /// `Creating`, `Succeeded`, `Updating`, `Deleting`, `Failed`, ….
    pub provisioning_state: String,
    /// The full Kubernetes version running.
    pub current_kubernetes_version: String,
    /// The resource group AKS keeps the nodes in.
    pub node_resource_group: String,
    /// The public API server name; absent for a private cluster without one.
    pub fqdn: Option<String>,
    /// The private API server name; absent for a public cluster.
    #[serde(rename = "privateFQDN")]
    pub private_fqdn: Option<String>,
    /// The agent pools.
    pub agent_pool_profiles: Vec<AgentPoolProfile>,
    /// The API server's reach; absent means public and open.
    pub api_server_access_profile: Option<ApiServerAccess>,
    /// Entra integration; absent means none.
    pub aad_profile: Option<AadProfile>,
    /// Local accounts off; absent means on.
    pub disable_local_accounts: Option<bool>,
    /// The OIDC issuer; absent means off.
    pub oidc_issuer_profile: Option<Enabled>,
    /// Security settings; absent means none on.
    pub security_profile: Option<SecurityProfile>,
}

/// An on/off setting (`{"enabled": …}`); absent means off.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Enabled {
    /// On.
    pub enabled: Option<bool>,
}

impl Enabled {
    /// On, an absent setting read as off.
    pub fn on(setting: Option<&Enabled>) -> bool {
        setting.and_then(|e| e.enabled).unwrap_or(false)
    }
}

/// The API server's reach.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiServerAccess {
    /// The ranges allowed to reach it; absent means any.
    #[serde(rename = "authorizedIPRanges")]
    pub authorized_ip_ranges: Option<Vec<String>>,
    /// Reachable only inside the network; absent means public.
    pub enable_private_cluster: Option<bool>,
}

/// Entra integration.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AadProfile {
    /// Azure RBAC for Kubernetes authorization; absent means off.
    #[serde(rename = "enableAzureRBAC")]
    pub enable_azure_rbac: Option<bool>,
    /// The cluster admins' groups; absent or null means none.
    #[serde(rename = "adminGroupObjectIDs")]
    pub admin_group_object_ids: Option<Vec<String>>,
}

/// Security settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityProfile {
    /// Workload identity; absent means off.
    pub workload_identity: Option<Enabled>,
    /// Secrets encrypted by a Key Vault key; absent means off.
    pub azure_key_vault_kms: Option<KeyVaultKms>,
}

/// Secrets encryption by a Key Vault key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyVaultKms {
    /// On; absent means off.
    pub enabled: Option<bool>,
    /// The key; ARM requires it while encryption is on.
    pub key_id: Option<String>,
}

/// One agent pool inside a managed cluster's answer (`agentPoolProfiles[]`).
#[derive(Debug, Clone, Deserialize)]
pub struct AgentPoolProfile {
    /// The pool's name.
    pub name: String,
    /// Its properties.
    #[serde(flatten)]
    pub properties: AgentPoolProperties,
}

/// An agent pool (`AgentPools_Get`).
#[derive(Debug, Clone, Deserialize)]
pub struct AgentPool {
    /// The ARM id.
    pub id: String,
    /// The ETag, when ARM gives it beside the properties.
    #[serde(rename = "eTag")]
    pub etag: Option<String>,
    /// The properties.
    pub properties: AgentPoolProperties,
}

impl AgentPool {
    /// The ETag a change is guarded by: the resource's, else the properties' (AKS answers it
    /// there); `None` when neither is given.
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref().or(self.properties.etag.as_deref())
    }
}

/// An agent pool's properties, the ones the provider reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentPoolProperties {
    /// `Creating`, `Succeeded`, `Updating`, `Deleting`, `Failed`, ….
    pub provisioning_state: String,
    /// How many nodes the pool has (or the autoscaler keeps).
    pub count: i32,
    /// The full Kubernetes version running; absent while AKS has not said it yet.
    pub current_orchestrator_version: Option<String>,
    /// `System` or `User`. Microsoft's own examples leave it out, so it is read where a decision
    /// needs it ([`AgentPoolProperties::mode`]), and refused there when absent.
    pub mode: Option<String>,
    /// The cluster autoscaler on; absent means off.
    pub enable_auto_scaling: Option<bool>,
    /// The autoscaler's floor; needed while it is on.
    pub min_count: Option<i32>,
    /// The autoscaler's ceiling; needed while it is on.
    pub max_count: Option<i32>,
    /// The nodes' labels; absent means none.
    pub node_labels: Option<BTreeMap<String, String>>,
    /// The nodes' taints; absent means none.
    pub node_taints: Option<Vec<String>>,
    /// How an upgrade rolls; absent means AKS's defaults.
    pub upgrade_settings: Option<UpgradeSettings>,
    /// The pool's tags.
    pub tags: Tags,
    /// The ETag, inside the properties.
    #[serde(rename = "eTag")]
    pub etag: Option<String>,
}

impl AgentPoolProperties {
    /// The autoscaler's `(minCount, maxCount)` while it is on, `None` while it is off.
    ///
    /// # Errors
    /// The autoscaler on without either bound: the field is named (`operation` is the call
    /// whose answer it is).
    pub fn autoscaling(&self, operation: &str) -> Result<Option<(i32, i32)>, CloudError> {
        if self.enable_auto_scaling != Some(true) {
            return Ok(None);
        }
        let min = self
            .min_count
            .ok_or_else(|| lacking(operation, "properties.minCount"))?;
        let max = self
            .max_count
            .ok_or_else(|| lacking(operation, "properties.maxCount"))?;
        Ok(Some((min, max)))
    }

    /// The pool's mode.
    ///
    /// # Errors
    /// No `mode` in the answer: the field is named.
    pub fn mode(&self, operation: &str) -> Result<&str, CloudError> {
        self.mode
            .as_deref()
            .ok_or_else(|| lacking(operation, "properties.mode"))
    }
}

/// How an agent pool's upgrade rolls.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeSettings {
    /// Extra nodes during an upgrade (`"1"`, `"33%"`).
    pub max_surge: Option<String>,
    /// Nodes that may be down during an upgrade.
    pub max_unavailable: Option<String>,
}

/// The credentials of a managed cluster (`ManagedClusters_ListClusterUserCredentials`).
#[derive(Debug, Clone, Deserialize)]
pub struct CredentialResults {
    /// The kubeconfigs.
    pub kubeconfigs: Vec<CredentialResult>,
}

/// One kubeconfig.
#[derive(Debug, Clone, Deserialize)]
pub struct CredentialResult {
    /// Its name.
    pub name: Option<String>,
    /// The kubeconfig, base64.
    pub value: String,
}

/// A kubeconfig inside a [`CredentialResult`], read for its first cluster's server and CA.
#[derive(Debug, Clone, Deserialize)]
pub struct Kubeconfig {
    /// The clusters it names.
    pub clusters: Vec<KubeconfigCluster>,
}

/// One named cluster of a kubeconfig.
#[derive(Debug, Clone, Deserialize)]
pub struct KubeconfigCluster {
    /// Where and how to reach it.
    pub cluster: KubeconfigServer,
}

/// A kubeconfig cluster's address and CA.
#[derive(Debug, Clone, Deserialize)]
pub struct KubeconfigServer {
    /// The API server's URL.
    pub server: String,
    /// Its CA, base64 PEM; absent when the system's roots are to be trusted.
    #[serde(rename = "certificate-authority-data")]
    pub certificate_authority_data: Option<String>,
}

/// A resource group (`ResourceGroups_Get`).
#[derive(Debug, Clone, Deserialize)]
pub struct ResourceGroup {
    /// The region.
    pub location: String,
    /// The tags.
    pub tags: Tags,
    /// The properties; absent means nothing is under way.
    pub properties: Option<ProvisioningOnly>,
}

impl ResourceGroup {
    /// Azure is deleting the group (an absent state is not a deletion).
    pub fn deleting(&self) -> bool {
        self.properties
            .as_ref()
            .and_then(|p| p.provisioning_state.as_deref())
            == Some("Deleting")
    }
}

/// Properties read for the provisioning state only.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningOnly {
    /// The provisioning state, when given.
    pub provisioning_state: Option<String>,
}

/// A virtual network (`VirtualNetworks_Get`).
#[derive(Debug, Clone, Deserialize)]
pub struct VirtualNetwork {
    /// The tags.
    pub tags: Tags,
    /// The properties.
    pub properties: VirtualNetworkProperties,
}

/// A virtual network's properties, the ones the provider reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualNetworkProperties {
    /// `Succeeded`, `Updating`, `Deleting`, `Failed`.
    pub provisioning_state: String,
    /// Its subnets; absent means none.
    pub subnets: Option<Vec<Subnet>>,
}

/// A subnet (`Subnets_Get`, and each of a virtual network's `subnets`).
#[derive(Debug, Clone, Deserialize)]
pub struct Subnet {
    /// The ARM id.
    pub id: String,
    /// The name.
    pub name: String,
    /// The properties; absent means none are known.
    pub properties: Option<SubnetProperties>,
}

impl Subnet {
    /// The subnet's block; `None` when the answer gives no single one (`addressPrefixes`).
    pub fn address_prefix(&self) -> Option<String> {
        self.properties.as_ref()?.address_prefix.clone()
    }
}

/// A subnet's properties, the ones the provider reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubnetProperties {
    /// Its block.
    pub address_prefix: Option<String>,
}

/// A virtual machine scale set (an item of `VirtualMachineScaleSets_List`).
#[derive(Debug, Clone, Deserialize)]
pub struct ScaleSet {
    /// The ARM id.
    pub id: String,
    /// The name; absent means the last segment of the id.
    pub name: Option<String>,
    /// The tags (AKS tags a pool's set `aks-managed-poolName`).
    pub tags: Tags,
}

impl ScaleSet {
    /// The set's name: as given, else the last segment of its id.
    pub fn name(&self) -> &str {
        match &self.name {
            Some(n) => n,
            None => self
                .id
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default(),
        }
    }

    /// The set belongs to the agent pool `pool`.
    pub fn of_pool(&self, pool: &str) -> bool {
        self.tags
            .as_ref()
            .and_then(|t| t.get("aks-managed-poolName"))
            .is_some_and(|p| p == pool)
    }
}

/// An instance of a scale set (an item of `VirtualMachineScaleSetVMs_List`).
#[derive(Debug, Clone, Deserialize)]
pub struct ScaleSetVm {
    /// The ARM id.
    pub id: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use provider_runtime::read_answer;
    use serde_json::json;

    use super::*;

    fn pool(props: serde_json::Value) -> serde_json::Value {
        json!({"id": "/p", "properties": props})
    }

    #[test]
    fn an_agent_pool_without_a_count_is_refused_naming_it() {
        let e = read_answer::<AgentPool>(
            "AgentPools_Get",
            pool(json!({"provisioningState": "Succeeded", "mode": "User"})),
        )
        .unwrap_err();
        assert!(e.to_string().contains("properties.count"), "{e}");
        assert!(e.to_string().contains("AgentPools_Get"), "{e}");
    }

    #[test]
    fn autoscaling_on_without_bounds_is_refused_naming_the_field() {
        let read = read_answer::<AgentPool>(
            "AgentPools_Get",
            pool(json!({"provisioningState": "Succeeded", "count": 2, "enableAutoScaling": true, "maxCount": 4})),
        )
        .unwrap();
        let e = read.properties.autoscaling("AgentPools_Get").unwrap_err();
        assert!(e.to_string().contains("properties.minCount"), "{e}");
        let off = read_answer::<AgentPool>(
            "AgentPools_Get",
            pool(json!({"provisioningState": "Succeeded", "count": 2})),
        )
        .unwrap();
        assert_eq!(off.properties.autoscaling("AgentPools_Get").unwrap(), None);
    }

    #[test]
    fn a_pool_without_a_mode_is_refused_where_the_mode_is_needed() {
        let read = read_answer::<AgentPool>(
            "AgentPools_Get",
            pool(json!({"provisioningState": "Succeeded", "count": 2})),
        )
        .unwrap();
        let e = read.properties.mode("AgentPools_Get").unwrap_err();
        assert!(e.to_string().contains("properties.mode"), "{e}");
    }

    #[test]
    fn a_cluster_s_pool_without_a_count_is_refused_naming_where() {
        let e = read_answer::<ManagedCluster>(
            "ManagedClusters_Get",
            json!({"id": "/c", "location": "eastus", "properties": {
                "provisioningState": "Succeeded", "currentKubernetesVersion": "1.33.2",
                "nodeResourceGroup": "MC_g", "agentPoolProfiles": [{"name": "system", "provisioningState": "Succeeded"}]
            }}),
        )
        .unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("agentPoolProfiles[0]") && said.contains("count"),
            "{said}"
        );
    }

    #[test]
    fn a_scale_set_without_a_name_is_named_by_its_id() {
        let set: ScaleSet = read_answer(
            "VirtualMachineScaleSets_List",
            json!({"id": "/s/virtualMachineScaleSets/aks-a-1-vmss", "tags": {"aks-managed-poolName": "a"}}),
        )
        .unwrap();
        assert_eq!(set.name(), "aks-a-1-vmss");
        assert!(set.of_pool("a") && !set.of_pool("b"));
    }
}
