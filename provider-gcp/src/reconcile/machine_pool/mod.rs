//! GKE's side of the InfraMachinePool role: the GKEMachinePool reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`GkeMachinePool`], whose steps delegate to the files below
//! (what the spec asks, `desired`; reading GKE, `observe`; the difference, `diff`; the calls
//! that change something, `act`). One GKE node pool, its nodes in one managed instance group
//! per zone. Everything else (the cluster lookup, the pool's name, observe order, the
//! MachinePool write-back, `spec.providerIDList`, plan, status, conditions, requeue, cleanup
//! policy) is the generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! GKE sizes a pool per zone: `MachinePool.spec.replicas` (and spec.scaling's bounds) are
//! divided by the pool's zones and must divide evenly. The pool's size is its instance groups'
//! target sizes (GKE's NodePool keeps only the count it was created with); its provider IDs are
//! the groups' managed instances, a deleting one included until it is gone.

mod act;
mod desired;
mod diff;
mod observe;

use std::sync::Arc;

use contract::api::{MachinePoolStatusCommon, RequestOverridesStatus};
use contract::idempotency::GKE_UNSENT_TOKEN;
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

use crate::api::{GKECluster, GKEControlPlane, GKEMachinePool, GKEMachinePoolStatus};
use crate::client;
use crate::scope::{self, Infra, Shared};

/// The value this provider writes into `cluster.x-k8s.io/replicas-managed-by`.
pub const REPLICAS_MANAGER: &str = "gke";

/// The service name cloud calls are counted under.
const SERVICE: &str = "container";

/// The GKEMachinePool reconciler: the generic one over GKE.
pub fn reconciler(shared: Arc<Shared>) -> MachinePoolReconciler<GkeMachinePool> {
    let profile = MachinePoolProfile {
        cloud: "GKE",
        noun: "node pool",
        // Names are unique in the whole project: derived from the namespace and the name.
        names: PoolNames::Namespaced(&naming::GKE_NODE_POOL),
        replicas_manager: REPLICAS_MANAGER,
        token_limits: &GKE_UNSENT_TOKEN,
        create_call: "CreateNodePool",
        poll: shared.poll_interval,
        rest: shared.rest_interval,
    };
    MachinePoolReconciler::new(scope::PROVIDER, profile, GkeMachinePool { shared })
}

/// GKE, for the generic InfraMachinePool reconciler.
pub struct GkeMachinePool {
    shared: Arc<Shared>,
}

/// One pass's clients, and where the pool's cluster is.
pub struct PoolClients {
    /// The project's clients, as the identity.
    gke: client::Clients,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// Where the cluster lives (project, region, zones).
    infra: Infra,
    /// `projects/<project>/locations/<region>`.
    parent: String,
    /// The GKE cluster's name.
    cluster: String,
}

impl PoolClients {
    /// `<parent>/clusters/<cluster>`.
    fn cluster_path(&self) -> String {
        format!("{}/clusters/{}", self.parent, self.cluster)
    }

    /// `<parent>/clusters/<cluster>/nodePools/<name>`.
    fn pool_path(&self, name: &str) -> String {
        format!("{}/nodePools/{name}", self.cluster_path())
    }
}

impl MachinePoolCloud for GkeMachinePool {
    type Object = GKEMachinePool;
    type ControlPlane = GKEControlPlane;
    type InfraCluster = GKECluster;
    type Infra = Infra;
    type Spec = PoolSpec;
    type Clients = PoolClients;
    type Detail = ObservedPool;
    type Change = PoolChange;
    type Status = GKEMachinePoolStatus;

    fn validate(&self, obj: &GKEMachinePool) -> Result<PoolSpec, ProviderError> {
        desired::validate(obj)
    }

    async fn connect(
        &self,
        obj: &GKEMachinePool,
        place: PoolPlace<GKEControlPlane, Infra>,
        reach: PoolReach<'_>,
    ) -> Result<PoolConnected<PoolClients>, ProviderError> {
        let namespace = obj.namespace().unwrap_or_default();
        let (cp, infra) = (place.control_plane, place.infra);
        let gke = scope::clients_for(&self.shared, reach.client, &namespace, &infra).await?;
        let cluster = scope::gke_cluster_name(&cp, reach.cluster_name);
        Ok(PoolConnected {
            pool: reach.pool.to_string(),
            cluster: cluster.clone(),
            tags: infra.additional_tags.clone(),
            clients: PoolClients {
                gke,
                calls: reach.calls.clone(),
                parent: format!("projects/{}/locations/{}", infra.project, infra.region),
                infra,
                cluster,
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
        pool: Option<&ManagedPool<ObservedPool>>,
    ) -> GKEMachinePoolStatus {
        observe::status(common, request_overrides, pool)
    }
}
