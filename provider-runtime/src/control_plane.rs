//! The ControlPlane role, written once: a generic [`Reconciler`] over a narrow
//! [`ControlPlaneCloud`].
//!
//! Each pass, on every cloud:
//!
//! 1. finds the infrastructure ([`ControlPlaneCloud::infrastructure`]) and, while the Cluster's
//!    infrastructure is not provisioned, reports the whole waiting condition set without a
//!    cloud call;
//! 2. validates `spec.version`, connects ([`ControlPlaneCloud::connect`]), and observes in a
//!    fixed order: the cluster; when it is ours, the operation in `status.operation`; when it
//!    is ours and idle, whatever else the cloud compares ([`ControlPlaneCloud::observe_more`]);
//! 3. plans one step with [`contract::plan::control_plane`] (ownership, state, operation,
//!    version step, then the cloud's own [`ControlPlaneCloud::diff`]) and makes at most one
//!    call that changes something, with idempotency tokens within the cloud's limits;
//! 4. writes the kubeconfig Secrets ([`crate::kubeconfig`]) from the cloud's [`TokenSource`]
//!    once the cluster serves, publishes `spec.controlPlaneEndpoint` by the user-set rule,
//!    assembles the shared status (the cloud adds its own block), reports the whole condition
//!    set ([`contract::plan::control_plane_conditions`]) and chooses when to look again.
//!
//! At rest, a look is good for the rest interval (or `--sync-period`, when shorter: the user's
//! bound on how long a settled object goes without a look): a pass that comes sooner (the kubeconfig's
//! token refresh, which the cloud's token lifetime sets, or a change of the Cluster) while the
//! control plane is ready, idle and unchanged (same generation) plans from the last look
//! instead of describing the cluster again ([`Looks`]); if that plan would change anything, the
//! pass looks again before acting. So the token refresh costs no cloud read.
//!
//! Deletion follows one policy ([`CleanupContext::cluster_to_clean`]): only a cluster tagged as
//! ours is deleted; one that is not is left in place with a warning event.
//!
//! A cloud implements what only it knows: where its cluster lives, its calls, and the mapping
//! between its shapes and the normalised [`ManagedCluster`].

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use contract::api::{
    ControlPlaneInitialization, ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint,
    KubeconfigStatus, Operation, OperationKind, RequestOverridesStatus, VersionReplicas,
};
use contract::capi::Cluster;
use contract::conditions::{ConditionRole, Reason, waiting_set};
use contract::endpoint::EndpointChoice;
use contract::idempotency::{self, TokenLimits};
use contract::kubeconfig::ExecPlugin;
use contract::ownership::Owner;
use contract::plan::{
    self, CloudStep, ClusterFacts, ControlPlaneFacts, ControlPlaneIntent, Lifecycle,
    OperationState, Plan, Tracked, Wait,
};
use contract::version::{KubeVersion, normalize};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::json;

use crate::CloudCalls;
use crate::CloudError;
use crate::kubeconfig::{KubeconfigSecrets, KubeconfigTarget, TokenSource, until_refresh};
use crate::{
    Cleanup, CleanupContext, Pass, PassContext, ProviderError, ProviderObject, Reconciler,
};

/// A ControlPlane kind, as the generic reconciler reads it: the shared spec and status blocks.
pub trait ManagedControlPlane: ProviderObject {
    /// The shared spec block (version, endpoint access, add-ons, cloud name, adopt, …).
    fn spec_common(&self) -> &ControlPlaneSpecCommon;
    /// The shared status block, when there is a status.
    fn status_common(&self) -> Option<&ControlPlaneStatusCommon>;
    /// `status.requestOverrides`.
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus>;
}

