//! OKE's side of the InfraMachinePool role: the OKEMachinePool reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`OkeMachinePool`], whose steps delegate to the files below
//! (what the spec asks, `desired`; reading OKE, `observe`; the difference, `diff`; the calls
//! that change something, `act`). One OKE managed node pool, its nodes compute instances placed
//! in the pool's availability domains (the MachinePool's failure domains, else the cluster's).
//! Everything else (the cluster lookup, the pool's name, observe order, the MachinePool
//! write-back, `spec.providerIDList`, plan, status, conditions, requeue, cleanup policy) is the
//! generic reconciler's ([`provider_runtime::machine_pool`]).
//!
//! A node pool is found by name in its cluster (names are not unique in OCI: only one tagged as
//! ours is used) and read whole with its nodes, whose instance OCIDs are the provider IDs OKE
//! writes on its Nodes. Changes are UpdateNodePool calls of the fields that differ, answered
//! with a work request. OKE's cluster autoscaler is an add-on in the cluster, not a pool
//! setting: with `spec.scaling` the provider leaves the size to it and only keeps it within the
//! bounds.
//!
//! What a pass's look saw of the pool (its OCID, ETag and tags) is kept in its [`PoolClients`]
//! for the change of the same pass; the kernel looks before it changes anything, and a change
//! that finds nothing kept looks the pool up itself.

mod act;
mod desired;
mod diff;
mod observe;

use std::sync::{Arc, Mutex, PoisonError};

use contract::idempotency::OCI_RETRY_TOKEN;
use contract::naming;
use contract::ownership::Owner;
use contract::version::KubeVersion;
use provider_runtime::machine_pool::{ManagedMachinePool as _, PoolConnected, PoolNames};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::PoolSpec;
pub use diff::PoolChange;
pub use observe::{ObservedPool, lifecycle};

use super::Seen;
use crate::api::{CniType, OKEControlPlane};
use crate::client::answers::{ClusterSummary, EngineResource};
use crate::client::{Oci, Service, q};
use crate::scope::{self, Infra, Shared};

// Names are unique within the cluster's namespace, so within the cluster.
provider_runtime::machine_pool! {
    OKE,
    tokens = OCI_RETRY_TOKEN, create = "CreateNodePool",
    names = PoolNames::Child(&naming::OKE_NODE_POOL), noun = "node pool"
}

/// One pass's OCI client, where the pool's cluster is, and what the pass's look saw.
pub struct PoolClients {
    /// The region's client, as the identity.
    oci: Oci,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// Where the cluster lives (its availability domains filled in when it names none).
    infra: Infra,
    /// The cluster's OCID, `None` while OKE has no cluster of that name of ours.
    cluster_id: Option<String>,
    /// The cluster's pod networking.
    cni: CniType,
    /// The version the control plane reports (a create's when the MachinePool names none).
    control_plane_version: Option<KubeVersion>,
    /// The pool's OCID recorded in the status (`status.cloudID`).
    recorded: Option<String>,
    /// The owner of what is made for the Cluster.
    owner: Owner,
    /// The pool as this pass's look saw it (empty until it looked, or when it found none).
    seen: Mutex<Option<Seen>>,
}

impl PoolClients {
    fn remember(&self, seen: Option<Seen>) {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = seen;
    }

    fn seen(&self) -> Option<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The OCID of the cluster named `name`: the control plane's recorded one, or the one its
/// adoption plan found (a pool's plan is made beside its control plane's), else the one of that
/// name tagged as ours.
async fn cluster_id(
    oci: &Oci,
    calls: &CloudCalls,
    cp: &OKEControlPlane,
    compartment: &str,
    name: &str,
    owner: &Owner,
) -> Result<Option<String>, ProviderError> {
    let status = cp.status.as_ref().map(|s| &s.common);
    let recorded = status.and_then(|s| s.cloud_id.clone());
    let planned = status
        .and_then(|s| s.adoption.as_ref())
        .and_then(|a| a.cloud_id.clone());
    if let Some(id) = recorded.or(planned) {
        return Ok(Some(id));
    }
    let listed: Vec<ClusterSummary> = oci
        .list_of(
            calls,
            "ListClusters",
            Service::ContainerEngine,
            &format!(
                "/clusters?compartmentId={}&name={}",
                q(compartment),
                q(name)
            ),
        )
        .await?;
    Ok(listed
        .into_iter()
        .find(|c| c.lifecycle_state != "DELETED" && owner.owns(&c.tags()))
        .map(|c| c.id))
}

/// Clients and names for one pass, for the pool in the cluster at `reach.place`: the cluster's OCID
/// and, where the cluster names no availability domains, the compartment's.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let (obj, place) = (reach.object, reach.place);
    let (cp, mut infra) = (place.control_plane, place.infra);
    let oci = scope::oci_for(shared, reach.client, reach.namespace, &infra).await?;
    if infra.availability_domains.is_empty() {
        infra.availability_domains = shared
            .availability_domains(&oci, reach.calls, &infra.compartment)
            .await?;
    }
    let owner = Owner::new(scope::PROVIDER, reach.namespace, reach.cluster_name);
    let cluster_id = cluster_id(
        &oci,
        reach.calls,
        &cp,
        &infra.compartment,
        reach.cluster,
        &owner,
    )
    .await?;
    Ok(PoolConnected {
        pool: reach.pool.to_string(),
        cluster: reach.cluster.to_string(),
        tags: infra.additional_tags.clone(),
        clients: PoolClients {
            oci,
            calls: reach.calls.clone(),
            infra,
            cluster_id,
            cni: cp.spec.oke.cni_type,
            control_plane_version: place.version,
            recorded: obj.cloud_id().map(String::from),
            owner,
            seen: Mutex::new(None),
        },
    })
}
