//! The ControlPlane role, written once: a generic [`Reconciler`](crate::Reconciler) over a
//! narrow [`ControlPlaneCloud`].
//!
//! One pass, on every cloud, enters the cloud's code in this order and at most once each:
//!
//! 1. **locate** (kernel): the infrastructure, from the Cluster's InfraCluster or the control
//!    plane's own `spec.infrastructure` ([`crate::cluster_objects::InfraOf`]); while the
//!    Cluster's infrastructure is not provisioned the pass reports the waiting condition set
//!    without a cloud call;
//! 2. **validate** (cloud, pure): the spec as the cloud will ask for it, [`ControlPlaneCloud::Desired`];
//! 3. **connect** (cloud): clients, and the plain data the kernel reads ([`Connected`]);
//! 4. **observe** (cloud, one call): the cluster; when it is ours, the operation
//!    `status.operation` tracks; when it is ours and idle, what else the cloud compares
//!    ([`Look`] says which, by the kernel's rules);
//! 5. **diff** (cloud, pure) and **plan** (kernel, [`contract::plan::control_plane`]):
//!    ownership, state, operation, one version step, then the cloud's own difference, handed
//!    to the plan as data;
//! 6. **act** (cloud): at most one [`Step`] that changes something, with idempotency tokens
//!    within the cloud's limits;
//! 7. **report** (kernel, and the cloud's [`ControlPlaneCloud::status`] for its own block): the
//!    kubeconfig Secrets once the cluster serves, `spec.controlPlaneEndpoint` by the user-set
//!    rule, the shared status, the whole condition set, and when to look again.
//!
//! At rest a look is good for the rest interval (or `--sync-period`, when shorter): a pass that
//! comes sooner (the kubeconfig token's refresh, a change of the Cluster) while the control
//! plane is ready, idle and unchanged plans from the last look instead of observing again
//! ([`crate::pacing::looks`]); if that plan would change anything, the pass looks again before
//! acting. So the token refresh costs no cloud read.
//!
//! Deletion follows one policy ([`crate::CleanupContext::cluster_to_clean`]): only a cluster
//! tagged as ours is deleted; one that is not is left in place with a warning event.

mod cleanup;
mod pass;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use contract::api::{
    ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint, Operation, OperationKind,
    RequestOverridesStatus,
};
use contract::idempotency::{self, TokenLimits};
use contract::kubeconfig::ExecPlugin;
use contract::naming::{self, NameLimits};
use contract::ownership::Owner;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use serde::Serialize;

use crate::CloudCalls;
use crate::CloudError;
use crate::cluster_objects::InfraOf;
use crate::kubeconfig::TokenSource;
use crate::{ProviderError, ProviderObject};

pub use pass::ControlPlaneReconciler;

/// A ControlPlane kind, as the generic reconciler reads it: the shared spec and status blocks.
pub trait ManagedControlPlane: ProviderObject {
    /// What `spec.infrastructure` holds (where the cluster lives without an InfraCluster).
    type OwnInfra: Send + Sync;
    /// What only this cloud reports of its cluster (`status.eks`, `status.gke`, …).
    type Observed: Send + Sync;
    /// The kind's status.
    type Status: Serialize + Send + Sync;
    /// How the cloud's cluster is named when `spec.cloudName` is not set.
    const CLUSTER_NAMES: &'static NameLimits;
    /// The shared spec block (version, endpoint access, add-ons, cloud name, adoption, …).
    fn spec_common(&self) -> &ControlPlaneSpecCommon;
    /// The shared status block, when there is a status.
    fn status_common(&self) -> Option<&ControlPlaneStatusCommon>;
    /// `status.requestOverrides`.
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus>;
    /// `spec.infrastructure`, when set.
    fn own_infrastructure(&self) -> Option<&Self::OwnInfra>;
    /// The kind's status from the shared block, the request overrides last applied and the
    /// cloud's block (`None` when there is no cluster of ours to report on).
    fn status_of(
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        observed: Option<Self::Observed>,
    ) -> Self::Status;