/// The cloud's cluster, normalised; `D` is the cloud's own view of it (for its diff and its
/// status block).
#[derive(Debug, Clone)]
pub struct ManagedCluster<D> {
    /// The cloud's id (ARN, self link, resource id).
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

/// What a cloud says about itself to the generic reconciler.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneProfile {
    /// The cloud's short name for messages (`EKS`, `GKE`).
    pub cloud: &'static str,
    /// The cloud picks patch versions itself: only a new minor is asked for.
    pub minors_only: bool,
    /// Its idempotency tokens' limits.
    pub token_limits: &'static TokenLimits,
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

/// A create the cloud accepted.
#[derive(Debug)]
pub struct Created<D> {
    /// The id of the create to track (the cluster's id where the cloud has no operation id).
    pub id: String,
    /// Set when `requestOverrides` went out with the request.
    pub overrides: Option<RequestOverridesStatus>,
    /// The cluster as the create call returned it, when it did.
    pub cluster: Option<ManagedCluster<D>>,
}

/// What a change the cloud accepted left to wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// An operation with this id, remembered in `status.operation` and polled.
    Operation(String),
    /// A change with nothing to track: look again after the poll interval.
    Untracked,
    /// A change the cloud completed at once: look again soon.
    Done,
    /// The cloud refuses the version step until the node pools catch up, in its words: a wait,
    /// not a failure (the pools catch up on their own).
    BlockedOnPools(String),
}

/// What a delete request found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deletion {
    /// The cloud is deleting it.
    Started,
    /// It is gone.
    Gone,
    /// The cloud cannot delete it yet (node pools still attached, an update running), in its
    /// words.
    Blocked(String),
}

impl Deletion {
    /// What a delete request's outcome means, the same on every cloud: the cloud's own answer
    /// as it is; a not-found is gone; busy (an operation running, dependents still attached) is
    /// blocked, in the cloud's words; anything else is the pass's error.
    ///
    /// # Errors
    /// Every other classified failure.
    pub fn after(outcome: Result<Deletion, CloudError>) -> Result<Deletion, ProviderError> {
        match outcome {
            Ok(deletion) => Ok(deletion),
            Err(CloudError::NotFound(_)) => Ok(Deletion::Gone),
            Err(CloudError::InUse(message)) => Ok(Deletion::Blocked(message)),
            Err(e) => Err(e.into()),
        }
    }
}

