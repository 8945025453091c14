//! The InfraMachinePool role, written once: a generic [`Reconciler`] over a narrow
//! [`MachinePoolCloud`].
//!
//! Each pass, on every cloud:
//!
//! 1. without the owning MachinePool, the whole waiting condition set; with it, the spec
//!    validated ([`MachinePoolCloud::validate`]) and the pool located
//!    ([`MachinePoolCloud::locate`]): nothing touches the cloud until the control plane is
//!    initialized (the MachinePool's `replicas-managed-by` annotation is still kept right);
//! 2. observes in a fixed order: the pool, the operation in `status.operation`, the provider IDs
//!    of its nodes;
//! 3. writes back to the MachinePool (who owns the count, and the autoscaler's count) by
//!    [`contract::scaling::write_back`];
//! 4. plans one step with [`contract::plan::pool`] and makes at most one call that changes
//!    something;
//! 5. reports `spec.providerIDList` (a provider ID leaves only when its instance is gone), the
//!    shared status (the cloud adds its own block), the whole condition set
//!    ([`contract::plan::pool_conditions`]) and when to look again.
//!
//! Deletion follows one policy ([`CleanupContext::cluster_to_clean`]): with the Cluster gone the
//! pool is still found by the Cluster's name; only a pool tagged as ours is deleted.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use contract::api::{
    MachinePoolInitialization, MachinePoolSpecCommon, MachinePoolStatusCommon, Operation,
    OperationKind, RequestOverridesStatus,
};
use contract::capi::MachinePool;
use contract::conditions::{ConditionRole, ConditionStatus, Reason, sentence, waiting_set};
use contract::idempotency::TokenLimits;
use contract::ownership::Owner;
use contract::plan::{
    self, CloudStep, Lifecycle, OperationState, Plan, PoolFacts, PoolIntent, PoolReport, Tracked,
};
use contract::scaling::{self, ScalingIntent};
use contract::version::{KubeVersion, normalize};
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

use crate::CloudCalls;
use crate::CloudError;
use crate::control_plane::Request;
use crate::{
    Cleanup, CleanupContext, ClusterRef, Pass, PassContext, ProviderError, ProviderObject,
    Reconciler,
};

/// How long after asking the cloud to create a pool a NotFound is taken as "not listed yet"
/// rather than "gone" (clouds are eventually consistent).
pub const CREATE_VISIBILITY_GRACE: Duration = Duration::from_secs(60);

/// An InfraMachinePool kind, as the generic reconciler reads it: the shared spec and status.
pub trait ManagedMachinePool: ProviderObject {
    /// The shared spec block (machine type, scaling, labels, taints, cloud name, adopt, …).
    fn spec_common(&self) -> &MachinePoolSpecCommon;
    /// The shared status block, when there is a status.
    fn status_common(&self) -> Option<&MachinePoolStatusCommon>;
    /// `status.requestOverrides`.
    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus>;
    /// The cloud's id of the pool, as an earlier pass recorded it in the status.
    fn cloud_id(&self) -> Option<&str>;
}

/// The cloud's pool, normalised; `D` is the cloud's own view of it.
#[derive(Debug, Clone)]
pub struct ManagedPool<D> {
    /// The cloud's id of it.
    pub id: String,
    /// Its lifecycle.
    pub lifecycle: Lifecycle,
    /// Its state in the cloud's words.
    pub state: String,
    /// The version its nodes run (`1.31`, `v1.31.2`), when the cloud says.
    pub version: Option<String>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// The cloud's health issues.
    pub issues: Vec<String>,
    /// The node count the cloud aims for.
    pub desired_size: Option<i32>,
    /// The cloud's own view.
    pub detail: D,
}

impl<D> ManagedPool<D> {
    /// The minor version its nodes run (`1.31.4` → v1.31), when the cloud says and it parses.
    pub fn minor(&self) -> Option<KubeVersion> {
        self.version
            .as_deref()
            .and_then(|v| KubeVersion::parse(&normalize(v)).ok())
            .map(|v| v.without_patch())
    }