    /// The name of the cloud's cluster for the Cluster `cluster_name`: `spec.cloudName`, the
    /// name `spec.adoption.id` ends in, or one derived from the namespace and the Cluster's name
    /// within the cloud's limits.
    fn cloud_cluster_name(&self, cluster_name: &str) -> String {
        let spec = self.spec_common();
        let adopted = spec
            .adoption
            .as_ref()
            .and_then(|a| a.id.as_deref())
            .and_then(contract::adoption::name_in_identity);
        spec.cloud_name
            .clone()
            .or(adopted.map(str::to_string))
            .unwrap_or_else(|| {
                naming::derive_cloud_name(
                    &self.namespace().unwrap_or_default(),
                    cluster_name,
                    Self::CLUSTER_NAMES,
                )
            })
    }
}

/// The cloud's cluster, normalised; `D` is the cloud's own view of it (for its diff and its
/// status block).
#[derive(Debug, Clone)]
pub struct ManagedCluster<D> {
    /// The cloud's id (ARN, self link, resource id, OCID).
    pub id: String,
    /// Its lifecycle.
    pub lifecycle: Lifecycle,
    /// The version it runs, `1.31` or `v1.31.2`.
    pub version: String,
    /// Every endpoint it exposes.
    pub endpoints: Vec<Endpoint>,
    /// Its CA, PEM: `Ok(None)` while the cloud has none yet, `Err` with a sentence when what the
    /// cloud returned is not a CA.
    pub ca_pem: Result<Option<Vec<u8>>, String>,
    /// Its tags (labels, freeform tags).
    pub tags: BTreeMap<String, String>,
    /// The cloud's own view.
    pub detail: D,
}

/// What a cloud says about itself, once, when its reconciler is made.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneProfile {
    /// The cloud's short name for messages (`EKS`, `GKE`).
    pub cloud: &'static str,
    /// The cloud picks patch versions itself: only a new minor is asked for.
    pub minors_only: bool,
    /// Its idempotency tokens' limits.
    pub token_limits: &'static TokenLimits,
    /// The cloud's name of the call that creates a cluster (`CreateCluster`), the one call that
    /// takes `requestOverrides`.
    pub create_call: &'static str,
    /// How soon to look again while the cloud is busy.
    pub poll: Duration,
    /// How soon to look again at rest (drift detection).
    pub rest: Duration,
}

impl ControlPlaneProfile {
    /// How soon to look again after a change the cloud completes at once (tags, access).
    pub fn settle(&self) -> Duration {
        self.poll.min(Duration::from_secs(5))
    }
}

/// What [`ControlPlaneCloud::connect`] is given: the control plane `O`, where its cluster lives
/// (the cloud's `Infra`, `I`), and how to reach the cloud. A role module names it for its own
/// kinds (`Reach<'_>`, which `control_plane!` declares).
pub struct Reach<'a, O, I> {
    /// The control plane.
    pub object: &'a O,
    /// Where its cluster lives (location, identity, network).
    pub infra: I,
    /// Client to the management cluster (for the identity's Secrets).
    pub client: &'a kube::Client,
    /// Where every cloud call is counted and admitted.
    pub calls: &'a CloudCalls,
    /// The namespace of the control plane and its Cluster.
    pub namespace: &'a str,
    /// The owning Cluster's name.
    pub cluster_name: &'a str,
    /// The cluster's name in the cloud ([`ManagedControlPlane::cloud_cluster_name`]).
    pub name: &'a str,
}

/// What `connect` gives a pass: plain data the kernel reads, and the cloud's own clients.
pub struct Connected<K, T> {
    /// The cluster's name in the cloud.
    pub name: String,
    /// The user's tags for everything made for the Cluster (the ownership tag is added by the
    /// kernel).
    pub tags: BTreeMap<String, String>,
    /// The token source of `<cluster>-kubeconfig`.
    pub tokens: T,
    /// The exec plugin of `<cluster>-user-kubeconfig`.
    pub user_exec: UserExec,
    /// The cloud's clients for the pass.
    pub clients: K,
}

