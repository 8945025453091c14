//! The unit tests of the control-plane plan: every rule the kernel applies to a cluster.

use super::*;

const NAME: &str = "team-a-c1";

fn owner() -> Owner {
    Owner::new("test", "team-a", "c1")
}

fn ours() -> BTreeMap<String, String> {
    owner().tags(&BTreeMap::new())
}

/// A change of a made-up cloud.
#[derive(Debug, Clone, PartialEq)]
struct Logging;

fn intent<'a>(owner: &'a Owner, version: KubeVersion, minors_only: bool) -> ControlPlaneIntent<'a> {
    ControlPlaneIntent {
        cloud: "XKS",
        name: NAME,
        owner,
        adoption: None,
        version,
        minors_only,
    }
}

/// The plan for a cluster in `lifecycle` at `version` with `tags`, nothing else differing.
fn plan_of(
    lifecycle: Lifecycle,
    version: &str,
    tags: &BTreeMap<String, String>,
    tracked: Option<&Tracked>,
    intent: &ControlPlaneIntent<'_>,
) -> Plan<Logging> {
    let facts = ClusterFacts {
        id: "id-1",
        lifecycle: &lifecycle,
        version,
        tags,
    };
    control_plane(Some(facts), tracked, intent, CloudStep::Nothing)
}

#[test]
fn ownership_decides_first() {
    let owner = owner();
    let v131 = KubeVersion::new(1, 31);
    let absent: Plan<Logging> =
        control_plane(None, None, &intent(&owner, v131, true), CloudStep::Nothing);
    assert_eq!(absent, Plan::Create);

    let foreign = BTreeMap::from([("team".to_string(), "b".to_string())]);
    let plan = plan_of(
        Lifecycle::Running,
        "1.31",
        &foreign,
        None,
        &intent(&owner, v131, true),
    );
    assert!(
        matches!(plan, Plan::NameConflict { ref id, .. } if id == "id-1"),
        "{plan:?}"
    );

    let adopting = ControlPlaneIntent {
        adoption: Some(Adopting {
            id: None,
            accept: true,
        }),
        ..intent(&owner, v131, true)
    };
    let plan = plan_of(Lifecycle::Failed, "1.31", &foreign, None, &adopting);
    assert_eq!(plan, Plan::Adopt { id: "id-1".into() });

    // Another of our Clusters' cluster is never adopted, whatever its state.
    let sibling = Owner::new("test", "team-a", "other").tags(&BTreeMap::new());
    let plan = plan_of(Lifecycle::Running, "1.31", &sibling, None, &adopting);
    assert!(matches!(plan, Plan::NameConflict { .. }), "{plan:?}");
}

#[test]
fn an_adoption_is_a_plan_until_accepted_and_never_creates() {
    let owner = owner();
    let v131 = KubeVersion::new(1, 31);
    let foreign = BTreeMap::from([("team".to_string(), "b".to_string())]);
    let asking = |id, accept| ControlPlaneIntent {
        adoption: Some(Adopting { id, accept }),
        ..intent(&owner, v131, true)
    };
    let plan = plan_of(
        Lifecycle::Running,
        "1.31",
        &foreign,
        None,
        &asking(None, false),
    );
    assert_eq!(plan, Plan::AdoptionPlanned { id: "id-1".into() });
    assert!(!plan.reports_on_it());

    // Nothing of that name: refused, never created.
    let absent: Plan<Logging> = control_plane(None, None, &asking(None, true), CloudStep::Nothing);
    assert!(
        matches!(&absent, Plan::AdoptionRefused(m) if m.contains("no XKS cluster named team-a-c1") && m.contains("nothing was created")),
        "{absent:?}"
    );

    // The identity must be the one found, even once accepted, even when ours.
    for tags in [&foreign, &ours()] {
        let plan = plan_of(
            Lifecycle::Running,
            "1.31",
            tags,
            None,
            &asking(Some("id-2"), true),
        );
        assert!(
            matches!(&plan, Plan::AdoptionRefused(m) if m.contains("is id-1, not spec.adoption.id id-2")),
            "{plan:?}"
        );
    }
    let plan = plan_of(
        Lifecycle::Running,
        "1.31",
        &foreign,
        None,
        &asking(Some("ID-1"), true),
    );
    assert_eq!(plan, Plan::Adopt { id: "id-1".into() });

    // Once ours, an adoption goes on as any cluster of ours.
    let plan = plan_of(
        Lifecycle::Running,
        "1.31",
        &ours(),
        None,
        &asking(None, false),
    );
    assert_eq!(plan, Plan::Nothing);
}

