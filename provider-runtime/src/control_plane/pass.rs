//! One pass of a control plane: locate, validate, connect, observe, plan, act, report (the
//! module docs of [`super`] give the order and the rules).

use std::sync::Arc;
use std::time::Duration;

use contract::adoption::AdoptionPlan;
use contract::api::{
    ControlPlaneInitialization, ControlPlaneStatusCommon, KubeconfigStatus, Operation,
    OperationKind, PlannedChange, RequestOverridesStatus, VersionReplicas,
};
use contract::conditions::{ConditionRole, Reason, waiting_set};
use contract::endpoint::EndpointChoice;
use contract::ownership::Owner;
use contract::plan::{
    self, Adopting, CloudStep, ClusterFacts, ControlPlaneFacts, ControlPlaneIntent, Plan, Tracked,
    Wait,
};
use contract::version::{KubeVersion, normalize};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::{
    ControlPlaneCloud, ControlPlaneProfile, DescribeChange, Look, ManagedCluster,
    ManagedControlPlane, Observed, Reach, Request, Started, Step,
};
use crate::cluster_objects::control_plane_infra;
use crate::kubeconfig::{KubeconfigSecrets, KubeconfigTarget, TokenSource, until_refresh};
use crate::pacing::looks::Looks;
use crate::pacing::operations::Pacer;
use crate::{Cleanup, CleanupContext, Pass, PassContext, ProviderError, Reconciler};

/// The generic ControlPlane reconciler over the cloud `C`.
pub struct ControlPlaneReconciler<C: ControlPlaneCloud> {
    pub(super) cloud: C,
    pub(super) provider: &'static str,
    pub(super) profile: ControlPlaneProfile,
    pacer: Pacer,
    pub(super) looks: Looks<Observed<C::Detail>>,
}

impl<C: ControlPlaneCloud> ControlPlaneReconciler<C> {
    /// A reconciler for `cloud`, which says what it is in `profile`; `provider` is the
    /// provider's short name (the ownership tag's).
    pub fn new(provider: &'static str, profile: ControlPlaneProfile, cloud: C) -> Self {
        Self {
            cloud,
            provider,
            profile,
            pacer: Pacer::default(),
            looks: Looks::default(),
        }
    }

    /// The cloud.
    pub fn cloud(&self) -> &C {
        &self.cloud
    }
}

/// What the spec asks for: the cloud's validated spec and `spec.version`.
struct Want<'a, D> {
    desired: &'a D,
    version: &'a KubeVersion,
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
    blocked: Option<String>,
}