/// The exec plugin of the user kubeconfig. Where the cloud's tool names the cluster by its
/// cloud id (OKE's `--cluster-id`), `cloud_id_flag` is that flag: the kernel appends it with
/// the id of the cluster it observed.
#[derive(Debug, Clone)]
pub struct UserExec {
    /// The plugin.
    pub plugin: ExecPlugin,
    /// The flag that takes the cluster's cloud id, when the tool needs it.
    pub cloud_id_flag: Option<&'static str>,
}

impl UserExec {
    /// A plugin that needs nothing of the observed cluster.
    pub fn new(plugin: ExecPlugin) -> Self {
        Self {
            plugin,
            cloud_id_flag: None,
        }
    }

    /// The plugin for the cluster whose cloud id is `id`.
    pub fn for_cluster(&self, id: &str) -> ExecPlugin {
        let mut plugin = self.plugin.clone();
        if let Some(flag) = self.cloud_id_flag {
            plugin.args.extend([flag.to_string(), id.to_string()]);
        }
        plugin
    }
}

/// What the kernel lets [`ControlPlaneCloud::observe`] read beyond the cluster itself: the
/// tracked operation only when the cluster is ours, the extras only when it is ours and idle.
#[derive(Debug, Clone, Copy)]
pub struct Look<'a> {
    owner: &'a Owner,
    operation: Option<&'a Operation>,
    deleting: bool,
    adopting: bool,
}

impl<'a> Look<'a> {
    pub(crate) fn new(owner: &'a Owner, operation: Option<&'a Operation>) -> Self {
        Self {
            owner,
            operation,
            deleting: false,
            adopting: false,
        }
    }

    pub(crate) fn for_delete(owner: &'a Owner) -> Self {
        Self {
            deleting: true,
            ..Self::new(owner, None)
        }
    }

    /// A look for an adoption's plan: the extras of a cluster that is not ours yet are read
    /// too (reads only).
    pub(crate) fn adopting(self, adopting: bool) -> Self {
        Self { adopting, ..self }
    }

    /// The update or upgrade whose state to ask the cloud for: the one `status.operation`
    /// tracks, when `cluster` is ours (a create or delete is followed by the cluster's own
    /// state).
    pub fn operation<D>(&self, cluster: &ManagedCluster<D>) -> Option<&'a Operation> {
        self.operation.filter(|op| {
            self.owner.owns(&cluster.tags)
                && matches!(op.kind, OperationKind::Upgrade | OperationKind::Update)
        })
    }

    /// What the look saw: `cluster`, with the state of the operation [`Look::operation`] names
    /// for it, read by `state_of` (the cloud's operation read) only when there is one.
    ///
    /// # Errors
    /// `state_of`'s.
    pub async fn seen<D, E, F>(
        &self,
        cluster: ManagedCluster<D>,
        state_of: impl FnOnce(&'a Operation) -> F,
    ) -> Result<Observed<D>, E>
    where
        F: Future<Output = Result<Option<OperationState>, E>>,
    {
        let operation = match self.operation(&cluster) {
            Some(op) => state_of(op).await?,
            None => None,
        };
        Ok(Observed::found(cluster, operation))
    }

    /// Whether to read what else the cloud compares: `cluster` is ours (or being adopted) and
    /// running, and the operation's state (`state`, what the cloud said of [`Look::operation`])
    /// is not running.
    pub fn idle<D>(&self, cluster: &ManagedCluster<D>, state: Option<&OperationState>) -> bool {
        !self.deleting
            && (self.adopting || self.owner.owns(&cluster.tags))
            && cluster.lifecycle == Lifecycle::Running
            && !matches!(state, Some(OperationState::Running))
    }
}

