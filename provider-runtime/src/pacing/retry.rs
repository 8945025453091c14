//! When a pass that failed is tried again, by what the failure was:
//!
//! - the cloud throttled it and said when to come back (`429` with `Retry-After`): then, plus a
//!   small jittered margin so a crowd throttled at once does not return in one instant; it is
//!   not counted as a failure, since trying again later is what the cloud asked for;
//! - another pass's `Retry-After` held it before it sent anything: just after that hold is over
//!   ([`after_hold`]), not counted either;
//! - another writer was first (a `409 Conflict` on the object's own write, a finalizer patch
//!   built from a stale copy): at once, on the fresh copy, a moment of jitter apart; only a run
//!   of conflicts longer than [`QUICK_CONFLICTS`] backs off;
//! - anything else: jittered exponential backoff while the *same kind* of failure repeats
//!   ([`BASE_DELAY`] doubling up to [`MAX_DELAY`], never sooner than a `Retry-After` the cloud
//!   gave); a failure of another kind starts again from the first delay, and a clean pass
//!   forgets it all.
//!
//! Before this rule one count per object grew with every failure of any kind until a clean
//! pass: an OKE network whose seven services met a few 429s (each asking for one second) and a
//! few 409s on its own status write was tried again after 2, 4, 13, 22, 61, 122, 204 and 280 s.
//!
//! Also here: the [`Holds`] that keep every object of a throttled cluster from the cloud until
//! its `Retry-After` is over.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// First retry delay after a failure.
pub const BASE_DELAY: Duration = Duration::from_secs(2);
/// Longest retry delay (before jitter).
pub const MAX_DELAY: Duration = Duration::from_secs(300);

/// The delay before retry number `attempt` (0 for the first failure).
///
/// The exponential part is `BASE_DELAY * 2^attempt` capped at [`MAX_DELAY`]; `jitter` (in
/// `[0, 1)`) spreads it over `[d/2, d)` so objects that failed together do not retry together.
/// A `retry_after` from the cloud is a floor: the result is never shorter, and gets a small
/// jittered margin on top so a crowd throttled at once does not return in the same instant.
pub fn retry_delay(attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
    let jitter = unit(jitter);
    let exp = BASE_DELAY
        .checked_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX))
        .unwrap_or(MAX_DELAY)
        .min(MAX_DELAY);
    let spread = exp.mul_f64(0.5 + 0.5 * jitter);
    match retry_after {
        Some(floor) if floor >= spread => {
            floor + floor.mul_f64(0.1 * jitter).min(Duration::from_secs(5))
        }
        _ => spread,
    }
}

/// The wait of a pass that sent nothing because its call's target is held until a
/// `Retry-After` is over: the time left, plus 100 ms and a jittered margin of up to 400 ms, so
/// the passes held together come back spread out rather than in the same instant. No failure
/// is counted: the object's backoff does not grow while another's `Retry-After` holds it.
pub fn after_hold(left: Duration, jitter: f64) -> Duration {
    let jitter = unit(jitter);
    left + Duration::from_millis(100) + Duration::from_millis(400).mul_f64(jitter)
}

/// The wait the cloud asked for, plus a jittered margin of a tenth of it (at least 100 ms, at
/// most 5 s) so the passes it throttled together come back spread out.
pub fn after_retry_after(after: Duration, jitter: f64) -> Duration {
    let margin = after
        .mul_f64(0.1)
        .clamp(Duration::from_millis(100), Duration::from_secs(5));
    after + margin.mul_f64(unit(jitter))
}

/// `jitter` within `[0, 1]` (anything else, NaN included, is 0).
fn unit(jitter: f64) -> f64 {
    if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// A fresh jitter value in `[0, 1)` from the standard library's randomly keyed hasher.
pub fn jitter() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// What a failed pass was, as far as trying it again goes (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The cloud answered `429` and said to come back after this.
    Throttled(Duration),
    /// Nothing was sent: another pass's `Retry-After` holds the call's target for this long.
    Held(Duration),
    /// Another writer was first (a `409`, a stale finalizer patch).
    Conflict,
    /// Anything else, by its short category (`cloud_5xx`, `kube_invalid`, …), with the
    /// cloud's `Retry-After` when it gave one.
    Failed {
        /// The failure's kind: a different kind starts the backoff over.
        kind: &'static str,
        /// The cloud's `Retry-After`, a floor.
        floor: Option<Duration>,
    },
}

/// Conflicts in a row retried at once; past them a run of conflicts backs off like any
/// failure (another writer that keeps winning is not raced in a loop).
pub const QUICK_CONFLICTS: u32 = 3;

/// The kind under which conflicts are counted.
const CONFLICT: &str = "conflict";

/// How far apart quick conflict retries are spread.
const CONFLICT_JITTER: Duration = Duration::from_millis(200);

/// The failures of each object since its last clean pass: the kind of the last one and how
/// many of that kind came in a row.
#[derive(Debug, Default)]
pub struct Retries {
    failing: Mutex<HashMap<String, Failing>>,
}

