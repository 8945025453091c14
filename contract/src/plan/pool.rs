//! A managed node pool's next step and its whole condition set, on every cloud.
//!
//! The order differs from the control plane's on purpose: an operation the pool tracks is
//! judged before the pool's state (its result is the news), the ownership tags are repaired
//! before anything is changed, and the cloud's own change (scaling, labels, taints) goes before a
//! version step, so a scale request is never held behind a long node roll.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{
    Adopting, CloudStep, Lifecycle, OperationState, Plan, Tracked, Wait, adoption_step,
    tracked_step,
};
use crate::api::OperationKind;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::conditions::{ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::ownership::Owner;
use crate::version::{KubeVersion, next_pool_step, pool_waits_for_control_plane};

/// What the planner needs to know of the observed pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolFacts<'a> {
    /// The cloud's id of it.
    pub id: &'a str,
    /// Its lifecycle.
    pub lifecycle: &'a Lifecycle,
    /// Its state in the cloud's words (`CREATE_FAILED`, `RUNNING`).
    pub state: &'a str,
    /// The minor version its nodes run, when the cloud says.
    pub version: Option<KubeVersion>,
    /// Its tags.
    pub tags: &'a BTreeMap<String, String>,
    /// The cloud's health issues, in its words.
    pub issues: &'a [String],
    /// The node count the cloud aims for.
    pub desired_size: Option<i32>,
}

/// What the spec and the owning MachinePool ask for, in the shared terms.
#[derive(Debug, Clone, Copy)]
pub struct PoolIntent<'a> {
    /// The cloud's short name (`EKS`).
    pub cloud: &'a str,
    /// What the cloud calls a pool (`node group`, `node pool`, `agent pool`).
    pub noun: &'a str,
    /// The pool's name in the cloud.
    pub name: &'a str,
    /// The Cluster it must belong to.
    pub owner: &'a Owner,
    /// `spec.adoption`: take over a same-named pool that is not ours, after its plan.
    pub adoption: Option<Adopting<'a>>,
    /// Every tag the pool must carry (the user's and the ownership tag).
    pub tags: &'a BTreeMap<String, String>,
    /// `MachinePool.spec.template.spec.version`, at minor granularity.
    pub version: Option<KubeVersion>,
    /// The control plane's version.
    pub control_plane_version: Option<KubeVersion>,
}

/// Decides the pass of a pool. `create_pending`: a create was asked for so recently that a
/// cloud which is eventually consistent may not list the pool yet.
pub fn pool<C>(
    observed: Option<PoolFacts<'_>>,
    tracked: Option<&Tracked>,
    create_pending: bool,
    intent: &PoolIntent<'_>,
    diff: CloudStep<C>,
) -> Plan<C> {
    let (cloud, noun, name) = (intent.cloud, intent.noun, intent.name);
    let what = format!("{cloud} {noun} named {name}");
    let tagged = observed.as_ref().map(|p| (p.id, p.tags));
    if !create_pending
        && let Some(step) = adoption_step(
            intent.owner,
            intent.adoption,
            tagged,
            (&what, "in the cluster"),
        )
    {
        return step;
    }
    let Some(found) = observed else {
        return if create_pending {
            Plan::Wait(Wait::Creating)
        } else {
            Plan::Create
        };
    };
    if let Some(step) = tracked_step(tracked, &format!("{cloud} {{what}} of {noun} {name}")) {
        return step;
    }
    match found.lifecycle {
        Lifecycle::Running | Lifecycle::Degraded => {}
        Lifecycle::Creating => return Plan::Wait(Wait::Creating),
        // As for a control plane: a tracked upgrade whose state is not known yet is still an
        // upgrade (Upgrading=True), not a configuration change.
        Lifecycle::Updating => {
            let upgrade = tracked.is_some_and(|t| t.kind == OperationKind::Upgrade);
            return Plan::Wait(Wait::Updating { upgrade });
        }
        Lifecycle::Deleting => return Plan::Wait(Wait::Deleting),
        Lifecycle::Failed => {
            return Plan::Failed(format!(
                "{cloud} reports {noun} {name} as {}: {}",
                found.state,
                join_or(found.issues, "no health issue given")
            ));
        }
        Lifecycle::Other(state) => return Plan::Wait(Wait::Pending(state.clone())),
    }
    let missing: BTreeMap<String, String> = intent
        .tags
        .iter()
        .filter(|(k, v)| found.tags.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !missing.is_empty() {
        return Plan::Tag(missing);
    }
    match diff {
        CloudStep::Change(change) => return Plan::Update(change),
        CloudStep::Wait(message) => return Plan::Wait(Wait::Cloud(message)),
        CloudStep::Failed(message) => return Plan::Failed(message),
        CloudStep::Invalid(message) => return Plan::Invalid(message),
        CloudStep::Nothing => {}
    }
    let (Some(current), Some(want)) = (found.version, intent.version) else {
        return Plan::Nothing;
    };
    // Without the control plane's version a step cannot be checked; only refuse downgrades.
    let ceiling = intent.control_plane_version.unwrap_or(want);
    match next_pool_step(&current, &want, &ceiling) {
        Err(e) => Plan::Invalid(e.to_string()),
        Ok(Some(to)) if intent.control_plane_version.is_some() => Plan::Upgrade { to },
        Ok(_) => Plan::Nothing,
    }
}

/// Whether `status.operation` stays after a pass that neither started nor finished one: only
/// while it is waited for.
pub fn carries_operation<C>(plan: &Plan<C>, tracked: Option<&Tracked>) -> bool {
    let finished = tracked.is_some_and(|t| {
        matches!(
            t.state,
            Some(OperationState::Succeeded | OperationState::Failed(_))
        )
    });
    matches!(plan, Plan::Wait(_)) && !finished
}

/// What the condition set of a pool pass is computed from, besides the plan.
#[derive(Debug, Clone)]
pub struct PoolReport<'a> {
    /// The intent the plan was made for.
    pub intent: PoolIntent<'a>,
    /// The pool as observed (when ours, or `None`).
    pub observed: Option<PoolFacts<'a>>,
    /// The operation in `status.operation`, as it was before the pass.
    pub tracked: Option<&'a Tracked>,
    /// Nodes running (the provider IDs reported).
    pub running: usize,
    /// What the cloud's own change does, in the user's terms ([`Plan::Update`]).
    pub change: Option<String>,
}

