//! The `Retry-After` admission: which cloud calls may be sent now.
//!
//! A `Retry-After` speaks for the request it answered (RFC 9110 §10.2.3), so the wait is kept
//! per service and target — what the provider names in [`CloudCalls::admit`]: the method and
//! path of a REST call (ARM, OCI; EKS's operation and resource names, which are its path), the
//! action of a Query API whose every request is `POST /` (EC2), the method of a client that
//! hides its paths (Google's). The wait holds every pass of the process, those in flight
//! included: a control plane's read answered 429 and a pool's read of the same managed cluster a
//! moment later were both early when it was kept per object (the fault suite's AKS run). It does
//! not hold the rest of the service: with a tenth of the answers 429, a hold per service kept
//! every EKS call of a hundred clusters waiting most of the time (P9 at 100 clusters: 6.2× the
//! fault-free time). Under an account's throttling another target answers 429 in its turn and is
//! held in its turn; the engine's hold of the whole cluster ([`super::retry::Holds`]) keeps the
//! throttled cluster's other objects away meanwhile.
//!
//! For as long again after its `Retry-After` (the wait's *careful* time) the target takes one
//! call at a time: the calls the wait held are all let go at its end, and several sent together
//! are several in flight when the next 429 comes, which reach the cloud after it (P9 at 100
//! clusters: two or three creates a run, each within 15 ms of the create they followed). While
//! the call admitted before it is unanswered, a call is not sent: its pass is requeued a moment
//! later ([`TURN_RETRY`]) rather than wait on another pass's answer, so no worker is held. A 429
//! answered meanwhile holds the target like any other. Calls admitted before the 429 hold no
//! turn (they were sent before anyone knew).
//!
//! Times are tokio's ([`tokio::time::Instant`]), the wall clock's outside tests.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::cloud_error::CloudError;
use crate::metrics::{CallCounter, CallOutcome, Metrics};

/// How soon a call whose target's turn is taken is tried again: about as long as a cloud takes
/// to answer.
pub const TURN_RETRY: Duration = Duration::from_millis(250);

/// Counts a provider's cloud calls and admits them by the `Retry-After`s answered so far;
/// cheap to clone, shared by every pass of the process.
#[derive(Clone)]
pub struct CloudCalls {
    counter: CallCounter,
    waits: Arc<Waits>,
}

impl fmt::Debug for CloudCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CloudCalls").finish_non_exhaustive()
    }
}

/// Until when each request target must not be called again (a 429's `Retry-After`), and after
/// that, until when it is called one request at a time (see the module docs).
#[derive(Debug, Default)]
struct Waits(Mutex<HashMap<String, Wait>>);

/// What a 429 left on one target.
#[derive(Debug)]
struct Wait {
    /// Until when nothing is sent.
    until: Instant,
    /// Until when one call at a time is sent.
    careful_until: Instant,
    /// The turn of the call in flight while careful.
    turn: Arc<Semaphore>,
}

/// Why a call is not sent now, and for how long.
enum NotYet {
    /// The target's `Retry-After` is not over.
    Held(Duration),
    /// The call before it, in the careful time after a `Retry-After`, has not been answered.
    Busy(Duration),
}

impl Waits {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Wait>> {
        // Each critical section leaves the map whole; a panic elsewhere cannot corrupt it.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The turn of a call to `key` now: `Ok(None)` when the target is neither held nor careful,
    /// `Ok(Some(turn))` when it is careful and the turn is free.
    fn turn(&self, key: &str) -> Result<Option<OwnedSemaphorePermit>, NotYet> {
        let now = Instant::now();
        let waits = self.lock();
        let Some(wait) = waits.get(key) else {
            return Ok(None);
        };
        if wait.until > now {
            return Err(NotYet::Held(wait.until - now));
        }
        if wait.careful_until <= now {
            return Ok(None);
        }
        match wait.turn.clone().try_acquire_owned() {
            Ok(turn) => Ok(Some(turn)),
            Err(_taken) => Err(NotYet::Busy((wait.careful_until - now).min(TURN_RETRY))),
        }
    }

    /// Keeps a `Retry-After` of `after` answered to `key` now.
    fn keep(&self, key: String, after: Duration) {
        let now = Instant::now();
        let (until, careful_until) = (now + after, now + after + after);
        let mut waits = self.lock();
        // Targets are many (one per cloud resource): keep only the waits in force.
        waits.retain(|_, wait| wait.careful_until > now);
        if after.is_zero() {
            return;
        }
        let wait = waits.entry(key).or_insert_with(|| Wait {
            until,
            careful_until,
            turn: Arc::new(Semaphore::new(1)),
        });
        wait.until = wait.until.max(until);
        wait.careful_until = wait.careful_until.max(careful_until);
    }
}

impl CloudCalls {
    /// Calls counted into `counter`, admitted by their own `Retry-After`s.
    pub fn new(counter: CallCounter) -> Self {
        Self {
            counter,
            waits: Arc::default(),
        }
    }

