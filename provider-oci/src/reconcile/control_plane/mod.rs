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

use contract::api::{ControlPlaneStatusCommon, RequestOverridesStatus};
use contract::idempotency::OCI_RETRY_TOKEN;
use contract::ownership::Owner;
use contract::plan::CloudStep;
use kube::ResourceExt;
use provider_runtime::control_plane::{
    Connected, ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Look,
    ManagedCluster, Observed, Reach, Request, Started, Step,
};
use provider_runtime::{CloudCalls, ProviderError};

pub use desired::{DEFAULT_PODS_CIDR, DEFAULT_SERVICES_CIDR, DesiredCluster, Network};
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, auth_plugin, user_exec};
pub use observe::{ObservedCluster, lifecycle};

use super::Seen;
use crate::api::{OKECluster, OKEControlPlane, OKEControlPlaneStatus};
use crate::client::Oci;
use crate::scope::{self, Infra, Shared};

/// The OKEControlPlane reconciler: the generic one over OKE.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<OkeControlPlane> {
    let profile = ControlPlaneProfile {
        cloud: "OKE",
        // OKE offers exact patches; the newest of the minor asked for is used.
        minors_only: true,
        token_limits: &OCI_RETRY_TOKEN,
        create_call: "CreateCluster",
        poll: shared.poll_interval,
        rest: shared.rest_interval,
    };
    ControlPlaneReconciler::new(scope::PROVIDER, profile, OkeControlPlane { shared })
}

/// OKE, for the generic ControlPlane reconciler.
pub struct OkeControlPlane {
    shared: Arc<Shared>,
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

/// What a pass of OKE's is connected with.
type OkeConnected = Connected<Clients, Tokens>;

impl ControlPlaneCloud for OkeControlPlane {
    type Object = OKEControlPlane;
    type InfraCluster = OKECluster;
    type Infra = Infra;
    type Desired = DesiredCluster;
    type Clients = Clients;
    type Tokens = Tokens;
    type Detail = ObservedCluster;
    type Extra = ();
    type Change = ClusterChange;
    type Status = OKEControlPlaneStatus;

    fn validate(
        &self,
        cp: &OKEControlPlane,
        infra: &Infra,
    ) -> Result<DesiredCluster, ProviderError> {
        desired::validate(cp, infra)
    }

    async fn connect(
        &self,
        cp: &OKEControlPlane,
        infra: Infra,
        reach: Reach<'_>,
    ) -> Result<OkeConnected, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let oci = scope::oci_for(&self.shared, reach.client, &namespace, &infra).await?;
        let name = scope::oke_cluster_name(cp, reach.cluster_name);
        let recorded = cp
            .status
            .as_ref()
            .and_then(|s| s.common.cloud_id.clone())
            .filter(|id| id.starts_with("ocid1.cluster."));
        let seen = LastSeen::default();
        let tokens = Tokens {
            oci: oci.clone(),
            lifetime: self.shared.token_lifetime,
        };
        Ok(Connected {
            tags: infra.additional_tags,
            tokens,
            user_exec: user_exec(oci.region()),
            clients: Clients {
                oci,
                calls: reach.calls.clone(),
                compartment: infra.compartment,
                recorded,
                owner: scope::owner(&namespace, reach.cluster_name),
                seen,
            },
            name,
        })
    }

    async fn observe(
        &self,
        connected: &OkeConnected,
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
        diff::diff(&cluster.detail, desired)
    }

    async fn act(
        &self,
        connected: &OkeConnected,
        step: Step<'_, DesiredCluster, ClusterChange>,
        request: &Request,
    ) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
        act::act(connected, step, request).await
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> OKEControlPlaneStatus {
        observe::status(common, request_overrides, cluster)
    }
}
