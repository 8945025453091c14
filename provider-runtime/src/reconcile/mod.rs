//! The generic reconcile engine and the traits a provider implements.
//!
//! A provider implements [`ProviderObject`] for each of its three kinds and a [`Reconciler`] per
//! kind holding only the cloud-specific observe → plan → act. The engine does everything the
//! Cluster API contract asks of every provider, in this order, for every pass:
//!
//! 1. **watch filter**: with `--watch-filter`, objects without the label are ignored (the watch
//!    itself is filtered by label selector too, so they are never even cached);
//! 2. **externally managed** (InfraCluster only): `cluster.x-k8s.io/managed-by` → nothing;
//! 3. **owner gate**: InfraCluster and ControlPlane need an owner reference to an existing
//!    `Cluster`; an InfraMachinePool needs a `MachinePool` controller owner and its Cluster
//!    (cluster-name label). Until then: no finalizer, no status, no cloud call;
//! 4. **pause** (`Cluster.spec.paused` or the object's `cluster.x-k8s.io/paused` annotation):
//!    only `Paused=True` is written, nothing else, no provider call;
//! 5. **finalizer** (kube-runtime's helper): added before the first provider call; on deletion
//!    [`Reconciler::cleanup`] runs and the finalizer goes only on [`Cleanup::Done`];
//! 6. [`Reconciler::reconcile`], then **one status write** by server-side apply (the provider's
//!    status fields, conditions computed with `lastTransitionTime` moving only on flips,
//!    `Paused=False`, `observedGeneration`), skipped when nothing changed.
//!
//! Errors follow [`ProviderError`]: transient ones retry with jittered backoff honouring
//! `Retry-After`, terminal ones wait for a change. Events are published on condition
//! transitions only.

mod engine;
pub mod gate;
pub mod status;

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use contract::capi::{Cluster, MachinePool};
use contract::conditions::DesiredCondition;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::events::{Event, EventType, Recorder};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::CloudCalls;
use crate::error::ProviderError;

pub(crate) use engine::{Env, KindController, controller};

/// The contract role of a provider kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The `…Cluster` kind (infrastructure.cluster.x-k8s.io).
    InfraCluster,
    /// The `…ControlPlane` kind (controlplane.cluster.x-k8s.io).
    ControlPlane,
    /// The `…MachinePool` kind (infrastructure.cluster.x-k8s.io), one managed node pool.
    InfraMachinePool,
}

impl Role {
    /// A short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InfraCluster => "InfraCluster",
            Self::ControlPlane => "ControlPlane",
            Self::InfraMachinePool => "InfraMachinePool",
        }
    }
}

/// A provider's custom resource, as the engine needs to see it.
///
/// The CRD must be namespaced, enable the status subresource, and its status schema must hold
/// `conditions` (`metav1.Condition` list) and `observedGeneration` (integer) besides the
/// provider's own fields: the engine writes both.
pub trait ProviderObject:
    kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// Which contract role this kind plays.
    const ROLE: Role;

    /// The current `status.conditions` (empty when there is no status yet).
    fn conditions(&self) -> &[Condition];
}

/// Reconciles one kind against the cloud. Implementations hold the cloud client; they never
/// write the object's status themselves (they return it in [`Pass`]) and never block on a
/// long cloud operation (start it, record it in status, requeue).
pub trait Reconciler<K: ProviderObject>: Send + Sync + 'static {
    /// Observe the cloud, plan, make at most the calls the plan needs, and report.
    ///
    /// Called only for objects that passed the filter, owner and pause gates and carry the
    /// finalizer. Returning `Err` keeps the previous status fields and conditions and sets
    /// `Ready=False` from the error; return `Ok(pass.with_error(e))` instead to report status
    /// alongside a failure.
    fn reconcile(
        &self,
        obj: Arc<K>,
        ctx: &PassContext,
    ) -> impl Future<Output = Result<Pass, ProviderError>> + Send;

    /// Delete what this object owns in the cloud (only resources tagged as ours).
    ///
    /// Return [`Cleanup::Done`] once the cloud confirms the deletion (NotFound counts), which
    /// releases the finalizer; [`Cleanup::Pending`] while it is in progress.
    fn cleanup(
        &self,
        obj: Arc<K>,
        ctx: &CleanupContext,
    ) -> impl Future<Output = Result<Cleanup, ProviderError>> + Send;
}

/// The outcome of one successful (or partly successful) reconcile pass.
#[derive(Debug, Default)]
pub struct Pass {
    pub(crate) status: Option<Result<Value, String>>,
    pub(crate) spec: Option<Result<Value, String>>,
    pub(crate) adopted_spec: Option<Value>,
    pub(crate) conditions: Vec<DesiredCondition>,
    pub(crate) requeue_after: Option<Duration>,
    pub(crate) error: Option<ProviderError>,
}