    /// What the shared planner needs of it.
    pub fn facts(&self) -> PoolFacts<'_> {
        PoolFacts {
            id: &self.id,
            lifecycle: &self.lifecycle,
            state: &self.state,
            version: self.minor(),
            tags: &self.tags,
            issues: &self.issues,
            desired_size: self.desired_size,
        }
    }
}

/// What a cloud says about itself to the generic reconciler.
#[derive(Debug, Clone, Copy)]
pub struct MachinePoolProfile {
    /// The cloud's short name (`EKS`).
    pub cloud: &'static str,
    /// What the cloud calls a pool (`node group`).
    pub noun: &'static str,
    /// The value written into `cluster.x-k8s.io/replicas-managed-by` for an autoscaled pool.
    pub replicas_manager: &'static str,
    /// Its idempotency tokens' limits.
    pub token_limits: &'static TokenLimits,
    /// How soon to look again while the cloud is busy.
    pub poll: Duration,
    /// How soon to look again at rest.
    pub rest: Duration,
}

impl MachinePoolProfile {
    /// How soon to look again first after starting an operation.
    pub fn settle(&self) -> Duration {
        self.poll.min(Duration::from_secs(5))
    }
}

/// Whether the pool can be reached yet.
pub enum Located<S> {
    /// It can: the scope of the pass.
    Found(S),
    /// Not yet (or, on deletion, no longer): no cloud call; the message says what is awaited.
    NotYet(String),
}

/// A create the cloud accepted.
#[derive(Debug)]
pub struct PoolCreated<D> {
    /// The id of the create to track.
    pub id: String,
    /// Set when `requestOverrides` went out with the request.
    pub overrides: Option<RequestOverridesStatus>,
    /// The pool as the create call returned it.
    pub pool: Option<ManagedPool<D>>,
}

/// What a create call found.
#[derive(Debug)]
pub enum Creation<D> {
    /// It started.
    Started(Box<PoolCreated<D>>),
    /// The pool exists already (a pass that crashed before recording it made it): the next pass
    /// sees it.
    Exists(String),
}

/// Everything a cloud call of the pool role gets about the pool.
pub struct PoolCall<'a, O, V> {
    /// The InfraMachinePool.
    pub obj: &'a O,
    /// Its owning MachinePool.
    pub machine_pool: &'a MachinePool,
    /// The pool's name in the cloud.
    pub name: &'a str,
    /// The spec, validated ([`MachinePoolCloud::validate`]).
    pub spec: &'a V,
    /// Who owns the node count.
    pub scaling: ScalingIntent,
    /// Tags and idempotency tokens.
    pub request: &'a Request,
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

