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

use contract::api::{MachinePoolStatusCommon, RequestOverridesStatus};
use contract::idempotency::ARM_UNSENT_TOKEN;
use contract::naming;
use contract::plan::CloudStep;
use kube::ResourceExt;
use provider_runtime::cluster_objects::PoolPlace;
use provider_runtime::control_plane::{Request, Started};
use provider_runtime::machine_pool::{
    MachinePoolCloud, MachinePoolProfile, MachinePoolReconciler, ManagedPool, PoolConnected,
    PoolLook, PoolNames, PoolObserved, PoolReach, PoolStep, PoolWant,
};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::PoolSpec;
pub use diff::PoolChange;
pub use observe::ObservedPool;

use crate::api::{AKSCluster, AKSControlPlane, AKSMachinePool, AKSMachinePoolStatus};
use crate::client::Arm;
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "aks";

/// The AKSMachinePool reconciler: the generic one over AKS.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<AksMachinePool> {
    let profile = MachinePoolProfile {
        cloud: "AKS",
        noun: "agent pool",
        // Names are unique within the cluster: derived from the object's name.
        names: PoolNames::Child(&naming::AKS_AGENT_POOL),
        replicas_manager: REPLICAS_MANAGER,
        token_limits: &ARM_UNSENT_TOKEN,
        create_call: act::CREATE_CALL,
        poll: shared.poll_interval,
        rest: shared.rest_interval,
    };
    MachinePoolReconciler::new(scope::PROVIDER, profile, AksMachinePool { shared })
}

/// AKS, for the generic InfraMachinePool reconciler.
pub struct AksMachinePool {
    shared: Arc<Shared>,
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

impl MachinePoolCloud for AksMachinePool {
    type Object = AKSMachinePool;
    type ControlPlane = AKSControlPlane;
    type InfraCluster = AKSCluster;
    type Infra = Infra;
    type Spec = PoolSpec;
    type Clients = PoolClients;
    type Detail = ObservedPool;
    type Change = PoolChange;
    type Status = AKSMachinePoolStatus;

    fn validate(&self, obj: &AKSMachinePool) -> Result<PoolSpec, ProviderError> {
        desired::validate(obj)
    }

    async fn connect(
        &self,
        obj: &AKSMachinePool,
        place: PoolPlace<AKSControlPlane, Infra>,
        reach: PoolReach<'_>,
    ) -> Result<PoolConnected<PoolClients>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let (cp, infra) = (place.control_plane, place.infra);
        let arm = scope::arm_for(&self.shared, reach.client, &namespace, &infra).await?;
        let cluster = scope::aks_cluster_name(&cp, reach.cluster_name);
        let cluster_path = format!(
            "{}/providers/Microsoft.ContainerService/managedClusters/{cluster}",
            arm.group_path(&infra.resource_group)
        );
        Ok(PoolConnected {
            pool: reach.pool.to_string(),
            cluster,
            tags: infra.additional_tags.clone(),
            clients: PoolClients {
                arm,
                calls: reach.calls.clone(),
                infra,
                cluster_path,
            },
        })
    }

    async fn observe(
        &self,
        at: &PoolConnected<PoolClients>,
        look: PoolLook<'_>,
    ) -> Result<PoolObserved<ObservedPool>, ProviderError> {
        observe::observe(at, look).await
    }

    fn diff(
        &self,
        want: &PoolWant<'_, PoolSpec>,
        pool: &ManagedPool<ObservedPool>,
    ) -> CloudStep<PoolChange> {
        diff::diff(&pool.detail, want.spec, want.scaling)
    }

    async fn act(
        &self,
        at: &PoolConnected<PoolClients>,
        step: PoolStep<'_, PoolSpec, PoolChange>,
        request: &Request,
    ) -> Result<Started<ManagedPool<ObservedPool>>, ProviderError> {
        act::act(at, step, request).await
    }

    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        _pool: Option<&ManagedPool<ObservedPool>>,
    ) -> AKSMachinePoolStatus {
        AKSMachinePoolStatus {
            common,
            observed_generation: None,
            request_overrides,
        }
    }
}
