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

use contract::idempotency::GKE_UNSENT_TOKEN;
use contract::naming;
use provider_runtime::machine_pool::{PoolConnected, PoolNames};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::PoolSpec;
pub use diff::PoolChange;
pub use observe::ObservedPool;

use crate::client;
use crate::scope::{self, Infra, Shared};

/// The service name cloud calls are counted under.
const SERVICE: &str = "container";

// Names are unique in the whole project: derived from the namespace and the name.
provider_runtime::machine_pool! {
    GKE, pool_block,
    tokens = GKE_UNSENT_TOKEN, create = "CreateNodePool",
    names = PoolNames::Namespaced(&naming::GKE_NODE_POOL), noun = "node pool"
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

/// Clients and names for one pass, for the pool in the cluster at `reach.place`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let infra = reach.place.infra;
    let gke = scope::clients_for(shared, reach.client, reach.namespace, &infra).await?;
    Ok(PoolConnected {
        pool: reach.pool.to_string(),
        cluster: reach.cluster.to_string(),
        tags: infra.additional_tags.clone(),
        clients: PoolClients {
            gke,
            calls: reach.calls.clone(),
            parent: format!("projects/{}/locations/{}", infra.project, infra.region),
            infra,
            cluster: reach.cluster.to_string(),
        },
    })
}