    /// A handle that counts into a private registry; for unit tests of provider code.
    pub fn detached() -> Self {
        Self::new(Metrics::new("test").call_counter())
    }

    /// Before a call to `target` of `service`: the admitted call, whose
    /// [`Admitted::answered`] counts the answer and keeps its `Retry-After`; or, sending
    /// nothing, [`CloudError::Held`] with how long until the call may go: while the target's
    /// last `Retry-After` is not over, and for as long again while the call admitted before is
    /// unanswered (see the module docs). The provider names the target as its cloud scopes a
    /// `Retry-After`: `"GET /subscriptions/…/managedClusters/a"`, `"DescribeCluster a"`,
    /// `"CreateTags"`.
    ///
    /// # Errors
    /// [`CloudError::Held`], as above.
    pub fn admit(
        &self,
        service: &'static str,
        target: impl Into<String>,
    ) -> Result<Admitted<'_>, CloudError> {
        let target = target.into();
        let key = format!("{service} {target}");
        match self.waits.turn(&key) {
            Ok(turn) => Ok(Admitted {
                calls: self,
                service,
                key,
                _turn: turn,
            }),
            Err(NotYet::Held(left)) => Err(CloudError::Held {
                message: format!(
                    "{service} asked to wait (Retry-After) before {target}; not calling it for another {:.1}s",
                    left.as_secs_f64()
                ),
                left,
            }),
            Err(NotYet::Busy(left)) => Err(CloudError::Held {
                message: format!(
                    "{service} asked to wait (Retry-After) before {target} a moment ago, and the call sent since has not been answered; trying again in {:.1}s",
                    left.as_secs_f64()
                ),
                left,
            }),
        }
    }

    /// Counts one call, e.g. `record("eks", "DescribeCluster", CallOutcome::Success)`.
    pub fn record(
        &self,
        service: impl Into<Cow<'static, str>>,
        operation: impl Into<Cow<'static, str>>,
        outcome: CallOutcome,
    ) {
        self.counter.record(service, operation, outcome);
    }

    /// How many calls were counted for these labels (for tests and benchmarks).
    pub fn count(
        &self,
        service: &'static str,
        operation: &'static str,
        outcome: CallOutcome,
    ) -> u64 {
        self.counter.count(service, operation, outcome)
    }
}

/// A call [`CloudCalls::admit`] let through: one per request sent.
#[must_use = "a sent call's answer is counted with `answered`"]
pub struct Admitted<'a> {
    calls: &'a CloudCalls,
    service: &'static str,
    /// The service and the target, as the waits are kept.
    key: String,
    /// While the target is careful: the turn of its one call in flight, until answered (or
    /// dropped unanswered).
    _turn: Option<OwnedSemaphorePermit>,
}

