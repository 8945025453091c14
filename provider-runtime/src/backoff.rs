//! Per-object retry delays: jittered exponential backoff that honours the cloud's `Retry-After`;
//! and the holds that keep every object of a throttled cluster from the cloud until then.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
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
    let jitter = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
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
    let jitter = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
    left + Duration::from_millis(100) + Duration::from_millis(400).mul_f64(jitter)
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

/// Failure counts per object, reset when a pass succeeds.
#[derive(Debug, Default)]
pub struct Backoffs {
    attempts: Mutex<HashMap<String, (u32, Instant)>>,
}

/// Entries untouched this long are dropped (objects deleted while failing).
const FORGET_AFTER: Duration = Duration::from_secs(3600);

impl Backoffs {
    /// The delay before the next attempt for `key`, counting this failure.
    pub fn next(&self, key: &str, retry_after: Option<Duration>) -> Duration {
        let attempt = {
            let mut map = match self.attempts.lock() {
                Ok(m) => m,
                Err(poisoned) => poisoned.into_inner(),
            };
            let now = Instant::now();
            if map.len() > 1024 {
                map.retain(|_, (_, at)| now.duration_since(*at) < FORGET_AFTER);
            }
            let entry = map.entry(key.to_owned()).or_insert((0, now));
            let attempt = entry.0;
            *entry = (attempt.saturating_add(1), now);
            attempt
        };
        retry_delay(attempt, retry_after, jitter())
    }

    /// Forgets the failures of `key` after a successful pass.
    pub fn reset(&self, key: &str) {
        let mut map = match self.attempts.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        map.remove(key);
    }

    /// Failures recorded for `key` since its last success.
    pub fn attempts(&self, key: &str) -> u32 {
        let map = match self.attempts.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        map.get(key).map(|(n, _)| *n).unwrap_or(0)
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
        let mut held = match self.held.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = Instant::now();
        held.retain(|_, end| *end > now);
        let end = held.entry(key.to_owned()).or_insert(until);
        *end = (*end).max(until);
    }

    /// How long `key` is still held, if it is.
    pub fn held(&self, key: &str) -> Option<Duration> {
        let held = match self.held.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
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
    fn failures_count_per_object_and_reset_on_success() {
        let b = Backoffs::default();
        let first = b.next("ns/a", None);
        let second = b.next("ns/a", None);
        assert!(first <= Duration::from_secs(2));
        assert!(second >= Duration::from_secs(2) && second <= Duration::from_secs(4));
        assert_eq!(b.attempts("ns/a"), 2);
        assert_eq!(b.attempts("ns/b"), 0);
        b.reset("ns/a");
        assert_eq!(b.attempts("ns/a"), 0);
    }
}
