//! What to do with a node group this pass: pure, table-tested.
//!
//! [`plan`] takes what was observed (the node group, the update in flight, the control plane's
//! version), what is wanted, and the clock, and returns one [`Plan`]: at most one cloud write.
//! [`upgrading`] and [`readiness`] derive the conditions from the same inputs.

use std::collections::BTreeMap;
use std::time::Duration;

use contract::api::{Operation, OperationKind};
use contract::conditions::{ConditionType, DesiredCondition, Reason};
use contract::ownership::{Conflict, Owner, Ownership};
use contract::version::{KubeVersion, next_pool_step, pool_waits_for_control_plane};

use super::mapping::{
    LabelsAndTaints, NodegroupState, NodegroupView, PoolShape, Scaling, ScalingIntent,
    UpdateConfig, UpdateState, UpdateView, creation_scaling, creation_version, labels_and_taints,
    scaling_change,
};

/// How long after asking EKS to create a node group a NotFound is taken as "not visible yet"
/// rather than "gone" (EKS is eventually consistent).
pub const CREATE_VISIBILITY_GRACE: Duration = Duration::from_secs(60);

/// What was observed this pass.
#[derive(Debug, Clone, Default)]
pub struct Observed<'a> {
    /// DescribeNodegroup; `None` on NotFound.
    pub nodegroup: Option<&'a NodegroupView>,
    /// `status.operation` as the previous pass left it.
    pub operation: Option<&'a Operation>,
    /// DescribeUpdate of that operation, when it is an update.
    pub update: Option<&'a UpdateView>,
    /// The control plane's Kubernetes version (its `status.version`).
    pub control_plane_version: Option<KubeVersion>,
}

/// What the spec and the owning MachinePool ask for.
#[derive(Debug, Clone)]
pub struct Desired<'a> {
    /// The spec in EKS's terms.
    pub shape: &'a PoolShape,
    /// Who owns the node count.
    pub scaling: ScalingIntent,
    /// `MachinePool.spec.template.spec.version`, at minor granularity.
    pub version: Option<KubeVersion>,
    /// The tags every resource of this cluster carries (ours included).
    pub tags: &'a BTreeMap<String, String>,
    /// The Cluster the node group belongs to (the ownership tag).
    pub owner: Owner,
    /// `spec.adopt`.
    pub adopt: bool,
}

/// The change an UpdateNodegroupConfig makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigChange {
    /// New scaling, when it differs.
    pub scaling: Option<Scaling>,
    /// Label and taint changes.
    pub labels_and_taints: LabelsAndTaints,
    /// New update config, when it differs.
    pub update_config: Option<UpdateConfig>,
}

impl ConfigChange {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.scaling.is_none() && self.labels_and_taints.is_empty() && self.update_config.is_none()
    }

    /// What changes, in the user's words.
    pub fn describe(&self, observed: Option<Scaling>) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.scaling {
            match observed {
                Some(o) if o.desired_size != s.desired_size => {
                    parts.push(format!(
                        "scaling from {} to {} nodes",
                        o.desired_size, s.desired_size
                    ));
                }
                _ => parts.push(format!(
                    "setting the size bounds to {}..{}",
                    s.min_size, s.max_size
                )),
            }
        }
        let lt = &self.labels_and_taints;
        if !lt.labels_add.is_empty() || !lt.labels_remove.is_empty() {
            parts.push("updating labels".into());
        }
        if !lt.taints_add.is_empty() || !lt.taints_remove.is_empty() {
            parts.push("updating taints".into());
        }
        if self.update_config.is_some() {
            parts.push("updating maxUnavailable".into());
        }
        parts.join(", ")
    }
}

/// What is being waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waiting {
    /// The node group was asked for moments ago and EKS does not list it yet.
    CreateNotVisible,
    /// EKS is creating it.
    Creating,
    /// EKS is updating it (our update or someone else's).
    Updating,
    /// Our update (recorded in status) is still in progress.
    UpdateInFlight {
        /// `Update` or `Upgrade`.
        kind: OperationKind,
        /// The update's ID.
        id: String,
    },
    /// It is being deleted, though this object is not: it is recreated once gone.
    DeletingOutside,
    /// EKS reports a state this provider does not know.
    UnknownState(String),
}

