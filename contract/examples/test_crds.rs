//! Prints CRDs that compose every shared block the way a provider does (`#[serde(flatten)]`),
//! stamped with the contract labels, as one multi-document YAML stream.
//!
//! Apply them to a real kube-apiserver to check that the schemas are accepted (structural,
//! within the CEL cost budget) and that the CEL rules reject what they should:
//! `cargo run -p contract --example test_crds | kubectl apply -f -`.

use contract::api::{
    ClusterSpecCommon, ControlPlaneSpecCommon, ControlPlaneStatusCommon, InfraClusterStatusCommon,
    MachinePoolSpecCommon, MachinePoolStatusCommon,
};
use contract::crd::stamp_contract_labels;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cloud's own control plane block, as a provider would add it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct TestCloudBlock {
    /// A cloud-only setting.
    #[schemars(length(max = 64))]
    pub role: Option<String>,
}

/// Test control plane.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "controlplane.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "TestControlPlane",
    namespaced,
    status = "TestControlPlaneStatus"
)]
pub struct TestControlPlaneSpec {
    #[serde(flatten)]
    pub common: ControlPlaneSpecCommon,
    /// The cloud's block.
    pub test: Option<TestCloudBlock>,
}

/// Test control plane status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct TestControlPlaneStatus {
    #[serde(flatten)]
    pub common: ControlPlaneStatusCommon,
}

/// Test machine pool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "TestMachinePool",
    namespaced,
    status = "TestMachinePoolStatus"
)]
pub struct TestMachinePoolSpec {
    #[serde(flatten)]
    pub common: MachinePoolSpecCommon,
}

/// Test machine pool status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct TestMachinePoolStatus {
    #[serde(flatten)]
    pub common: MachinePoolStatusCommon,
}

/// Test cluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "TestCluster",
    namespaced,
    status = "TestClusterStatus"
)]
pub struct TestClusterSpec {
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
}

/// Test cluster status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
pub struct TestClusterStatus {
    #[serde(flatten)]
    pub common: InfraClusterStatusCommon,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for mut crd in [
        TestControlPlane::crd(),
        TestMachinePool::crd(),
        TestCluster::crd(),
    ] {
        stamp_contract_labels(&mut crd);
        println!("---\n{}", serde_saphyr::to_string(&crd)?);
    }
    Ok(())
}
