//! Retry-After promises: when the emulator answers a call with 429 and `Retry-After`, the same
//! request (method and path) sent again before that time is **early**. Early calls are counted
//! (`emulator_early_calls_total{operation}`) and listed, so a test can hold a client to the
//! cloud's rule that it waits as long as it was told.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use serde::Serialize;

/// Labels of `emulator_early_calls_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EarlyLabels {
    /// The cloud (`eks`, `aks`, …).
    pub cloud: String,
    /// The operation, as the cloud names it.
    pub operation: String,
}

/// One call sent before the `Retry-After` it had been given was over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EarlyCall {
    /// The operation.
    pub operation: String,
    /// Method and path of the request.
    pub target: String,
    /// How long before the end of its `Retry-After` it came, milliseconds.
    pub early_by_millis: u64,
    /// When the 429 was answered, Unix milliseconds.
    pub throttled_at_millis: u64,
    /// When this call came, Unix milliseconds (a test tells from both whether its caller was
    /// the process that had been told, or one started since).
    pub at_millis: u64,
}

fn unix_millis(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The promises in force and the early calls seen.
#[derive(Debug)]
pub struct Promises {
    cloud: String,
    /// Per target: when its Retry-After ends, and when the 429 was answered.
    ends: Mutex<HashMap<String, (Instant, std::time::SystemTime)>>,
    early: Mutex<Vec<EarlyCall>>,
    family: Family<EarlyLabels, Counter>,
}

/// The longest list of early calls kept (the counter keeps counting past it).
const KEPT: usize = 1000;

impl Promises {
    /// Promises for `cloud`, their counter registered in `registry`.
    pub fn new(cloud: &str, registry: &mut Registry) -> Self {
        let family = Family::<EarlyLabels, Counter>::default();
        registry.register(
            "emulator_early_calls",
            "Calls sent again before the Retry-After of an earlier 429 to the same method and path was over",
            family.clone(),
        );
        Self {
            cloud: cloud.to_string(),
            ends: Mutex::default(),
            early: Mutex::default(),
            family,
        }
    }

    /// Judges a call of `operation` to `target` arriving at `now`: counted as early when a
    /// promise for `target` is still running. Promises that are over are forgotten.
    pub fn arrive(&self, operation: &str, target: &str, now: Instant) {
        let mut ends = lock(&self.ends);
        ends.retain(|_, (end, _)| *end > now);
        let Some((end, throttled_at)) = ends.get(target).copied() else {
            return;
        };
        let early_by = end.saturating_duration_since(now);
        drop(ends);
        self.family
            .get_or_create(&EarlyLabels {
                cloud: self.cloud.clone(),
                operation: operation.to_string(),
            })
            .inc();
        let mut early = lock(&self.early);
        if early.len() < KEPT {
            early.push(EarlyCall {
                operation: operation.to_string(),
                target: target.to_string(),
                early_by_millis: u64::try_from(early_by.as_millis()).unwrap_or(u64::MAX),
                throttled_at_millis: unix_millis(throttled_at),
                at_millis: unix_millis(std::time::SystemTime::now()),
            });
        }
    }

    /// Records that `target` was answered at `now` with `Retry-After: after`.
    pub fn promise(&self, target: &str, now: Instant, after: Duration) {
        let end = now + after;
        let mut ends = lock(&self.ends);
        let slot = ends
            .entry(target.to_string())
            .or_insert((end, std::time::SystemTime::now()));
        if end > slot.0 {
            *slot = (end, std::time::SystemTime::now());
        }
    }

    /// Every early call kept.
    pub fn early(&self) -> Vec<EarlyCall> {
        lock(&self.early).clone()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Each critical section leaves the value whole; a panic elsewhere cannot corrupt it.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_call_before_the_retry_after_is_over_is_early_and_one_after_is_not() {
        let mut registry = Registry::default();
        let p = Promises::new("eks", &mut registry);
        let t0 = Instant::now();
        p.promise("GET /clusters/a", t0, Duration::from_secs(2));
        p.arrive(
            "DescribeCluster",
            "GET /clusters/b",
            t0 + Duration::from_millis(10),
        );
        p.arrive(
            "DescribeCluster",
            "GET /clusters/a",
            t0 + Duration::from_millis(1500),
        );
        p.arrive(
            "DescribeCluster",
            "GET /clusters/a",
            t0 + Duration::from_millis(2000),
        );
        p.arrive(
            "DescribeCluster",
            "GET /clusters/a",
            t0 + Duration::from_millis(2500),
        );
        let early = p.early();
        assert_eq!(early.len(), 1, "{early:?}");
        assert_eq!(early[0].target, "GET /clusters/a");
        assert_eq!(early[0].early_by_millis, 500);
        assert!(
            early[0].throttled_at_millis > 0 && early[0].at_millis >= early[0].throttled_at_millis
        );
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(
                r#"emulator_early_calls_total{cloud="eks",operation="DescribeCluster"} 1"#
            ),
            "{text}"
        );
    }

    #[test]
    fn a_second_429_extends_the_promise_and_never_shortens_it() {
        let mut registry = Registry::default();
        let p = Promises::new("gke", &mut registry);
        let t0 = Instant::now();
        p.promise("GET /x", t0, Duration::from_secs(5));
        p.promise(
            "GET /x",
            t0 + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        p.arrive("Get", "GET /x", t0 + Duration::from_secs(4));
        assert_eq!(p.early().len(), 1);
    }
}