/// The cloud side of the ControlPlane role. Narrow on purpose: a fake is a few dozen lines.
pub trait ControlPlaneCloud: Send + Sync + 'static {
    /// The ControlPlane kind.
    type Object: ManagedControlPlane;
    /// Where the cluster lives (location, identity, network), before any client exists.
    type Infra: Send + Sync;
    /// Clients and names for one pass.
    type Scope: Send + Sync;
    /// The cloud's own view of its cluster.
    type Detail: Send + Sync;
    /// What else the cloud compares when the cluster is idle (add-ons, access entries).
    type Extra: Default + Send + Sync;
    /// The cloud's own change.
    type Change: Clone + Debug + Send + Sync;
    /// The kind's whole status.
    type Status: Serialize + Send + Sync;
    /// The cloud's kubeconfig token source.
    type Tokens<'a>: TokenSource + Send + Sync
    where
        Self: 'a;

    /// Names, limits and intervals.
    fn profile(&self) -> ControlPlaneProfile;

    /// Where the cluster of `cp` lives, and whether that infrastructure is ready to build on.
    fn infrastructure(
        &self,
        cp: &Self::Object,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> impl Future<Output = Result<(Self::Infra, bool), ProviderError>> + Send;

    /// Where the cluster of a control plane being deleted lives, when that can still be told
    /// (`cluster` is `None` once the Cluster is gone); `None` when it cannot.
    fn cleanup_infrastructure(
        &self,
        cp: &Self::Object,
        cluster: Option<&Cluster>,
        client: &kube::Client,
        cluster_name: &str,
    ) -> impl Future<Output = Result<Option<Self::Infra>, ProviderError>> + Send;

    /// Clients and the cluster's cloud name for `infra` (`cluster_name`: the Cluster's); every
    /// cloud call is counted in `calls`.
    fn connect(
        &self,
        cp: &Self::Object,
        infra: Self::Infra,
        client: &kube::Client,
        calls: &CloudCalls,
        cluster_name: &str,
    ) -> impl Future<Output = Result<Self::Scope, ProviderError>> + Send;

    /// The cluster's name in the cloud.
    fn name<'s>(&self, scope: &'s Self::Scope) -> &'s str;

    /// The user's tags for everything made for the Cluster.
    fn additional_tags<'s>(&self, scope: &'s Self::Scope) -> &'s BTreeMap<String, String>;

    /// The cluster, or `None` when the cloud has none of that name.
    fn describe(
        &self,
        scope: &Self::Scope,
    ) -> impl Future<Output = Result<Option<ManagedCluster<Self::Detail>>, ProviderError>> + Send;

    /// The state of an update or upgrade the cloud started; `None` when it no longer knows it.
    fn operation_state(
        &self,
        scope: &Self::Scope,
        operation: &Operation,
    ) -> impl Future<Output = Result<Option<OperationState>, ProviderError>> + Send;

    /// What else the cloud compares, read only when the cluster is ours and idle.
    fn observe_more(
        &self,
        scope: &Self::Scope,
        cp: &Self::Object,
    ) -> impl Future<Output = Result<Self::Extra, ProviderError>> + Send;

    /// The cloud's own difference, once the shared steps are done.
    fn diff(
        &self,
        cp: &Self::Object,
        cluster: &ManagedCluster<Self::Detail>,
        extra: &Self::Extra,
    ) -> CloudStep<Self::Change>;

    /// What `change` does, for the conditions (`name`: the cluster's cloud name).
    fn describe_change(&self, change: &Self::Change, name: &str) -> String;

    /// Starts creating the cluster at `version` (`spec.version`, validated).
    fn create(
        &self,
        scope: &Self::Scope,
        cp: &Self::Object,
        version: &KubeVersion,
        request: &Request,
    ) -> impl Future<Output = Result<Created<Self::Detail>, ProviderError>> + Send;

    /// Tags the cluster `id` as ours.
    fn adopt(
        &self,
        scope: &Self::Scope,
        id: &str,
        request: &Request,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send;

    /// Starts the version step to `to`.
    fn upgrade(
        &self,
        scope: &Self::Scope,
        to: &KubeVersion,
        request: &Request,
    ) -> impl Future<Output = Result<Started, ProviderError>> + Send;

    /// Starts the cloud's own change.
    fn update(
        &self,
        scope: &Self::Scope,
        cp: &Self::Object,
        change: &Self::Change,
        request: &Request,
    ) -> impl Future<Output = Result<Started, ProviderError>> + Send;

    /// Asks the cloud to delete the cluster.
    fn delete(
        &self,
        scope: &Self::Scope,
    ) -> impl Future<Output = Result<Deletion, ProviderError>> + Send;

    /// The token source of `<cluster>-kubeconfig`.
    fn tokens<'a>(&'a self, scope: &'a Self::Scope) -> Self::Tokens<'a>;

    /// The exec plugin of `<cluster>-user-kubeconfig`.
    fn exec_plugin(&self, scope: &Self::Scope) -> ExecPlugin;

    /// The kind's whole status from the shared block and the cloud's view (`None` when there is
    /// no cluster of ours to report on).
    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<Self::Detail>>,
    ) -> Self::Status;
}

/// The generic ControlPlane reconciler over the cloud `C`.
pub struct ControlPlaneReconciler<C: ControlPlaneCloud> {
    cloud: C,
    provider: &'static str,
    pacer: crate::pacing::operations::Pacer,
    looks: crate::pacing::looks::Looks<Observed<C::Detail, C::Extra>>,
}

impl<C: ControlPlaneCloud> ControlPlaneReconciler<C> {
    /// A reconciler for `cloud`; `provider` is the provider's short name (the ownership tag's).
    pub fn new(provider: &'static str, cloud: C) -> Self {
        Self {
            cloud,
            provider,
            pacer: crate::pacing::operations::Pacer::default(),
            looks: crate::pacing::looks::Looks::default(),
        }
    }

