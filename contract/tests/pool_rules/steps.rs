//! What a pass decides to do: create, wait, tag, change, step the version.

use super::xks::*;

#[test]
fn an_absent_pool_is_created_once() {
    check(&[
        Case {
            name: "an absent pool is created",
            pool: None,
            expect: Plan::Create,
            ..Case::default()
        },
        Case {
            name: "an absent pool asked for moments ago is waited for, not created twice",
            pool: None,
            tracked: tracked(OperationKind::Create, None),
            create_pending: true,
            expect: Plan::Wait(Wait::Creating),
            ..Case::default()
        },
        Case {
            name: "an absent pool asked ahead of the control plane is still created",
            pool: None,
            version: Some(minor(32)),
            expect: Plan::Create,
            ..Case::default()
        },
    ]);
}

#[test]
fn ownership_is_decided_before_anything_else() {
    let siblings = || Conflict {
        owner: Some("team-a_other".into()),
    };
    check(&[
        Case {
            name: "a pool another of our clusters owns is a name conflict naming its owner",
            pool: with(|p| p.tags = siblings_tags()),
            expect: Plan::NameConflict {
                id: ID.into(),
                conflict: siblings(),
            },
            ..Case::default()
        },
        Case {
            name: "an untagged pool is a name conflict with no owner",
            pool: with(|p| p.tags.clear()),
            expect: Plan::NameConflict {
                id: ID.into(),
                conflict: Conflict { owner: None },
            },
            ..Case::default()
        },
        Case {
            name: "a pool another of our clusters owns is never adopted, even with spec.adoption",
            pool: with(|p| p.tags = siblings_tags()),
            adoption: Some(true),
            expect: Plan::NameConflict {
                id: ID.into(),
                conflict: siblings(),
            },
            ..Case::default()
        },
        Case {
            name: "an untagged pool is adopted once spec.adoption is accepted",
            pool: with(|p| p.tags.clear()),
            adoption: Some(true),
            expect: Plan::Adopt { id: ID.into() },
            ..Case::default()
        },
        Case {
            name: "an untagged pool's adoption is a plan until accepted",
            pool: with(|p| p.tags.clear()),
            adoption: Some(false),
            expect: Plan::AdoptionPlanned { id: ID.into() },
            ..Case::default()
        },
        Case {
            name: "an adoption never creates a pool",
            pool: None,
            adoption: Some(true),
            expect: Plan::AdoptionRefused("There is no XKS node pool named team-a-pool in the cluster; nothing was created. Set spec.cloudName to the name of the one to adopt, or remove spec.adoption to create one".into()),
            ..Case::default()
        },
        Case {
            name: "a failed operation on a pool that is not ours is not reported",
            pool: with(|p| p.tags = siblings_tags()),
            tracked: tracked(OperationKind::Update, failed("failed")),
            expect: Plan::NameConflict {
                id: ID.into(),
                conflict: siblings(),
            },
            ..Case::default()
        },
    ]);
}