#[test]
fn a_planned_adoption_says_what_it_would_change_and_how_to_accept() {
    let owner = owner();
    let i = intent(&owner, KubeVersion::new(1, 31), true);
    let facts = ControlPlaneFacts {
        cloud: "XKS",
        name: NAME,
        desired: i.version,
        current: None,
        serving: false,
        kubeconfig_ready: false,
        blocked_on_pools: None,
        change: Some("adopting changes spec.logging.audit false → true".into()),
    };
    let plan: Plan<Logging> = Plan::AdoptionPlanned { id: "id-1".into() };
    let conditions = control_plane_conditions(&plan, &facts);
    let ready = &conditions[0];
    assert_eq!(ready.reason, Reason::AdoptionPlanned.as_str());
    assert!(
        ready.message.contains("spec.logging.audit false → true")
            && ready.message.contains("spec.adoption.accept: true"),
        "{}",
        ready.message
    );
}

#[test]
fn the_cloud_being_busy_or_failed_is_waited_for_or_reported() {
    let owner = owner();
    let i = intent(&owner, KubeVersion::new(1, 32), true);
    let tags = ours();
    let cases = [
        (Lifecycle::Creating, None, Plan::Wait(Wait::Creating)),
        (
            Lifecycle::Updating,
            None,
            Plan::Wait(Wait::Updating { upgrade: false }),
        ),
        (
            Lifecycle::Updating,
            Some(Tracked {
                kind: OperationKind::Upgrade,
                state: None,
            }),
            Plan::Wait(Wait::Updating { upgrade: true }),
        ),
        (Lifecycle::Deleting, None, Plan::Wait(Wait::Deleting)),
        (
            Lifecycle::Other("PENDING".into()),
            None,
            Plan::Wait(Wait::Pending("PENDING".into())),
        ),
        (
            Lifecycle::Failed,
            None,
            Plan::Failed(
                "XKS reports cluster team-a-c1 as failed; delete the control plane (or the cluster in XKS) to start over".into(),
            ),
        ),
        (
            Lifecycle::Running,
            Some(Tracked {
                kind: OperationKind::Update,
                state: Some(OperationState::Running),
            }),
            Plan::Wait(Wait::Updating { upgrade: false }),
        ),
        (
            Lifecycle::Running,
            Some(Tracked {
                kind: OperationKind::Upgrade,
                state: Some(OperationState::Failed("failed (x)".into())),
            }),
            Plan::Failed("the XKS version update of cluster team-a-c1 failed (x)".into()),
        ),
        // A finished operation lets the next step go: here the version step.
        (
            Lifecycle::Running,
            Some(Tracked {
                kind: OperationKind::Update,
                state: Some(OperationState::Succeeded),
            }),
            Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
        ),
        (
            Lifecycle::Running,
            Some(Tracked {
                kind: OperationKind::Create,
                state: None,
            }),
            Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
        ),
    ];
    for (lifecycle, tracked, want) in cases {
        let got = plan_of(lifecycle.clone(), "1.31", &tags, tracked.as_ref(), &i);
        assert_eq!(got, want, "{lifecycle:?} {tracked:?}");
    }
}