/// The whole condition set of a pool pass (Ready, Upgrading), and whether the pool has settled
/// (so the pass can rest).
pub fn pool_conditions<C>(
    plan: &Plan<C>,
    report: &PoolReport<'_>,
) -> (Vec<DesiredCondition>, bool) {
    let (ready, settled) = readiness(plan, report);
    (vec![ready, upgrading(plan, report)], settled)
}

/// `NodesVisible`: what Cluster API core can see of the pool, from the Cluster's
/// `RemoteConnectionProbe` (`probe`; `None` before core has set it). Core matches a pool's
/// instances to Nodes in the workload cluster; while it has not reached that cluster's API
/// server (a private-only endpoint, or a cluster core has not connected to yet), the
/// MachinePool's `readyReplicas` and `nodeRefs` stay empty although the pool is healthy, and
/// this says so, with core's own words and the count the cloud reports. It never changes
/// `Ready`: the pool is managed from the cloud API alone. `kind` is the provider's pool kind
/// (`EKSMachinePool`).
pub fn nodes_visible(
    probe: Option<&Condition>,
    report: &PoolReport<'_>,
    kind: &str,
) -> DesiredCondition {
    let t = ConditionType::NodesVisible;
    let intent = &report.intent;
    let (cloud, noun, name) = (intent.cloud, intent.noun, intent.name);
    let Some(probe) = probe else {
        return DesiredCondition::unknown(
            t,
            Reason::WaitingForControlPlane,
            "Cluster API has not probed the workload API server yet (the Cluster's RemoteConnectionProbe)",
        );
    };
    match ConditionStatus::parse(&probe.status) {
        Some(ConditionStatus::True) => DesiredCondition::true_(
            t,
            Reason::Ready,
            "Cluster API reaches the workload API server and finds the nodes there by their provider IDs",
        ),
        Some(ConditionStatus::False) => {
            let nodes = match report.running {
                1 => "the 1 node".to_string(),
                n => format!("the {n} nodes"),
            };
            let core_says = match probe.message.trim().trim_end_matches('.') {
                "" => String::new(),
                m => format!(": {m}"),
            };
            DesiredCondition::false_(
                t,
                Reason::WorkloadUnreachable,
                format!(
                    "Cluster API has not reached the workload API server (the Cluster's RemoteConnectionProbe is False{core_says}), so it sees none of {nodes} {cloud} runs in {noun} {name}: the MachinePool's readyReplicas stays 0 and its nodeRefs empty. The {noun} is still created, upgraded, scaled and deleted through the {cloud} API: this {kind}'s status.replicas and spec.providerIDList are {cloud}'s count. A private-only endpoint is seen from inside the cluster's network"
                ),
            )
        }
        _ => DesiredCondition::unknown(
            t,
            Reason::WaitingForControlPlane,
            "Cluster API has not probed the workload API server yet (the Cluster's RemoteConnectionProbe)",
        ),
    }
}