impl Pass {
    /// An empty pass: status fields kept as they are, only `Ready`/`Paused` computed.
    pub fn new() -> Self {
        Self::default()
    }

    /// The provider's complete status (a struct serialising to the status object).
    ///
    /// `conditions` and `observedGeneration` in it are ignored (the engine owns them). Fields
    /// left out are removed from the object, as server-side apply does for a field manager's
    /// fields; without this call the current fields are kept.
    pub fn status<T: Serialize>(mut self, status: &T) -> Self {
        self.status = Some(serde_json::to_value(status).map_err(|e| e.to_string()));
        self
    }

    /// Spec fields the provider owns (e.g. `controlPlaneEndpoint`, `providerIDList`), applied
    /// with server-side apply before the status when they differ from the object's.
    ///
    /// Send the same set of fields every pass: a field the provider stops sending is removed.
    pub fn spec_fields<T: Serialize>(mut self, fields: &T) -> Self {
        self.spec = Some(serde_json::to_value(fields).map_err(|e| e.to_string()));
        self
    }

    /// Spec fields an accepted adoption takes from the cloud (the ones nobody set), applied
    /// once with their own field manager (`<provider>-adoption`), so that the provider's
    /// [`Pass::spec_fields`] never remove them and the user can take them over.
    pub fn spec_from_cloud(mut self, fields: Value) -> Self {
        self.adopted_spec = Some(fields);
        self
    }

    /// Adds a condition (later ones of the same type win). Without a `Ready` condition the
    /// engine computes it as the summary of the others; `Paused` is always the engine's.
    pub fn condition(mut self, condition: DesiredCondition) -> Self {
        self.conditions.push(condition);
        self
    }

    /// Adds several conditions.
    pub fn conditions(mut self, conditions: impl IntoIterator<Item = DesiredCondition>) -> Self {
        self.conditions.extend(conditions);
        self
    }

    /// Reconcile again after this long (an operation to poll, a token to refresh). Without it
    /// the object waits for a change or the resync period.
    pub fn requeue_after(mut self, after: Duration) -> Self {
        self.requeue_after = Some(match self.requeue_after {
            Some(existing) => existing.min(after),
            None => after,
        });
        self
    }

    /// Reports a failure together with this pass's status: `Ready` becomes False from the
    /// error and the error decides the retry.
    pub fn with_error(mut self, error: ProviderError) -> Self {
        self.error = Some(error);
        self
    }
}

/// The outcome of a cleanup pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// The cloud confirmed everything is gone (or was never ours); the finalizer is removed.
    Done,
    /// Deletion is under way; `Ready=False` with reason `Deleting` and this message.
    Pending {
        /// When to look again.
        requeue_after: Duration,
        /// What is being waited for, in the user's terms.
        message: String,
    },
}

impl Cleanup {
    /// Deletion in progress, check again after `requeue_after`.
    pub fn pending(requeue_after: Duration, message: impl Into<String>) -> Self {
        Self::Pending {
            requeue_after,
            message: message.into(),
        }
    }
}

/// The Cluster an object belongs to: the Cluster itself while it exists, or only its name when a
/// deletion outlives it (the objects of its kinds still carry its name in their
/// `cluster.x-k8s.io/cluster-name` label).
#[derive(Clone, Copy, Debug)]
pub enum ClusterRef<'a> {
    /// The Cluster exists.
    Live(&'a Cluster),
    /// The Cluster is gone; `namespace/name` was its name.
    Gone {
        /// Its namespace.
        namespace: &'a str,
        /// Its name.
        name: &'a str,
    },
}

impl ClusterRef<'_> {
    /// The Cluster's name.
    pub fn name(&self) -> String {
        match self {
            ClusterRef::Live(c) => kube::ResourceExt::name_any(*c),
            ClusterRef::Gone { name, .. } => (*name).to_string(),
        }
    }

    /// Whether the Cluster names an infrastructure object (a gone one names nothing).
    pub fn names_infrastructure(&self) -> bool {
        matches!(self, ClusterRef::Live(c) if c.spec.infrastructure_ref.is_some())
    }
}

/// What a reconcile pass may use besides the object.
#[derive(Clone)]
pub struct PassContext {
    /// Client to the management cluster (to read Secrets by name, write kubeconfig Secrets…).
    pub client: kube::Client,
    /// The owning Cluster, from the shared cache.
    pub cluster: Arc<Cluster>,
    /// The owning MachinePool (InfraMachinePool kinds only).
    pub machine_pool: Option<Arc<MachinePool>>,
    /// Count every cloud call here.
    pub cloud_calls: CloudCalls,
    /// Events about this object (use sparingly: on transitions, not every pass).
    pub events: ObjectEvents,
    /// The time of this pass; pure planning takes it as an argument.
    pub now: jiff::Timestamp,
    /// The field manager for server-side apply of anything the provider writes.
    pub field_manager: &'static str,
    /// `--sync-period`: no settled object waits longer than this for its next pass, and at rest
    /// none goes longer without a look at the cloud.
    pub sync_period: std::time::Duration,
}