/// One look at the cloud: the cluster (with what else the cloud compares in its detail, read
/// when [`Look::idle`] allows), and the tracked operation's state.
#[derive(Debug)]
pub struct Observed<D> {
    /// The cluster, `None` when the cloud has none of that name.
    pub cluster: Option<ManagedCluster<D>>,
    /// The state of [`Look::operation`], when the cloud knows it.
    pub operation: Option<OperationState>,
}

impl<D> Observed<D> {
    /// Nothing of that name.
    pub fn nothing() -> Self {
        Self {
            cluster: None,
            operation: None,
        }
    }

    /// `cluster`, and the state of its tracked operation.
    pub fn found(cluster: ManagedCluster<D>, operation: Option<OperationState>) -> Self {
        Self {
            cluster: Some(cluster),
            operation,
        }
    }
}

/// What a cloud call that changes something needs: the tags, and idempotency tokens.
#[derive(Debug, Clone)]
pub struct Request {
    /// The tags of everything made for the Cluster (the user's, then the ownership tag).
    pub tags: BTreeMap<String, String>,
    /// The pass's time.
    pub now: jiff::Timestamp,
    uid: String,
    generation: Option<i64>,
    limits: &'static TokenLimits,
}

impl Request {
    pub(crate) fn new(
        tags: BTreeMap<String, String>,
        now: jiff::Timestamp,
        uid: String,
        generation: Option<i64>,
        limits: &'static TokenLimits,
    ) -> Self {
        Self {
            tags,
            now,
            uid,
            generation,
            limits,
        }
    }

    /// The object's UID (for tokens a cloud derives itself).
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// The object's generation.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    /// A token for a request that creates something: the same for the same object and
    /// generation, so a retry after a crash creates nothing twice.
    pub fn create_token(&self, purpose: &str) -> String {
        let generation = self.generation.unwrap_or_default().to_string();
        idempotency::token(self.limits, purpose, &self.uid, &[&generation])
    }

    /// A token for an update. It also carries the hour, so an update the cloud failed can be
    /// retried later with a token it has not seen (a reused token answers with the old, failed
    /// update); a crash-retry within the hour is recognised.
    pub fn update_token(&self, purpose: &str) -> String {
        let generation = self.generation.unwrap_or_default().to_string();
        let hour = (self.now.as_second() / 3600).to_string();
        idempotency::token(self.limits, purpose, &self.uid, &[&generation, &hour])
    }

    /// `status.requestOverrides` for overrides that went out with `operation` now.
    pub fn overrides_applied(&self, operation: &str) -> RequestOverridesStatus {
        RequestOverridesStatus {
            operation: operation.to_string(),
            applied_at: Time(self.now),
            generation: self.generation,
        }
    }
}

/// The one change a pass asks the cloud for.
#[derive(Debug)]
pub enum Step<'a, Desired, Change> {
    /// Create the cluster at `version` (`spec.version`, validated).
    Create {
        /// The validated spec.
        desired: &'a Desired,
        /// The version to create.
        version: &'a KubeVersion,
    },
    /// Tag the cluster `id` as ours (adopting it, or putting our tags back).
    Tag {
        /// The cloud's id of it.
        id: &'a str,
    },
    /// Remove our ownership tag (`key`) from the cluster `id`, leaving it running
    /// (`spec.deletionPolicy: Orphan`).
    Untag {
        /// The cloud's id of it.
        id: &'a str,
        /// The ownership tag's key.
        key: &'a str,
    },
    /// The version step to `to`.
    Upgrade {
        /// The version to ask for.
        to: &'a KubeVersion,
    },
    /// The cloud's own change.
    Update {
        /// The validated spec.
        desired: &'a Desired,
        /// The change [`ControlPlaneCloud::diff`] found.
        change: &'a Change,
    },
    /// Delete the cluster.
    Delete,
}

