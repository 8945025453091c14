//! The shared plan vocabulary, and the control plane's plan and condition set, for every cloud.
//!
//! A cloud supplies what only it knows: its cluster's lifecycle state normalised to a
//! [`Lifecycle`], the state of the operation it was asked for ([`OperationState`]), and the
//! difference between its cluster and the spec in its own terms ([`CloudStep`], generic over the
//! cloud's change type). Everything else is decided here, the same way on every cloud:
//! ownership before anything else, waiting while the cloud is busy, a failed cluster or
//! operation reported and not retried, one version step at a time (minors only, where the cloud
//! picks patches), then the cloud's own difference, and finally the whole condition set of the
//! pass ([`control_plane_conditions`]). A node pool follows the same vocabulary with its own
//! order ([`pool`], [`pool_conditions`]). Pure: no client, no clock.

mod infra;
mod pool;

use std::collections::BTreeMap;

pub use infra::{failure_domains, infra_cluster_status};
pub use pool::{
    PoolFacts, PoolIntent, PoolReport, carries_operation, nodes_visible, pool, pool_conditions,
};

use crate::api::OperationKind;
use crate::conditions::{ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::ownership::{Conflict, Owner, Ownership};
use crate::version::{KubeVersion, next_control_plane_step, normalize};

/// A managed cluster's lifecycle, as every cloud's states map onto it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// Being created.
    Creating,
    /// Up and idle.
    Running,
    /// Up, with a change in progress (it still serves the API).
    Updating,
    /// Up, but the cloud reports it unhealthy (its health issues say why); changed like a
    /// running one.
    Degraded,
    /// Being deleted.
    Deleting,
    /// The cloud gave up on it; only a delete helps.
    Failed,
    /// A state this provider does not act in (pending, unknown), by the cloud's name.
    Other(String),
}

impl Lifecycle {
    /// Whether the cluster serves the Kubernetes API in this state.
    pub fn serving(&self) -> bool {
        matches!(self, Self::Running | Self::Updating | Self::Degraded)
    }
}

/// What the cloud says about an operation it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationState {
    /// Still running.
    Running,
    /// Done.
    Succeeded,
    /// Failed, with the cloud's words (a clause such as "failed (InsufficientCapacity: …)").
    Failed(String),
}

/// The operation remembered in `status.operation`, with what the cloud says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    /// What it is.
    pub kind: OperationKind,
    /// The cloud's answer; `None` for a create (the cluster's state tells), or when the cloud no
    /// longer knows the operation.
    pub state: Option<OperationState>,
}

/// Why nothing is done this pass although something may still be to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// The cloud is creating the cluster.
    Creating,
    /// A change runs (`upgrade`: a version upgrade).
    Updating {
        /// Whether it is a version upgrade.
        upgrade: bool,
    },
    /// The cloud is deleting the cluster (not at our request): it is created again once gone.
    Deleting,
    /// The cluster is in a state this provider does not act in, by the cloud's name.
    Pending(String),
    /// Something of the cloud's own is settling (an add-on, …); the message says what.
    Cloud(String),
}

/// The cloud's own difference between its cluster and the spec, once the shared steps are done.
#[derive(Debug, Clone, PartialEq)]
pub enum CloudStep<C> {
    /// A change to make.
    Change(C),
    /// Something of the cloud's own is settling; the message says what.
    Wait(String),
    /// The cloud failed something (an add-on could not be created, …); the message says what
    /// and what to do.
    Failed(String),
    /// The spec asks for something the cloud cannot do from here; the message names the field.
    Invalid(String),
    /// Nothing differs.
    Nothing,
}

impl<C> From<Option<C>> for CloudStep<C> {
    /// The first difference found, if any.
    fn from(change: Option<C>) -> Self {
        change.map_or(CloudStep::Nothing, CloudStep::Change)
    }
}