/// The one thing to do this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No node group of that name: create it with this scaling and version.
    Create {
        /// `scalingConfig`.
        scaling: Scaling,
        /// `version`; `None` lets EKS use the cluster's.
        version: Option<KubeVersion>,
    },
    /// A node group of that name exists, is not ours, and `spec.adopt` asks to take it: tag it.
    Adopt,
    /// Ours, but some of the tags we put on are missing or different: add them.
    Tag(BTreeMap<String, String>),
    /// UpdateNodegroupConfig: scaling, labels, taints or update config differ.
    UpdateConfig(ConfigChange),
    /// UpdateNodegroupVersion, one minor up.
    Upgrade {
        /// The version it runs.
        from: KubeVersion,
        /// The version to move to.
        to: KubeVersion,
    },
    /// Something is in flight; look again after the poll interval.
    Wait(Waiting),
    /// A node group of that name exists and is not ours (and `spec.adopt` is not set).
    NameConflict(Conflict),
    /// The update recorded in status failed (or was cancelled).
    UpdateFailed {
        /// The update's ID.
        id: String,
        /// EKS's errors.
        errors: Vec<String>,
    },
    /// EKS reports a failed state a person has to look at (CREATE_FAILED, DELETE_FAILED).
    Failed {
        /// The state.
        state: NodegroupState,
        /// EKS's health issues.
        issues: Vec<String>,
    },
    /// The version asked for cannot be reached (a downgrade, a major change).
    Invalid(String),
    /// Nothing to change.
    Nothing,
}