#[test]
fn a_busy_pool_is_waited_for_and_a_failed_one_reported_with_the_clouds_words() {
    check(&[
        Case {
            name: "a creating pool is waited for",
            pool: in_state(Lifecycle::Creating),
            tracked: tracked(OperationKind::Create, None),
            expect: Plan::Wait(Wait::Creating),
            ..Case::default()
        },
        Case {
            name: "an updating pool is waited for even without a recorded operation",
            pool: in_state(Lifecycle::Updating),
            diff: CloudStep::Change(SCALE),
            expect: Plan::Wait(Wait::Updating { upgrade: false }),
            ..Case::default()
        },
        Case {
            name: "a pool deleted outside Cluster API is waited for until gone",
            pool: in_state(Lifecycle::Deleting),
            expect: Plan::Wait(Wait::Deleting),
            ..Case::default()
        },
        Case {
            name: "a pool in a state the provider does not act in is waited for by that name",
            pool: in_state(Lifecycle::Other("PENDING".into())),
            expect: Plan::Wait(Wait::Pending("PENDING".into())),
            ..Case::default()
        },
        Case {
            name: "a failed pool is reported with the cloud's state and issues",
            pool: with(|p| {
                p.lifecycle = Lifecycle::Failed;
                p.state = "CREATE_FAILED";
                p.issues = vec![
                    "LaunchFailure: no capacity".into(),
                    "QuotaExceeded: 10 nodes".into(),
                ];
            }),
            expect: Plan::Failed(
                "XKS reports node pool team-a-pool as CREATE_FAILED: LaunchFailure: no capacity; QuotaExceeded: 10 nodes".into(),
            ),
            ..Case::default()
        },
        Case {
            name: "a failed pool without issues says the cloud gave none",
            pool: with(|p| {
                p.lifecycle = Lifecycle::Failed;
                p.state = "ERROR";
            }),
            expect: Plan::Failed(
                "XKS reports node pool team-a-pool as ERROR: no health issue given".into(),
            ),
            ..Case::default()
        },
        Case {
            name: "a degraded pool is still changed like a running one",
            pool: in_state(Lifecycle::Degraded),
            diff: CloudStep::Change(SCALE),
            expect: Plan::Update(SCALE),
            ..Case::default()
        },
    ]);
}

#[test]
fn a_tracked_operation_is_judged_before_the_pools_state() {
    check(&[
        Case {
            name: "an upgrade in progress is waited for as an upgrade",
            pool: in_state(Lifecycle::Updating),
            tracked: tracked(OperationKind::Upgrade, Some(OperationState::Running)),
            expect: Plan::Wait(Wait::Updating { upgrade: true }),
            ..Case::default()
        },
        Case {
            name: "an updating pool whose tracked upgrade has no state yet is waited for as an upgrade",
            pool: in_state(Lifecycle::Updating),
            tracked: tracked(OperationKind::Upgrade, None),
            expect: Plan::Wait(Wait::Updating { upgrade: true }),
            ..Case::default()
        },
        Case {
            name: "an update in progress on a pool the cloud shows running is still waited for",
            tracked: tracked(OperationKind::Update, Some(OperationState::Running)),
            diff: CloudStep::Change(SCALE),
            expect: Plan::Wait(Wait::Updating { upgrade: false }),
            ..Case::default()
        },
        Case {
            name: "a failed update is reported with the cloud's errors",
            tracked: tracked(OperationKind::Update, failed("failed")),
            expect: Plan::Failed(
                "the XKS configuration update of node pool team-a-pool failed (NodeCreationFailure: no capacity)".into(),
            ),
            ..Case::default()
        },
        Case {
            name: "a cancelled update is reported like a failed one",
            tracked: tracked(OperationKind::Update, failed("was cancelled")),
            expect: Plan::Failed(
                "the XKS configuration update of node pool team-a-pool was cancelled (NodeCreationFailure: no capacity)".into(),
            ),
            ..Case::default()
        },
        Case {
            name: "a failed upgrade is reported as a version update",
            tracked: tracked(OperationKind::Upgrade, failed("failed")),
            expect: Plan::Failed(
                "the XKS version update of node pool team-a-pool failed (NodeCreationFailure: no capacity)".into(),
            ),
            ..Case::default()
        },
        Case {
            name: "a successful update on a running pool that matches leaves nothing to do",
            tracked: tracked(OperationKind::Update, Some(OperationState::Succeeded)),
            ..Case::default()
        },
        Case {
            name: "an update the cloud no longer knows leaves the pool's state to decide",
            tracked: tracked(OperationKind::Update, None),
            diff: CloudStep::Change(SCALE),
            expect: Plan::Update(SCALE),
            ..Case::default()
        },
    ]);
}

