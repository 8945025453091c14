//! The InfraCluster's ordered-service walker, written once.
//!
//! A cloud's network is a few services built in order (a VPC, then its subnets, gateways, route
//! tables, a security group), each one reading what the ones before it found or made. A build
//! pass gives each service one turn, forwards, and stops at the first failure; a tear-down pass
//! walks backwards and stops at the first service that still has something left. A build turn
//! observes once, then plans and writes until its service is ready or waits for the cloud:
//! each write's answer (the id it created, the tags it sent) is folded into what the turn
//! observed, so the next step is planned without reading again, and a network whose cloud
//! answers at once is built in one pass ([`Turn`]). A tear-down turn deletes at most one
//! resource. The walk's outcome gives the whole network
//! condition (every unready service's part, or the failing service and its error) and when to
//! look again. A cloud supplies only its services ([`Service`], [`Builds`], [`TearsDown`]).

use std::future::Future;
use std::time::Duration;

use contract::conditions::{ConditionType, DesiredCondition, Reason};

use crate::ProviderError;
use crate::infra_cluster::NetworkReport;

/// When to look again after a service's turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Soon: a write just went through.
    Settle,
    /// At the poll interval: the cloud is working.
    Poll,
}

/// How soon each [`Wait`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// After a write the cloud applies at once (a created resource is visible a moment later).
    pub settle: Duration,
    /// While the cloud works on something (a gateway becoming available or being deleted).
    pub poll: Duration,
}

impl Timing {
    /// Looks every `poll` while the cloud works, and sooner after a write: `poll`, but at most
    /// `settle`.
    pub fn new(poll: Duration, settle: Duration) -> Self {
        Self {
            settle: poll.min(settle),
            poll,
        }
    }

    fn of(self, wait: Wait) -> Duration {
        match wait {
            Wait::Settle => self.settle,
            Wait::Poll => self.poll,
        }
    }
}

/// A service's state after its turn in a build pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Exists as desired.
    Ready,
    /// Acted, or waits for the cloud.
    Working {
        /// `Creating`, `Updating` or `WaitingForCloud`.
        reason: Reason,
        /// What is happening, in the user's terms.
        message: String,
        /// When to look again.
        wait: Wait,
    },
    /// Waits for an earlier service.
    Blocked(String),
}

impl Progress {
    /// Creating something.
    pub fn creating(message: impl Into<String>) -> Self {
        Self::Working {
            reason: Reason::Creating,
            message: message.into(),
            wait: Wait::Settle,
        }
    }

    /// Changing something that exists.
    pub fn updating(message: impl Into<String>) -> Self {
        Self::Working {
            reason: Reason::Updating,
            message: message.into(),
            wait: Wait::Settle,
        }
    }

    /// Waiting for the cloud.
    pub fn waiting(message: impl Into<String>) -> Self {
        Self::Working {
            reason: Reason::WaitingForCloud,
            message: message.into(),
            wait: Wait::Poll,
        }
    }
}

/// A service's state after its turn in a tear-down pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Nothing of ours is left.
    Gone,
    /// Deleting, or waiting for a dependency to go.
    Pending {
        /// What is being waited for.
        message: String,
        /// When to look again.
        wait: Wait,
    },
}

impl Removal {
    /// Deleted one of several: look again soon.
    pub fn deleting(message: impl Into<String>) -> Self {
        Self::Pending {
            message: message.into(),
            wait: Wait::Settle,
        }
    }

    /// The cloud is deleting, or something still depends on it.
    pub fn waiting(message: impl Into<String>) -> Self {
        Self::Pending {
            message: message.into(),
            wait: Wait::Poll,
        }
    }

    /// What a tear-down pass that ended here means for the finalizer: done once nothing is
    /// left, else look again after the wait.
    pub fn cleanup(self, timing: Timing) -> crate::Cleanup {
        match self {
            Removal::Gone => crate::Cleanup::Done,
            Removal::Pending { message, wait } => crate::Cleanup::pending(timing.of(wait), message),
        }
    }
}

/// The most writes one service makes in one build turn; past it the turn ends and the service
/// is looked at again after [`Wait::Settle`] (a guard: no service needs this many).
pub const MAX_WRITES_PER_TURN: usize = 24;