/// Decides the pass. `now` only ages the recorded operation.
pub fn plan(observed: &Observed<'_>, desired: &Desired<'_>, now: jiff::Timestamp) -> Plan {
    let Some(ng) = observed.nodegroup else {
        if let Some(op) = observed
            .operation
            .filter(|op| op.kind == OperationKind::Create)
            && op.age(now) < CREATE_VISIBILITY_GRACE
        {
            return Plan::Wait(Waiting::CreateNotVisible);
        }
        return Plan::Create {
            scaling: creation_scaling(desired.scaling),
            version: creation_version(
                desired.version.as_ref(),
                observed.control_plane_version.as_ref(),
            ),
        };
    };
    match desired.owner.decide(&ng.tags, desired.adopt) {
        Ownership::Ours => {}
        Ownership::Adopt => return Plan::Adopt,
        Ownership::Conflict(conflict) => return Plan::NameConflict(conflict),
    }
    if let Some(update) = observed.update {
        match update.state {
            UpdateState::InProgress => {
                let kind = observed
                    .operation
                    .map(|op| op.kind)
                    .unwrap_or(OperationKind::Update);
                return Plan::Wait(Waiting::UpdateInFlight {
                    kind,
                    id: update.id.clone(),
                });
            }
            UpdateState::Failed | UpdateState::Cancelled => {
                return Plan::UpdateFailed {
                    id: update.id.clone(),
                    errors: update.errors.clone(),
                };
            }
            UpdateState::Successful => {}
        }
    }
    match &ng.state {
        NodegroupState::Creating => return Plan::Wait(Waiting::Creating),
        NodegroupState::Updating => return Plan::Wait(Waiting::Updating),
        NodegroupState::Deleting => return Plan::Wait(Waiting::DeletingOutside),
        NodegroupState::CreateFailed | NodegroupState::DeleteFailed => {
            return Plan::Failed {
                state: ng.state.clone(),
                issues: ng.issues.clone(),
            };
        }
        NodegroupState::Other(s) => return Plan::Wait(Waiting::UnknownState(s.clone())),
        NodegroupState::Active | NodegroupState::Degraded => {}
    }
    let missing: BTreeMap<String, String> = desired
        .tags
        .iter()
        .filter(|(k, v)| ng.tags.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !missing.is_empty() {
        return Plan::Tag(missing);
    }
    let change = config_change(ng, desired);
    if !change.is_empty() {
        return Plan::UpdateConfig(change);
    }
    match version_step(ng, desired, observed) {
        Err(message) => Plan::Invalid(message),
        Ok(Some((from, to))) => Plan::Upgrade { from, to },
        Ok(None) => Plan::Nothing,
    }
}

/// What UpdateNodegroupConfig must change, possibly nothing.
pub fn config_change(ng: &NodegroupView, desired: &Desired<'_>) -> ConfigChange {
    let shape = desired.shape;
    ConfigChange {
        scaling: scaling_change(desired.scaling, ng.scaling),
        labels_and_taints: labels_and_taints(&ng.labels, &shape.labels, &ng.taints, &shape.taints),
        update_config: shape.update_config.filter(|u| ng.update_config != Some(*u)),
    }
}

/// The next version step `(from, to)`, none, or why the asked version cannot be reached.
fn version_step(
    ng: &NodegroupView,
    desired: &Desired<'_>,
    observed: &Observed<'_>,
) -> Result<Option<(KubeVersion, KubeVersion)>, String> {
    let (Some(current), Some(want)) = (ng.minor(), desired.version) else {
        return Ok(None);
    };
    let Some(cp) = observed.control_plane_version else {
        // Without the control plane's version a step cannot be checked; only refuse downgrades.
        return match next_pool_step(&current, &want, &want) {
            Err(e) => Err(e.to_string()),
            Ok(_) => Ok(None),
        };
    };
    next_pool_step(&current, &want, &cp)
        .map(|step| step.map(|to| (current, to)))
        .map_err(|e| e.to_string())
}

/// The `Upgrading` condition: True while a version change runs or waits for the control plane.
pub fn upgrading(observed: &Observed<'_>, desired: &Desired<'_>, plan: &Plan) -> DesiredCondition {
    let t = ConditionType::Upgrading;
    let in_flight_upgrade = observed
        .operation
        .is_some_and(|op| op.kind == OperationKind::Upgrade);
    match plan {
        Plan::Invalid(message) => {
            return DesiredCondition::false_(t, Reason::InvalidSpec, message.clone());
        }
        Plan::Upgrade { from, to } => {
            return DesiredCondition::true_(
                t,
                Reason::Upgrading,
                format!("upgrading the node group from {from} to {to}"),
            );
        }
        _ => {}
    }
    let current = observed.nodegroup.and_then(NodegroupView::minor);
    if in_flight_upgrade && matches!(plan, Plan::Wait(_)) {
        let to = desired
            .version
            .map(|v| format!(" towards {v}"))
            .unwrap_or_default();
        return DesiredCondition::true_(
            t,
            Reason::Upgrading,
            format!("the node group's version upgrade is in progress{to}"),
        );
    }
    let (Some(current), Some(want)) = (current, desired.version) else {
        let message = match current {
            Some(c) => format!("the node group runs {c}"),
            None => "no node group version yet".to_string(),
        };
        return DesiredCondition::false_(t, Reason::UpToDate, message);
    };
    if want.minor_cmp(&current) != std::cmp::Ordering::Greater {
        return DesiredCondition::false_(
            t,
            Reason::UpToDate,
            format!("the node group runs {current}"),
        );
    }
    match observed.control_plane_version {
        Some(cp) if pool_waits_for_control_plane(&current.next_minor(), &cp) => {
            DesiredCondition::true_(
                t,
                Reason::WaitingForControlPlane,
                format!(
                    "the MachinePool asks for {want}; the node group runs {current} and follows once the control plane (at {cp}) is upgraded"
                ),
            )
        }
        None => DesiredCondition::true_(
            t,
            Reason::WaitingForControlPlane,
            format!(
                "the MachinePool asks for {want}; waiting for the control plane to report its version"
            ),
        ),
        Some(_) => DesiredCondition::true_(
            t,
            Reason::Upgrading,
            format!(
                "the MachinePool asks for {want}; the node group runs {current} and is upgraded after the change in progress"
            ),
        ),
    }
}

/// The `Ready` condition and whether the pool has settled (so the pass can rest).
pub fn readiness(
    observed: &Observed<'_>,
    plan: &Plan,
    nodegroup: &str,
    running: usize,
) -> (DesiredCondition, bool) {
    let t = ConditionType::Ready;
    let busy =
        |reason: Reason, message: String| (DesiredCondition::false_(t, reason, message), false);
    match plan {
        Plan::Create { .. } => busy(Reason::Creating, format!("creating node group {nodegroup}")),
        Plan::Adopt => busy(
            Reason::Updating,
            format!("adopting node group {nodegroup} (spec.adopt): tagging it as ours"),
        ),
        Plan::Tag(_) => busy(Reason::Updating, format!("tagging node group {nodegroup}")),
        Plan::UpdateConfig(change) => busy(
            Reason::Updating,
            format!(
                "node group {nodegroup}: {}",
                change.describe(observed.nodegroup.and_then(|n| n.scaling))
            ),
        ),
        Plan::Upgrade { from, to } => busy(
            Reason::Upgrading,
            format!("upgrading node group {nodegroup} from {from} to {to}"),
        ),
        Plan::Wait(w) => {
            let (reason, message) = match w {
                Waiting::CreateNotVisible | Waiting::Creating => (
                    Reason::Creating,
                    format!("EKS is creating node group {nodegroup}"),
                ),
                Waiting::Updating => (
                    Reason::Updating,
                    format!("EKS is updating node group {nodegroup}"),
                ),
                Waiting::UpdateInFlight { kind, id } => {
                    let reason = if *kind == OperationKind::Upgrade {
                        Reason::Upgrading
                    } else {
                        Reason::Updating
                    };
                    (
                        reason,
                        format!("EKS is updating node group {nodegroup} (update {id})"),
                    )
                }
                Waiting::DeletingOutside => (
                    Reason::WaitingForCloud,
                    format!(
                        "node group {nodegroup} is being deleted outside Cluster API; it is created again once gone"
                    ),
                ),
                Waiting::UnknownState(s) => (
                    Reason::WaitingForCloud,
                    format!("node group {nodegroup} is in state {s}"),
                ),
            };
            busy(reason, message)
        }
        Plan::NameConflict(conflict) => busy(
            Reason::NameConflict,
            conflict.message("EKS node group", nodegroup),
        ),
        Plan::UpdateFailed { id, errors } => busy(
            Reason::CloudError,
            format!(
                "EKS update {id} of node group {nodegroup} failed: {}",
                join_or(errors, "no error given")
            ),
        ),
        Plan::Failed { state, issues } => busy(
            Reason::CloudError,
            format!(
                "node group {nodegroup} is {}: {}",
                state.as_str(),
                join_or(issues, "no health issue given")
            ),
        ),
        Plan::Invalid(message) => busy(Reason::InvalidSpec, message.clone()),
        Plan::Nothing => {
            let Some(ng) = observed.nodegroup else {
                return busy(Reason::Creating, String::new());
            };
            let wanted = ng.scaling.map(|s| s.desired_size).unwrap_or_default();
            if ng.state == NodegroupState::Degraded {
                return busy(
                    Reason::CloudError,
                    format!(
                        "node group {nodegroup} is degraded: {}",
                        join_or(&ng.issues, "no health issue given")
                    ),
                );
            }
            if usize::try_from(wanted).ok() != Some(running) {
                return busy(
                    Reason::WaitingForCloud,
                    format!("node group {nodegroup}: {running} of {wanted} nodes running"),
                );
            }
            let version = ng.version.as_deref().unwrap_or("unknown");
            (
                DesiredCondition::true_(
                    t,
                    Reason::Ready,
                    format!("node group {nodegroup}: {running} nodes, Kubernetes {version}"),
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

/// `status.operation` after the pass, when the plan neither started nor finished one.
pub fn carried_operation<'a>(observed: &Observed<'a>, plan: &Plan) -> Option<&'a Operation> {
    let op = observed.operation?;
    let finished = observed
        .update
        .is_some_and(|u| u.state != UpdateState::InProgress);
    match plan {
        Plan::Wait(_) if !finished => Some(op),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::machine_pool::mapping::{CapacityType, EksTaint};

    const NS: &str = "team-a";
    const CLUSTER: &str = "prod";

    fn v(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    fn ts(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    const NOW: &str = "2026-09-01T12:00:00Z";

    fn shape() -> PoolShape {
        PoolShape {
            instance_types: vec!["m5.large".into()],
            disk_size: None,
            ami_type: None,
            capacity_type: CapacityType::OnDemand,
            labels: BTreeMap::from([("role".to_string(), "worker".to_string())]),
            taints: Vec::new(),
            update_config: None,
            node_role: "arn:aws:iam::123456789012:role/nodes".into(),
        }
    }

    fn ours() -> BTreeMap<String, String> {
        crate::scope::owner(NS, CLUSTER).tags(&BTreeMap::new())
    }

    /// An ACTIVE node group of ours, 2 nodes, v1.31, matching [`shape`].
    fn active() -> NodegroupView {
        NodegroupView {
            name: "team-a-pool".into(),
            arn: "arn:aws:eks:us-west-2:123456789012:nodegroup/c/team-a-pool/1".into(),
            state: NodegroupState::Active,
            version: Some("1.31".into()),
            scaling: Some(Scaling {
                min_size: 0,
                max_size: 2,
                desired_size: 2,
            }),
            labels: shape().labels,
            taints: Vec::new(),
            update_config: Some(UpdateConfig::Count(1)),
            tags: ours(),
            issues: Vec::new(),
        }
    }

    fn op(kind: OperationKind, started: &str) -> Operation {
        Operation::new("op-1", kind, ts(started))
    }

    fn update(state: UpdateState) -> UpdateView {
        UpdateView {
            id: "op-1".into(),
            state,
            errors: vec!["NodeCreationFailure: no capacity".into()],
        }
    }

    struct Case {
        name: &'static str,
        nodegroup: Option<NodegroupView>,
        operation: Option<Operation>,
        update: Option<UpdateView>,
        control_plane: Option<&'static str>,
        scaling: ScalingIntent,
        version: Option<&'static str>,
        shape: PoolShape,
        tags: BTreeMap<String, String>,
        adopt: bool,
        expect: Plan,
    }

    impl Default for Case {
        fn default() -> Self {
            Case {
                name: "",
                nodegroup: Some(active()),
                operation: None,
                update: None,
                control_plane: Some("v1.31.9"),
                scaling: ScalingIntent::Fixed { replicas: 2 },
                version: Some("v1.31"),
                shape: shape(),
                tags: ours(),
                adopt: false,
                expect: Plan::Nothing,
            }
        }
    }

    fn run(case: &Case) -> Plan {
        let observed = Observed {
            nodegroup: case.nodegroup.as_ref(),
            operation: case.operation.as_ref(),
            update: case.update.as_ref(),
            control_plane_version: case.control_plane.map(v),
        };
        let desired = Desired {
            shape: &case.shape,
            scaling: case.scaling,
            version: case.version.map(v),
            tags: &case.tags,
            owner: crate::scope::owner(NS, CLUSTER),
            adopt: case.adopt,
        };
        plan(&observed, &desired, ts(NOW))
    }

    fn with<F: FnOnce(&mut NodegroupView)>(f: F) -> Option<NodegroupView> {
        let mut ng = active();
        f(&mut ng);
        Some(ng)
    }

    fn scaling_change(min: i32, max: i32, desired: i32) -> Plan {
        Plan::UpdateConfig(ConfigChange {
            scaling: Some(Scaling {
                min_size: min,
                max_size: max,
                desired_size: desired,
            }),
            ..ConfigChange::default()
        })
    }

    #[test]
    fn plans_follow_the_table() {
        let foreign =
            BTreeMap::from([("capi-managed-eks".to_string(), "other_cluster".to_string())]);
        let cases = vec![
            Case {
                name: "an absent node group is created with the MachinePool's count and minor version",
                nodegroup: None,
                expect: Plan::Create { scaling: Scaling { min_size: 0, max_size: 2, desired_size: 2 }, version: Some(v("v1.31")) },
                ..Case::default()
            },
            Case {
                name: "an absent node group asked for seconds ago is waited for, not created twice",
                nodegroup: None,
                operation: Some(op(OperationKind::Create, "2026-09-01T11:59:40Z")),
                expect: Plan::Wait(Waiting::CreateNotVisible),
                ..Case::default()
            },
            Case {
                name: "an absent node group asked for long ago was deleted behind our back and is created again",
                nodegroup: None,
                operation: Some(op(OperationKind::Create, "2026-09-01T11:00:00Z")),
                expect: Plan::Create { scaling: Scaling { min_size: 0, max_size: 2, desired_size: 2 }, version: Some(v("v1.31")) },
                ..Case::default()
            },
            Case {
                name: "an absent node group asked ahead of the control plane is created at the control plane's minor",
                nodegroup: None,
                version: Some("v1.32"),
                expect: Plan::Create { scaling: Scaling { min_size: 0, max_size: 2, desired_size: 2 }, version: Some(v("v1.31")) },
                ..Case::default()
            },
            Case {
                name: "an absent autoscaled node group is created within its bounds",
                nodegroup: None,
                scaling: ScalingIntent::Autoscaled { min: 3, max: 6, initial: 1 },
                version: None,
                expect: Plan::Create { scaling: Scaling { min_size: 3, max_size: 6, desired_size: 3 }, version: None },
                ..Case::default()
            },
            Case {
                name: "a node group that is not ours is a name conflict naming its owner",
                nodegroup: with(|n| n.tags = foreign.clone()),
                expect: Plan::NameConflict(Conflict { owner: Some("other_cluster".into()) }),
                ..Case::default()
            },
            Case {
                name: "an untagged node group that is not ours is a name conflict",
                nodegroup: with(|n| n.tags.clear()),
                expect: Plan::NameConflict(Conflict { owner: None }),
                ..Case::default()
            },
            Case {
                name: "a node group another of our clusters owns is never adopted, even with spec.adopt",
                nodegroup: with(|n| n.tags = foreign.clone()),
                adopt: true,
                expect: Plan::NameConflict(Conflict { owner: Some("other_cluster".into()) }),
                ..Case::default()
            },
            Case {
                name: "a node group that is not ours is adopted when spec.adopt asks for it",
                nodegroup: with(|n| n.tags.clear()),
                adopt: true,
                expect: Plan::Adopt,
                ..Case::default()
            },
            Case {
                name: "a creating node group is waited for",
                nodegroup: with(|n| n.state = NodegroupState::Creating),
                operation: Some(op(OperationKind::Create, "2026-09-01T11:59:00Z")),
                expect: Plan::Wait(Waiting::Creating),
                ..Case::default()
            },
            Case {
                name: "an updating node group is waited for even without a recorded operation",
                nodegroup: with(|n| n.state = NodegroupState::Updating),
                scaling: ScalingIntent::Fixed { replicas: 5 },
                expect: Plan::Wait(Waiting::Updating),
                ..Case::default()
            },
            Case {
                name: "a node group deleted outside Cluster API is waited for until gone",
                nodegroup: with(|n| n.state = NodegroupState::Deleting),
                expect: Plan::Wait(Waiting::DeletingOutside),
                ..Case::default()
            },
            Case {
                name: "a node group in a state we do not know is waited for",
                nodegroup: with(|n| n.state = NodegroupState::Other("PENDING".into())),
                expect: Plan::Wait(Waiting::UnknownState("PENDING".into())),
                ..Case::default()
            },
            Case {
                name: "a node group whose creation failed is reported with its issues",
                nodegroup: with(|n| {
                    n.state = NodegroupState::CreateFailed;
                    n.issues = vec!["AsgInstanceLaunchFailures: no capacity".into()];
                }),
                expect: Plan::Failed {
                    state: NodegroupState::CreateFailed,
                    issues: vec!["AsgInstanceLaunchFailures: no capacity".into()],
                },
                ..Case::default()
            },
            Case {
                name: "an update in progress is waited for while it runs",
                nodegroup: with(|n| n.state = NodegroupState::Updating),
                operation: Some(op(OperationKind::Upgrade, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::InProgress)),
                expect: Plan::Wait(Waiting::UpdateInFlight { kind: OperationKind::Upgrade, id: "op-1".into() }),
                ..Case::default()
            },
            Case {
                name: "a failed update is reported with EKS's errors",
                operation: Some(op(OperationKind::Update, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::Failed)),
                expect: Plan::UpdateFailed { id: "op-1".into(), errors: vec!["NodeCreationFailure: no capacity".into()] },
                ..Case::default()
            },
            Case {
                name: "a cancelled update is reported like a failed one",
                operation: Some(op(OperationKind::Update, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::Cancelled)),
                expect: Plan::UpdateFailed { id: "op-1".into(), errors: vec!["NodeCreationFailure: no capacity".into()] },
                ..Case::default()
            },
            Case {
                name: "a successful update on an active node group that matches leaves nothing to do",
                operation: Some(op(OperationKind::Update, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::Successful)),
                ..Case::default()
            },
            Case {
                name: "a node group that matches the spec leaves nothing to do",
                ..Case::default()
            },
            Case {
                name: "a node group missing one of our tags is tagged first",
                tags: {
                    let mut t = ours();
                    t.insert("team".into(), "a".into());
                    t
                },
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: Plan::Tag(BTreeMap::from([("team".to_string(), "a".to_string())])),
                ..Case::default()
            },
            Case {
                name: "more replicas scale the node group up, raising the maximum",
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: scaling_change(0, 3, 3),
                ..Case::default()
            },
            Case {
                name: "fewer replicas scale the node group down",
                scaling: ScalingIntent::Fixed { replicas: 1 },
                expect: scaling_change(0, 1, 1),
                ..Case::default()
            },
            Case {
                name: "zero replicas keep a maximum of one, as EKS requires",
                scaling: ScalingIntent::Fixed { replicas: 0 },
                expect: scaling_change(0, 1, 0),
                ..Case::default()
            },
            Case {
                name: "an autoscaled pool whose count moved within its bounds leaves nothing to do",
                nodegroup: with(|n| n.scaling = Some(Scaling { min_size: 1, max_size: 5, desired_size: 4 })),
                scaling: ScalingIntent::Autoscaled { min: 1, max: 5, initial: 2 },
                ..Case::default()
            },
            Case {
                name: "an autoscaled pool whose bounds changed gets the new bounds, keeping the count inside",
                nodegroup: with(|n| n.scaling = Some(Scaling { min_size: 1, max_size: 5, desired_size: 4 })),
                scaling: ScalingIntent::Autoscaled { min: 1, max: 3, initial: 2 },
                expect: scaling_change(1, 3, 3),
                ..Case::default()
            },
            Case {
                name: "changed labels and taints are updated as add-or-update and remove lists",
                shape: PoolShape {
                    labels: BTreeMap::from([("role".to_string(), "batch".to_string())]),
                    taints: vec![EksTaint { key: "dedicated".into(), value: Some("batch".into()), effect: "NO_SCHEDULE".into() }],
                    ..shape()
                },
                expect: Plan::UpdateConfig(ConfigChange {
                    labels_and_taints: LabelsAndTaints {
                        labels_add: BTreeMap::from([("role".to_string(), "batch".to_string())]),
                        taints_add: vec![EksTaint { key: "dedicated".into(), value: Some("batch".into()), effect: "NO_SCHEDULE".into() }],
                        ..LabelsAndTaints::default()
                    },
                    ..ConfigChange::default()
                }),
                ..Case::default()
            },
            Case {
                name: "a changed maxUnavailable is updated",
                shape: PoolShape { update_config: Some(UpdateConfig::Percent(25)), ..shape() },
                expect: Plan::UpdateConfig(ConfigChange { update_config: Some(UpdateConfig::Percent(25)), ..ConfigChange::default() }),
                ..Case::default()
            },
            Case {
                name: "no maxUnavailable in the spec leaves EKS's setting alone",
                nodegroup: with(|n| n.update_config = Some(UpdateConfig::Count(3))),
                ..Case::default()
            },
            Case {
                name: "a pool one minor behind a control plane that is ahead is upgraded one minor",
                version: Some("v1.32"),
                control_plane: Some("v1.32.4"),
                expect: Plan::Upgrade { from: v("v1.31"), to: v("v1.32") },
                ..Case::default()
            },
            Case {
                name: "a pool two minors behind is upgraded one minor at a time",
                version: Some("v1.33"),
                control_plane: Some("v1.33.1"),
                expect: Plan::Upgrade { from: v("v1.31"), to: v("v1.32") },
                ..Case::default()
            },
            Case {
                name: "a pool asked past the control plane's minor waits for the control plane",
                version: Some("v1.32"),
                control_plane: Some("v1.31.9"),
                ..Case::default()
            },
            Case {
                name: "a pool whose control plane version is unknown does not upgrade",
                version: Some("v1.32"),
                control_plane: None,
                ..Case::default()
            },
            Case {
                name: "a lower MachinePool version is an invalid downgrade",
                version: Some("v1.30"),
                expect: Plan::Invalid(
                    "the node pool cannot be downgraded from v1.31 to v1.30; set spec.version to v1.31 or later".into(),
                ),
                ..Case::default()
            },
            Case {
                name: "a configuration change goes before a version upgrade, one update at a time",
                version: Some("v1.32"),
                control_plane: Some("v1.32.4"),
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: scaling_change(0, 3, 3),
                ..Case::default()
            },
            Case {
                name: "a degraded node group is still changed like an active one",
                nodegroup: with(|n| n.state = NodegroupState::Degraded),
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: scaling_change(0, 3, 3),
                ..Case::default()
            },
            Case {
                name: "a pool without a MachinePool version never upgrades",
                version: None,
                control_plane: Some("v1.33.0"),
                ..Case::default()
            },
        ];
        for case in &cases {
            assert_eq!(run(case), case.expect, "{}", case.name);
        }
    }

    fn observed(case: &Case) -> (Observed<'_>, Desired<'_>) {
        (
            Observed {
                nodegroup: case.nodegroup.as_ref(),
                operation: case.operation.as_ref(),
                update: case.update.as_ref(),
                control_plane_version: case.control_plane.map(v),
            },
            Desired {
                shape: &case.shape,
                scaling: case.scaling,
                version: case.version.map(v),
                tags: &case.tags,
                owner: crate::scope::owner(NS, CLUSTER),
                adopt: case.adopt,
            },
        )
    }

    fn upgrading_of(case: &Case) -> (String, String) {
        let (o, d) = observed(case);
        let p = plan(&o, &d, ts(NOW));
        let c = upgrading(&o, &d, &p);
        (c.status.as_str().to_string(), c.reason)
    }

    #[test]
    fn the_upgrading_condition_follows_the_table() {
        let cases: Vec<(Case, (&str, &str))> = vec![
            (
                Case {
                    name: "up to date",
                    ..Case::default()
                },
                ("False", "UpToDate"),
            ),
            (
                Case {
                    name: "stepping",
                    version: Some("v1.32"),
                    control_plane: Some("v1.32.1"),
                    ..Case::default()
                },
                ("True", "Upgrading"),
            ),
            (
                Case {
                    name: "ahead of the control plane",
                    version: Some("v1.32"),
                    ..Case::default()
                },
                ("True", "WaitingForControlPlane"),
            ),
            (
                Case {
                    name: "control plane version unknown",
                    version: Some("v1.32"),
                    control_plane: None,
                    ..Case::default()
                },
                ("True", "WaitingForControlPlane"),
            ),
            (
                Case {
                    name: "an upgrade in flight",
                    nodegroup: with(|n| n.state = NodegroupState::Updating),
                    operation: Some(op(OperationKind::Upgrade, NOW)),
                    update: Some(update(UpdateState::InProgress)),
                    version: Some("v1.32"),
                    control_plane: Some("v1.32.1"),
                    ..Case::default()
                },
                ("True", "Upgrading"),
            ),
            (
                Case {
                    name: "a version change queued behind a scaling change",
                    version: Some("v1.32"),
                    control_plane: Some("v1.32.1"),
                    scaling: ScalingIntent::Fixed { replicas: 4 },
                    ..Case::default()
                },
                ("True", "Upgrading"),
            ),
            (
                Case {
                    name: "a downgrade",
                    version: Some("v1.30"),
                    ..Case::default()
                },
                ("False", "InvalidSpec"),
            ),
            (
                Case {
                    name: "no node group yet",
                    nodegroup: None,
                    ..Case::default()
                },
                ("False", "UpToDate"),
            ),
        ];
        for (case, (status, reason)) in &cases {
            assert_eq!(
                upgrading_of(case),
                (status.to_string(), reason.to_string()),
                "{}",
                case.name
            );
        }
    }

    fn ready_of(case: &Case, running: usize) -> (String, String, bool) {
        let (o, d) = observed(case);
        let p = plan(&o, &d, ts(NOW));
        let (c, settled) = readiness(&o, &p, "team-a-pool", running);
        (c.status.as_str().to_string(), c.reason, settled)
    }

    #[test]
    fn the_ready_condition_follows_the_table() {
        let cases: Vec<(Case, usize, (&str, &str, bool))> = vec![
            (
                Case {
                    name: "settled",
                    ..Case::default()
                },
                2,
                ("True", "Ready", true),
            ),
            (
                Case {
                    name: "instances still launching",
                    ..Case::default()
                },
                1,
                ("False", "WaitingForCloud", false),
            ),
            (
                Case {
                    name: "creating",
                    nodegroup: None,
                    ..Case::default()
                },
                0,
                ("False", "Creating", false),
            ),
            (
                Case {
                    name: "scaling",
                    scaling: ScalingIntent::Fixed { replicas: 3 },
                    ..Case::default()
                },
                2,
                ("False", "Updating", false),
            ),
            (
                Case {
                    name: "upgrading",
                    version: Some("v1.32"),
                    control_plane: Some("v1.32.0"),
                    ..Case::default()
                },
                2,
                ("False", "Upgrading", false),
            ),
            (
                Case {
                    name: "name conflict",
                    nodegroup: with(|n| n.tags.clear()),
                    ..Case::default()
                },
                0,
                ("False", "NameConflict", false),
            ),
            (
                Case {
                    name: "degraded",
                    nodegroup: with(|n| n.state = NodegroupState::Degraded),
                    ..Case::default()
                },
                2,
                ("False", "CloudError", false),
            ),
            (
                Case {
                    name: "waiting for the control plane is still ready",
                    version: Some("v1.32"),
                    ..Case::default()
                },
                2,
                ("True", "Ready", true),
            ),
        ];
        for (case, running, (status, reason, settled)) in &cases {
            assert_eq!(
                ready_of(case, *running),
                (status.to_string(), reason.to_string(), *settled),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn a_name_conflict_message_says_how_to_resolve_it() {
        let case = Case {
            nodegroup: with(|n| n.tags.clear()),
            ..Case::default()
        };
        let (o, d) = observed(&case);
        let (c, _) = readiness(&o, &plan(&o, &d, ts(NOW)), "team-a-pool", 0);
        assert!(
            c.message.contains("spec.cloudName") && c.message.contains("spec.adopt"),
            "{}",
            c.message
        );
    }

    #[test]
    fn the_recorded_operation_is_kept_only_while_it_is_waited_for() {
        let carried = |case: &Case| {
            let (o, d) = observed(case);
            carried_operation(&o, &plan(&o, &d, ts(NOW))).is_some()
        };
        let in_flight = Case {
            nodegroup: with(|n| n.state = NodegroupState::Updating),
            operation: Some(op(OperationKind::Update, NOW)),
            update: Some(update(UpdateState::InProgress)),
            ..Case::default()
        };
        assert!(carried(&in_flight));
        let done = Case {
            operation: Some(op(OperationKind::Update, NOW)),
            update: Some(update(UpdateState::Successful)),
            ..Case::default()
        };
        assert!(!carried(&done));
        let creating = Case {
            nodegroup: with(|n| n.state = NodegroupState::Creating),
            operation: Some(op(OperationKind::Create, NOW)),
            ..Case::default()
        };
        assert!(carried(&creating));
        let created = Case {
            operation: Some(op(OperationKind::Create, NOW)),
            ..Case::default()
        };
        assert!(!carried(&created));
        let failed = Case {
            operation: Some(op(OperationKind::Update, NOW)),
            update: Some(update(UpdateState::Failed)),
            ..Case::default()
        };
        assert!(!carried(&failed));
    }

    #[test]
    fn config_changes_describe_themselves_in_the_users_terms() {
        let change = ConfigChange {
            scaling: Some(Scaling {
                min_size: 0,
                max_size: 3,
                desired_size: 3,
            }),
            labels_and_taints: LabelsAndTaints {
                labels_remove: vec!["x".into()],
                ..LabelsAndTaints::default()
            },
            update_config: None,
        };
        let said = change.describe(Some(Scaling {
            min_size: 0,
            max_size: 2,
            desired_size: 2,
        }));
        assert_eq!(said, "scaling from 2 to 3 nodes, updating labels");
    }
}