/// The next step, on any cloud (`C`: the cloud's own change).
#[derive(Debug, Clone, PartialEq)]
pub enum Plan<C> {
    /// Nothing of that name: create it.
    Create,
    /// Not ours, and the adoption is accepted: tag it as ours.
    Adopt {
        /// The cloud's id of it.
        id: String,
    },
    /// Not ours, and `spec.adoption` is not accepted yet: show the plan, write nothing.
    AdoptionPlanned {
        /// The cloud's id of it.
        id: String,
    },
    /// `spec.adoption` names nothing to adopt; the message says why. Nothing is written.
    AdoptionRefused(String),
    /// Something of that name exists and is not ours: touch nothing.
    NameConflict {
        /// The cloud's id of it.
        id: String,
        /// Whose it is.
        conflict: Conflict,
    },
    /// Nothing to do until the cloud moves.
    Wait(Wait),
    /// Ours, but some of the tags it must carry are missing or different: add these.
    Tag(BTreeMap<String, String>),
    /// A version step.
    Upgrade {
        /// The version to ask for.
        to: KubeVersion,
    },
    /// A change of the cloud's own.
    Update(C),
    /// The cloud failed; the message says what and what to do (reason `CloudError`).
    Failed(String),
    /// The spec asks for what the cloud cannot do from here (reason `InvalidSpec`).
    Invalid(String),
    /// It matches the spec.
    Nothing,
}

impl<C> Plan<C> {
    /// Whether this step is a version upgrade, or waits on one.
    pub fn is_upgrade(&self) -> bool {
        matches!(
            self,
            Plan::Upgrade { .. } | Plan::Wait(Wait::Updating { upgrade: true })
        )
    }

    /// Whether the thing observed is ours to report on (not a conflict, not yet adopted).
    pub fn reports_on_it(&self) -> bool {
        !matches!(
            self,
            Plan::NameConflict { .. }
                | Plan::Adopt { .. }
                | Plan::AdoptionPlanned { .. }
                | Plan::AdoptionRefused(_)
        )
    }
}

/// What the planner needs to know of the observed cluster.
#[derive(Debug, Clone, Copy)]
pub struct ClusterFacts<'a> {
    /// The cloud's id (ARN, self link, resource id).
    pub id: &'a str,
    /// Its lifecycle.
    pub lifecycle: &'a Lifecycle,
    /// The version the cloud reports, `1.31` or `v1.31.2` (the cloud strips its own build
    /// suffix, such as GKE's `-gke.100`).
    pub version: &'a str,
    /// Its tags (labels, freeform tags).
    pub tags: &'a BTreeMap<String, String>,
}

/// What the spec asks for, in the shared terms, and the cloud's one rule about versions.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneIntent<'a> {
    /// The cloud's short name for messages (`EKS`, `GKE`).
    pub cloud: &'a str,
    /// The cluster's name in the cloud.
    pub name: &'a str,
    /// The Cluster the cloud cluster must belong to.
    pub owner: &'a Owner,
    /// `spec.adoption`: take over a same-named cluster that is not ours, after its plan.
    pub adoption: Option<Adopting<'a>>,
    /// `spec.version`.
    pub version: KubeVersion,
    /// The cloud picks patch versions itself: only a new minor is a step to ask for.
    pub minors_only: bool,
}

/// What `spec.adoption` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adopting<'a> {
    /// The identity the cluster found by name must have (`spec.adoption.id`).
    pub id: Option<&'a str>,
    /// The plan is accepted.
    pub accept: bool,
}