/// The writes of one service's build turn. A service observes once, then loops: plan, write,
/// fold the write's answer into what it observed, and plan again. The turn ends when the plan
/// writes nothing (ready, waiting, blocked), and also, so that a fold that misses a write's
/// effect can never repeat that write in a loop, when a step equal to one already taken in
/// this turn comes up again or after [`MAX_WRITES_PER_TURN`] writes: the next pass then reads
/// the cloud afresh.
#[derive(Debug)]
pub struct Turn<Step> {
    taken: Vec<Step>,
    last: Option<Progress>,
}

impl<Step: PartialEq> Default for Turn<Step> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Step: PartialEq> Turn<Step> {
    /// A turn before its first write.
    pub fn new() -> Self {
        Self {
            taken: Vec::new(),
            last: None,
        }
    }

    /// Whether `step` may be written now: `false` when it was already taken in this turn or
    /// the turn has made its most writes (end the turn with [`Turn::end`]).
    pub fn may_take(&self, step: &Step) -> bool {
        self.taken.len() < MAX_WRITES_PER_TURN && !self.taken.contains(step)
    }

    /// Records a write that went through and whose answer was folded in: `progress` says what
    /// it did.
    pub fn took(&mut self, step: Step, progress: Progress) {
        self.taken.push(step);
        self.last = Some(progress);
    }

    /// How many writes the turn made.
    pub fn writes(&self) -> usize {
        self.taken.len()
    }

    /// The turn's outcome when it stops before the plan is done: the last write's progress
    /// (look again soon), or `otherwise` when nothing was written.
    pub fn end(self, otherwise: Progress) -> Progress {
        self.last.unwrap_or(otherwise)
    }
}

/// A cloud's network services, in build order.
pub trait Service: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// Build order; tear-down walks it backwards.
    const ORDER: &'static [Self];

    /// The service's name in messages.
    fn label(self) -> &'static str;
}

/// Building: each service's turn over the pass's `Scope`, with what the services before it
/// found or made in `Built`.
pub trait Builds<Scope: Sync + ?Sized, Built: Send>: Service {
    /// One build turn: observe, then plan and write until ready or waiting, each write's answer
    /// folded into what was observed ([`Turn`]); outputs go into `built`.
    fn reconcile(
        self,
        scope: &Scope,
        built: &mut Built,
    ) -> impl Future<Output = Result<Progress, ProviderError>> + Send;
}

/// Tearing down: each service's turn over the pass's `Teardown`.
pub trait TearsDown<Teardown: Sync + ?Sized>: Service {
    /// One tear-down turn: at most one delete of what carries the ownership tag.
    fn delete(
        self,
        scope: &Teardown,
    ) -> impl Future<Output = Result<Removal, ProviderError>> + Send;
}

/// The result of walking the services forwards once.
#[derive(Debug)]
pub struct Walk<S, B> {
    /// What exists.
    pub built: B,
    /// Each service's state, for the services that had their turn.
    pub progress: Vec<(S, Progress)>,
    /// The failure that stopped the walk, and the service it happened in.
    pub error: Option<(S, ProviderError)>,
}

impl<S: Service, B> Walk<S, B> {
    /// Every service is ready.
    pub fn complete(&self) -> bool {
        self.error.is_none()
            && self.progress.len() == S::ORDER.len()
            && self.progress.iter().all(|(_, p)| *p == Progress::Ready)
    }

    /// The network condition (`type_`, e.g. `NetworkReady`): each service contributes its part;
    /// `ready` says what is there once everything is.
    pub fn condition(
        &self,
        type_: ConditionType,
        ready: impl FnOnce(&B) -> String,
    ) -> DesiredCondition {
        if let Some((service, error)) = &self.error {
            let reason = match error {
                ProviderError::Transient { reason, .. }
                | ProviderError::Terminal { reason, .. } => *reason,
                ProviderError::Kube(_) => Reason::CloudError,
            };
            return DesiredCondition::false_(
                type_,
                reason,
                format!("{}: {error}", service.label()),
            );
        }
        if self.complete() {
            return DesiredCondition::true_(type_, Reason::Ready, ready(&self.built));
        }
        let reason = self
            .progress
            .iter()
            .find_map(|(_, p)| match p {
                Progress::Working { reason, .. } => Some(*reason),
                _ => None,
            })
            .unwrap_or(Reason::Creating);
        let parts: Vec<String> = self
            .progress
            .iter()
            .filter_map(|(s, p)| match p {
                Progress::Ready => None,
                Progress::Working { message, .. } | Progress::Blocked(message) => {
                    Some(format!("{}: {message}", s.label()))
                }
            })
            .collect();
        DesiredCondition::false_(type_, reason, parts.join("; "))
    }