fn upgrading<C>(plan: &Plan<C>, report: &PoolReport<'_>) -> DesiredCondition {
    let t = ConditionType::Upgrading;
    let intent = &report.intent;
    let noun = intent.noun;
    let current = report.observed.and_then(|p| p.version);
    match plan {
        Plan::Invalid(message) => {
            return DesiredCondition::false_(t, Reason::InvalidSpec, message.clone());
        }
        Plan::Upgrade { to } => {
            let from = current.map(|c| format!(" from {c}")).unwrap_or_default();
            return DesiredCondition::true_(
                t,
                Reason::Upgrading,
                format!("Upgrading the {noun}{from} to {to}"),
            );
        }
        _ => {}
    }
    let upgrade_in_flight = report
        .tracked
        .is_some_and(|t| t.kind == OperationKind::Upgrade);
    if upgrade_in_flight && matches!(plan, Plan::Wait(_)) {
        let to = intent
            .version
            .map(|v| format!(" towards {v}"))
            .unwrap_or_default();
        return DesiredCondition::true_(
            t,
            Reason::Upgrading,
            format!("The {noun}'s version upgrade is in progress{to}"),
        );
    }
    let (Some(current), Some(want)) = (current, intent.version) else {
        let message = match current {
            Some(c) => format!("The {noun} runs {c}"),
            None => format!("No {noun} version yet"),
        };
        return DesiredCondition::false_(t, Reason::UpToDate, message);
    };
    if want.minor_cmp(&current) != Ordering::Greater {
        return DesiredCondition::false_(t, Reason::UpToDate, format!("The {noun} runs {current}"));
    }
    match intent.control_plane_version {
        Some(cp) if pool_waits_for_control_plane(&current.next_minor(), &cp) => {
            DesiredCondition::true_(
                t,
                Reason::WaitingForControlPlane,
                format!(
                    "The MachinePool asks for {want}; the {noun} runs {current} and follows once the control plane (at {cp}) is upgraded"
                ),
            )
        }
        None => DesiredCondition::true_(
            t,
            Reason::WaitingForControlPlane,
            format!(
                "The MachinePool asks for {want}; waiting for the control plane to report its version"
            ),
        ),
        Some(_) => DesiredCondition::true_(
            t,
            Reason::Upgrading,
            format!(
                "The MachinePool asks for {want}; the {noun} runs {current} and is upgraded after the change in progress"
            ),
        ),
    }
}

