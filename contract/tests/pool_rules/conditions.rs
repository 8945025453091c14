//! What a pass reports: the Upgrading and Ready conditions, their messages, and the operation it keeps.

use super::xks::*;

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
                version: Some(minor(32)),
                control_plane: Some(patch(32, 1)),
                ..Case::default()
            },
            ("True", "Upgrading"),
        ),
        (
            Case {
                name: "ahead of the control plane",
                version: Some(minor(32)),
                ..Case::default()
            },
            ("True", "WaitingForControlPlane"),
        ),
        (
            Case {
                name: "control plane version unknown",
                version: Some(minor(32)),
                control_plane: None,
                ..Case::default()
            },
            ("True", "WaitingForControlPlane"),
        ),
        (
            Case {
                name: "an upgrade in flight",
                pool: in_state(Lifecycle::Updating),
                tracked: tracked(OperationKind::Upgrade, Some(OperationState::Running)),
                version: Some(minor(32)),
                control_plane: Some(patch(32, 1)),
                ..Case::default()
            },
            ("True", "Upgrading"),
        ),
        (
            Case {
                name: "a version change queued behind a configuration change",
                version: Some(minor(32)),
                control_plane: Some(patch(32, 1)),
                diff: CloudStep::Change(SCALE),
                ..Case::default()
            },
            ("True", "Upgrading"),
        ),
        (
            Case {
                name: "a downgrade",
                version: Some(minor(30)),
                ..Case::default()
            },
            ("False", "InvalidSpec"),
        ),
        (
            Case {
                name: "no pool yet",
                pool: None,
                ..Case::default()
            },
            ("False", "UpToDate"),
        ),
    ];
    for (case, (status, reason)) in &cases {
        let (set, _) = conditions(case, 2);
        assert_eq!(set[1].type_, "Upgrading", "{}", case.name);
        let upgrading = &set[1];
        assert_eq!(
            (upgrading.status.as_str(), upgrading.reason.as_str()),
            (*status, *reason),
            "{}",
            case.name
        );
    }
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
                pool: None,
                ..Case::default()
            },
            0,
            ("False", "Creating", false),
        ),
        (
            Case {
                name: "scaling",
                diff: CloudStep::Change(SCALE),
                ..Case::default()
            },
            2,
            ("False", "Updating", false),
        ),
        (
            Case {
                name: "upgrading",
                version: Some(minor(32)),
                control_plane: Some(patch(32, 0)),
                ..Case::default()
            },
            2,
            ("False", "Upgrading", false),
        ),
        (
            Case {
                name: "name conflict",
                pool: with(|p| p.tags.clear()),
                ..Case::default()
            },
            0,
            ("False", "NameConflict", false),
        ),
        (
            Case {
                name: "degraded",
                pool: in_state(Lifecycle::Degraded),
                ..Case::default()
            },
            2,
            ("False", "CloudError", false),
        ),
        (
            Case {
                name: "waiting for the control plane is still ready",
                version: Some(minor(32)),
                ..Case::default()
            },
            2,
            ("True", "Ready", true),
        ),
    ];
    for (case, running, (status, reason, settled)) in &cases {
        let (set, was_settled) = conditions(case, *running);
        assert_eq!(set[0].type_, "Ready", "{}", case.name);
        let ready = &set[0];
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str(), was_settled),
            (*status, *reason, *settled),
            "{}",
            case.name
        );
    }
}

#[test]
fn ready_says_what_changes_and_what_the_cloud_finds_wrong() {
    let message = |case: &Case| conditions(case, 2).0[0].message.clone();
    let scaling = Case {
        diff: CloudStep::Change(SCALE),
        ..Case::default()
    };
    let degraded = Case {
        pool: with(|p| {
            p.lifecycle = Lifecycle::Degraded;
            p.issues = vec!["NodeUnhealthy: 1 node not ready".into()];
        }),
        ..Case::default()
    };
    assert_eq!(
        [message(&scaling), message(&degraded)],
        [
            "node pool team-a-pool: scaling from 2 to 3 nodes",
            "node pool team-a-pool is degraded: NodeUnhealthy: 1 node not ready",
        ]
    );
}

#[test]
fn a_name_conflict_message_says_how_to_resolve_it() {
    let message = |pool| {
        let case = Case {
            pool,
            ..Case::default()
        };
        conditions(&case, 0).0[0].message.clone()
    };
    assert_eq!(
        message(with(|p| p.tags.clear())),
        "The XKS node pool team-a-pool already exists and was not created by this provider; nothing was changed. Set spec.adoption to take it over, or spec.cloudName to use another name."
    );
    assert_eq!(
        message(with(|p| p.tags = siblings_tags())),
        "The XKS node pool team-a-pool already exists and belongs to another cluster (ownership tag team-a_other); nothing was changed. Set spec.cloudName to use another name."
    );
}

#[test]
fn the_recorded_operation_is_kept_only_while_it_is_waited_for() {
    let carried = |case: &Case| plan::carries_operation(&run(case), case.tracked.as_ref());
    let cases = [
        (
            Case {
                name: "an update in flight",
                pool: in_state(Lifecycle::Updating),
                tracked: tracked(OperationKind::Update, Some(OperationState::Running)),
                ..Case::default()
            },
            true,
        ),
        (
            Case {
                name: "a create the cloud is still working on",
                pool: in_state(Lifecycle::Creating),
                tracked: tracked(OperationKind::Create, None),
                ..Case::default()
            },
            true,
        ),
        (
            Case {
                name: "a create asked for moments ago that the cloud does not list yet",
                pool: None,
                tracked: tracked(OperationKind::Create, None),
                create_pending: true,
                ..Case::default()
            },
            true,
        ),
        (
            Case {
                name: "a successful update",
                tracked: tracked(OperationKind::Update, Some(OperationState::Succeeded)),
                ..Case::default()
            },
            false,
        ),
        (
            Case {
                name: "a successful update on a pool still settling",
                pool: in_state(Lifecycle::Updating),
                tracked: tracked(OperationKind::Update, Some(OperationState::Succeeded)),
                ..Case::default()
            },
            false,
        ),
        (
            Case {
                name: "a finished create",
                tracked: tracked(OperationKind::Create, None),
                ..Case::default()
            },
            false,
        ),
        (
            Case {
                name: "a failed update",
                tracked: tracked(OperationKind::Update, failed("failed")),
                ..Case::default()
            },
            false,
        ),
    ];
    for (case, kept) in &cases {
        assert_eq!(carried(case), *kept, "{}", case.name);
    }
}
