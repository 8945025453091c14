//! The three reconcilers, one per kind. Each observes the cloud, plans (pure), acts (at most one
//! cloud call that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use provider_runtime::{ProviderObject, Role};

use crate::api::{EKSCluster, EKSControlPlane, EKSMachinePool};

impl ProviderObject for EKSCluster {
    const ROLE: Role = Role::InfraCluster;
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.common.conditions.as_slice())
            .unwrap_or_default()
    }
}

impl ProviderObject for EKSControlPlane {
    const ROLE: Role = Role::ControlPlane;
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.common.conditions.as_slice())
            .unwrap_or_default()
    }
}

impl ProviderObject for EKSMachinePool {
    const ROLE: Role = Role::InfraMachinePool;
    fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.common.conditions.as_slice())
            .unwrap_or_default()
    }
}