/// What the cloud said to a step (`T`: what a create's answer may carry, the cluster or the
/// pool as the cloud described it).
#[derive(Debug)]
pub enum Started<T> {
    /// A create the cloud accepted: the id to track (the resource's where the cloud has no
    /// operation id), the resource when the answer carried it, and whether `requestOverrides`
    /// went out with it.
    Created {
        /// The id to track.
        id: String,
        /// The resource as the answer gave it.
        observed: Option<T>,
        /// The user's request overrides went out with the create.
        overrides: bool,
    },
    /// An operation with this id, remembered in `status.operation` and polled.
    Operation(String),
    /// A change with nothing to track: look again after the poll interval.
    Untracked,
    /// A change the cloud completed at once (or found done already): look again soon.
    Done,
    /// The cloud refuses the step for now, in its words (a version step until the node pools
    /// catch up; a delete while pools are attached or an update runs): a wait, not a failure.
    Busy(String),
    /// What was to be deleted is gone.
    Gone,
}

impl<T> Started<T> {
    /// What a delete request's outcome means, the same on every cloud: the cloud's own answer
    /// as it is; a not-found is gone; busy (an operation running, dependents still attached) is
    /// a wait, in the cloud's words; anything else is the pass's error.
    ///
    /// # Errors
    /// Every other classified failure.
    pub fn after_delete(outcome: Result<Started<T>, CloudError>) -> Result<Self, ProviderError> {
        match outcome {
            Ok(started) => Ok(started),
            Err(CloudError::NotFound(_)) => Ok(Started::Gone),
            Err(CloudError::InUse(message)) => Ok(Started::Busy(message)),
            Err(e) => Err(e.into()),
        }
    }
}

/// A change of the cloud's own, said for the conditions.
pub trait DescribeChange {
    /// What the change does to the cluster named `name`.
    fn describe(&self, name: &str) -> String;
}