    /// The InfraCluster's report of this walk: the network as seen (`None` keeps the status's),
    /// its `condition`, when to look again ([`Walk::requeue`]) and the error that stopped it.
    pub fn report<N>(
        self,
        network: Option<N>,
        condition: DesiredCondition,
        timing: Timing,
        rest: Duration,
    ) -> NetworkReport<N> {
        NetworkReport {
            network,
            complete: self.complete(),
            condition,
            requeue: self.requeue(timing, rest),
            error: self.error.map(|(_, e)| e),
        }
    }

    /// When to look again: soon after a write, at the poll interval while the cloud works, at
    /// `rest` once everything is ready.
    pub fn requeue(&self, timing: Timing, rest: Duration) -> Duration {
        // A blocked service waits on one before it, whose own wait decides.
        let soonest = self
            .progress
            .iter()
            .filter_map(|(_, p)| match p {
                Progress::Working { wait, .. } => Some(timing.of(*wait)),
                Progress::Blocked(_) | Progress::Ready => None,
            })
            .min();
        match soonest {
            Some(d) => d,
            None if self.complete() => rest,
            None => timing.settle,
        }
    }
}

/// Walks the services forwards: each gets one turn; a failure stops the walk.
pub async fn build<S, Scope, B>(scope: &Scope) -> Walk<S, B>
where
    S: Builds<Scope, B>,
    Scope: Sync + ?Sized,
    B: Default + Send,
{
    let mut built = B::default();
    let mut progress = Vec::new();
    for service in S::ORDER {
        match service.reconcile(scope, &mut built).await {
            Ok(p) => progress.push((*service, p)),
            Err(error) => {
                return Walk {
                    built,
                    progress,
                    error: Some((*service, error)),
                };
            }
        }
    }
    Walk {
        built,
        progress,
        error: None,
    }
}