fn readiness<C>(plan: &Plan<C>, report: &PoolReport<'_>) -> (DesiredCondition, bool) {
    let t = ConditionType::Ready;
    let intent = &report.intent;
    let (cloud, noun, name) = (intent.cloud, intent.noun, intent.name);
    let busy =
        |reason: Reason, message: String| (DesiredCondition::false_(t, reason, message), false);
    let current = report.observed.and_then(|p| p.version);
    match plan {
        Plan::Create => busy(Reason::Creating, format!("Creating {noun} {name}")),
        Plan::Adopt { .. } => busy(
            Reason::Updating,
            format!("Adopting {noun} {name} (spec.adoption): tagging it as ours"),
        ),
        Plan::AdoptionPlanned { id } => busy(
            Reason::AdoptionPlanned,
            format!(
                "{cloud} {noun} {id} is not ours yet: {}. Nothing was written; set spec.adoption.accept: true to adopt it (status.adoption lists the plan)",
                report
                    .change
                    .as_deref()
                    .unwrap_or("adopting changes nothing in the cloud")
            ),
        ),
        Plan::AdoptionRefused(m) => busy(Reason::AdoptionRefused, m.clone()),
        Plan::Tag(_) => busy(Reason::Updating, format!("Tagging {noun} {name}")),
        Plan::Update(_) => busy(
            Reason::Updating,
            match &report.change {
                Some(change) => format!("{noun} {name}: {change}"),
                None => format!("Updating {noun} {name}"),
            },
        ),
        Plan::Upgrade { to } => {
            let from = current.map(|c| format!(" from {c}")).unwrap_or_default();
            busy(
                Reason::Upgrading,
                format!("Upgrading {noun} {name}{from} to {to}"),
            )
        }
        Plan::Wait(wait) => {
            let (reason, message) = match wait {
                Wait::Creating => (
                    Reason::Creating,
                    format!("{cloud} is creating {noun} {name}"),
                ),
                Wait::Updating { upgrade } => (
                    if *upgrade {
                        Reason::Upgrading
                    } else {
                        Reason::Updating
                    },
                    format!("{cloud} is updating {noun} {name}"),
                ),
                Wait::Deleting => (
                    Reason::WaitingForCloud,
                    format!(
                        "{noun} {name} is being deleted outside Cluster API; it is created again once gone"
                    ),
                ),
                Wait::Pending(state) => (
                    Reason::WaitingForCloud,
                    format!("{noun} {name} is in state {state}"),
                ),
                Wait::Cloud(message) => (Reason::Updating, message.clone()),
            };
            busy(reason, message)
        }
        Plan::NameConflict { conflict, .. } => busy(
            Reason::NameConflict,
            conflict.message(&format!("{cloud} {noun}"), name),
        ),
        Plan::Failed(message) => busy(Reason::CloudError, message.clone()),
        Plan::Invalid(message) => busy(Reason::InvalidSpec, message.clone()),
        Plan::Nothing => {
            let Some(found) = report.observed else {
                return busy(Reason::Creating, format!("Waiting for {noun} {name}"));
            };
            if *found.lifecycle == Lifecycle::Degraded {
                return busy(
                    Reason::CloudError,
                    format!(
                        "{noun} {name} is degraded: {}",
                        join_or(found.issues, "no health issue given")
                    ),
                );
            }
            let wanted = found.desired_size.unwrap_or_default();
            if usize::try_from(wanted).ok() != Some(report.running) {
                return busy(
                    Reason::WaitingForCloud,
                    format!(
                        "{noun} {name}: {} of {wanted} nodes running",
                        report.running
                    ),
                );
            }
            let version = current.map_or_else(|| "unknown".to_string(), |v| v.to_string());
            (
                DesiredCondition::true_(
                    t,
                    Reason::Ready,
                    format!(
                        "{noun} {name}: {} nodes, Kubernetes {version}",
                        report.running
                    ),
                ),
                true,
            )
        }
    }
}