    /// The cloud.
    pub fn cloud(&self) -> &C {
        &self.cloud
    }
}

/// What happens to `status.operation`.
enum OperationChange {
    Keep,
    Set(Operation),
    Clear,
}

/// What acting on the plan did.
struct Acted<D> {
    operation: OperationChange,
    cluster: Option<ManagedCluster<D>>,
    overrides: Option<RequestOverridesStatus>,
    error: Option<ProviderError>,
    requeue: Option<Duration>,
    blocked_on_pools: Option<String>,
}

impl<D> Acted<D> {
    fn new(operation: OperationChange) -> Self {
        Self {
            operation,
            cluster: None,
            overrides: None,
            error: None,
            requeue: None,
            blocked_on_pools: None,
        }
    }

    fn requeue(mut self, after: Duration) -> Self {
        self.requeue = Some(after);
        self
    }

    fn failed(error: ProviderError) -> Self {
        Self {
            error: Some(error),
            ..Self::new(OperationChange::Clear)
        }
    }

    /// What a started change leaves to track and when to look again.
    fn started(
        started: Started,
        kind: OperationKind,
        now: jiff::Timestamp,
        p: &ControlPlaneProfile,
    ) -> Self {
        match started {
            // Just started: the first look comes soon, then later and later
            // (`Operation::look_again_after`).
            Started::Operation(id) => {
                Self::new(OperationChange::Set(Operation::new(id, kind, now))).requeue(p.settle())
            }
            Started::Untracked => Self::new(OperationChange::Clear).requeue(p.poll),
            Started::Done => Self::new(OperationChange::Clear).requeue(p.settle()),
            Started::BlockedOnPools(why) => Self {
                blocked_on_pools: Some(why),
                ..Self::new(OperationChange::Clear)
            }
            .requeue(p.poll),
        }
    }
}

/// Everything observed in a pass.
struct Observed<D, X> {
    cluster: Option<ManagedCluster<D>>,
    tracked: Option<Tracked>,
    extra: X,
}

impl<C: ControlPlaneCloud> ControlPlaneReconciler<C> {
    async fn observe(
        &self,
        scope: &C::Scope,
        cp: &C::Object,
        owner: &Owner,
        operation: Option<&Operation>,
    ) -> Result<Observed<C::Detail, C::Extra>, ProviderError> {
        let mut observed = Observed {
            cluster: self.cloud.describe(scope).await?,
            tracked: None,
            extra: C::Extra::default(),
        };
        let Some(cluster) = &observed.cluster else {
            return Ok(observed);
        };
        if !owner.owns(&cluster.tags) {
            return Ok(observed);
        }
        if let Some(op) = operation {
            let state = match op.kind {
                OperationKind::Create | OperationKind::Delete => None,
                OperationKind::Upgrade | OperationKind::Update => {
                    self.cloud.operation_state(scope, op).await?
                }
            };
            observed.tracked = Some(Tracked {
                kind: op.kind,
                state,
            });
        }
        let busy = matches!(
            observed.tracked,
            Some(Tracked {
                state: Some(OperationState::Running),
                ..
            })
        );
        if cluster.lifecycle == Lifecycle::Running && !busy {
            observed.extra = self.cloud.observe_more(scope, cp).await?;
        }
        Ok(observed)
    }

