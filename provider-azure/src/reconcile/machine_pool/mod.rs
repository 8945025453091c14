//! AKS's side of the InfraMachinePool role: the AKSMachinePool reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`AksMachinePool`], whose steps delegate to the files below.
//! One AKS agent pool, its nodes one virtual machine scale set in the cluster's node resource
//! group. Everything else (the cluster lookup, the pool's name, observe order, the MachinePool
//! write-back, `spec.providerIDList`, plan, status, conditions, requeue, cleanup policy) is the
//! generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! An agent pool is one ARM resource: every change is a PUT of its properties as last read with
//! the desired fields set, guarded by its `eTag`, answered with an `Azure-AsyncOperation` to
//! track. Its provider IDs are its scale set's instances (a `Deleting` one included until it is
//! gone), written as AKS's cloud provider writes them (the node resource group in lower case).
//!
//! - [`desired`]: the spec as AKS will be asked for it (pure);
//! - [`observe`]: reading the pool, an operation, and the nodes' provider IDs;
//! - [`diff`]: the first difference, one PUT of the pool (pure);
//! - [`act`]: the calls that change something.

pub mod act;
pub mod desired;
pub mod diff;
pub mod observe;

use std::sync::Arc;

use contract::conditions::Reason;
use contract::idempotency::ARM_UNSENT_TOKEN;
use contract::naming;
use provider_runtime::machine_pool::{PoolConnected, PoolNames};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::PoolSpec;
pub use diff::PoolChange;
pub use observe::ObservedPool;

use crate::client::Arm;
use crate::scope::{self, Infra, Shared};

// Names are unique within the cluster: derived from the object's name.
provider_runtime::machine_pool! {
    AKS,
    tokens = ARM_UNSENT_TOKEN, create = act::CREATE_CALL,
    names = PoolNames::Child(&naming::AKS_AGENT_POOL), noun = "agent pool"
}

/// One pass's ARM reach for a pool: the client for the cluster's subscription and identity,
/// where every call is counted, where the cluster lives, and its ARM path.
pub struct PoolClients {
    /// ARM, for the subscription, as the identity.
    arm: Arm,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// Where the cluster lives (resource group, zones, subnet).
    infra: Infra,
    /// `/subscriptions/…/managedClusters/<name>`.
    cluster_path: String,
}

impl PoolClients {
    /// `<cluster_path>/agentPools/<name>`.
    fn pool_path(&self, name: &str) -> String {
        format!("{}/agentPools/{name}", self.cluster_path)
    }
}

/// Clients and names for one pass, for the pool in the cluster at `reach.place`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let system = &reach.place.control_plane.spec.aks.system_pool.name;
    if reach.pool == system {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            format!(
                "agent pool {system} is the cluster's System pool, which the AKSControlPlane keeps (spec.aks.systemPool.name): an AKSMachinePool cannot manage it too; give this pool another spec.cloudName"
            ),
        ));
    }
    let infra = reach.place.infra;
    let arm = scope::arm_for(shared, reach.client, reach.namespace, &infra).await?;
    let cluster_path = format!(
        "{}/providers/Microsoft.ContainerService/managedClusters/{}",
        arm.group_path(&infra.resource_group),
        reach.cluster
    );
    Ok(PoolConnected {
        pool: reach.pool.to_string(),
        cluster: reach.cluster.to_string(),
        tags: infra.additional_tags.clone(),
        clients: PoolClients {
            arm,
            calls: reach.calls.clone(),
            infra,
            cluster_path,
        },
    })
}