#[derive(Debug)]
struct Failing {
    kind: &'static str,
    in_a_row: u32,
    at: Instant,
}

/// Entries untouched this long are dropped (objects deleted while failing).
const FORGET_AFTER: Duration = Duration::from_secs(3600);

impl Retries {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Failing>> {
        self.failing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long to wait before trying `key` again after `failure`, counting it.
    pub fn next(&self, key: &str, failure: Failure) -> Duration {
        self.next_with(key, failure, jitter())
    }

    /// [`Retries::next`] with the jitter given (`[0, 1)`), for tests.
    pub fn next_with(&self, key: &str, failure: Failure, jitter: f64) -> Duration {
        let (kind, floor) = match failure {
            Failure::Throttled(after) => return after_retry_after(after, jitter),
            Failure::Held(left) => return after_hold(left, jitter),
            Failure::Conflict => (CONFLICT, None),
            Failure::Failed { kind, floor } => (kind, floor),
        };
        let in_a_row = self.count(key, kind);
        if kind == CONFLICT && in_a_row < QUICK_CONFLICTS {
            return CONFLICT_JITTER.mul_f64(unit(jitter));
        }
        let attempt = if kind == CONFLICT {
            in_a_row - QUICK_CONFLICTS
        } else {
            in_a_row
        };
        retry_delay(attempt, floor, jitter)
    }

    /// Records one more failure of `kind` for `key`; returns how many of that kind came in a
    /// row before it.
    fn count(&self, key: &str, kind: &'static str) -> u32 {
        let mut failing = self.lock();
        let now = Instant::now();
        if failing.len() > 1024 {
            failing.retain(|_, f| now.duration_since(f.at) < FORGET_AFTER);
        }
        let entry = failing.entry(key.to_owned()).or_insert(Failing {
            kind,
            in_a_row: 0,
            at: now,
        });
        if entry.kind != kind {
            entry.kind = kind;
            entry.in_a_row = 0;
        }
        let before = entry.in_a_row;
        entry.in_a_row = before.saturating_add(1);
        entry.at = now;
        before
    }

    /// Forgets the failures of `key` after a clean pass.
    pub fn reset(&self, key: &str) {
        self.lock().remove(key);
    }

    /// Failures of one kind in a row recorded for `key` since its last clean pass.
    pub fn in_a_row(&self, key: &str) -> u32 {
        self.lock().get(key).map_or(0, |f| f.in_a_row)
    }
}

/// What the cloud throttled, held until its `Retry-After` is over; shared by every controller
/// of the process and keyed by the Cluster (see `hold_scope` in the engine): the objects of one
/// cluster read the same cloud resources (a control plane and its pools both read the managed
/// cluster), so a 429 answered to one of them holds them all. Only the cloud's own
/// `Retry-After` holds; a hold ends by itself.
#[derive(Debug, Default)]
pub struct Holds {
    held: Mutex<HashMap<String, Instant>>,
}

impl Holds {
    /// Holds `key` until `until`: a pass that any trigger starts before then (a change of the
    /// object's Cluster, a MachinePool, a resync, another object of the cluster) must not call
    /// the cloud, which said when to come back. A later hold never shortens an earlier one.
    pub fn hold(&self, key: &str, until: Instant) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        held.retain(|_, end| *end > now);
        let end = held.entry(key.to_owned()).or_insert(until);
        *end = (*end).max(until);
    }

    /// How long `key` is still held, if it is.
    pub fn held(&self, key: &str) -> Option<Duration> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(key)
            .and_then(|end| end.checked_duration_since(Instant::now()))
            .filter(|d| !d.is_zero())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_exponentially_and_stop_at_the_cap() {
        assert_eq!(retry_delay(0, None, 0.999_999).as_secs(), 1); // ~2s * [0.5,1)
        assert_eq!(retry_delay(0, None, 0.0), Duration::from_secs(1));
        assert_eq!(retry_delay(1, None, 0.0), Duration::from_secs(2));
        assert_eq!(retry_delay(3, None, 0.0), Duration::from_secs(8));
        assert_eq!(retry_delay(20, None, 0.0), MAX_DELAY / 2);
        assert!(retry_delay(200, None, 0.99) <= MAX_DELAY);
    }

    #[test]
    fn jitter_spreads_within_half_to_full_delay() {
        for j in [0.0, 0.25, 0.5, 0.75, 0.99] {
            let d = retry_delay(4, None, j);
            assert!(
                d >= Duration::from_secs(16) && d < Duration::from_secs(32),
                "{d:?}"
            );
        }
    }