/// Decides the next step of a control plane: ownership, the cluster's state, the tracked
/// operation, the version step, then the cloud's own difference (`diff`, the cloud's pure
/// comparison, taken only when every shared step is done).
pub fn control_plane<C>(
    observed: Option<ClusterFacts<'_>>,
    tracked: Option<&Tracked>,
    intent: &ControlPlaneIntent<'_>,
    diff: CloudStep<C>,
) -> Plan<C> {
    let (cloud, name) = (intent.cloud, intent.name);
    let what = format!("{cloud} cluster named {name}");
    let place = "where the spec's infrastructure points (its account, region and project)";
    let found = observed.map(|c| (c.id, c.tags));
    if let Some(step) = adoption_step(intent.owner, intent.adoption, found, (&what, place)) {
        return step;
    }
    let Some(cluster) = observed else {
        return Plan::Create;
    };
    let upgrading = tracked.is_some_and(|t| t.kind == OperationKind::Upgrade);
    match cluster.lifecycle {
        Lifecycle::Running | Lifecycle::Degraded => {}
        Lifecycle::Creating => return Plan::Wait(Wait::Creating),
        Lifecycle::Updating => return Plan::Wait(Wait::Updating { upgrade: upgrading }),
        Lifecycle::Deleting => return Plan::Wait(Wait::Deleting),
        Lifecycle::Failed => {
            return Plan::Failed(format!(
                "{cloud} reports cluster {name} as failed; delete the control plane (or the cluster in {cloud}) to start over"
            ));
        }
        Lifecycle::Other(state) => return Plan::Wait(Wait::Pending(state.clone())),
    }
    if let Some(step) = tracked_step(tracked, &format!("{cloud} {{what}} of cluster {name}")) {
        return step;
    }
    let current = match KubeVersion::parse(&normalize(cluster.version)) {
        Ok(v) => v,
        Err(e) => {
            return Plan::Failed(format!(
                "{cloud} reports a version this provider cannot read: {e}"
            ));
        }
    };
    match next_control_plane_step(&current, &intent.version) {
        Err(e) => return Plan::Invalid(e.to_string()),
        Ok(Some(step)) if !(intent.minors_only && step.same_minor(&current)) => {
            let to = if intent.minors_only {
                step.without_patch()
            } else {
                step
            };
            return Plan::Upgrade { to };
        }
        Ok(_) => {}
    }
    match diff {
        CloudStep::Change(change) => Plan::Update(change),
        CloudStep::Wait(message) => Plan::Wait(Wait::Cloud(message)),
        CloudStep::Failed(message) => Plan::Failed(message),
        CloudStep::Invalid(message) => Plan::Invalid(message),
        CloudStep::Nothing => Plan::Nothing,
    }
}

/// The step ownership and `spec.adoption` decide for the resource found (its id and tags), if
/// any: `None` when it is ours, or when there is none and none is to be adopted. An adoption
/// never creates, and never takes a resource of another identity than the one it names; until
/// accepted it is a plan. `what` names the resource (`EKS cluster named c1`), `place` where it
/// was looked for.
fn adoption_step<C>(
    owner: &Owner,
    adoption: Option<Adopting<'_>>,
    found: Option<(&str, &BTreeMap<String, String>)>,
    (what, place): (&str, &str),
) -> Option<Plan<C>> {
    let Some((id, tags)) = found else {
        return adoption.map(|_| {
            Plan::AdoptionRefused(format!(
                "There is no {what} {place}; nothing was created. Set spec.cloudName to the name of the one to adopt, or remove spec.adoption to create one"
            ))
        });
    };
    if let Some(Adopting {
        id: Some(wanted), ..
    }) = adoption
        && !crate::adoption::same_identity(wanted, id)
    {
        return Some(Plan::AdoptionRefused(format!(
            "The {what} {place} is {id}, not spec.adoption.id {wanted}: the identity names one elsewhere (another account, subscription, project, compartment, region or cluster than the spec's); nothing was changed"
        )));
    }
    match ownership_step(owner, tags, adoption.is_some(), id) {
        Some(Plan::Adopt { id }) if !adoption.is_some_and(|a| a.accept) => {
            Some(Plan::AdoptionPlanned { id })
        }
        step => step,
    }
}

/// The step ownership decides, if any: `None` when the resource `id` carrying `tags` is ours.
fn ownership_step<C>(
    owner: &Owner,
    tags: &BTreeMap<String, String>,
    adopt: bool,
    id: &str,
) -> Option<Plan<C>> {
    match owner.decide(tags, adopt) {
        Ownership::Ours => None,
        Ownership::Adopt => Some(Plan::Adopt { id: id.to_string() }),
        Ownership::Conflict(conflict) => Some(Plan::NameConflict {
            id: id.to_string(),
            conflict,
        }),
    }
}