#[test]
fn versions_step_one_minor_at_a_time_and_patches_only_where_the_cloud_takes_them() {
    let owner = owner();
    let tags = ours();
    let plan = |running: &str, desired: KubeVersion, minors_only: bool| {
        plan_of(
            Lifecycle::Running,
            running,
            &tags,
            None,
            &intent(&owner, desired, minors_only),
        )
    };
    let up = |major, minor| Plan::Upgrade {
        to: KubeVersion::new(major, minor),
    };
    assert_eq!(plan("1.30", KubeVersion::new(1, 32), true), up(1, 31));
    assert_eq!(
        plan("v1.31.4", KubeVersion::with_patch(1, 32, 3), true),
        up(1, 32)
    );
    // Minors only: a new patch of the running minor is the cloud's to pick.
    assert_eq!(
        plan("1.31.2", KubeVersion::with_patch(1, 31, 5), true),
        Plan::Nothing
    );
    // A cloud that takes patches gets the exact step.
    assert_eq!(
        plan("1.31.2", KubeVersion::with_patch(1, 31, 5), false),
        Plan::Upgrade {
            to: KubeVersion::with_patch(1, 31, 5)
        }
    );
    let down = plan("1.32", KubeVersion::new(1, 31), true);
    assert_eq!(
        down,
        Plan::Invalid(
            "the control plane cannot be downgraded from v1.32 to v1.31; set spec.version to v1.32 or later".into()
        )
    );
    assert!(matches!(
        plan("latest", KubeVersion::new(1, 31), true),
        Plan::Failed(_)
    ));
}

#[test]
fn the_clouds_difference_is_asked_only_when_the_shared_steps_are_done() {
    let owner = owner();
    let tags = ours();
    let lifecycle = Lifecycle::Running;
    let facts = ClusterFacts {
        id: "id-1",
        lifecycle: &lifecycle,
        version: "1.31",
        tags: &tags,
    };
    let behind = intent(&owner, KubeVersion::new(1, 32), true);
    let plan = control_plane(Some(facts), None, &behind, CloudStep::Change(Logging));
    assert!(
        plan.is_upgrade(),
        "an upgrade goes before the cloud's own change: {plan:?}"
    );

    let current = intent(&owner, KubeVersion::new(1, 31), true);
    let steps = [
        (CloudStep::Change(Logging), Plan::Update(Logging)),
        (
            CloudStep::Wait("w".into()),
            Plan::Wait(Wait::Cloud("w".into())),
        ),
        (CloudStep::Failed("f".into()), Plan::Failed("f".into())),
        (CloudStep::Invalid("i".into()), Plan::Invalid("i".into())),
        (CloudStep::Nothing, Plan::Nothing),
    ];
    for (step, want) in steps {
        assert_eq!(control_plane(Some(facts), None, &current, step), want);
    }
}

type Row = (String, ConditionStatus, String);

fn summary(conditions: &[DesiredCondition]) -> Vec<Row> {
    conditions
        .iter()
        .map(|c| (c.type_.clone(), c.status, c.reason.clone()))
        .collect()
}

fn row(t: &str, s: ConditionStatus, r: &str) -> Row {
    (t.to_string(), s, r.to_string())
}

fn facts(
    desired: KubeVersion,
    current: Option<KubeVersion>,
    serving: bool,
    kubeconfig: bool,
) -> ControlPlaneFacts<'static> {
    ControlPlaneFacts {
        cloud: "XKS",
        name: NAME,
        desired,
        current,
        serving,
        kubeconfig_ready: kubeconfig,
        blocked_on_pools: None,
        change: None,
    }
}

