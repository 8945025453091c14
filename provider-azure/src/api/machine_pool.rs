use contract::api::MachinePoolSpecCommon;
use serde::{Deserialize, Serialize};

/// One AKS agent pool (a virtual machine scale set in the cluster's node resource group). Count,
/// version and zones come from the owning MachinePool (its failure domains are availability
/// zones "1", "2", "3").
#[provider_runtime::kind]
#[x_kube(
    validation = Rule::new("!has(self.subnetIDs) || size(self.subnetIDs) <= 1")
        .message("spec.subnetIDs takes one subnet on AKS (an agent pool's vnetSubnetID)"),
    validation = Rule::new("(has(self.subnetIDs) ? self.subnetIDs : []) == (has(oldSelf.subnetIDs) ? oldSelf.subnetIDs : [])")
        .message("spec.subnetIDs is immutable on AKS agent pools; create a new AKSMachinePool instead"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxSurge) || type(self.update.maxSurge) == int || self.update.maxSurge.matches('^[0-9]+%$')")
        .message("spec.update.maxSurge must be a number of nodes or a percentage such as 33% on AKS"),
    validation = Rule::new("!has(self.update) || !has(self.update.maxUnavailable) || type(self.update.maxUnavailable) == int || self.update.maxUnavailable.matches('^[0-9]+%$')")
        .message("spec.update.maxUnavailable must be a number of nodes or a percentage on AKS"),
    validation = Rule::new("(has(self.spot) && self.spot) == (has(oldSelf.spot) && oldSelf.spot)")
        .message("spec.spot is immutable on AKS (scaleSetPriority); create a new AKSMachinePool instead"),
    validation = Rule::new("has(self.diskSizeGB) == has(oldSelf.diskSizeGB) && (!has(self.diskSizeGB) || self.diskSizeGB == oldSelf.diskSizeGB)")
        .message("spec.diskSizeGB is immutable on AKS agent pools (osDiskSizeGB); create a new AKSMachinePool instead"),
    validation = Rule::new("!has(self.diskSizeGB) || (self.diskSizeGB >= 30 && self.diskSizeGB <= 2048)")
        .message("spec.diskSizeGB must be from 30 to 2048 on AKS"),
    validation = Rule::new("self.machineType == oldSelf.machineType")
        .message("spec.machineType is immutable on AKS agent pools (vmSize); create a new AKSMachinePool instead"),
    validation = Rule::new("!has(self.image) || self.image in ['Ubuntu', 'AzureLinux', 'Ubuntu2204', 'Ubuntu2404']")
        .message("spec.image is the AKS node OS SKU on AKS: Ubuntu, AzureLinux, Ubuntu2204 or Ubuntu2404"),
    validation = Rule::new("(has(self.image) ? self.image : '') == (has(oldSelf.image) ? oldSelf.image : '')")
        .message("spec.image is immutable on AKS agent pools (osSKU); create a new AKSMachinePool instead"),
    validation = contract::naming::AKS_AGENT_POOL.cel_validation("cloudName", "spec.cloudName"),
)]
pub struct AKSMachinePoolSpec {
    /// VM size, disk, OS SKU, labels, taints, scaling, spot, update, as on every cloud.
    #[serde(flatten)]
    pub common: MachinePoolSpecCommon,
    /// What only AKS has.
    #[serde(default)]
    pub aks: AKSMachinePoolOptions,
}

/// An agent pool's mode.
#[derive(
    schemars::JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum PoolMode {
    /// Runs workloads (default).
    #[default]
    User,
    /// May run AKS's system Pods too.
    System,
}

/// AKS-only agent-pool options.
#[provider_runtime::block]
pub struct AKSMachinePoolOptions {
    /// User (default) or System.
    #[serde(default)]
    pub mode: PoolMode,
    /// Pods per node (AKS default 250 with Azure CNI overlay). Immutable.
    #[schemars(range(min = 10, max = 250))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.aks.maxPods is immutable on AKS"))]
    pub max_pods: Option<i32>,
    /// A JSON merge patch applied to the agent pool body of AKS PUT requests that create it.
    /// The user's responsibility; fields the provider manages win.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}
