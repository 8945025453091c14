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
//! AKS needs a System pool: the cluster is created with one named `system`
//! (`spec.aks.systemPool`), which this role keeps at the control plane's version and count.
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

use contract::api::{ControlPlaneStatusCommon, RequestOverridesStatus};
use contract::idempotency::ARM_UNSENT_TOKEN;
use contract::plan::CloudStep;
use kube::ResourceExt;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{
    Connected, ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Look,
    ManagedCluster, Observed, Reach, Request, Started, Step, UserExec,
};

use crate::api::{AKSCluster, AKSControlPlane, AKSControlPlaneObserved, AKSControlPlaneStatus};
use crate::scope::{self, Clients, Infra, Shared};

pub use desired::DesiredCluster;
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, auth_plugin};
pub use observe::ObservedCluster;

/// The System pool the cluster is created with and the control plane keeps.
pub const SYSTEM_POOL: &str = "system";

/// The AKSControlPlane reconciler: the generic one over AKS.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<AksControlPlane> {
    let profile = ControlPlaneProfile {
        cloud: "AKS",
        // AKS picks the newest patch of a minor.
        minors_only: true,
        token_limits: &ARM_UNSENT_TOKEN,
        create_call: act::CREATE_CALL,
        poll: shared.poll_interval,
        rest: shared.rest_interval,
    };
    ControlPlaneReconciler::new(scope::PROVIDER, profile, AksControlPlane { shared })
}

/// AKS, for the generic ControlPlane reconciler.
pub struct AksControlPlane {
    shared: Arc<Shared>,
}

/// What a pass holds once connected.
pub type AksConnected = Connected<Clients, Tokens>;

impl ControlPlaneCloud for AksControlPlane {
    type Object = AKSControlPlane;
    type InfraCluster = AKSCluster;
    type Infra = Infra;
    type Desired = DesiredCluster;
    type Clients = Clients;
    type Tokens = Tokens;
    type Detail = ObservedCluster;
    type Extra = ();
    type Change = ClusterChange;
    type Status = AKSControlPlaneStatus;

    fn validate(
        &self,
        cp: &AKSControlPlane,
        infra: &Infra,
    ) -> Result<DesiredCluster, ProviderError> {
        desired::validate(cp, infra)
    }

    async fn connect(
        &self,
        cp: &AKSControlPlane,
        infra: Infra,
        reach: Reach<'_>,
    ) -> Result<AksConnected, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let arm = scope::arm_for(&self.shared, reach.client, &namespace, &infra).await?;
        let name = scope::aks_cluster_name(cp, reach.cluster_name);
        let tokens = Tokens::new(arm.tokens().clone(), self.shared.token_lifetime);
        Ok(Connected {
            clients: Clients::new(arm, reach.calls.clone(), &infra.resource_group, &name),
            name,
            tags: infra.additional_tags,
            tokens,
            user_exec: UserExec::new(auth_plugin()),
        })
    }

    async fn observe(
        &self,
        connected: &AksConnected,
        look: Look<'_>,
    ) -> Result<Observed<ObservedCluster, ()>, ProviderError> {
        observe::observe(&self.shared, connected, look).await
    }

    fn diff(
        &self,
        desired: &DesiredCluster,
        cluster: &ManagedCluster<ObservedCluster>,
        (): &(),
    ) -> CloudStep<ClusterChange> {
        diff::diff(desired, &cluster.detail)
    }

    async fn act(
        &self,
        connected: &AksConnected,
        step: Step<'_, DesiredCluster, ClusterChange>,
        request: &Request,
    ) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
        act::act(&self.shared, connected, step, request).await
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> AKSControlPlaneStatus {
        AKSControlPlaneStatus {
            common,
            observed_generation: None,
            aks: cluster.map(|c| observed_block(&c.detail)),
            request_overrides,
        }
    }
}

/// What AKS reports beyond the shared status.
fn observed_block(o: &ObservedCluster) -> AKSControlPlaneObserved {
    AKSControlPlaneObserved {
        location: o.location.clone(),
        node_resource_group: Some(o.node_group.clone()).filter(|g| !g.is_empty()),
        fqdn: Some(o.fqdn.clone()).filter(|f| !f.is_empty()),
        kubernetes_version: Some(o.full_version.clone()).filter(|v| !v.is_empty()),
        provisioning_state: Some(o.state.clone()),
        system_pool_version: o
            .system_pool
            .as_ref()
            .map(|p| p.version.clone())
            .filter(|v| !v.is_empty()),
    }
}
