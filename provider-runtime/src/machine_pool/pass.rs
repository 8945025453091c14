//! One pass of a pool: validate, locate, connect, observe, write back to the MachinePool, plan,
//! act, report (the module docs of [`super`] give the order and the rules).

use std::sync::Arc;

use contract::adoption::AdoptionPlan;
use contract::api::{
    MachinePoolInitialization, MachinePoolStatusCommon, Operation, OperationKind, PlannedChange,
    RequestOverridesStatus,
};
use contract::capi::MachinePool;
use contract::conditions::{ConditionRole, ConditionStatus, Reason, sentence, waiting_set};
use contract::ownership::Owner;
use contract::plan::{self, Adopting, CloudStep, Plan, PoolIntent, PoolReport, Tracked};
use contract::scaling::{self, ScalingIntent};
use contract::version::{KubeVersion, normalize};
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::Value;

use super::{
    CREATE_VISIBILITY_GRACE, DescribePoolChange, Located, MachinePoolCloud, MachinePoolProfile,
    ManagedMachinePool, ManagedPool, PoolConnected, PoolLook, PoolReach, PoolStep, PoolWant,
};
use crate::cluster_objects::{ControlPlaneNeed, pool_place};
use crate::control_plane::{ManagedControlPlane, Request, Started};
use crate::pacing::operations::Pacer;
use crate::{Cleanup, CleanupContext, ClusterRef, Pass, PassContext, ProviderError, Reconciler};

/// The generic InfraMachinePool reconciler over the cloud `C`.
pub struct MachinePoolReconciler<C> {
    pub(super) cloud: C,
    pub(super) provider: &'static str,
    pub(super) profile: MachinePoolProfile,
    pacer: Pacer,
}

impl<C: MachinePoolCloud> MachinePoolReconciler<C> {
    /// A reconciler for `cloud`, which says what it is in `profile`; `provider` is the
    /// provider's short name (the ownership tag's).
    pub fn new(provider: &'static str, profile: MachinePoolProfile, cloud: C) -> Self {
        Self {
            cloud,
            provider,
            profile,
            pacer: Pacer::default(),
        }
    }

    /// What the cloud says of its pools.
    pub fn profile(&self) -> &MachinePoolProfile {
        &self.profile
    }