fn join_or(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.to_string()
    } else {
        items.join("; ")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const NAME: &str = "team-a-pool";

    fn owner() -> Owner {
        Owner::new("test", "team-a", "c1")
    }

    fn facts<'a>(
        lifecycle: &'a Lifecycle,
        tags: &'a BTreeMap<String, String>,
        version: Option<KubeVersion>,
    ) -> PoolFacts<'a> {
        PoolFacts {
            id: "pool-1",
            lifecycle,
            state: "RUNNING",
            version,
            tags,
            issues: &[],
            desired_size: Some(2),
        }
    }

    fn intent<'a>(owner: &'a Owner, tags: &'a BTreeMap<String, String>) -> PoolIntent<'a> {
        PoolIntent {
            cloud: "XKS",
            noun: "node pool",
            name: NAME,
            owner,
            adoption: None,
            tags,
            version: Some(KubeVersion::new(1, 32)),
            control_plane_version: Some(KubeVersion::new(1, 32)),
        }
    }

    #[test]
    fn a_pool_steps_through_the_shared_order() {
        let owner = owner();
        let ours = owner.tags(&BTreeMap::new());
        let wanted = owner.tags(&BTreeMap::from([("team".into(), "a".into())]));
        let running = Lifecycle::Running;
        let v131 = Some(KubeVersion::new(1, 31));
        let nothing = || CloudStep::<&str>::Nothing;

        // Absent: created, unless a create was asked for moments ago.
        assert_eq!(
            pool(None, None, false, &intent(&owner, &ours), nothing()),
            Plan::Create
        );
        assert_eq!(
            pool(None, None, true, &intent(&owner, &ours), nothing()),
            Plan::Wait(Wait::Creating)
        );
        // Our tags put back before anything else is changed.
        let plan = pool(
            Some(facts(&running, &ours, v131)),
            None,
            false,
            &intent(&owner, &wanted),
            CloudStep::Change("scale"),
        );
        assert_eq!(
            plan,
            Plan::Tag(BTreeMap::from([("team".into(), "a".into())]))
        );
        // The cloud's change goes before the version step, which follows once nothing differs.
        let i = intent(&owner, &ours);
        let plan = pool(
            Some(facts(&running, &ours, v131)),
            None,
            false,
            &i,
            CloudStep::Change("scale"),
        );
        assert_eq!(plan, Plan::Update("scale"));
        let plan = pool(
            Some(facts(&running, &ours, v131)),
            None,
            false,
            &i,
            nothing(),
        );
        assert_eq!(
            plan,
            Plan::Upgrade {
                to: KubeVersion::new(1, 32)
            }
        );
        // Never past the control plane, and never without knowing its version.
        let behind = PoolIntent {
            control_plane_version: Some(KubeVersion::new(1, 31)),
            ..i
        };
        let plan = pool(
            Some(facts(&running, &ours, v131)),
            None,
            false,
            &behind,
            nothing(),
        );
        assert_eq!(plan, Plan::Nothing);
        let unknown = PoolIntent {
            control_plane_version: None,
            ..i
        };
        let plan = pool(
            Some(facts(&running, &ours, v131)),
            None,
            false,
            &unknown,
            nothing(),
        );
        assert_eq!(plan, Plan::Nothing);
        // A failed pool is reported with the cloud's state and issues.
        let failed = Lifecycle::Failed;
        let issues = ["Launch: no capacity".to_string()];
        let broken = PoolFacts {
            state: "ERROR",
            issues: &issues,
            ..facts(&failed, &ours, v131)
        };
        let plan = pool(Some(broken), None, false, &i, nothing());
        assert_eq!(
            plan,
            Plan::Failed("XKS reports node pool team-a-pool as ERROR: Launch: no capacity".into())
        );
    }

    #[test]
    fn the_pool_condition_set_is_whole_and_ready_only_with_every_node() {
        let owner = owner();
        let ours = owner.tags(&BTreeMap::new());
        let running = Lifecycle::Running;
        let v132 = Some(KubeVersion::new(1, 32));
        let report = |running_nodes| PoolReport {
            intent: intent(&owner, &ours),
            observed: Some(facts(&running, &ours, v132)),
            tracked: None,
            running: running_nodes,
            change: None,
        };
        let (set, settled) = pool_conditions(&Plan::<&str>::Nothing, &report(2));
        let types: Vec<&str> = set.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Ready", "Upgrading"]);
        assert!(settled);
        assert_eq!(set[0].reason, Reason::Ready.as_str());
        let (set, settled) = pool_conditions(&Plan::<&str>::Nothing, &report(1));
        assert!(!settled);
        assert_eq!(
            set[0].message,
            "node pool team-a-pool: 1 of 2 nodes running"
        );
    }

    #[test]
    fn nodes_visible_follows_core_s_probe_and_names_the_cloud_s_count() {
        let owner = Owner::new("eks", "ns", "c1");
        let tags = BTreeMap::new();
        let report = PoolReport {
            intent: PoolIntent {
                cloud: "EKS",
                noun: "node group",
                name: "ng",
                owner: &owner,
                adoption: None,
                tags: &tags,
                version: None,
                control_plane_version: None,
            },
            observed: None,
            tracked: None,
            running: 3,
            change: None,
        };
        let probe = |status: &str| Condition {
            type_: "RemoteConnectionProbe".into(),
            status: status.into(),
            reason: "ProbeFailed".into(),
            message: "Remote connection not established yet".into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        };
        let hidden = nodes_visible(Some(&probe("False")), &report, "EKSMachinePool");
        assert_eq!(hidden.status, ConditionStatus::False);
        assert_eq!(hidden.reason, "WorkloadUnreachable");
        assert!(
            hidden
                .message
                .contains("none of the 3 nodes EKS runs in node group ng")
        );
        assert!(hidden.message.contains("EKSMachinePool's status.replicas"));
        assert!(
            hidden
                .message
                .contains("is False: Remote connection not established yet), so"),
            "core's words are quoted: {}",
            hidden.message
        );
        let seen = nodes_visible(Some(&probe("True")), &report, "EKSMachinePool");
        assert_eq!(seen.status, ConditionStatus::True);
        for unprobed in [None, Some(probe("Unknown")), Some(probe("bogus"))] {
            let c = nodes_visible(unprobed.as_ref(), &report, "EKSMachinePool");
            assert_eq!(c.status, ConditionStatus::Unknown, "{unprobed:?}");
            assert_eq!(c.reason, "WaitingForControlPlane");
        }
        // Informational: never what Ready summarises.
        let ready = crate::conditions::ready_summary(&[hidden]);
        assert_eq!(ready.status, ConditionStatus::True);
    }
}