/// The cloud side of the InfraMachinePool role.
pub trait MachinePoolCloud: Send + Sync + 'static {
    /// The InfraMachinePool kind.
    type Object: ManagedMachinePool;
    /// The spec in the cloud's terms, validated.
    type Spec: Send + Sync;
    /// Clients, names and what the pool needs of its cluster, for one pass.
    type Scope: Send + Sync;
    /// The cloud's own view of its pool.
    type Detail: Send + Sync;
    /// The cloud's own change.
    type Change: Clone + Debug + Send + Sync;
    /// The kind's whole status.
    type Status: Serialize + Send + Sync;

    /// Names, limits and intervals.
    fn profile(&self) -> MachinePoolProfile;

    /// The spec in the cloud's terms, or what is wrong with it (reason `InvalidSpec`).
    fn validate(&self, obj: &Self::Object) -> Result<Self::Spec, ProviderError>;

    /// The pool's name in the cloud.
    fn name(&self, obj: &Self::Object) -> Result<String, ProviderError>;

    /// Finds the cluster the pool lives in. With `require_initialized`, [`Located::NotYet`]
    /// until its control plane is initialized.
    fn locate(
        &self,
        obj: &Self::Object,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &CloudCalls,
        require_initialized: bool,
    ) -> impl Future<Output = Result<Located<Self::Scope>, ProviderError>> + Send;

    /// The control plane's version, as its status reports it.
    fn control_plane_version(&self, scope: &Self::Scope) -> Option<KubeVersion>;

    /// The user's tags for everything made for the Cluster.
    fn additional_tags<'s>(&self, scope: &'s Self::Scope) -> &'s BTreeMap<String, String>;

    /// The pool's name with where it lives, for messages (`ng (in EKS cluster c)`).
    fn place(&self, scope: &Self::Scope, name: &str) -> String;

    /// The pool, or `None` when the cloud has none of that name.
    fn describe(
        &self,
        scope: &Self::Scope,
        name: &str,
    ) -> impl Future<Output = Result<Option<ManagedPool<Self::Detail>>, ProviderError>> + Send;

    /// The state of an update or upgrade the cloud started; `None` when it no longer knows it.
    fn operation_state(
        &self,
        scope: &Self::Scope,
        name: &str,
        operation: &Operation,
    ) -> impl Future<Output = Result<Option<OperationState>, ProviderError>> + Send;

    /// The provider IDs of the pool's nodes, by the shared rule
    /// ([`contract::scaling::provider_id_list`]): an ID stays while its instance exists.
    fn provider_ids(
        &self,
        scope: &Self::Scope,
        name: &str,
    ) -> impl Future<Output = Result<Vec<String>, ProviderError>> + Send;

    /// The cloud's own difference (scaling, labels, taints, update strategy).
    fn diff(
        &self,
        call: &PoolCall<'_, Self::Object, Self::Spec>,
        pool: &ManagedPool<Self::Detail>,
    ) -> CloudStep<Self::Change>;

    /// What `change` does, for the conditions.
    fn describe_change(
        &self,
        change: &Self::Change,
        pool: Option<&ManagedPool<Self::Detail>>,
    ) -> String;

    /// Starts creating the pool at `version` (`None`: the cluster's).
    fn create(
        &self,
        scope: &Self::Scope,
        call: &PoolCall<'_, Self::Object, Self::Spec>,
        version: Option<&KubeVersion>,
    ) -> impl Future<Output = Result<Creation<Self::Detail>, ProviderError>> + Send;

    /// Puts `tags` on the pool `id`.
    fn tag(
        &self,
        scope: &Self::Scope,
        id: &str,
        tags: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send;

    /// Starts the version step to `to`; returns the operation's id.
    fn upgrade(
        &self,
        scope: &Self::Scope,
        name: &str,
        to: &KubeVersion,
    ) -> impl Future<Output = Result<String, ProviderError>> + Send;

    /// Starts the cloud's own change; returns the operation's id.
    fn update(
        &self,
        scope: &Self::Scope,
        name: &str,
        change: &Self::Change,
    ) -> impl Future<Output = Result<String, ProviderError>> + Send;

    /// Asks the cloud to delete the pool.
    fn delete(
        &self,
        scope: &Self::Scope,
        name: &str,
    ) -> impl Future<Output = Result<Deletion, ProviderError>> + Send;

    /// The kind's whole status from the shared block and the cloud's view.
    fn status(
        &self,
        common: MachinePoolStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        pool: Option<&ManagedPool<Self::Detail>>,
        name: &str,
    ) -> Self::Status;
}

/// The generic InfraMachinePool reconciler over the cloud `C`.
pub struct MachinePoolReconciler<C> {
    cloud: C,
    provider: &'static str,
    pacer: crate::pacing::operations::Pacer,
}

impl<C: MachinePoolCloud> MachinePoolReconciler<C> {
    /// A reconciler for `cloud`; `provider` is the provider's short name (the ownership tag's).
    pub fn new(provider: &'static str, cloud: C) -> Self {
        Self {
            cloud,
            provider,
            pacer: crate::pacing::operations::Pacer::default(),
        }
    }
}

/// What the act step did.
struct Acted<D> {
    operation: Option<Operation>,
    created: Option<ManagedPool<D>>,
    overrides: Option<RequestOverridesStatus>,
    error: Option<ProviderError>,
}

impl<D> Default for Acted<D> {
    fn default() -> Self {
        Self {
            operation: None,
            created: None,
            overrides: None,
            error: None,
        }
    }
}