impl<D> Acted<D> {
    fn new(operation: OperationChange) -> Self {
        Self {
            operation,
            cluster: None,
            overrides: None,
            error: None,
            requeue: None,
            blocked: None,
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

    /// What the cloud's answer to a step of `kind` leaves to track, and when to look again.
    fn started(
        started: Started<ManagedCluster<D>>,
        kind: OperationKind,
        request: &Request,
        p: &ControlPlaneProfile,
    ) -> Self {
        let now = request.now;
        match started {
            Started::Created {
                id,
                observed: cluster,
                overrides,
            } => Self {
                cluster,
                overrides: overrides.then(|| request.overrides_applied(p.create_call)),
                ..Self::new(OperationChange::Set(Operation::new(id, kind, now)))
            }
            .requeue(p.settle()),
            // Just started: the first look comes soon, then later and later
            // (`Operation::look_again_after`).
            Started::Operation(id) => {
                Self::new(OperationChange::Set(Operation::new(id, kind, now))).requeue(p.settle())
            }
            Started::Untracked | Started::Gone => Self::new(OperationChange::Clear).requeue(p.poll),
            Started::Done => Self::new(OperationChange::Clear).requeue(p.settle()),
            Started::Busy(why) => Self {
                blocked: Some(why),
                ..Self::new(OperationChange::Clear)
            }
            .requeue(p.poll),
        }
    }
}

impl<C: ControlPlaneCloud> ControlPlaneReconciler<C> {
    /// The plan from one look: the kernel's steps, then the cloud's pure diff as data.
    fn plan(
        &self,
        observed: &Observed<C::Detail>,
        tracked: Option<&Operation>,
        intent: &ControlPlaneIntent<'_>,
        desired: &C::Desired,
    ) -> Plan<C::Change> {
        let facts = observed.cluster.as_ref().map(|c| ClusterFacts {
            id: &c.id,
            lifecycle: &c.lifecycle,
            version: &c.version,
            tags: &c.tags,
        });
        let ours = observed
            .cluster
            .as_ref()
            .is_some_and(|c| intent.owner.owns(&c.tags));
        let tracked = tracked.filter(|_| ours).map(|op| Tracked {
            kind: op.kind,
            state: observed.operation.clone(),
        });
        let diff = match &observed.cluster {
            Some(c) if ours => self.cloud.diff(desired, c),
            _ => CloudStep::Nothing,
        };
        plan::control_plane(facts, tracked.as_ref(), intent, diff)
    }

    /// What adopting `cluster` would change, for the object `cp` asking for `version`: the
    /// version first, then every field the cloud's [`ControlPlaneCloud::as_spec`] gives.
    fn adoption_plan(
        &self,
        cp: &C::Object,
        cluster: &ManagedCluster<C::Detail>,
        version: &KubeVersion,
    ) -> Result<AdoptionPlan, ProviderError> {
        let current = KubeVersion::parse(&normalize(&cluster.version)).ok();
        let differs = current.is_none_or(|current| {
            !(current.same_minor(version) && (self.profile.minors_only || current == *version))
        });
        let row = differs.then(|| PlannedChange {
            field: "spec.version".into(),
            cloud: normalize(&cluster.version),
            spec: version.to_string(),
        });
        crate::adoption::plan_of(cp, &self.cloud.as_spec(&cluster.detail), row)
    }

    async fn act(
        &self,
        plan: &Plan<C::Change>,
        connected: &super::Connected<C::Clients, C::Tokens>,
        previous: Option<&Operation>,
        observed: &Observed<C::Detail>,
        want: Want<'_, C::Desired>,
        request: &Request,
    ) -> Acted<C::Detail> {
        let Want { desired, version } = want;
        let p = &self.profile;
        let now = request.now;
        let ask = |step, kind| async move {
            match self.cloud.act(connected, step, request).await {
                Ok(started) => Acted::started(started, kind, request, p),
                Err(e) => Acted::failed(e),
            }
        };
        let observed_id = || {
            observed
                .cluster
                .as_ref()
                .map(|c| c.id.as_str())
                .unwrap_or_default()
        };
        match plan {
            Plan::Create => {
                let acted = ask(Step::Create { desired, version }, OperationKind::Create).await;
                if acted.error.is_none() {
                    tracing::info!(cluster = %connected.name, "cluster creation started");
                }
                acted
            }
            Plan::NameConflict { conflict, .. } => Acted::failed(ProviderError::terminal(
                Reason::NameConflict,
                conflict.message(&format!("{} cluster", p.cloud), &connected.name),
            )),
            // Adopting, or our tags put back: the same call; neither is an operation to track.
            Plan::Adopt { .. } | Plan::Tag(_) => {
                let id = match plan {
                    Plan::Adopt { id } => id.as_str(),
                    _ => observed_id(),
                };
                match self.cloud.act(connected, Step::Tag { id }, request).await {
                    Ok(_) if matches!(plan, Plan::Tag(_)) => {
                        Acted::new(OperationChange::Keep).requeue(p.settle())
                    }
                    Ok(_) => Acted::new(OperationChange::Clear).requeue(p.settle()),
                    Err(e) => Acted::failed(e),
                }
            }
            Plan::Wait(Wait::Creating) => {
                let op = previous
                    .filter(|op| op.kind == OperationKind::Create)
                    .cloned()
                    .unwrap_or_else(|| Operation::new(observed_id(), OperationKind::Create, now));
                let after = self.pacer.look_again_after(&op, now, p.settle(), p.poll);
                Acted::new(OperationChange::Set(op)).requeue(after)
            }
            Plan::Wait(Wait::Updating { .. } | Wait::Pending(_)) => {
                let after = previous.map_or(p.poll, |op| {
                    self.pacer.look_again_after(op, now, p.settle(), p.poll)
                });
                Acted::new(OperationChange::Keep).requeue(after)
            }
            Plan::Wait(Wait::Deleting | Wait::Cloud(_)) => {
                Acted::new(OperationChange::Clear).requeue(p.poll)
            }
            Plan::Failed(message) => {
                Acted::failed(ProviderError::terminal(Reason::CloudError, message.clone()))
            }
            Plan::Invalid(message) => Acted::failed(ProviderError::terminal(
                Reason::InvalidSpec,
                message.clone(),
            )),
            // Nothing is written until the plan is accepted; the cloud may change meanwhile.
            Plan::AdoptionPlanned { .. } => Acted::new(OperationChange::Clear).requeue(p.poll),
            Plan::AdoptionRefused(message) => Acted::failed(ProviderError::terminal(
                Reason::AdoptionRefused,
                message.clone(),
            )),
            Plan::Upgrade { to } => ask(Step::Upgrade { to }, OperationKind::Upgrade).await,
            Plan::Update(change) => {
                ask(Step::Update { desired, change }, OperationKind::Update).await
            }
            Plan::Nothing => Acted::new(OperationChange::Clear),
        }
    }

    /// Writes the kubeconfig Secrets of `cluster`, served at `server`; returns when the
    /// contract Secret's token expires.
    async fn kubeconfig(
        &self,
        connected: &super::Connected<C::Clients, C::Tokens>,
        cp: &C::Object,
        ctx: &PassContext,
        cluster: &ManagedCluster<C::Detail>,
        server: &contract::api::ApiEndpoint,
    ) -> Result<jiff::Timestamp, ProviderError> {
        let cloud = self.profile.cloud;
        let ca_pem = match &cluster.ca_pem {
            Ok(Some(ca)) => ca,
            Ok(None) => {
                return Err(ProviderError::cloud(
                    "cloud_response",
                    format!("{cloud} has not published the CA of {} yet", connected.name),
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
            cloud_id: &cluster.id,
            server,
            ca_pem,
            endpoints: &cluster.endpoints,
            preferred: cp
                .spec_common()
                .endpoint_access
                .effective_preferred()
                .endpoint_name(),
            plugin: connected.user_exec.for_cluster(&cluster.id),
        };
        secrets.ensure(&target, &connected.tokens, ctx.now).await
    }
}

impl<C: ControlPlaneCloud> Reconciler<C::Object> for ControlPlaneReconciler<C> {
    #[allow(clippy::too_many_lines)] // the pass, read top to bottom: see the module docs
    async fn reconcile(
        &self,
        cp: Arc<C::Object>,
        ctx: &PassContext,
    ) -> Result<Pass, ProviderError> {
        let profile = self.profile;
        let cluster_name = ctx.cluster.name_any();
        let namespace = cp.namespace().unwrap_or_default();
        let previous = cp.status_common().cloned().unwrap_or_default();

        // Locate: no cloud call until the infrastructure is there.
        let kind = C::Object::kind(&()).to_string();
        let found = control_plane_infra::<C::Infra>(
            &ctx.client,
            &ctx.cluster,
            cp.own_infrastructure(),
            &kind,
        )
        .await?;
        let provisioned = ctx.cluster.infrastructure_provisioned();
        let reference = ctx.cluster.infrastructure_ref();
        let infra = match found {
            Some(infra) if reference.is_none() || provisioned => infra,
            // No infrastructure found is only ever a Cluster that names one not there yet.
            _ => {
                let what = reference.map_or("InfraCluster", |r| r.kind.as_str());
                return Ok(Pass::new()
                    .conditions(waiting_set(
                        ConditionRole::ControlPlane,
                        Reason::WaitingForInfrastructure,
                        format!(
                            "Waiting for the Cluster's infrastructure ({what}) to be provisioned"
                        ),
                    ))
                    .requeue_after(profile.poll));
            }
        };

        // Validate. The CRD already refuses a version without "v" and downgrades at admission.
        let spec = cp.spec_common();
        let version: KubeVersion = spec.version.parse().map_err(|e| {
            ProviderError::terminal(Reason::InvalidSpec, format!("spec.version: {e}"))
        })?;
        let desired = self.cloud.validate(&cp, &infra)?;

        let name = cp.cloud_cluster_name(&cluster_name);
        let reach = Reach {
            object: &*cp,
            infra,
            client: &ctx.client,
            calls: &ctx.cloud_calls,
            namespace: &namespace,
            cluster_name: &cluster_name,
            name: &name,
        };
        let connected = self.cloud.connect(reach).await?;
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        let intent = ControlPlaneIntent {
            cloud: profile.cloud,
            name: &name,
            owner: &owner,
            adoption: spec.adoption.as_ref().map(|a| Adopting {
                id: a.id.as_deref(),
                accept: a.accept,
            }),
            version,
            minors_only: profile.minors_only,
        };
        let tracked = previous.operation.as_ref();

        // Observe and plan. At rest, the last look is good for the rest interval (module
        // docs); a plan from it that would change anything is made again from a fresh look.
        let uid = cp.uid().unwrap_or_default();
        let generation = cp.meta().generation;
        let clock = std::time::Instant::now();
        let at_rest = previous.ready && previous.operation.is_none();
        let good_for = profile.rest.min(ctx.sync_period);
        let reused = at_rest
            .then(|| self.looks.recent(&uid, generation, good_for, clock))
            .flatten()
            .map(|(observed, age)| {
                (
                    self.plan(&observed, tracked, &intent, &desired),
                    observed,
                    age,
                )
            })
            .filter(|(plan, _, _)| matches!(plan, Plan::Nothing));
        let (plan, observed, look_age) = match reused {
            Some((plan, observed, age)) => (plan, observed, Some(age)),
            None => {
                let look = Look::new(&owner, tracked).adopting(spec.adoption.is_some());
                let observed = Arc::new(self.cloud.observe(&connected, look).await?);
                (
                    self.plan(&observed, tracked, &intent, &desired),
                    observed,
                    None,
                )
            }
        };

        // An adoption's plan, from the same look. Once accepted, the fields nobody set take
        // the cloud's values first (written into the spec), and the cluster is tagged on the
        // next pass, so a restart in between tags nothing the spec would change back.
        let adoption_plan = match (&plan, &observed.cluster) {
            (Plan::AdoptionPlanned { .. } | Plan::Adopt { .. }, Some(c)) => {
                Some(self.adoption_plan(&cp, c, &version)?)
            }
            _ => None,
        };
        let keep = crate::adoption::keep(&plan, adoption_plan.as_ref());

        // Act.
        let request = Request::new(
            owner.tags(&connected.tags),
            ctx.now,
            uid.clone(),
            generation,
            profile.token_limits,
        );
        let acted = if keep.is_some() {
            Acted::new(OperationChange::Clear).requeue(Duration::from_secs(1))
        } else {
            self.act(
                &plan,
                &connected,
                tracked,
                &observed,
                Want {
                    desired: &desired,
                    version: &version,
                },
                &request,
            )
            .await
        };

        // Report, on the cluster only when it is ours.
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
            match self.kubeconfig(&connected, &cp, ctx, c, server).await {
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
        let look_age = match (look_age, settled) {
            (Some(age), true) => Some(age),
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
            cloud_name: Some(name.clone()),
            operation,
            kubeconfig: expires_at.map(|e| KubeconfigStatus {
                expires_at: Some(Time(e)),
            }),
            adoption: spec.adoption.as_ref().map(|_| {
                let id = observed.cluster.as_ref().map(|c| c.id.as_str());
                crate::adoption::status(&plan, adoption_plan.as_ref(), id)
            }),
            conditions: Vec::new(),
        };
        let status = C::Object::status_of(
            common,
            overrides,
            cluster.map(|c| self.cloud.report(&c.detail)),
        );

        let current = cluster.and_then(|c| KubeVersion::parse(&normalize(&c.version)).ok());
        let change = match &plan {
            Plan::Update(change) => Some(change.describe(&name)),
            _ => crate::adoption::summary(&plan, adoption_plan.as_ref()),
        };
        let facts = ControlPlaneFacts {
            cloud: profile.cloud,
            name: &name,
            desired: version,
            current,
            serving,
            kubeconfig_ready,
            blocked_on_pools: acted.blocked.as_deref(),
            change,
        };
        let mut pass = Pass::new()
            .status(&status)
            .conditions(plan::control_plane_conditions(&plan, &facts));
        if let Some(endpoint) = endpoint.to_publish() {
            pass = pass.spec_fields(&json!({ "controlPlaneEndpoint": endpoint }));
        }
        if let Some(fields) = keep {
            pass = pass.spec_from_cloud(fields);
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
            let lifetime = connected.tokens.lifetime();
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
        self.delete(&cp, ctx).await
    }
}
