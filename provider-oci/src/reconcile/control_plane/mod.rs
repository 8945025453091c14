//! OKE's side of the ControlPlane role: the OKEControlPlane reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`OkeControlPlane`], whose steps delegate to the files
//! below (what the spec asks, `desired`; reading OKE, `observe`; the difference, `diff`; the
//! calls that change something, `act`; the kubeconfigs' credentials, `kubeconfig`).
//! Everything else (the infrastructure lookup, observe order, plan, status, conditions,
//! kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the generic
//! reconciler's ([`provider_runtime::control_plane`]).
//!
//! OKE names are not unique: the cluster is read by its OCID once known (`status.cloudID`), else
//! found by name in the compartment, preferring the one tagged as ours. Every change answers a
//! work request (`opc-work-request-id`), remembered in `status.operation` and polled; OKE runs
//! one at a time per cluster and answers 409 `IncorrectState` to another, which is a wait. OKE
//! offers exact versions (`v1.33.1`): the newest patch it offers of the minor asked for is
//! used, or the exact patch when the spec names one OKE offers. The cluster's CA comes from its
//! kubeconfig (CreateKubeconfig), read once and cached.
//!
//! What a pass's look saw of the cluster (its OCID, ETag and tags) is kept in its [`Clients`]
//! for the change of the same pass ([`LastSeen`]); the kernel looks before it changes anything,
//! and a change that finds nothing kept looks the cluster up itself.

mod act;
mod desired;
mod diff;
mod kubeconfig;
mod observe;

use std::sync::{Arc, Mutex, PoisonError};

use contract::idempotency::OCI_RETRY_TOKEN;
use contract::ownership::Owner;
use provider_runtime::control_plane::Connected;
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::{DEFAULT_PODS_CIDR, DEFAULT_SERVICES_CIDR, DesiredCluster, Network};
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, auth_plugin, user_exec};
pub use observe::{ObservedCluster, lifecycle};

use super::Seen;
use crate::client::Oci;
use crate::scope::{self, Shared};

provider_runtime::control_plane! {
    OKE,
    tokens = OCI_RETRY_TOKEN, create = "CreateCluster"
}

/// The cluster as a pass's look saw it, kept in the pass's [`Clients`]:
/// filled by `observe`, empty while the pass plans from an earlier look.
#[derive(Debug, Clone, Default)]
pub struct LastSeen(Arc<Mutex<Option<Seen>>>);

impl LastSeen {
    fn set(&self, seen: Option<Seen>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = seen;
    }

    fn get(&self) -> Option<Seen> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One pass's OCI client, and where the cluster is.
pub struct Clients {
    /// What every pass shares (the cache of CAs).
    shared: Arc<Shared>,
    /// The region's client, as the identity.
    oci: Oci,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// The compartment the cluster lives in.
    compartment: String,
    /// The cluster's OCID recorded in the status (`status.cloudID`).
    recorded: Option<String>,
    /// The owner of what is made for the Cluster.
    owner: Owner,
    /// What this pass's look saw.
    seen: LastSeen,
}

/// Clients and names for one pass, for the cluster of `reach.object` in `reach.infra`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let (cp, infra) = (reach.object, reach.infra);
    let oci = scope::oci_for(shared, reach.client, reach.namespace, &infra).await?;
    let recorded = cp
        .status
        .as_ref()
        .and_then(|s| s.common.cloud_id.clone())
        .filter(|id| id.starts_with("ocid1.cluster."));
    let tokens = Tokens {
        oci: oci.clone(),
        lifetime: shared.pacing.token_lifetime,
    };
    Ok(Connected {
        tags: infra.additional_tags,
        tokens,
        user_exec: user_exec(oci.region()),
        clients: Clients {
            shared: shared.clone(),
            oci,
            calls: reach.calls.clone(),
            compartment: infra.compartment,
            recorded,
            owner: Owner::new(scope::PROVIDER, reach.namespace, reach.cluster_name),
            seen: LastSeen::default(),
        },
        name: reach.name.to_string(),
    })
}