    async fn act(
        &self,
        plan: &Plan<C::Change>,
        scope: &C::Scope,
        cp: &C::Object,
        observed: &Observed<C::Detail, C::Extra>,
        request: &Request,
        version: &KubeVersion,
    ) -> Acted<C::Detail> {
        let profile = self.cloud.profile();
        let now = request.now;
        let previous = cp.status_common().and_then(|s| s.operation.clone());
        match plan {
            Plan::Create => match self.cloud.create(scope, cp, version, request).await {
                Ok(created) => {
                    tracing::info!(cluster = self.cloud.name(scope), "cluster creation started");
                    Acted {
                        cluster: created.cluster,
                        overrides: created.overrides,
                        ..Acted::new(OperationChange::Set(Operation::new(
                            created.id,
                            OperationKind::Create,
                            now,
                        )))
                    }
                    .requeue(profile.settle())
                }
                Err(e) => Acted::failed(e),
            },
            Plan::NameConflict { conflict, .. } => Acted::failed(ProviderError::terminal(
                Reason::NameConflict,
                conflict.message(
                    &format!("{} cluster", profile.cloud),
                    self.cloud.name(scope),
                ),
            )),
            Plan::Adopt { id } => match self.cloud.adopt(scope, id, request).await {
                Ok(()) => Acted::new(OperationChange::Clear).requeue(profile.settle()),
                Err(e) => Acted::failed(e),
            },
            // Our tags put back: the same call as adopting.
            Plan::Tag(_) => {
                let id = observed
                    .cluster
                    .as_ref()
                    .map(|c| c.id.as_str())
                    .unwrap_or_default();
                match self.cloud.adopt(scope, id, request).await {
                    Ok(()) => Acted::new(OperationChange::Keep).requeue(profile.settle()),
                    Err(e) => Acted::failed(e),
                }
            }
            Plan::Wait(Wait::Creating) => {
                let id = observed
                    .cluster
                    .as_ref()
                    .map(|c| c.id.clone())
                    .unwrap_or_default();
                let op = previous
                    .filter(|op| op.kind == OperationKind::Create)
                    .unwrap_or_else(|| Operation::new(id, OperationKind::Create, now));
                let after = self
                    .pacer
                    .look_again_after(&op, now, profile.settle(), profile.poll);
                Acted::new(OperationChange::Set(op)).requeue(after)
            }
            Plan::Wait(Wait::Updating { .. } | Wait::Pending(_)) => {
                let after = previous.as_ref().map_or(profile.poll, |op| {
                    self.pacer
                        .look_again_after(op, now, profile.settle(), profile.poll)
                });
                Acted::new(OperationChange::Keep).requeue(after)
            }
            Plan::Wait(Wait::Deleting | Wait::Cloud(_)) => {
                Acted::new(OperationChange::Clear).requeue(profile.poll)
            }
            Plan::Failed(message) => {
                Acted::failed(ProviderError::terminal(Reason::CloudError, message.clone()))
            }
            Plan::Invalid(message) => Acted::failed(ProviderError::terminal(
                Reason::InvalidSpec,
                message.clone(),
            )),
            Plan::Upgrade { to } => match self.cloud.upgrade(scope, to, request).await {
                Ok(started) => Acted::started(started, OperationKind::Upgrade, now, &profile),
                Err(e) => Acted::failed(e),
            },
            Plan::Update(change) => match self.cloud.update(scope, cp, change, request).await {
                Ok(started) => Acted::started(started, OperationKind::Update, now, &profile),
                Err(e) => Acted::failed(e),
            },
            Plan::Nothing => Acted::new(OperationChange::Clear),
        }
    }

    /// Writes the kubeconfig Secrets of `cluster`, served at `server`; returns when the
    /// contract Secret's token expires.
    async fn kubeconfig(
        &self,
        scope: &C::Scope,
        cp: &C::Object,
        ctx: &PassContext,
        cluster: &ManagedCluster<C::Detail>,
        server: &contract::api::ApiEndpoint,
    ) -> Result<jiff::Timestamp, ProviderError> {
        let cloud = self.cloud.profile().cloud;
        let ca_pem = match &cluster.ca_pem {
            Ok(Some(ca)) => ca,
            Ok(None) => {
                return Err(ProviderError::cloud(
                    "cloud_response",
                    format!(
                        "{cloud} has not published the CA of {} yet",
                        self.cloud.name(scope)
                    ),
                ));
            }
            Err(message) => return Err(ProviderError::cloud("cloud_response", message.clone())),
        };
        let owner = cp
            .controller_owner_ref(&())
            .ok_or_else(|| ProviderError::cloud("internal", "the control plane has no UID yet"))?;
        let namespace = cp.namespace().unwrap_or_default();
        let cluster_name = ctx.cluster.name_any();
        let secrets = KubeconfigSecrets {
            client: &ctx.client,
            field_manager: ctx.field_manager,
            namespace: &namespace,
            cluster_name: &cluster_name,
            owner,
        };
        let target = KubeconfigTarget {
            server,
            ca_pem,
            endpoints: &cluster.endpoints,
            preferred: cp
                .spec_common()
                .endpoint_access
                .effective_preferred()
                .endpoint_name(),
            plugin: self.cloud.exec_plugin(scope),
        };
        secrets
            .ensure(&target, &self.cloud.tokens(scope), ctx.now)
            .await
    }
}