impl<D> Acted<D> {
    fn failed(error: ProviderError) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }

    fn started(
        result: Result<String, ProviderError>,
        kind: OperationKind,
        now: jiff::Timestamp,
    ) -> Self {
        match result {
            Ok(id) => Self {
                operation: Some(Operation::new(id, kind, now)),
                ..Self::default()
            },
            Err(e) => Self::failed(e),
        }
    }
}

/// `MachinePool.spec.template.spec.version` at minor granularity.
fn desired_version(pool: &MachinePool) -> Result<Option<KubeVersion>, ProviderError> {
    pool.version()
        .filter(|v| !v.is_empty())
        .map(|v| {
            KubeVersion::parse(&normalize(v))
                .map(|k| k.without_patch())
                .map_err(|e| {
                    ProviderError::terminal(
                        Reason::InvalidSpec,
                        format!(
                            "MachinePool {}: spec.template.spec.version: {e}",
                            pool.name_any()
                        ),
                    )
                })
        })
        .transpose()
}

/// Applies the MachinePool write-back (a merge patch), when there is one.
async fn patch_machine_pool(
    ctx: &PassContext,
    pool: &MachinePool,
    patch: Option<Value>,
) -> Result<(), ProviderError> {
    let Some(patch) = patch else { return Ok(()) };
    let api: Api<MachinePool> =
        Api::namespaced(ctx.client.clone(), &pool.namespace().unwrap_or_default());
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_string()),
        ..PatchParams::default()
    };
    api.patch(&pool.name_any(), &params, &Patch::Merge(&patch))
        .await?;
    tracing::info!(machine_pool = %pool.name_any(), %patch, "updated the MachinePool");
    Ok(())
}

impl<C: MachinePoolCloud> MachinePoolReconciler<C> {
    async fn act(
        &self,
        plan: &Plan<C::Change>,
        scope: &C::Scope,
        call: &PoolCall<'_, C::Object, C::Spec>,
        found_id: Option<&str>,
        control_plane_version: Option<KubeVersion>,
        version: Option<KubeVersion>,
    ) -> Acted<C::Detail> {
        let now = call.request.now;
        match plan {
            Plan::Create => {
                let at = contract::version::pool_creation_version(
                    version.as_ref(),
                    control_plane_version.as_ref(),
                );
                match self.cloud.create(scope, call, at.as_ref()).await {
                    Ok(Creation::Started(created)) => {
                        let created = *created;
                        Acted {
                            operation: Some(Operation::new(created.id, OperationKind::Create, now)),
                            created: created.pool,
                            overrides: created.overrides,
                            error: None,
                        }
                    }
                    Ok(Creation::Exists(message)) => {
                        tracing::info!(%message, "the pool exists already");
                        Acted::default()
                    }
                    Err(e) => Acted::failed(e),
                }
            }
            Plan::Adopt { id } => match self.cloud.tag(scope, id, &call.request.tags).await {
                Ok(()) => Acted::default(),
                Err(e) => Acted::failed(e),
            },
            Plan::Tag(missing) => match found_id {
                Some(id) => match self.cloud.tag(scope, id, missing).await {
                    Ok(()) => Acted::default(),
                    Err(e) => Acted::failed(e),
                },
                None => Acted::default(),
            },
            Plan::Update(change) => Acted::started(
                self.cloud.update(scope, call.name, change).await,
                OperationKind::Update,
                now,
            ),
            Plan::Upgrade { to } => Acted::started(
                self.cloud.upgrade(scope, call.name, to).await,
                OperationKind::Upgrade,
                now,
            ),
            Plan::NameConflict { conflict, .. } => {
                let profile = self.cloud.profile();
                Acted::failed(ProviderError::terminal(
                    Reason::NameConflict,
                    conflict.message(&format!("{} {}", profile.cloud, profile.noun), call.name),
                ))
            }
            Plan::Failed(message) => {
                Acted::failed(ProviderError::terminal(Reason::CloudError, message.clone()))
            }
            Plan::Invalid(message) => Acted::failed(ProviderError::terminal(
                Reason::InvalidSpec,
                message.clone(),
            )),
            Plan::Wait(_) | Plan::Nothing => Acted::default(),
        }
    }
}