/// Walks the services backwards, each deleting at most one resource, and stops at the first
/// that still has something left.
pub async fn tear_down<S, Teardown>(scope: &Teardown) -> Result<Removal, ProviderError>
where
    S: TearsDown<Teardown>,
    Teardown: Sync + ?Sized,
{
    for service in S::ORDER.iter().rev() {
        match service.delete(scope).await? {
            Removal::Gone => continue,
            Removal::Pending { message, wait } => {
                return Ok(Removal::Pending {
                    message: format!("{}: {message}", service.label()),
                    wait,
                });
            }
        }
    }
    Ok(Removal::Gone)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Mutex;

    use contract::conditions::ConditionStatus;

    use super::*;

    /// Two made-up services over a shared script of answers.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Toy {
        Network,
        Gateway,
    }

    struct Script {
        build: Mutex<Vec<Result<Progress, ProviderError>>>,
        teardown: Mutex<Vec<Removal>>,
        turns: Mutex<Vec<&'static str>>,
    }

    impl Service for Toy {
        const ORDER: &'static [Self] = &[Toy::Network, Toy::Gateway];

        fn label(self) -> &'static str {
            match self {
                Toy::Network => "network",
                Toy::Gateway => "gateway",
            }
        }
    }

    impl Builds<Script, Vec<&'static str>> for Toy {
        async fn reconcile(
            self,
            scope: &Script,
            built: &mut Vec<&'static str>,
        ) -> Result<Progress, ProviderError> {
            scope.turns.lock().unwrap().push(self.label());
            built.push(self.label());
            scope.build.lock().unwrap().remove(0)
        }
    }

    impl TearsDown<Script> for Toy {
        async fn delete(self, scope: &Script) -> Result<Removal, ProviderError> {
            scope.turns.lock().unwrap().push(self.label());
            Ok(scope.teardown.lock().unwrap().remove(0))
        }
    }

    fn script(build: Vec<Result<Progress, ProviderError>>, teardown: Vec<Removal>) -> Script {
        Script {
            build: Mutex::new(build),
            teardown: Mutex::new(teardown),
            turns: Mutex::new(Vec::new()),
        }
    }

    const TIMING: Timing = Timing {
        settle: Duration::from_secs(2),
        poll: Duration::from_secs(30),
    };
    const REST: Duration = Duration::from_secs(600);

    #[tokio::test]
    async fn a_build_walks_forwards_and_is_ready_only_when_every_service_is() {
        let s = script(vec![Ok(Progress::Ready), Ok(Progress::Ready)], vec![]);
        let walk = build::<Toy, _, Vec<&str>>(&s).await;
        assert!(walk.complete());
        assert_eq!(walk.built, ["network", "gateway"]);
        let c = walk.condition(ConditionType::NetworkReady, |b| {
            format!("{} ready", b.len())
        });
        assert_eq!(
            (c.status, c.message.as_str()),
            (ConditionStatus::True, "2 ready")
        );
        assert_eq!(walk.requeue(TIMING, REST), REST);

        let s = script(
            vec![
                Ok(Progress::waiting("the cloud is making it")),
                Ok(Progress::Blocked("waits for the network".into())),
            ],
            vec![],
        );
        let walk = build::<Toy, _, Vec<&str>>(&s).await;
        let c = walk.condition(ConditionType::NetworkReady, |_| String::new());
        assert_eq!(c.reason, Reason::WaitingForCloud.as_str());
        assert_eq!(
            c.message,
            "network: the cloud is making it; gateway: waits for the network"
        );
        // Blocked behind a service the cloud works on: the poll interval, not sooner.
        assert_eq!(walk.requeue(TIMING, REST), TIMING.poll);
    }

    #[tokio::test]
    async fn a_failure_stops_the_walk_and_names_the_service() {
        let s = script(
            vec![Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "bad block",
            ))],
            vec![],
        );
        let walk = build::<Toy, _, Vec<&str>>(&s).await;
        assert_eq!(
            *s.turns.lock().unwrap(),
            ["network"],
            "no turn after a failure"
        );
        let c = walk.condition(ConditionType::NetworkReady, |_| String::new());
        assert_eq!(c.reason, Reason::InvalidSpec.as_str());
        assert!(c.message.starts_with("network: "), "{}", c.message);
    }

    #[tokio::test]
    async fn a_tear_down_walks_backwards_and_stops_at_the_first_service_left() {
        let s = script(
            vec![],
            vec![Removal::Gone, Removal::waiting("still attached")],
        );
        let removal = tear_down::<Toy, _>(&s).await.unwrap();
        assert_eq!(*s.turns.lock().unwrap(), ["gateway", "network"]);
        assert_eq!(
            removal,
            Removal::Pending {
                message: "network: still attached".into(),
                wait: Wait::Poll
            }
        );
        let s = script(vec![], vec![Removal::deleting("deleted one")]);
        let removal = tear_down::<Toy, _>(&s).await.unwrap();
        assert_eq!(*s.turns.lock().unwrap(), ["gateway"]);
        assert!(matches!(
            removal,
            Removal::Pending {
                wait: Wait::Settle,
                ..
            }
        ));
    }

    #[test]
    fn a_turn_never_takes_one_step_twice_nor_more_than_its_most_writes() {
        let mut turn: Turn<u32> = Turn::new();
        assert!(turn.may_take(&1));
        turn.took(1, Progress::creating("made one"));
        // A fold that missed the write's effect plans the same step again: the turn ends.
        assert!(!turn.may_take(&1));
        assert_eq!(turn.end(Progress::Ready), Progress::creating("made one"));

        let mut turn: Turn<usize> = Turn::new();
        for step in 0..MAX_WRITES_PER_TURN {
            assert!(turn.may_take(&step));
            turn.took(step, Progress::updating(format!("step {step}")));
        }
        assert!(!turn.may_take(&MAX_WRITES_PER_TURN));
        assert_eq!(turn.writes(), MAX_WRITES_PER_TURN);
        // Nothing written: the plan's own outcome.
        let turn: Turn<u8> = Turn::new();
        assert_eq!(
            turn.end(Progress::waiting("the cloud works")),
            Progress::waiting("the cloud works")
        );
    }
}