/// The step a tracked update or upgrade decides, if any: wait while it runs, report it when it
/// failed, nothing once it succeeded. `subject` names it, with `{what}` where "version update"
/// or "configuration update" goes (`EKS {what} of cluster c1`).
fn tracked_step<C>(tracked: Option<&Tracked>, subject: &str) -> Option<Plan<C>> {
    let Some(Tracked {
        kind: kind @ (OperationKind::Upgrade | OperationKind::Update),
        state: Some(state),
    }) = tracked
    else {
        return None;
    };
    let upgrade = *kind == OperationKind::Upgrade;
    match state {
        OperationState::Running => Some(Plan::Wait(Wait::Updating { upgrade })),
        OperationState::Failed(why) => {
            let what = if upgrade {
                "version update"
            } else {
                "configuration update"
            };
            Some(Plan::Failed(format!(
                "the {} {why}",
                subject.replace("{what}", what)
            )))
        }
        OperationState::Succeeded => None,
    }
}

/// What the condition set of a control-plane pass is computed from, besides the plan.
#[derive(Debug, Clone)]
pub struct ControlPlaneFacts<'a> {
    /// The cloud's short name (`EKS`, `GKE`).
    pub cloud: &'a str,
    /// The cluster's name in the cloud.
    pub name: &'a str,
    /// `spec.version`.
    pub desired: KubeVersion,
    /// The version the cluster runs, when it is ours and readable.
    pub current: Option<KubeVersion>,
    /// Whether the cluster serves the Kubernetes API.
    pub serving: bool,
    /// Whether the kubeconfig Secrets are written and current.
    pub kubeconfig_ready: bool,
    /// The cloud refused the version step until the node pools catch up, in its words.
    pub blocked_on_pools: Option<&'a str>,
    /// What the cloud's own change of this pass does, in the user's terms ([`Plan::Update`]),
    /// or what adopting would change ([`Plan::AdoptionPlanned`]).
    pub change: Option<String>,
}

/// The whole condition set of a control-plane pass (Ready, Available, KubeconfigReady,
/// Upgrading), on every cloud. An error the pass also reports replaces Ready (the runtime's
/// rule); the passes that stop before the cloud use [`crate::conditions::waiting_set`].
pub fn control_plane_conditions<C>(
    plan: &Plan<C>,
    facts: &ControlPlaneFacts<'_>,
) -> Vec<DesiredCondition> {
    let (cloud, name, target) = (facts.cloud, facts.name, facts.desired);
    let upgrade_message = match (facts.blocked_on_pools, plan, facts.current) {
        (Some(why), _, Some(current)) => Some(format!(
            "{current} → {}: waiting for the node pools to reach {current} first ({why})",
            current.next_minor()
        )),
        (None, Plan::Upgrade { to }, Some(current)) => Some(format!(
            "{cloud} is upgrading {name} from {current} to {to} (spec.version {target})"
        )),
        (None, Plan::Wait(Wait::Updating { upgrade: true }), Some(current)) => Some(format!(
            "{cloud} is upgrading {name} from {current} (spec.version {target})"
        )),
        (_, _, Some(current)) if current.minor_cmp(&target).is_lt() => Some(format!(
            "Cluster {name} runs {current}; the upgrade to {target} waits for the change in progress"
        )),
        _ => None,
    };
    let upgrading = match &upgrade_message {
        Some(message) => {
            DesiredCondition::true_(ConditionType::Upgrading, Reason::Upgrading, message.clone())
        }
        None => DesiredCondition::false_(
            ConditionType::Upgrading,
            Reason::UpToDate,
            facts
                .current
                .map(|v| format!("Cluster {name} runs {v}"))
                .unwrap_or_default(),
        ),
    };
    let upgrade_message = upgrade_message.unwrap_or_default();

    let (reason, message) = progress(plan, facts, &upgrade_message);
    let available = if facts.serving {
        DesiredCondition::true_(
            ConditionType::Available,
            Reason::Ready,
            format!("{cloud} serves the Kubernetes API of {name}"),
        )
    } else {
        DesiredCondition::false_(ConditionType::Available, reason, message.clone())
    };
    let kubeconfig = if facts.kubeconfig_ready {
        DesiredCondition::true_(ConditionType::KubeconfigReady, Reason::Ready, "")
    } else if facts.serving {
        DesiredCondition::false_(
            ConditionType::KubeconfigReady,
            Reason::CloudError,
            "The kubeconfig Secret could not be written yet",
        )
    } else {
        DesiredCondition::false_(ConditionType::KubeconfigReady, reason, message.clone())
    };
    let ready = match plan {
        Plan::Nothing if facts.kubeconfig_ready => {
            DesiredCondition::true_(ConditionType::Ready, Reason::Ready, "")
        }
        Plan::Nothing => DesiredCondition::false_(
            ConditionType::Ready,
            Reason::WaitingForCloud,
            "Waiting for the API server's endpoint and CA",
        ),
        _ if upgrading.status == ConditionStatus::True && facts.blocked_on_pools.is_some() => {
            DesiredCondition::false_(ConditionType::Ready, Reason::Upgrading, upgrade_message)
        }
        _ => DesiredCondition::false_(ConditionType::Ready, reason, message),
    };
    vec![ready, available, kubeconfig, upgrading]
}