    /// Finds the pool's cluster and connects to it; `NotYet` while there is nothing to reach
    /// (or its control plane is not as far as `need` says).
    pub(super) async fn reach(
        &self,
        obj: &C::Object,
        cluster: ClusterRef<'_>,
        client: &kube::Client,
        calls: &crate::CloudCalls,
        pool: &str,
        need: ControlPlaneNeed,
    ) -> Result<Located<(PoolConnected<C::Clients>, Option<KubeVersion>)>, ProviderError> {
        let place = match pool_place::<C::ControlPlane, C::Infra>(client, cluster, need, |cp| {
            cp.own_infrastructure()
        })
        .await?
        {
            Located::NotYet(why) => return Ok(Located::NotYet(why)),
            Located::Found(place) => place,
        };
        let version = place.version;
        let cluster_name = cluster.name();
        let namespace = obj.namespace().unwrap_or_default();
        let cloud_cluster = place.control_plane.cloud_cluster_name(&cluster_name);
        let reach = PoolReach {
            object: obj,
            place,
            client,
            calls,
            namespace: &namespace,
            cluster_name: &cluster_name,
            cluster: &cloud_cluster,
            pool,
        };
        let connected = self.cloud.connect(reach).await?;
        Ok(Located::Found((connected, version)))
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

    /// What the cloud's answer to a step of `kind` leaves to track.
    fn started(
        result: Result<Started<ManagedPool<D>>, ProviderError>,
        kind: OperationKind,
        request: &Request,
        p: &MachinePoolProfile,
    ) -> Self {
        let now = request.now;
        match result {
            Ok(Started::Created {
                id,
                observed,
                overrides,
            }) => Self {
                operation: Some(Operation::new(id, kind, now)),
                created: observed,
                overrides: overrides.then(|| request.overrides_applied(p.create_call)),
                error: None,
            },
            Ok(Started::Operation(id)) => Self {
                operation: Some(Operation::new(id, kind, now)),
                ..Self::default()
            },
            Ok(Started::Untracked | Started::Done | Started::Gone | Started::Busy(_)) => {
                Self::default()
            }
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

/// Whether the recorded `operation` is a create asked for so recently that a pool the cloud does
/// not list may just not be listed yet ([`CREATE_VISIBILITY_GRACE`]).
fn recent_create(operation: Option<&Operation>, now: jiff::Timestamp) -> bool {
    operation
        .is_some_and(|op| op.kind == OperationKind::Create && op.age(now) < CREATE_VISIBILITY_GRACE)
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

/// The versions a step may need: the MachinePool's, and the control plane's.
#[derive(Clone, Copy)]
struct Versions {
    wanted: Option<KubeVersion>,
    control_plane: Option<KubeVersion>,
}

impl<C: MachinePoolCloud> MachinePoolReconciler<C> {
    async fn act(
        &self,
        plan: &Plan<C::Change>,
        at: &PoolConnected<C::Clients>,
        want: PoolWant<'_, C::Spec>,
        found_id: Option<&str>,
        versions: Versions,
        request: &Request,
    ) -> Acted<C::Detail> {
        let p = &self.profile;
        let ask = |step| self.cloud.act(at, step, request);
        match plan {
            Plan::Create => {
                let version = contract::version::pool_creation_version(
                    versions.wanted.as_ref(),
                    versions.control_plane.as_ref(),
                );
                let step = PoolStep::Create {
                    want,
                    version: version.as_ref(),
                };
                Acted::started(ask(step).await, OperationKind::Create, request, p)
            }
            Plan::Adopt { id } => {
                let step = PoolStep::Tag {
                    id,
                    tags: &request.tags,
                };
                match ask(step).await {
                    Ok(_) => Acted::default(),
                    Err(e) => Acted::failed(e),
                }
            }
            Plan::Tag(missing) => match found_id {
                Some(id) => match ask(PoolStep::Tag { id, tags: missing }).await {
                    Ok(_) => Acted::default(),
                    Err(e) => Acted::failed(e),
                },
                None => Acted::default(),
            },
            Plan::Update(change) => Acted::started(
                ask(PoolStep::Update { change }).await,
                OperationKind::Update,
                request,
                p,
            ),
            Plan::Upgrade { to } => Acted::started(
                ask(PoolStep::Upgrade { to }).await,
                OperationKind::Upgrade,
                request,
                p,
            ),
            Plan::NameConflict { conflict, .. } => Acted::failed(ProviderError::terminal(
                Reason::NameConflict,
                conflict.message(&format!("{} {}", p.cloud, p.noun), &at.pool),
            )),
            Plan::Failed(message) => {
                Acted::failed(ProviderError::terminal(Reason::CloudError, message.clone()))
            }
            Plan::Invalid(message) => Acted::failed(ProviderError::terminal(
                Reason::InvalidSpec,
                message.clone(),
            )),
            Plan::AdoptionRefused(message) => Acted::failed(ProviderError::terminal(
                Reason::AdoptionRefused,
                message.clone(),
            )),
            Plan::AdoptionPlanned { .. } | Plan::Wait(_) | Plan::Nothing => Acted::default(),
        }
    }
}

impl<C: MachinePoolCloud> MachinePoolReconciler<C> {
    /// What adopting `pool` would change: the MachinePool's version and size first (core's
    /// fields), then every field the cloud's [`MachinePoolCloud::as_spec`] gives.
    fn adoption_plan(
        &self,
        obj: &C::Object,
        pool: &ManagedPool<C::Detail>,
        version: Option<KubeVersion>,
        scaling: ScalingIntent,
        machine_pool: &MachinePool,
    ) -> Result<AdoptionPlan, ProviderError> {
        let mut first = Vec::new();
        if let (Some(have), Some(want)) = (pool.minor(), version)
            && !have.same_minor(&want)
        {
            first.push(PlannedChange {
                field: "MachinePool spec.template.spec.version".into(),
                cloud: have.to_string(),
                spec: want.to_string(),
            });
        }
        if let (false, Some(have), Some(want)) = (
            scaling.is_autoscaled(),
            pool.desired_size,
            machine_pool.spec.replicas,
        ) && have != want
        {
            first.push(PlannedChange {
                field: "MachinePool spec.replicas".into(),
                cloud: have.to_string(),
                spec: want.to_string(),
            });
        }
        let mut cloud = self.cloud.as_spec(&pool.detail);
        // A pool whose MachinePool sets the count (no autoscaler claims it) is not autoscaled
        // once adopted: the cloud's range is a change, not a field to keep.
        if !scaling.is_autoscaled()
            && !machine_pool.replicas_managed_externally()
            && let Some(range) = cloud
                .as_object_mut()
                .and_then(|o| o.remove("scaling"))
                .filter(|v| !v.is_null())
        {
            first.push(PlannedChange {
                field: "spec.scaling".into(),
                cloud: format!("{} to {} nodes", range["minReplicas"], range["maxReplicas"]),
                spec: "none (MachinePool spec.replicas sets the count)".into(),
            });
        }
        crate::adoption::plan_of(obj, &cloud, first)
    }
}

impl<C: MachinePoolCloud> Reconciler<C::Object> for MachinePoolReconciler<C> {
    #[allow(clippy::too_many_lines)] // the pass, read top to bottom: see the module docs
    async fn reconcile(
        &self,
        obj: Arc<C::Object>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let profile = self.profile;
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

        // Validate.
        let spec = self.cloud.validate(&obj)?;
        let version = desired_version(&machine_pool)?;
        let name = profile.names.of(obj.as_ref())?;
        let common = obj.spec_common();
        let intent = ScalingIntent::new(common.scaling.as_ref(), machine_pool.spec.replicas);

        // Locate and connect: once the control plane is initialized, except for a plan not yet
        // accepted, which only looks (a pool's plan is shown beside its control plane's, before
        // either is adopted).
        let only_looking = common.adoption.as_ref().is_some_and(|a| !a.accept);
        let located = self
            .reach(
                &obj,
                ClusterRef::Live(&ctx.cluster),
                &ctx.client,
                &ctx.cloud_calls,
                &name,
                if only_looking {
                    ControlPlaneNeed::Looked
                } else {
                    ControlPlaneNeed::Initialized
                },
            )
            .await?;
        let (at, control_plane_version) = match located {
            Located::Found(found) => found,
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

        // Observe.
        let operation = previous.operation.clone();
        let observed = self
            .cloud
            .observe(&at, PoolLook::new(operation.as_ref()))
            .await?;
        let found = observed.pool;
        let tracked = match (&operation, &found) {
            (Some(op), Some(_)) => Some(Tracked {
                kind: op.kind,
                state: observed.operation.clone(),
            }),
            _ => None,
        };
        let ids = observed.provider_ids;
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        let tags = owner.tags(&at.tags);
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
        let want = PoolWant {
            spec: &spec,
            scaling: intent,
            machine_pool: &machine_pool,
        };
        let pool_intent = PoolIntent {
            cloud: profile.cloud,
            noun: profile.noun,
            name: &name,
            owner: &owner,
            adoption: common.adoption.as_ref().map(|a| Adopting {
                id: a.id.as_deref(),
                accept: a.accept,
            }),
            tags: &tags,
            version,
            control_plane_version,
        };
        let create_pending = found.is_none() && recent_create(operation.as_ref(), ctx.now);
        let diff = match &found {
            Some(p) if ours == Some(true) => self.cloud.diff(&want, p),
            _ => CloudStep::Nothing,
        };
        let plan = plan::pool(
            found.as_ref().map(ManagedPool::facts),
            tracked.as_ref(),
            create_pending,
            &pool_intent,
            diff,
        );
        tracing::debug!(pool = %name, ?plan, "planned");

        // An adoption's plan, from the same look; once accepted, the fields nobody set take the
        // cloud's values before anything is tagged (as for a control plane).
        let adoption_plan = match (&plan, &found) {
            (Plan::AdoptionPlanned { .. } | Plan::Adopt { .. }, Some(p)) => {
                Some(self.adoption_plan(&obj, p, version, intent, &machine_pool)?)
            }
            _ => None,
        };
        let keep = crate::adoption::keep(&plan, adoption_plan.as_ref());

        // Act: at most one write.
        let versions = Versions {
            wanted: version,
            control_plane: control_plane_version,
        };
        let found_id = found.as_ref().map(|p| p.id.as_str());
        let acted = if keep.is_some() {
            Acted::default()
        } else {
            self.act(&plan, &at, want, found_id, versions, &request)
                .await
        };

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
            cloud_id: view.map(|p| p.id.clone()).filter(|id| !id.is_empty()),
            cloud_name: Some(name.clone()),
            operation: acted.operation.clone().or(carried),
            adoption: common.adoption.as_ref().map(|_| {
                let id = found.as_ref().map(|p| p.id.as_str());
                crate::adoption::status(&plan, adoption_plan.as_ref(), id)
            }),
            conditions: Vec::new(),
        };
        // While the cloud works on an operation: soon after it started, then later and later,
        // and close together where earlier ones of its kind finished.
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
        let status = C::Object::status_of(
            status_common,
            overrides,
            view.map(|pool| self.cloud.report(&pool.detail)),
        );

        let change = match &plan {
            Plan::Update(change) => Some(change.describe(found.as_ref())),
            _ => crate::adoption::summary(&plan, adoption_plan.as_ref()),
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
        let mut pass = Pass::new()
            .spec_fields(&scaling::provider_id_fields(&ids, &common.provider_id_list))
            .status(&status)
            .conditions(conditions)
            .requeue_after(requeue);
        if let Some(fields) = keep {
            pass = pass
                .spec_from_cloud(fields)
                .requeue_after(std::time::Duration::from_secs(1));
        }
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
        self.delete(&obj, ctx).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn a_create_asked_for_moments_ago_is_waited_for_and_one_asked_long_ago_is_made_again() {
        let now: jiff::Timestamp = "2026-09-01T12:00:00Z".parse().unwrap();
        let ago = |seconds: i64| now - jiff::SignedDuration::from_secs(seconds);
        let create = |seconds| Operation::new("op-1", OperationKind::Create, ago(seconds));
        assert!(recent_create(Some(&create(20)), now));
        assert!(recent_create(Some(&create(59)), now));
        assert!(!recent_create(Some(&create(60)), now));
        assert!(!recent_create(Some(&create(3600)), now));
        let update = Operation::new("op-1", OperationKind::Update, ago(20));
        assert!(!recent_create(Some(&update), now));
        assert!(!recent_create(None, now));
    }
}
