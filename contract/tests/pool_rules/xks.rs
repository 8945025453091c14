//! The made-up cloud XKS: a pool as it reports one, and a case of the pass over it.

pub use std::collections::BTreeMap;

pub use contract::api::OperationKind;
pub use contract::conditions::DesiredCondition;
pub use contract::ownership::{Conflict, Owner};
pub use contract::plan::{
    self, Adopting, CloudStep, Lifecycle, OperationState, Plan, PoolFacts, PoolIntent, PoolReport,
    Tracked, Wait,
};
pub use contract::version::KubeVersion;

pub const NAME: &str = "team-a-pool";
pub const ID: &str = "xks:pools/team-a-pool";

pub type Change = &'static str;

pub const SCALE: Change = "scaling from 2 to 3 nodes";

pub const DOWNGRADE: &str =
    "the node pool cannot be downgraded from v1.31 to v1.30; set spec.version to v1.31 or later";

pub fn owner() -> Owner {
    Owner::new("xks", "team-a", "prod")
}

pub fn ours() -> BTreeMap<String, String> {
    owner().tags(&BTreeMap::new())
}

pub fn siblings_tags() -> BTreeMap<String, String> {
    Owner::new("xks", "team-a", "other").tags(&BTreeMap::new())
}

pub fn minor(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

pub fn patch(minor: u32, patch: u32) -> KubeVersion {
    KubeVersion::with_patch(1, minor, patch)
}

/// A pool as the cloud reports it.
#[derive(Clone)]
pub struct Pool {
    pub lifecycle: Lifecycle,
    pub state: &'static str,
    pub version: Option<KubeVersion>,
    pub tags: BTreeMap<String, String>,
    pub issues: Vec<String>,
}

impl Pool {
    pub fn facts(&self) -> PoolFacts<'_> {
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
pub fn running() -> Pool {
    Pool {
        lifecycle: Lifecycle::Running,
        state: "RUNNING",
        version: Some(minor(31)),
        tags: ours(),
        issues: Vec::new(),
    }
}

pub fn with<F: FnOnce(&mut Pool)>(f: F) -> Option<Pool> {
    let mut pool = running();
    f(&mut pool);
    Some(pool)
}

pub fn in_state(lifecycle: Lifecycle) -> Option<Pool> {
    with(|p| p.lifecycle = lifecycle)
}

pub fn tracked(kind: OperationKind, state: Option<OperationState>) -> Option<Tracked> {
    Some(Tracked { kind, state })
}

pub fn failed(clause: &str) -> Option<OperationState> {
    Some(OperationState::Failed(format!(
        "{clause} (NodeCreationFailure: no capacity)"
    )))
}

pub struct Case {
    pub name: &'static str,
    pub pool: Option<Pool>,
    pub tracked: Option<Tracked>,
    pub create_pending: bool,
    pub diff: CloudStep<Change>,
    pub version: Option<KubeVersion>,
    pub control_plane: Option<KubeVersion>,
    pub tags: BTreeMap<String, String>,
    /// `spec.adoption`: `Some(accept)`.
    pub adoption: Option<bool>,
    pub expect: Plan<Change>,
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
            adoption: None,
            expect: Plan::Nothing,
        }
    }
}

pub fn intent<'a>(case: &'a Case, owner: &'a Owner) -> PoolIntent<'a> {
    PoolIntent {
        cloud: "XKS",
        noun: "node pool",
        name: NAME,
        owner,
        adoption: case.adoption.map(|accept| Adopting { id: None, accept }),
        tags: &case.tags,
        version: case.version,
        control_plane_version: case.control_plane,
    }
}

pub fn run(case: &Case) -> Plan<Change> {
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
pub fn conditions(case: &Case, running: usize) -> (Vec<DesiredCondition>, bool) {
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

pub fn check(cases: &[Case]) {
    for case in cases {
        assert_eq!(run(case), case.expect, "{}", case.name);
    }
}