/// The reason and message of a step in progress, in the user's terms.
fn progress<C>(
    plan: &Plan<C>,
    facts: &ControlPlaneFacts<'_>,
    upgrade_message: &str,
) -> (Reason, String) {
    let (cloud, name) = (facts.cloud, facts.name);
    match plan {
        Plan::Create | Plan::Wait(Wait::Creating) => (
            Reason::Creating,
            format!("{cloud} is creating cluster {name}"),
        ),
        Plan::Upgrade { .. } | Plan::Wait(Wait::Updating { upgrade: true }) => {
            (Reason::Upgrading, upgrade_message.to_string())
        }
        Plan::Wait(Wait::Updating { upgrade: false }) => (
            Reason::Updating,
            format!("{cloud} is updating cluster {name}"),
        ),
        Plan::Update(_) => (
            Reason::Updating,
            facts
                .change
                .clone()
                .unwrap_or_else(|| format!("{cloud} is updating cluster {name}")),
        ),
        Plan::Wait(Wait::Cloud(message)) => (Reason::Updating, message.clone()),
        Plan::Adopt { id } => (
            Reason::Updating,
            format!("Adopting {id}: tagging it as ours"),
        ),
        Plan::AdoptionPlanned { id } => (
            Reason::AdoptionPlanned,
            format!(
                "{cloud} cluster {id} is not ours yet: {}. Nothing was written; set spec.adoption.accept: true to adopt it (status.adoption lists the plan)",
                facts
                    .change
                    .as_deref()
                    .unwrap_or("adopting changes nothing in the cloud")
            ),
        ),
        Plan::AdoptionRefused(m) => (Reason::AdoptionRefused, m.clone()),
        Plan::Tag(_) => (Reason::Updating, format!("Tagging cluster {name}")),
        Plan::Wait(Wait::Deleting) => (
            Reason::Deleting,
            format!(
                "{cloud} is deleting cluster {name} (not at this provider's request); it is created again once gone"
            ),
        ),
        Plan::Wait(Wait::Pending(state)) => (
            Reason::WaitingForCloud,
            format!("{cloud} reports cluster {name} as {state}"),
        ),
        Plan::NameConflict { conflict, .. } => (
            Reason::NameConflict,
            conflict.message(&format!("{cloud} cluster"), name),
        ),
        Plan::Failed(m) => (Reason::CloudError, m.clone()),
        Plan::Invalid(m) => (Reason::InvalidSpec, m.clone()),
        Plan::Nothing => (Reason::WaitingForCloud, format!("Waiting for {name}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