impl<C: MachinePoolCloud> Reconciler<C::Object> for MachinePoolReconciler<C> {
    async fn reconcile(
        &self,
        obj: Arc<C::Object>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let profile = self.cloud.profile();
        let Some(machine_pool) = ctx.machine_pool.clone() else {
            return Ok(Pass::new()
                .conditions(waiting_set(
                    ConditionRole::MachinePool,
                    Reason::WaitingForInfrastructure,
                    "Waiting for the owning MachinePool",
                ))
                .requeue_after(profile.poll));
        };
        let namespace = obj.namespace().unwrap_or_default();
        let cluster_name = ctx.cluster.name_any();
        let spec = self.cloud.validate(&obj)?;
        let version = desired_version(&machine_pool)?;
        let name = self.cloud.name(&obj)?;
        let common = obj.spec_common();
        let intent = ScalingIntent::new(common.scaling.as_ref(), machine_pool.spec.replicas);

        let located = self
            .cloud
            .locate(
                &obj,
                ClusterRef::Live(&ctx.cluster),
                &ctx.client,
                &ctx.cloud_calls,
                true,
            )
            .await?;
        let scope = match located {
            Located::Found(scope) => scope,
            Located::NotYet(message) => {
                let write_back =
                    scaling::write_back(intent, &machine_pool, profile.replicas_manager, None);
                patch_machine_pool(ctx, &machine_pool, write_back).await?;
                return Ok(Pass::new()
                    .conditions(waiting_set(
                        ConditionRole::MachinePool,
                        Reason::WaitingForControlPlane,
                        sentence(&message),
                    ))
                    .requeue_after(profile.poll));
            }
        };
        let previous = obj.status_common().cloned().unwrap_or_default();
        let control_plane_version = self.cloud.control_plane_version(&scope);

        // Observe.
        let found = self.cloud.describe(&scope, &name).await?;
        let operation = previous.operation.clone();
        let tracked = match (&operation, &found) {
            (Some(op), Some(_)) => {
                let state = match op.kind {
                    OperationKind::Update | OperationKind::Upgrade => {
                        self.cloud.operation_state(&scope, &name, op).await?
                    }
                    OperationKind::Create | OperationKind::Delete => None,
                };
                Some(Tracked {
                    kind: op.kind,
                    state,
                })
            }
            _ => None,
        };
        let ids = self.cloud.provider_ids(&scope, &name).await?;
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        let tags = owner.tags(self.cloud.additional_tags(&scope));
        let ours = found.as_ref().map(|p| owner.owns(&p.tags));

        // The MachinePool first (a management write): the annotation and the autoscaler's count.
        let observed_count = found
            .as_ref()
            .filter(|_| ours == Some(true))
            .and_then(|p| p.desired_size);
        let write_back = scaling::write_back(
            intent,
            &machine_pool,
            profile.replicas_manager,
            observed_count,
        );
        patch_machine_pool(ctx, &machine_pool, write_back).await?;

        // Plan.
        let request = Request::new(
            tags.clone(),
            ctx.now,
            obj.uid().unwrap_or_default(),
            obj.meta().generation,
            profile.token_limits,
        );
        let call = PoolCall {
            obj: obj.as_ref(),
            machine_pool: &machine_pool,
            name: &name,
            spec: &spec,
            scaling: intent,
            request: &request,
        };
        let pool_intent = PoolIntent {
            cloud: profile.cloud,
            noun: profile.noun,
            name: &name,
            owner: &owner,
            adopt: common.adopt,
            tags: &tags,
            version,
            control_plane_version,
        };
        let create_pending = found.is_none()
            && operation.as_ref().is_some_and(|op| {
                op.kind == OperationKind::Create && op.age(ctx.now) < CREATE_VISIBILITY_GRACE
            });
        let plan = plan::pool(
            found.as_ref().map(ManagedPool::facts),
            tracked.as_ref(),
            create_pending,
            &pool_intent,
            match &found {
                Some(p) => self.cloud.diff(&call, p),
                None => CloudStep::Nothing,
            },
        );
        tracing::debug!(pool = %name, ?plan, "planned");

        // Act: at most one write.
        let found_id = found.as_ref().map(|p| p.id.as_str());
        let acted = self
            .act(
                &plan,
                &scope,
                &call,
                found_id,
                control_plane_version,
                version,
            )
            .await;

        // Report.
        let view = acted
            .created
            .as_ref()
            .or(found.as_ref())
            .filter(|_| ours != Some(false));
        let ids = if ours == Some(false) { Vec::new() } else { ids };
        let replicas = i32::try_from(ids.len()).unwrap_or(i32::MAX);
        let provisioned_now = view.is_some_and(|p| p.lifecycle.serving());
        let was_provisioned =
            previous.initialization.as_ref().and_then(|i| i.provisioned) == Some(true);
        let carried = operation
            .clone()
            .filter(|_| plan::carries_operation(&plan, tracked.as_ref()));
        let status_common = MachinePoolStatusCommon {
            initialization: (was_provisioned || provisioned_now).then_some(
                MachinePoolInitialization {
                    provisioned: Some(true),
                },
            ),
            ready: provisioned_now,
            replicas: Some(replicas),
            version: view.and_then(|p| p.version.as_deref()).map(normalize),
            operation: acted.operation.clone().or(carried),
            conditions: Vec::new(),
        };
        // While the cloud works on an operation: soon after it started, then later and later,
        // and close together where earlier ones of its kind finished (`contract::pace`).
        self.pacer.passed(
            previous.operation.as_ref(),
            status_common.operation.as_ref(),
            provisioned_now,
            ctx.now,
        );
        let busy = status_common.operation.as_ref().map_or(profile.poll, |op| {
            self.pacer
                .look_again_after(op, ctx.now, profile.settle(), profile.poll)
        });
        let overrides = acted
            .overrides
            .clone()
            .or_else(|| obj.request_overrides_status().cloned());
        let status = self.cloud.status(status_common, overrides, view, &name);

        let change = match &plan {
            Plan::Update(change) => Some(self.cloud.describe_change(change, found.as_ref())),
            _ => None,
        };
        let report = PoolReport {
            intent: pool_intent,
            observed: found
                .as_ref()
                .filter(|_| ours == Some(true))
                .map(ManagedPool::facts),
            tracked: tracked.as_ref(),
            running: ids.len(),
            change,
        };
        let (mut conditions, settled) = plan::pool_conditions(&plan, &report);
        conditions.push(plan::nodes_visible(
            ctx.cluster.remote_connection_probe(),
            &report,
            &C::Object::kind(&()),
        ));
        // At rest, look again after the rest interval; an autoscaled pool sooner, since its
        // count (and so providerIDList and MachinePool.spec.replicas) moves without us. A pool
        // waiting for its control plane to finish a version step is not at rest: the control
        // plane's progress does not trigger a pass here, so look again soon.
        let waiting_for_upgrade = conditions
            .iter()
            .any(|c| c.type_ == "Upgrading" && c.status == ConditionStatus::True);
        let requeue = if settled && acted.error.is_none() && !waiting_for_upgrade {
            if intent.is_autoscaled() {
                profile.rest.min(profile.poll.saturating_mul(5))
            } else {
                profile.rest
            }
        } else {
            busy
        };
        let pass = Pass::new()
            .spec_fields(&scaling::provider_id_fields(&ids, &common.provider_id_list))
            .status(&status)
            .conditions(conditions)
            .requeue_after(requeue);
        Ok(match acted.error {
            Some(error) => pass.with_error(error),
            None => pass,
        })
    }

