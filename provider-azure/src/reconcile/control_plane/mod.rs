//! AKS's side of the ControlPlane role: the AKSControlPlane kind as the kernel reads it, and
//! AKS's answers to the kernel's steps, each delegated to the file of its concern. Everything
//! else (locating the infrastructure, observe order, plan, status, conditions, kubeconfig
//! Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the generic reconciler's
//! ([`provider_runtime::control_plane`]).
//!
//! ARM puts whole resources: a change is a PUT of the cluster as last read, with the desired
//! fields set, guarded by its `eTag` (`If-Match`: a write racing another is refused with 412 and
//! read again next pass) and without `agentPoolProfiles` (pools change only through their own
//! resource, so a PUT never reverts a pool's count). Every change is asynchronous: its
//! `Azure-AsyncOperation` status resource is remembered in `status.operation` and polled. AKS
//! runs one operation per cluster and answers 409 `OperationNotAllowed` to another, which is a
//! wait (`WaitingForCloud`), not a failure.
//!
//! AKS needs a System pool: the cluster is created with one (`spec.aks.systemPool`, named
//! `system` unless its `name` says otherwise; an adopted cluster names the one it has), which
//! this role keeps at the control plane's version and count.
//!
//! - [`desired`]: the spec as AKS will be asked for it (pure);
//! - [`observe`]: reading the cluster, its API server's address and CA, and an operation;
//! - [`diff`]: the first difference AKS has its own call for (pure);
//! - [`act`]: the calls that change something;
//! - [`kubeconfig`]: the Entra tokens and the `kubelogin` exec plugin.

pub mod act;
pub mod desired;
pub mod diff;
pub mod kubeconfig;
pub mod observe;

use std::sync::Arc;

use contract::idempotency::ARM_UNSENT_TOKEN;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Connected, UserExec};

use crate::scope::{self, Clients, Shared};

pub use desired::DesiredCluster;
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, auth_plugin};
pub use observe::ObservedCluster;

provider_runtime::control_plane! {
    AKS,
    tokens = ARM_UNSENT_TOKEN, create = act::CREATE_CALL
}

/// Clients and names for one pass, for the cluster of `reach.object` in `reach.infra`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let infra = reach.infra;
    let arm = scope::arm_for(shared, reach.client, reach.namespace, &infra).await?;
    let tokens = Tokens::new(arm.tokens().clone(), shared.pacing.token_lifetime);
    let calls = reach.calls.clone();
    Ok(Connected {
        clients: Clients::new(
            shared,
            arm,
            calls,
            &infra.resource_group,
            reach.name,
            &reach.object.spec.aks.system_pool.name,
        ),
        name: reach.name.to_string(),
        tags: infra.additional_tags,
        tokens,
        user_exec: UserExec::new(auth_plugin()),
    })
}