#[test]
fn every_pass_reports_the_whole_condition_set_in_the_users_terms() {
    use ConditionStatus::{False, True};
    let v131 = KubeVersion::new(1, 31);
    let v132 = KubeVersion::new(1, 32);
    let cases: Vec<(&str, Plan<Logging>, ControlPlaneFacts<'_>, [Row; 4])> = vec![
        (
            "a cluster at rest with its kubeconfig is ready and up to date",
            Plan::Nothing,
            facts(v131, Some(v131), true, true),
            [
                row("Ready", True, "Ready"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", True, "Ready"),
                row("Upgrading", False, "UpToDate"),
            ],
        ),
        (
            "a creating cluster is neither available nor has a kubeconfig",
            Plan::Wait(Wait::Creating),
            facts(v131, Some(v131), false, false),
            [
                row("Ready", False, "Creating"),
                row("Available", False, "Creating"),
                row("KubeconfigReady", False, "Creating"),
                row("Upgrading", False, "UpToDate"),
            ],
        ),
        (
            "a version step keeps the cluster available and says it upgrades",
            Plan::Upgrade { to: v132 },
            facts(KubeVersion::new(1, 33), Some(v131), true, true),
            [
                row("Ready", False, "Upgrading"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", True, "Ready"),
                row("Upgrading", True, "Upgrading"),
            ],
        ),
        (
            "an upgrade due behind a configuration update still reports Upgrading",
            Plan::Wait(Wait::Updating { upgrade: false }),
            facts(v132, Some(v131), true, true),
            [
                row("Ready", False, "Updating"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", True, "Ready"),
                row("Upgrading", True, "Upgrading"),
            ],
        ),
        (
            "a version step blocked on node pools waits as an upgrade",
            Plan::Upgrade { to: v132 },
            ControlPlaneFacts {
                blocked_on_pools: Some("Nodegroups ng must be updated"),
                ..facts(v132, Some(v131), true, true)
            },
            [
                row("Ready", False, "Upgrading"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", True, "Ready"),
                row("Upgrading", True, "Upgrading"),
            ],
        ),
        (
            "the cloud's own change says what it does",
            Plan::Update(Logging),
            ControlPlaneFacts {
                change: Some("XKS is updating the logging of team-a-c1".into()),
                ..facts(v131, Some(v131), true, true)
            },
            [
                row("Ready", False, "Updating"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", True, "Ready"),
                row("Upgrading", False, "UpToDate"),
            ],
        ),
        (
            "a name conflict reports no cluster",
            Plan::NameConflict {
                id: "id-1".into(),
                conflict: Conflict { owner: None },
            },
            facts(v131, None, false, false),
            [
                row("Ready", False, "NameConflict"),
                row("Available", False, "NameConflict"),
                row("KubeconfigReady", False, "NameConflict"),
                row("Upgrading", False, "UpToDate"),
            ],
        ),
        (
            "a serving cluster whose Secret could not be written says so",
            Plan::Nothing,
            facts(v131, Some(v131), true, false),
            [
                row("Ready", False, "WaitingForCloud"),
                row("Available", True, "Ready"),
                row("KubeconfigReady", False, "CloudError"),
                row("Upgrading", False, "UpToDate"),
            ],
        ),
    ];
    for (name, plan, facts, want) in cases {
        let got = control_plane_conditions(&plan, &facts);
        assert_eq!(summary(&got), want, "{name}");
    }

    let blocked = control_plane_conditions(
        &Plan::<Logging>::Upgrade { to: v132 },
        &ControlPlaneFacts {
            blocked_on_pools: Some("Nodegroups ng must be updated"),
            ..facts(v132, Some(v131), true, true)
        },
    );
    assert!(
        blocked[3]
            .message
            .contains("waiting for the node pools to reach v1.31"),
        "{}",
        blocked[3].message
    );
    let update = control_plane_conditions(
        &Plan::Update(Logging),
        &ControlPlaneFacts {
            change: Some("XKS is updating the logging of team-a-c1".into()),
            ..facts(v131, Some(v131), false, false)
        },
    );
    assert_eq!(
        update[1].message,
        "XKS is updating the logging of team-a-c1"
    );
    let conflict = control_plane_conditions(
        &Plan::<Logging>::NameConflict {
            id: "id-1".into(),
            conflict: Conflict { owner: None },
        },
        &facts(v131, None, false, false),
    );
    assert!(
        conflict[1].message.contains("XKS cluster team-a-c1"),
        "{}",
        conflict[1].message
    );
}