impl Admitted<'_> {
    /// After the call, as `operation`: counts it by outcome, and when the cloud answered 429
    /// with `Retry-After`, holds every call to the same target until then, and takes its calls
    /// one at a time for as long again. The next call's turn comes after this.
    pub fn answered(
        self,
        operation: impl Into<Cow<'static, str>>,
        result: Result<(), &CloudError>,
    ) {
        let calls = self.calls;
        match result {
            Ok(()) => calls.record(self.service, operation, CallOutcome::Success),
            Err(error) => {
                calls.record(self.service, operation, error.call_outcome());
                if let CloudError::Throttled {
                    retry_after: Some(wait),
                    ..
                } = error
                {
                    calls.waits.keep(self.key, *wait);
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn throttled(after: Duration) -> CloudError {
        CloudError::Throttled {
            message: "slow down".into(),
            retry_after: Some(after),
        }
    }

    #[tokio::test]
    async fn a_429_with_retry_after_holds_its_target_from_every_pass_and_nothing_else() {
        let m = Metrics::new("aks");
        let shared = CloudCalls::new(m.call_counter());
        let (control_plane, pool) = (shared.clone(), shared.clone());
        let cluster = "GET /subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/a";
        // A pool's call sent before the 429 below came back.
        let in_flight = pool.admit("arm", cluster).expect("nothing held yet");
        control_plane
            .admit("arm", cluster)
            .expect("nothing held yet")
            .answered(
                "ManagedClusters_Get",
                Err(&throttled(Duration::from_secs(2))),
            );
        // Another pass's handle is held too, and told how long is left and before what.
        match pool.admit("arm", cluster) {
            Err(CloudError::Held { left, message }) => {
                assert!(left > Duration::from_millis(1500) && left <= Duration::from_secs(2));
                assert!(
                    message.contains("arm") && message.contains(cluster),
                    "{message}"
                );
            }
            Ok(_) => panic!("not held"),
            Err(other) => panic!("not held: {other:?}"),
        }
        // Other targets of the service, and other services, are not held.
        let other_cluster = cluster.replace("managedClusters/a", "managedClusters/b");
        assert!(pool.admit("arm", other_cluster).is_ok());
        assert!(pool.admit("compute", cluster).is_ok());
        // The call in flight answered later with a shorter Retry-After does not shorten the
        // wait; one without any holds nothing.
        in_flight.answered(
            "ManagedClusters_Get",
            Err(&throttled(Duration::from_millis(1))),
        );
        assert!(pool.admit("arm", cluster).is_err());
        pool.admit("oci", "GET /clusters/x")
            .expect("not held")
            .answered(
                "GetCluster",
                Err(&CloudError::Throttled {
                    message: "slow down".into(),
                    retry_after: None,
                }),
            );
        assert!(pool.admit("oci", "GET /clusters/x").is_ok());
        assert_eq!(
            pool.count("arm", "ManagedClusters_Get", CallOutcome::Throttled),
            2
        );
        // A wait that is over holds nothing, and is not kept.
        pool.admit("eks", "DescribeCluster a")
            .expect("not held")
            .answered("DescribeCluster", Err(&throttled(Duration::ZERO)));
        assert!(pool.admit("eks", "DescribeCluster a").is_ok());
        let kept = shared.waits.lock().len();
        assert_eq!(kept, 1, "only the ARM cluster's wait is in force");
    }

    /// EKS's `target` answered 429 with `Retry-After: after`, and `into` of its careful time.
    async fn careful_after(
        calls: &CloudCalls,
        target: &'static str,
        after: Duration,
        into: Duration,
    ) {
        calls
            .admit("eks", target)
            .unwrap()
            .answered(target, Err(&throttled(after)));
        tokio::time::sleep(after + into).await;
    }

    /// How long `admit` says to wait, when it holds the call.
    fn held(calls: &CloudCalls, target: &'static str) -> Option<Duration> {
        match calls.admit("eks", target) {
            Err(CloudError::Held { left, .. }) => Some(left),
            Ok(sent) => {
                sent.answered(target, Ok(()));
                None
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    // Tokio's clock, paused: it moves only when every task waits, so no step races a timer.
    #[tokio::test(start_paused = true)]
    async fn after_a_retry_after_a_target_is_called_one_at_a_time_for_as_long_again() {
        let calls = CloudCalls::detached();
        let create = "CreateCluster";
        let after = Duration::from_millis(400);
        careful_after(&calls, create, after, Duration::from_millis(20)).await;
        // The Retry-After is over: one call goes; the next is not sent, and its pass is told to
        // come back a moment later.
        let first = calls.admit("eks", create).expect("the wait is over");
        assert_eq!(held(&calls, create), Some(TURN_RETRY));
        // Another target is not careful.
        let other = calls.admit("eks", "DescribeCluster a").unwrap();
        let other_too = calls.admit("eks", "DescribeCluster a").unwrap();
        other.answered("DescribeCluster", Ok(()));
        other_too.answered("DescribeCluster", Ok(()));
        // Answered: the next call goes.
        first.answered(create, Ok(()));
        let second = calls.admit("eks", create).expect("its turn");
        // A 429 answered to the call in flight holds the next for its whole Retry-After.
        second.answered(create, Err(&throttled(after)));
        assert_eq!(held(&calls, create), Some(after));
        // Near the careful time's end, the wait asked is only what is left of it.
        tokio::time::sleep(after * 2 - Duration::from_millis(100)).await;
        let last = calls.admit("eks", create).expect("the wait is over");
        assert_eq!(held(&calls, create), Some(Duration::from_millis(100)));
        // Once the wait and as long again are over, calls go together.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let together = calls.admit("eks", create).expect("not careful any more");
        assert!(calls.admit("eks", create).is_ok());
        last.answered(create, Ok(()));
        together.answered(create, Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_dropped_unanswered_gives_its_turn_back() {
        let calls = CloudCalls::detached();
        let create = "CreateCluster";
        careful_after(&calls, create, Duration::from_secs(10), Duration::ZERO).await;
        let lost = calls.admit("eks", create).expect("the wait is over");
        assert!(held(&calls, create).is_some());
        drop(lost);
        assert!(calls.admit("eks", create).is_ok(), "its turn now");
    }
}
