//! GKE's side of the ControlPlane role: the GKEControlPlane reconciler ([`reconciler`]), the
//! kind as the kernel reads it, and [`GkeControlPlane`], whose steps delegate to the files
//! below (what the spec asks, `desired`; reading GKE, `observe`; the difference, `diff`; the
//! calls that change something, `act`; the kubeconfigs' credentials, `kubeconfig`).
//! Everything else (the infrastructure lookup, observe order, plan, status, conditions,
//! kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the generic
//! reconciler's ([`provider_runtime::control_plane`]).
//!
//! Every GKE change is a long-running Operation; its name is remembered in `status.operation`
//! and polled on the next pass. GKE runs one operation per cluster at a time and refuses others
//! with FAILED_PRECONDITION, which is a wait (`WaitingForCloud`), not a failure. A
//! `ClusterUpdate` carries one field, so each difference is its own step.

mod act;
mod desired;
mod diff;
mod kubeconfig;
mod observe;

use std::sync::Arc;

use contract::idempotency::GKE_UNSENT_TOKEN;
use provider_runtime::control_plane::{Connected, UserExec};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::{DesiredCluster, Network};
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, auth_plugin};
pub use observe::{ObservedCluster, get_operation, operation_state};

use crate::client;
use crate::scope::{self, Shared};

/// The service name cloud calls are counted under.
const SERVICE: &str = "container";

/// The node pool a cluster is created with (GKE refuses a cluster without nodes), removed
/// once the cluster runs.
pub const BOOTSTRAP_POOL: &str = "capi-bootstrap";

provider_runtime::control_plane! {
    GKE,
    tokens = GKE_UNSENT_TOKEN, create = "CreateCluster"
}

/// One pass's clients, and where the cluster is.
pub struct Clients {
    /// The project's clients, as the identity.
    gke: client::Clients,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// `projects/<project>/locations/<region>`.
    parent: String,
    /// `<parent>/clusters/<name>`.
    path: String,
}

/// Clients and names for one pass, for the cluster of `reach.object` in `reach.infra`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let infra = reach.infra;
    let gke = scope::clients_for(shared, reach.client, reach.namespace, &infra).await?;
    let parent = format!("projects/{}/locations/{}", infra.project, infra.region);
    let tokens = Tokens {
        http: shared.http.clone(),
        key: gke.key.clone(),
        lifetime: shared.pacing.token_lifetime,
    };
    Ok(Connected {
        tags: infra.additional_tags,
        tokens,
        user_exec: UserExec::new(auth_plugin()),
        clients: Clients {
            gke,
            calls: reach.calls.clone(),
            path: format!("{parent}/clusters/{}", reach.name),
            parent,
        },
        name: reach.name.to_string(),
    })
}