    async fn cleanup(
        &self,
        obj: Arc<C::Object>,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        let profile = self.cloud.profile();
        let created_something =
            obj.cloud_id().is_some() || obj.status_common().is_some_and(|s| s.operation.is_some());
        let kind = C::Object::kind(&()).to_string();
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, &kind)? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let Ok(name) = self.cloud.name(&obj) else {
            // A name the cloud refuses: nothing can have been created under it.
            return Ok(Cleanup::Done);
        };
        let namespace = obj.namespace().unwrap_or_default();
        // With the Cluster gone the pool is still found, by the objects labelled with the
        // Cluster's name: one policy for every kind.
        let cluster = match ctx.cluster.as_deref() {
            Some(c) => ClusterRef::Live(c),
            None => ClusterRef::Gone {
                namespace: &namespace,
                name: &cluster_name,
            },
        };
        let located = self
            .cloud
            .locate(&obj, cluster, &ctx.client, &ctx.cloud_calls, false)
            .await;
        let scope = match located {
            Ok(Located::Found(scope)) => scope,
            Ok(Located::NotYet(message)) => {
                // No control plane (or no infrastructure) left: the cluster, and every pool in
                // it, went with it; clouds refuse to delete a cluster that still has pools.
                tracing::info!(%message, "nothing left to reach; releasing");
                return Ok(Cleanup::Done);
            }
            // A cluster spec that never let a pass reach the cloud: nothing can have been
            // created. (Missing credentials are not this case: they keep the finalizer.)
            Err(ProviderError::Terminal {
                reason: Reason::InvalidSpec,
                message,
            }) => {
                ctx.events
                    .warning(
                        Reason::InvalidSpec.as_str(),
                        "Delete",
                        format!("{message}; nothing to delete in {}", profile.cloud),
                    )
                    .await;
                return Ok(Cleanup::Done);
            }
            Err(error) => return Err(error),
        };
        let Some(found) = self.cloud.describe(&scope, &name).await? else {
            return Ok(Cleanup::Done);
        };
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        if !owner.owns(&found.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place(
                        &format!("{} {}", profile.cloud, profile.noun),
                        &self.cloud.place(&scope, &name),
                    ),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        let deleting = || {
            Cleanup::pending(
                profile.poll,
                format!("{} is deleting {} {name}", profile.cloud, profile.noun),
            )
        };
        if found.lifecycle == Lifecycle::Deleting {
            return Ok(deleting());
        }
        match self.cloud.delete(&scope, &name).await? {
            Deletion::Started => Ok(deleting()),
            Deletion::Gone => Ok(Cleanup::Done),
            Deletion::Blocked(message) => Ok(Cleanup::pending(
                profile.poll,
                format!(
                    "{} {name} is busy; deleting it once {} allows: {message}",
                    profile.noun, profile.cloud
                ),
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pools_version_is_read_at_minor_granularity() {
        let pool = |version: Option<&str>| ManagedPool {
            id: String::new(),
            lifecycle: Lifecycle::Running,
            state: String::new(),
            version: version.map(str::to_string),
            tags: BTreeMap::new(),
            issues: Vec::new(),
            desired_size: None,
            detail: (),
        };
        assert_eq!(pool(Some("1.31")).minor(), Some(KubeVersion::new(1, 31)));
        assert_eq!(pool(Some("1.31.4")).minor(), Some(KubeVersion::new(1, 31)));
        assert_eq!(pool(Some("latest")).minor(), None);
        assert_eq!(pool(None).minor(), None);
    }

    #[test]
    fn the_machine_pool_version_is_read_at_minor_granularity() {
        let mut pool: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp", "namespace": "ns"},
            "spec": {"clusterName": "c", "template": {"spec": {"bootstrap": {"dataSecretName": ""}}}},
        }))
        .unwrap();
        assert_eq!(desired_version(&pool).unwrap(), None);
        pool.spec.template.spec.version = Some("v1.31.4".into());
        assert_eq!(
            desired_version(&pool).unwrap(),
            Some(KubeVersion::new(1, 31))
        );
        pool.spec.template.spec.version = Some("latest".into());
        let err = desired_version(&pool).unwrap_err().to_string();
        assert!(err.contains("spec.template.spec.version"), "{err}");
    }
}
