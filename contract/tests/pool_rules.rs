//! The kernel's rules for a managed node pool on a made-up cloud (XKS) whose own change is a
//! sentence: [`contract::plan::pool`], [`contract::plan::pool_conditions`] and
//! [`contract::plan::carries_operation`]. A cloud's own difference is tested with that cloud.

use std::collections::BTreeMap;

use contract::api::OperationKind;
use contract::conditions::DesiredCondition;
use contract::ownership::{Conflict, Owner};
use contract::plan::{
    self, CloudStep, Lifecycle, OperationState, Plan, PoolFacts, PoolIntent, PoolReport, Tracked,
    Wait,
};
use contract::version::KubeVersion;

const NAME: &str = "team-a-pool";
const ID: &str = "xks:pools/team-a-pool";

type Change = &'static str;

const SCALE: Change = "scaling from 2 to 3 nodes";

const DOWNGRADE: &str =
    "the node pool cannot be downgraded from v1.31 to v1.30; set spec.version to v1.31 or later";

fn owner() -> Owner {
    Owner::new("xks", "team-a", "prod")
}

fn ours() -> BTreeMap<String, String> {
    owner().tags(&BTreeMap::new())
}

fn siblings_tags() -> BTreeMap<String, String> {
    Owner::new("xks", "team-a", "other").tags(&BTreeMap::new())
}

fn minor(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

fn patch(minor: u32, patch: u32) -> KubeVersion {
    KubeVersion::with_patch(1, minor, patch)
}

/// A pool as the cloud reports it.
#[derive(Clone)]
struct Pool {
    lifecycle: Lifecycle,
    state: &'static str,
    version: Option<KubeVersion>,
    tags: BTreeMap<String, String>,
    issues: Vec<String>,
}

impl Pool {
    fn facts(&self) -> PoolFacts<'_> {
        PoolFacts {
            id: ID,
            lifecycle: &self.lifecycle,
            state: self.state,
            version: self.version,
            tags: &self.tags,
            issues: &self.issues,
            desired_size: Some(2),
        }
    }
}

/// A running pool of ours, 2 nodes, at v1.31.
fn running() -> Pool {
    Pool {
        lifecycle: Lifecycle::Running,
        state: "RUNNING",
        version: Some(minor(31)),
        tags: ours(),
        issues: Vec::new(),
    }
}

fn with<F: FnOnce(&mut Pool)>(f: F) -> Option<Pool> {
    let mut pool = running();
    f(&mut pool);
    Some(pool)
}

fn in_state(lifecycle: Lifecycle) -> Option<Pool> {
    with(|p| p.lifecycle = lifecycle)
}

fn tracked(kind: OperationKind, state: Option<OperationState>) -> Option<Tracked> {
    Some(Tracked { kind, state })
}

fn failed(clause: &str) -> Option<OperationState> {
    Some(OperationState::Failed(format!(
        "{clause} (NodeCreationFailure: no capacity)"
    )))
}

struct Case {
    name: &'static str,
    pool: Option<Pool>,
    tracked: Option<Tracked>,
    create_pending: bool,
    diff: CloudStep<Change>,
    version: Option<KubeVersion>,
    control_plane: Option<KubeVersion>,
    tags: BTreeMap<String, String>,
    adopt: bool,
    expect: Plan<Change>,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            name: "",
            pool: Some(running()),
            tracked: None,
            create_pending: false,
            diff: CloudStep::Nothing,
            version: Some(minor(31)),
            control_plane: Some(patch(31, 9)),
            tags: ours(),
            adopt: false,
            expect: Plan::Nothing,
        }
    }
}

fn intent<'a>(case: &'a Case, owner: &'a Owner) -> PoolIntent<'a> {
    PoolIntent {
        cloud: "XKS",
        noun: "node pool",
        name: NAME,
        owner,
        adopt: case.adopt,
        tags: &case.tags,
        version: case.version,
        control_plane_version: case.control_plane,
    }
}

fn run(case: &Case) -> Plan<Change> {
    let owner = owner();
    plan::pool(
        case.pool.as_ref().map(Pool::facts),
        case.tracked.as_ref(),
        case.create_pending,
        &intent(case, &owner),
        case.diff.clone(),
    )
}

/// The condition set as a pass reports it: the pool only when it is ours, and the change said.
fn conditions(case: &Case, running: usize) -> (Vec<DesiredCondition>, bool) {
    let owner = owner();
    let plan = run(case);
    let report = PoolReport {
        intent: intent(case, &owner),
        observed: case
            .pool
            .as_ref()
            .filter(|p| owner.owns(&p.tags))
            .map(Pool::facts),
        tracked: case.tracked.as_ref(),
        running,
        change: match plan {
            Plan::Update(change) => Some(change.to_string()),
            _ => None,
        },
    };
    plan::pool_conditions(&plan, &report)
}

fn check(cases: &[Case]) {
    for case in cases {
        assert_eq!(run(case), case.expect, "{}", case.name);
    }
}

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
            name: "a pool another of our clusters owns is never adopted, even with spec.adopt",
            pool: with(|p| p.tags = siblings_tags()),
            adopt: true,
            expect: Plan::NameConflict {
                id: ID.into(),
                conflict: siblings(),
            },
            ..Case::default()
        },
        Case {
            name: "an untagged pool is adopted when spec.adopt asks for it",
            pool: with(|p| p.tags.clear()),
            adopt: true,
            expect: Plan::Adopt { id: ID.into() },
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
        "The XKS node pool team-a-pool already exists and was not created by this provider; nothing was changed. Set spec.adopt: true to take it over, or spec.cloudName to use another name."
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