impl<C: ControlPlaneCloud> Reconciler<C::Object> for ControlPlaneReconciler<C> {
    async fn reconcile(
        &self,
        cp: Arc<C::Object>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let profile = self.cloud.profile();
        let cluster_name = ctx.cluster.name_any();
        let namespace = cp.namespace().unwrap_or_default();
        let previous = cp.status_common().cloned().unwrap_or_default();

        // The infrastructure first: no cloud call until it is there.
        let (infra, infra_ready) = self
            .cloud
            .infrastructure(&cp, &ctx.cluster, &ctx.client)
            .await?;
        if let Some(reference) = ctx.cluster.infrastructure_ref()
            && !(infra_ready && ctx.cluster.infrastructure_provisioned())
        {
            return Ok(Pass::new()
                .conditions(waiting_set(
                    ConditionRole::ControlPlane,
                    Reason::WaitingForInfrastructure,
                    format!(
                        "Waiting for the Cluster's infrastructure ({}) to be provisioned",
                        reference.kind
                    ),
                ))
                .requeue_after(profile.poll));
        }

        // The CRD already refuses a version without "v" and downgrades at admission.
        let spec = cp.spec_common();
        let version: KubeVersion = spec.version.parse().map_err(|e| {
            ProviderError::terminal(Reason::InvalidSpec, format!("spec.version: {e}"))
        })?;
        let scope = self
            .cloud
            .connect(&cp, infra, &ctx.client, &ctx.cloud_calls, &cluster_name)
            .await?;
        let name = self.cloud.name(&scope).to_string();
        let owner = Owner::new(self.provider, &namespace, &cluster_name);

        let intent = ControlPlaneIntent {
            cloud: profile.cloud,
            name: &name,
            owner: &owner,
            adopt: spec.adopt,
            version,
            minors_only: profile.minors_only,
        };
        let plan_from = |observed: &Observed<C::Detail, C::Extra>| {
            let facts = observed.cluster.as_ref().map(|c| ClusterFacts {
                id: &c.id,
                lifecycle: &c.lifecycle,
                version: &c.version,
                tags: &c.tags,
            });
            plan::control_plane(
                facts,
                observed.tracked.as_ref(),
                &intent,
                || match &observed.cluster {
                    Some(c) => self.cloud.diff(&cp, c, &observed.extra),
                    None => CloudStep::Nothing,
                },
            )
        };
        // At rest, the last look is good for the rest interval (module docs); a plan from it
        // that would change anything is made again from a fresh look.
        let uid = cp.uid().unwrap_or_default();
        let generation = cp.meta().generation;
        let clock = std::time::Instant::now();
        let at_rest = previous.ready && previous.operation.is_none();
        let good_for = profile.rest.min(ctx.sync_period);
        let mut reused = at_rest
            .then(|| self.looks.recent(&uid, generation, good_for, clock))
            .flatten();
        let mut plan = None;
        if let Some((observed, _)) = &reused {
            let from_look = plan_from(observed);
            if matches!(from_look, Plan::Nothing) {
                plan = Some(from_look);
            } else {
                reused = None;
            }
        }
        let (observed, plan) = match (reused.as_ref(), plan) {
            (Some((observed, _)), Some(plan)) => (observed.clone(), plan),
            _ => {
                let observed = Arc::new(
                    self.observe(&scope, &cp, &owner, previous.operation.as_ref())
                        .await?,
                );
                let plan = plan_from(&observed);
                (observed, plan)
            }
        };

        let request = Request::new(
            owner.tags(self.cloud.additional_tags(&scope)),
            ctx.now,
            cp.uid().unwrap_or_default(),
            cp.meta().generation,
            profile.token_limits,
        );
        let acted = self
            .act(&plan, &scope, &cp, &observed, &request, &version)
            .await;

        // Report on the cluster only when it is ours.
        let cluster = acted
            .cluster
            .as_ref()
            .or(observed.cluster.as_ref())
            .filter(|_| plan.reports_on_it());
        let endpoints = cluster.map(|c| c.endpoints.clone()).unwrap_or_default();
        let endpoint = EndpointChoice::new(
            spec.control_plane_endpoint.as_ref(),
            contract::endpoint::endpoint_applied_by(
                cp.meta().managed_fields.as_deref().unwrap_or_default(),
                ctx.field_manager,
            ),
            &previous.endpoints,
            &endpoints,
            &spec.endpoint_access,
        );
        let serving = cluster.is_some_and(|c| c.lifecycle.serving());
        let mut kubeconfig_error = None;
        let mut expires_at = None;
        if serving && let (Some(c), Some(server)) = (cluster, endpoint.server()) {
            match self.kubeconfig(&scope, &cp, ctx, c, server).await {
                Ok(expiry) => expires_at = Some(expiry),
                Err(e @ ProviderError::Kube(_)) => return Err(e),
                Err(e) => kubeconfig_error = Some(e),
            }
        }
        let kubeconfig_ready = expires_at.is_some();
        let ready = serving && kubeconfig_ready;
        let settled = ready
            && matches!(plan, Plan::Nothing)
            && acted.error.is_none()
            && kubeconfig_error.is_none();
        let look_age = match (&reused, settled) {
            (Some((_, age)), true) => Some(*age),
            (None, true) => {
                self.looks.remember(
                    &uid,
                    generation,
                    observed.clone(),
                    clock,
                    good_for.saturating_mul(2),
                );
                Some(Duration::ZERO)
            }
            (_, false) => {
                self.looks.forget(&uid);
                None
            }
        };
        let initialized = ready || previous.initialized;
        let operation = match &acted.operation {
            OperationChange::Keep => previous.operation.clone(),
            OperationChange::Set(op) => Some(op.clone()),
            OperationChange::Clear => None,
        };
        self.pacer.passed(
            previous.operation.as_ref(),
            operation.as_ref(),
            serving,
            ctx.now,
        );
        let overrides = acted
            .overrides
            .clone()
            .or_else(|| cp.request_overrides_status().cloned());
        let version_reported = cluster.map(|c| normalize(&c.version));
        let common = ControlPlaneStatusCommon {
            initialization: initialized.then_some(ControlPlaneInitialization {
                control_plane_initialized: Some(true),
            }),
            initialized,
            ready,
            external_managed_control_plane: true,
            version: version_reported.clone(),
            versions: version_reported
                .into_iter()
                .map(|version| VersionReplicas {
                    version,
                    replicas: None,
                })
                .collect(),
            endpoints,
            cloud_id: cluster.map(|c| c.id.clone()).filter(|id| !id.is_empty()),
            operation,
            kubeconfig: expires_at.map(|e| KubeconfigStatus {
                expires_at: Some(Time(e)),
            }),
            conditions: Vec::new(),
        };
        let status = self.cloud.status(common, overrides, cluster);

        let current = cluster.and_then(|c| KubeVersion::parse(&normalize(&c.version)).ok());
        let change = match &plan {
            Plan::Update(change) => Some(self.cloud.describe_change(change, &name)),
            _ => None,
        };
        let facts = ControlPlaneFacts {
            cloud: profile.cloud,
            name: &name,
            desired: version,
            current,
            serving,
            kubeconfig_ready,
            blocked_on_pools: acted.blocked_on_pools.as_deref(),
            change,
        };
        let mut pass = Pass::new()
            .status(&status)
            .conditions(plan::control_plane_conditions(&plan, &facts));
        if let Some(endpoint) = endpoint.to_publish() {
            pass = pass.spec_fields(&json!({ "controlPlaneEndpoint": endpoint }));
        }
        let mut requeue = acted.requeue.unwrap_or(if matches!(plan, Plan::Nothing) {
            // The next look when the last one's rest interval is over.
            good_for
                .saturating_sub(look_age.unwrap_or_default())
                .max(Duration::from_secs(1))
        } else {
            profile.poll
        });
        if let Some(expiry) = expires_at {
            let lifetime = self.cloud.tokens(&scope).lifetime();
            requeue = requeue.min(until_refresh(expiry, ctx.now, lifetime));
        }
        pass = pass.requeue_after(requeue);
        match acted.error.or(kubeconfig_error) {
            Some(error) => Ok(pass.with_error(error)),
            None => Ok(pass),
        }
    }