#[test]
fn tags_go_before_the_clouds_change_which_goes_before_the_version_step() {
    let team_a = BTreeMap::from([("team".to_string(), "a".to_string())]);
    check(&[
        Case {
            name: "a pool that matches the spec leaves nothing to do",
            ..Case::default()
        },
        Case {
            name: "a pool missing one of the tags it must carry is tagged first",
            tags: owner().tags(&team_a),
            diff: CloudStep::Change(SCALE),
            version: Some(minor(32)),
            control_plane: Some(patch(32, 4)),
            expect: Plan::Tag(team_a.clone()),
            ..Case::default()
        },
        Case {
            name: "a tag with another value is put back",
            pool: with(|p| {
                p.tags.insert("team".into(), "b".into());
            }),
            tags: owner().tags(&team_a),
            expect: Plan::Tag(team_a.clone()),
            ..Case::default()
        },
        Case {
            name: "the cloud's change is made",
            diff: CloudStep::Change(SCALE),
            expect: Plan::Update(SCALE),
            ..Case::default()
        },
        Case {
            name: "a configuration change goes before a version upgrade, one update at a time",
            diff: CloudStep::Change(SCALE),
            version: Some(minor(32)),
            control_plane: Some(patch(32, 4)),
            expect: Plan::Update(SCALE),
            ..Case::default()
        },
        Case {
            name: "something of the cloud's own settling is waited for before the version step",
            diff: CloudStep::Wait("the pool's image is being built".into()),
            version: Some(minor(32)),
            control_plane: Some(patch(32, 4)),
            expect: Plan::Wait(Wait::Cloud("the pool's image is being built".into())),
            ..Case::default()
        },
        Case {
            name: "a failure of the cloud's own is reported in its words",
            diff: CloudStep::Failed("the image could not be built".into()),
            expect: Plan::Failed("the image could not be built".into()),
            ..Case::default()
        },
        Case {
            name: "a spec the cloud cannot apply is invalid in its words",
            diff: CloudStep::Invalid("spec.machineType cannot change".into()),
            expect: Plan::Invalid("spec.machineType cannot change".into()),
            ..Case::default()
        },
    ]);
}

#[test]
fn versions_step_one_minor_at_a_time_and_never_past_the_control_plane() {
    check(&[
        Case {
            name: "a pool one minor behind a control plane that is ahead is upgraded one minor",
            version: Some(minor(32)),
            control_plane: Some(patch(32, 4)),
            expect: Plan::Upgrade { to: minor(32) },
            ..Case::default()
        },
        Case {
            name: "a pool two minors behind is upgraded one minor at a time",
            version: Some(minor(33)),
            control_plane: Some(patch(33, 1)),
            expect: Plan::Upgrade { to: minor(32) },
            ..Case::default()
        },
        Case {
            name: "a pool asked past the control plane's minor waits for the control plane",
            version: Some(minor(32)),
            control_plane: Some(patch(31, 9)),
            ..Case::default()
        },
        Case {
            name: "a pool two minors behind a control plane one minor ahead steps to the control plane's minor",
            pool: with(|p| p.version = Some(minor(30))),
            version: Some(minor(33)),
            control_plane: Some(patch(31, 9)),
            expect: Plan::Upgrade { to: minor(31) },
            ..Case::default()
        },
        Case {
            name: "a pool whose control plane version is unknown does not upgrade",
            version: Some(minor(32)),
            control_plane: None,
            ..Case::default()
        },
        Case {
            name: "a lower MachinePool version is an invalid downgrade",
            version: Some(minor(30)),
            expect: Plan::Invalid(DOWNGRADE.into()),
            ..Case::default()
        },
        Case {
            name: "a downgrade is invalid even while the control plane's version is unknown",
            version: Some(minor(30)),
            control_plane: None,
            expect: Plan::Invalid(DOWNGRADE.into()),
            ..Case::default()
        },
        Case {
            name: "a pool without a MachinePool version never upgrades",
            version: None,
            control_plane: Some(patch(33, 0)),
            ..Case::default()
        },
        Case {
            name: "a pool whose version the cloud does not report never upgrades",
            pool: with(|p| p.version = None),
            version: Some(minor(32)),
            control_plane: Some(patch(32, 4)),
            ..Case::default()
        },
    ]);
}
