//! EKS's own difference between a node group and the spec (scaling, labels, taints, update
//! config), once the shared steps of the pool's plan ([`contract::plan::pool`]: ownership,
//! tracked update, state, tags) are done; the version step comes after it. Pure, table-tested.

use super::mapping::{
    LabelsAndTaints, NodegroupView, PoolShape, Scaling, ScalingIntent, UpdateConfig,
    labels_and_taints, scaling_change,
};

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

/// What UpdateNodegroupConfig must change, possibly nothing.
pub fn config_change(
    ng: &NodegroupView,
    shape: &PoolShape,
    scaling: ScalingIntent,
) -> ConfigChange {
    ConfigChange {
        scaling: scaling_change(scaling, ng.scaling),
        labels_and_taints: labels_and_taints(&ng.labels, &shape.labels, &ng.taints, &shape.taints),
        update_config: shape.update_config.filter(|u| ng.update_config != Some(*u)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use contract::api::{Operation, OperationKind};
    use contract::ownership::Conflict;
    use contract::plan::{CloudStep, Plan, PoolReport, Tracked, Wait};
    use contract::version::KubeVersion;
    use provider_runtime::machine_pool::{CREATE_VISIBILITY_GRACE, ManagedPool};

    use super::*;
    use crate::reconcile::machine_pool::mapping::{
        CapacityType, EksTaint, NodegroupState, UpdateState, UpdateView,
    };

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
        expect: Plan<ConfigChange>,
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

    /// The pass as the generic reconciler plans it: the shared steps, then EKS's difference.
    fn run(case: &Case) -> Plan<ConfigChange> {
        let owner = crate::scope::owner(NS, CLUSTER);
        let pool = case.nodegroup.clone().map(super::super::managed);
        let tracked = tracked(case);
        let intent = intent(case, &owner);
        let create_pending = pool.is_none()
            && case.operation.as_ref().is_some_and(|op| {
                op.kind == OperationKind::Create && op.age(ts(NOW)) < CREATE_VISIBILITY_GRACE
            });
        contract::plan::pool(
            pool.as_ref().map(ManagedPool::facts),
            tracked.as_ref(),
            create_pending,
            &intent,
            match &case.nodegroup {
                Some(ng) => {
                    let change = config_change(ng, &case.shape, case.scaling);
                    if change.is_empty() {
                        CloudStep::Nothing
                    } else {
                        CloudStep::Change(change)
                    }
                }
                None => CloudStep::Nothing,
            },
        )
    }

    fn tracked(case: &Case) -> Option<Tracked> {
        let op = case.operation.as_ref()?;
        case.nodegroup.as_ref()?;
        Some(Tracked {
            kind: op.kind,
            state: case.update.as_ref().map(super::super::operation_state),
        })
    }

    fn intent<'a>(
        case: &'a Case,
        owner: &'a contract::ownership::Owner,
    ) -> contract::plan::PoolIntent<'a> {
        contract::plan::PoolIntent {
            cloud: "EKS",
            noun: "node group",
            name: "team-a-pool",
            owner,
            adopt: case.adopt,
            tags: &case.tags,
            version: case.version.map(v),
            control_plane_version: case.control_plane.map(v),
        }
    }

    /// The conditions of the pass, as the generic reconciler reports them.
    fn conditions(
        case: &Case,
        running: usize,
    ) -> (Vec<contract::conditions::DesiredCondition>, bool) {
        let owner = crate::scope::owner(NS, CLUSTER);
        let plan = run(case);
        let pool = case.nodegroup.clone().map(super::super::managed);
        let tracked = tracked(case);
        let ours = pool.as_ref().is_some_and(|p| owner.owns(&p.tags));
        let change = match &plan {
            Plan::Update(c) => Some(c.describe(case.nodegroup.as_ref().and_then(|n| n.scaling))),
            _ => None,
        };
        let report = PoolReport {
            intent: intent(case, &owner),
            observed: pool.as_ref().filter(|_| ours).map(ManagedPool::facts),
            tracked: tracked.as_ref(),
            running,
            change,
        };
        contract::plan::pool_conditions(&plan, &report)
    }

    fn with<F: FnOnce(&mut NodegroupView)>(f: F) -> Option<NodegroupView> {
        let mut ng = active();
        f(&mut ng);
        Some(ng)
    }

    fn scaling_change(min: i32, max: i32, desired: i32) -> Plan<ConfigChange> {
        Plan::Update(ConfigChange {
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
                expect: Plan::Create,
                ..Case::default()
            },
            Case {
                name: "an absent node group asked for seconds ago is waited for, not created twice",
                nodegroup: None,
                operation: Some(op(OperationKind::Create, "2026-09-01T11:59:40Z")),
                expect: Plan::Wait(Wait::Creating),
                ..Case::default()
            },
            Case {
                name: "an absent node group asked for long ago was deleted behind our back and is created again",
                nodegroup: None,
                operation: Some(op(OperationKind::Create, "2026-09-01T11:00:00Z")),
                expect: Plan::Create,
                ..Case::default()
            },
            Case {
                name: "an absent node group asked ahead of the control plane is created at the control plane's minor",
                nodegroup: None,
                version: Some("v1.32"),
                expect: Plan::Create,
                ..Case::default()
            },
            Case {
                name: "an absent autoscaled node group is created within its bounds",
                nodegroup: None,
                scaling: ScalingIntent::Autoscaled { min: 3, max: 6, initial: 1 },
                version: None,
                expect: Plan::Create,
                ..Case::default()
            },
            Case {
                name: "a node group that is not ours is a name conflict naming its owner",
                nodegroup: with(|n| n.tags = foreign.clone()),
                expect: Plan::NameConflict { id: active().arn, conflict: Conflict { owner: Some("other_cluster".into()) } },
                ..Case::default()
            },
            Case {
                name: "an untagged node group that is not ours is a name conflict",
                nodegroup: with(|n| n.tags.clear()),
                expect: Plan::NameConflict { id: active().arn, conflict: Conflict { owner: None } },
                ..Case::default()
            },
            Case {
                name: "a node group another of our clusters owns is never adopted, even with spec.adopt",
                nodegroup: with(|n| n.tags = foreign.clone()),
                adopt: true,
                expect: Plan::NameConflict { id: active().arn, conflict: Conflict { owner: Some("other_cluster".into()) } },
                ..Case::default()
            },
            Case {
                name: "a node group that is not ours is adopted when spec.adopt asks for it",
                nodegroup: with(|n| n.tags.clear()),
                adopt: true,
                expect: Plan::Adopt { id: active().arn },
                ..Case::default()
            },
            Case {
                name: "a creating node group is waited for",
                nodegroup: with(|n| n.state = NodegroupState::Creating),
                operation: Some(op(OperationKind::Create, "2026-09-01T11:59:00Z")),
                expect: Plan::Wait(Wait::Creating),
                ..Case::default()
            },
            Case {
                name: "an updating node group is waited for even without a recorded operation",
                nodegroup: with(|n| n.state = NodegroupState::Updating),
                scaling: ScalingIntent::Fixed { replicas: 5 },
                expect: Plan::Wait(Wait::Updating { upgrade: false }),
                ..Case::default()
            },
            Case {
                name: "a node group deleted outside Cluster API is waited for until gone",
                nodegroup: with(|n| n.state = NodegroupState::Deleting),
                expect: Plan::Wait(Wait::Deleting),
                ..Case::default()
            },
            Case {
                name: "a node group in a state we do not know is waited for",
                nodegroup: with(|n| n.state = NodegroupState::Other("PENDING".into())),
                expect: Plan::Wait(Wait::Pending("PENDING".into())),
                ..Case::default()
            },
            Case {
                name: "a node group whose creation failed is reported with its issues",
                nodegroup: with(|n| {
                    n.state = NodegroupState::CreateFailed;
                    n.issues = vec!["AsgInstanceLaunchFailures: no capacity".into()];
                }),
                expect: Plan::Failed(
                    "EKS reports node group team-a-pool as CREATE_FAILED: AsgInstanceLaunchFailures: no capacity".into(),
                ),
                ..Case::default()
            },
            Case {
                name: "an update in progress is waited for while it runs",
                nodegroup: with(|n| n.state = NodegroupState::Updating),
                operation: Some(op(OperationKind::Upgrade, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::InProgress)),
                expect: Plan::Wait(Wait::Updating { upgrade: true }),
                ..Case::default()
            },
            Case {
                name: "a failed update is reported with EKS's errors",
                operation: Some(op(OperationKind::Update, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::Failed)),
                expect: Plan::Failed(
                    "the EKS configuration update of node group team-a-pool failed (NodeCreationFailure: no capacity)".into(),
                ),
                ..Case::default()
            },
            Case {
                name: "a cancelled update is reported like a failed one",
                operation: Some(op(OperationKind::Update, "2026-09-01T11:50:00Z")),
                update: Some(update(UpdateState::Cancelled)),
                expect: Plan::Failed(
                    "the EKS configuration update of node group team-a-pool was cancelled (NodeCreationFailure: no capacity)".into(),
                ),
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
                expect: Plan::Update(ConfigChange {
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
                expect: Plan::Update(ConfigChange { update_config: Some(UpdateConfig::Percent(25)), ..ConfigChange::default() }),
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
                expect: Plan::Upgrade { to: v("v1.32") },
                ..Case::default()
            },
            Case {
                name: "a pool two minors behind is upgraded one minor at a time",
                version: Some("v1.33"),
                control_plane: Some("v1.33.1"),
                expect: Plan::Upgrade { to: v("v1.32") },
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

    fn upgrading_of(case: &Case) -> (String, String) {
        let (set, _) = conditions(case, 2);
        let c = &set[1];
        (c.status.as_str().to_string(), c.reason.clone())
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
        let (set, settled) = conditions(case, running);
        let c = &set[0];
        (c.status.as_str().to_string(), c.reason.clone(), settled)
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
        let (set, _) = conditions(&case, 0);
        let c = &set[0];
        assert!(
            c.message.contains("spec.cloudName") && c.message.contains("spec.adopt"),
            "{}",
            c.message
        );
    }

    #[test]
    fn the_recorded_operation_is_kept_only_while_it_is_waited_for() {
        let carried =
            |case: &Case| contract::plan::carries_operation(&run(case), tracked(case).as_ref());
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