    async fn cleanup(
        &self,
        cp: Arc<C::Object>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        self.looks.forget(&cp.uid().unwrap_or_default());
        let profile = self.cloud.profile();
        let previous = cp.status_common();
        let created_something =
            previous.is_some_and(|s| s.cloud_id.is_some() || s.operation.is_some());
        let kind = C::Object::kind(&()).to_string();
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, &kind)? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let infra = self
            .cloud
            .cleanup_infrastructure(&cp, ctx.cluster.as_deref(), &ctx.client, &cluster_name)
            .await;
        let infra = match infra {
            Ok(Some(infra)) => infra,
            // Nothing can have been created without knowing where: nothing to delete.
            _ if !created_something => return Ok(Cleanup::Done),
            Ok(None) => {
                return Err(ProviderError::terminal(
                    Reason::InvalidSpec,
                    format!(
                        "where the {} cluster to delete lives is unknown: the Cluster's infrastructure object is gone and spec.infrastructure is not set; set spec.infrastructure (its region and identity) on this control plane to let the deletion go on",
                        profile.cloud
                    ),
                ));
            }
            Err(e) => return Err(e),
        };
        let scope = self
            .cloud
            .connect(&cp, infra, &ctx.client, &ctx.cloud_calls, &cluster_name)
            .await?;
        let name = self.cloud.name(&scope).to_string();
        let Some(found) = self.cloud.describe(&scope).await? else {
            return Ok(Cleanup::Done);
        };
        let namespace = cp.namespace().unwrap_or_default();
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        let what = format!("{} cluster", profile.cloud);
        if !owner.owns(&found.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place(&what, &name),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        let deleting = || {
            Cleanup::pending(
                profile.poll,
                format!("{} is deleting cluster {name}", profile.cloud),
            )
        };
        if found.lifecycle == Lifecycle::Deleting {
            return Ok(deleting());
        }
        match self.cloud.delete(&scope).await? {
            Deletion::Started => Ok(deleting()),
            Deletion::Gone => Ok(Cleanup::Done),
            Deletion::Blocked(message) => Ok(Cleanup::pending(
                profile.poll,
                format!(
                    "{} cannot delete cluster {name} yet: {message}",
                    profile.cloud
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delete_request_s_outcome_is_started_gone_blocked_or_an_error() {
        assert!(matches!(
            Deletion::after(Ok(Deletion::Started)),
            Ok(Deletion::Started)
        ));
        assert!(matches!(
            Deletion::after(Err(CloudError::NotFound("gone".into()))),
            Ok(Deletion::Gone)
        ));
        assert!(matches!(
            Deletion::after(Err(CloudError::InUse("pools left".into()))),
            Ok(Deletion::Blocked(m)) if m == "pools left"
        ));
        assert!(
            Deletion::after(Err(CloudError::Unauthorized("no".into()))).is_err(),
            "a refusal is not taken as done"
        );
    }
}