/// What a cleanup pass may use besides the object.
#[derive(Clone)]
pub struct CleanupContext {
    /// Client to the management cluster.
    pub client: kube::Client,
    /// The owning Cluster; `None` only when it is already gone.
    pub cluster: Option<Arc<Cluster>>,
    /// The owning Cluster's name, by one rule for every kind: the Cluster's while it exists,
    /// else what the object says (its Cluster owner reference, or the `cluster-name` label core
    /// put on it). `None`: the object never belonged to a Cluster, so no pass reached the cloud
    /// for it. (The ownership tag of every cloud resource is made from this name.)
    pub cluster_name: Option<String>,
    /// The owning MachinePool (InfraMachinePool kinds), when it still exists.
    pub machine_pool: Option<Arc<MachinePool>>,
    /// Count every cloud call here.
    pub cloud_calls: CloudCalls,
    /// Events about this object.
    pub events: ObjectEvents,
    /// The time of this pass.
    pub now: jiff::Timestamp,
    /// The field manager for server-side apply.
    pub field_manager: &'static str,
}

impl CleanupContext {
    /// The Cluster whose cloud resources a deletion removes, by one policy for every kind:
    ///
    /// - the Cluster's name ([`Self::cluster_name`]) when it is known, even after the Cluster
    ///   itself is gone: the cloud resources carry its name in their ownership tag, so they can
    ///   still be found and deleted;
    /// - `Ok(None)` when it is not known and the object's status records nothing created
    ///   (`created_something` false): no pass reached the cloud, so the finalizer can go;
    /// - an error when it is not known but something was created: the finalizer stays, and the
    ///   message says how to let the deletion go on (`what` names the object's kind).
    ///
    /// # Errors
    /// [`ProviderError::Terminal`] (`InvalidSpec`) in the last case.
    pub fn cluster_to_clean(
        &self,
        created_something: bool,
        what: &str,
    ) -> Result<Option<&str>, ProviderError> {
        cleanup_target(self.cluster_name.as_deref(), created_something, what)
    }
}

/// The policy of [`CleanupContext::cluster_to_clean`], on its inputs.
pub fn cleanup_target<'a>(
    cluster_name: Option<&'a str>,
    created_something: bool,
    what: &str,
) -> Result<Option<&'a str>, ProviderError> {
    match (cluster_name, created_something) {
        (Some(name), _) => Ok(Some(name)),
        (None, false) => Ok(None),
        (None, true) => Err(ProviderError::terminal(
            contract::conditions::Reason::InvalidSpec,
            format!(
                "The Cluster is gone and this {what} has neither a Cluster owner reference nor a cluster.x-k8s.io/cluster-name label, so the cloud resources it created cannot be found; put the label back to let the deletion go on"
            ),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod cleanup_tests {
    use super::*;

    #[test]
    fn a_known_cluster_name_is_cleaned_up_even_after_the_cluster_is_gone() {
        assert_eq!(cleanup_target(Some("c1"), true, "X").unwrap(), Some("c1"));
        assert_eq!(cleanup_target(Some("c1"), false, "X").unwrap(), Some("c1"));
    }

    #[test]
    fn without_a_name_only_an_object_that_created_nothing_is_released() {
        assert_eq!(cleanup_target(None, false, "X").unwrap(), None);
        let err = cleanup_target(None, true, "EKSMachinePool").unwrap_err();
        assert!(err.to_string().contains("EKSMachinePool"), "{err}");
        assert!(
            err.to_string().contains("cluster.x-k8s.io/cluster-name"),
            "{err}"
        );
    }
}

/// Publishes Kubernetes events about one object; failures are logged, never returned.
#[derive(Clone)]
pub struct ObjectEvents {
    recorder: Recorder,
    reference: k8s_openapi::api::core::v1::ObjectReference,
}

impl ObjectEvents {
    pub(crate) fn new(
        recorder: Recorder,
        reference: k8s_openapi::api::core::v1::ObjectReference,
    ) -> Self {
        Self {
            recorder,
            reference,
        }
    }

    /// A `Normal` event.
    pub async fn normal(&self, reason: &str, action: &str, note: impl Into<String>) {
        self.publish(EventType::Normal, reason, action, note.into())
            .await;
    }

    /// A `Warning` event.
    pub async fn warning(&self, reason: &str, action: &str, note: impl Into<String>) {
        self.publish(EventType::Warning, reason, action, note.into())
            .await;
    }

    async fn publish(&self, type_: EventType, reason: &str, action: &str, note: String) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: (!note.is_empty()).then_some(note),
            action: action.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &self.reference).await {
            tracing::warn!(%error, reason, "could not publish event");
        }
    }
}