/// The cloud side of the ControlPlane role: what only the cloud knows, entered at most once
/// each per pass (module docs). A test fake is a few dozen lines.
pub trait ControlPlaneCloud: Send + Sync + 'static {
    /// The ControlPlane kind.
    type Object: ManagedControlPlane;
    /// Where the cluster lives (location, identity, network), before any client exists; its
    /// InfraCluster kind.
    type Infra: InfraOf<Own = <Self::Object as ManagedControlPlane>::OwnInfra> + Send + Sync;
    /// The spec, validated, as the cloud will ask for it.
    type Desired: Send + Sync;
    /// The cloud's clients for one pass.
    type Clients: Send + Sync;
    /// The kubeconfig's token source.
    type Tokens: TokenSource + Send + Sync;
    /// The cloud's own view of its cluster, with what else it compares when the cluster is
    /// idle (add-ons, access entries).
    type Detail: Send + Sync;
    /// The cloud's own change.
    type Change: DescribeChange + Clone + Debug + Send + Sync;

    /// The spec as the cloud will ask for it, or a terminal `InvalidSpec` naming the field.
    /// Pure.
    ///
    /// # Errors
    /// What the spec asks that the cloud cannot be asked.
    fn validate(
        &self,
        cp: &Self::Object,
        infra: &Self::Infra,
    ) -> Result<Self::Desired, ProviderError>;

    /// Clients and names for one pass, for the cluster of `reach.object` in `reach.infra`.
    fn connect(
        &self,
        reach: Reach<'_, Self::Object, Self::Infra>,
    ) -> impl Future<Output = Result<Connected<Self::Clients, Self::Tokens>, ProviderError>> + Send;

    /// One look: the cluster named `connected.name`; what [`Look`] allows besides.
    fn observe(
        &self,
        connected: &Connected<Self::Clients, Self::Tokens>,
        look: Look<'_>,
    ) -> impl Future<Output = Result<Observed<Self::Detail>, ProviderError>> + Send;

    /// The cloud's own difference between `cluster` and `desired`. Pure.
    fn diff(
        &self,
        desired: &Self::Desired,
        cluster: &ManagedCluster<Self::Detail>,
    ) -> CloudStep<Self::Change>;

    /// Asks the cloud for `step`.
    fn act(
        &self,
        connected: &Connected<Self::Clients, Self::Tokens>,
        step: Step<'_, Self::Desired, Self::Change>,
        request: &Request,
    ) -> impl Future<Output = Result<Started<ManagedCluster<Self::Detail>>, ProviderError>> + Send;

    /// What only this cloud reports of `cluster` (its status block). Pure.
    fn report(&self, cluster: &Self::Detail) -> <Self::Object as ManagedControlPlane>::Observed;

    /// `cluster` as this control plane's spec would ask for it: a JSON object shaped like the
    /// spec (the shared fields and the cloud's block, without `version`), `null` where the
    /// cloud has nothing. What an adoption plan compares the spec with
    /// ([`contract::adoption`]). Pure.
    fn as_spec(&self, cluster: &Self::Detail) -> serde_json::Value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delete_request_s_outcome_is_started_gone_busy_or_an_error() {
        let after = Started::<()>::after_delete;
        assert!(matches!(
            after(Ok(Started::Untracked)),
            Ok(Started::Untracked)
        ));
        assert!(matches!(
            after(Err(CloudError::NotFound("gone".into()))),
            Ok(Started::Gone)
        ));
        assert!(matches!(
            after(Err(CloudError::InUse("pools left".into()))),
            Ok(Started::Busy(m)) if m == "pools left"
        ));
        assert!(
            after(Err(CloudError::Unauthorized("no".into()))).is_err(),
            "a refusal is not taken as done"
        );
    }

    #[test]
    fn the_user_exec_names_the_observed_cluster_only_when_the_tool_needs_it() {
        let plugin = ExecPlugin::new("oci", ["ce", "cluster", "generate-token"]);
        assert_eq!(
            UserExec::new(plugin.clone()).for_cluster("ocid1").args,
            plugin.args
        );
        let with_id = UserExec {
            plugin,
            cloud_id_flag: Some("--cluster-id"),
        };
        assert_eq!(
            with_id.for_cluster("ocid1").args[3..],
            ["--cluster-id".to_string(), "ocid1".to_string()]
        );
    }

    fn cluster(tags: BTreeMap<String, String>, lifecycle: Lifecycle) -> ManagedCluster<()> {
        ManagedCluster {
            id: "id".into(),
            lifecycle,
            version: "1.31".into(),
            endpoints: Vec::new(),
            ca_pem: Ok(None),
            tags,
            detail: (),
        }
    }

    #[test]
    fn a_look_reads_the_operation_and_extras_only_of_a_cluster_of_ours() {
        let owner = Owner::new("xks", "ns", "c1");
        let op = Operation::new("op-1", OperationKind::Update, jiff::Timestamp::UNIX_EPOCH);
        let look = Look::new(&owner, Some(&op));
        let ours = cluster(owner.tags(&BTreeMap::new()), Lifecycle::Running);
        let theirs = cluster(BTreeMap::new(), Lifecycle::Running);
        assert!(look.operation(&ours).is_some());
        assert!(
            look.operation(&theirs).is_none(),
            "not ours: no operation of ours"
        );
        assert!(look.idle(&ours, Some(&OperationState::Succeeded)));
        assert!(!look.idle(&ours, Some(&OperationState::Running)), "busy");
        assert!(!look.idle(&theirs, None), "not ours");
        assert!(!look.idle(
            &cluster(owner.tags(&BTreeMap::new()), Lifecycle::Updating),
            None
        ));
        assert!(
            !Look::for_delete(&owner).idle(&ours, None),
            "a delete reads no extras"
        );
        let create = Operation::new("c", OperationKind::Create, jiff::Timestamp::UNIX_EPOCH);
        assert!(Look::new(&owner, Some(&create)).operation(&ours).is_none());
    }
}
