use contract::api::MachinePoolSpecCommon;
use serde::{Deserialize, Serialize};

/// One AKS agent pool (a virtual machine scale set in the cluster's node resource group). Count,
/// version and zones come from the owning MachinePool (its failure domains are availability
/// zones "1", "2", "3").
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::AKS_AGENT_POOL.cel_validation("cloudName", "spec.cloudName"))]
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