    #[test]
    fn a_hold_lasts_until_its_end_and_a_later_hold_never_shortens_it() {
        let h = Holds::default();
        assert_eq!(h.held("ns/a"), None);
        let now = Instant::now();
        h.hold("ns/a", now + Duration::from_secs(5));
        h.hold("ns/a", now + Duration::from_secs(1));
        let left = h.held("ns/a").expect("held");
        assert!(
            left > Duration::from_secs(4) && left <= Duration::from_secs(5),
            "{left:?}"
        );
        assert_eq!(h.held("ns/b"), None);
        h.hold("ns/b", now);
        assert_eq!(h.held("ns/b"), None, "a hold that is over holds nothing");
    }

    #[test]
    fn retry_after_is_a_floor_never_undercut() {
        let floor = Duration::from_secs(30);
        for attempt in 0..4 {
            for j in [0.0, 0.5, 0.99] {
                let d = retry_delay(attempt, Some(floor), j);
                assert!(d >= floor, "attempt {attempt} jitter {j}: {d:?}");
                assert!(d <= floor + Duration::from_secs(3));
            }
        }
        // A Retry-After shorter than the backoff does not shorten it.
        assert_eq!(
            retry_delay(5, Some(Duration::from_secs(1)), 0.0),
            Duration::from_secs(32)
        );
    }

    #[test]
    fn a_held_pass_comes_back_just_after_the_hold_spread_out() {
        let left = Duration::from_millis(1500);
        assert_eq!(after_hold(left, 0.0), Duration::from_millis(1600));
        assert_eq!(after_hold(left, 0.5), Duration::from_millis(1800));
        assert!(after_hold(left, 0.999) < Duration::from_millis(2000));
        assert_eq!(
            after_hold(Duration::ZERO, f64::NAN),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn garbage_jitter_is_tolerated() {
        assert_eq!(retry_delay(0, None, f64::NAN), Duration::from_secs(1));
        assert_eq!(retry_delay(0, None, -3.0), Duration::from_secs(1));
    }

    #[test]
    fn jitter_values_are_in_the_unit_interval() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j));
        }
    }

    #[test]
    fn a_failure_of_one_kind_backs_off_while_it_repeats_and_another_kind_starts_over() {
        let r = Retries::default();
        let failed = |kind| Failure::Failed { kind, floor: None };
        let d: Vec<u64> = (0..4)
            .map(|_| r.next_with("ns/a", failed("cloud_5xx"), 0.0).as_secs())
            .collect();
        assert_eq!(d, [1, 2, 4, 8]);
        assert_eq!(r.in_a_row("ns/a"), 4);
        // Another kind of failure starts from the first delay.
        assert_eq!(
            r.next_with("ns/a", failed("timeout"), 0.0),
            Duration::from_secs(1)
        );
        assert_eq!(r.in_a_row("ns/a"), 1);
        assert_eq!(r.in_a_row("ns/b"), 0, "per object");
        r.reset("ns/a");
        assert_eq!(r.in_a_row("ns/a"), 0);
    }

    #[test]
    fn a_throttled_pass_waits_what_the_cloud_asked_however_often_it_was_throttled() {
        let r = Retries::default();
        for _ in 0..3 {
            r.next_with(
                "ns/a",
                Failure::Failed {
                    kind: "cloud_5xx",
                    floor: None,
                },
                0.0,
            );
        }
        let asked = Duration::from_secs(1);
        for _ in 0..10 {
            let d = r.next_with("ns/a", Failure::Throttled(asked), 0.5);
            assert!(
                d >= asked && d <= asked + Duration::from_millis(100),
                "{d:?}"
            );
        }
        // Not counted, and not counting against the failure in progress either.
        assert_eq!(r.in_a_row("ns/a"), 3);
        // A held pass comes back just after the hold.
        assert_eq!(
            r.next_with("ns/a", Failure::Held(Duration::from_millis(500)), 0.0),
            Duration::from_millis(600)
        );
        assert_eq!(r.in_a_row("ns/a"), 3);
    }

    #[test]
    fn a_conflict_is_retried_at_once_and_only_a_long_run_of_them_backs_off() {
        let r = Retries::default();
        for _ in 0..QUICK_CONFLICTS {
            let d = r.next_with("ns/a", Failure::Conflict, 0.99);
            assert!(d < CONFLICT_JITTER, "{d:?}");
        }
        assert_eq!(
            r.next_with("ns/a", Failure::Conflict, 0.0),
            Duration::from_secs(1)
        );
        assert_eq!(
            r.next_with("ns/a", Failure::Conflict, 0.0),
            Duration::from_secs(2)
        );
        // A conflict between two failures of another kind is retried at once; their floor holds.
        let failed = Failure::Failed {
            kind: "cloud_5xx",
            floor: Some(Duration::from_secs(15)),
        };
        assert_eq!(r.next_with("ns/b", failed, 0.0), Duration::from_secs(15));
        assert!(r.next_with("ns/b", Failure::Conflict, 0.0) < CONFLICT_JITTER);
        assert_eq!(
            r.next_with("ns/b", failed, 0.0),
            Duration::from_secs(15),
            "the floor holds"
        );
    }
}
