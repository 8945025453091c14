//! Per-operation call counters, exposed as Prometheus metrics and as JSON for tests.

use std::collections::BTreeMap;
use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// Labels of `emulator_calls_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// The cloud (`eks`, `aks`, …).
    pub cloud: String,
    /// The operation, as the cloud names it.
    pub operation: String,
    /// `ok`, `error` (the cloud answered with an error), `fault` (injected), or `gone` (the
    /// cloud answered that the resource is deleted).
    pub outcome: String,
}

/// How a call ended, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Served.
    Ok,
    /// Answered with the cloud's error (validation, not found, conflict, …).
    Error,
    /// An injected fault.
    Fault,
    /// Served, answering that the resource is deleted: for clouds that keep a deleted resource
    /// readable for a while in a deleted state (OCI's DELETED and TERMINATED), what a not-found
    /// is elsewhere.
    Gone,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Fault => "fault",
            Outcome::Gone => "gone",
        }
    }
}

/// Labels of `emulator_delayed_calls_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DelayLabels {
    /// The cloud.
    pub cloud: String,
    /// The operation.
    pub operation: String,
}

/// The counters of one emulator.
#[derive(Debug)]
pub struct Calls {
    cloud: String,
    family: Family<CallLabels, Counter>,
    delayed: Family<DelayLabels, Counter>,
    totals: Mutex<BTreeMap<String, BTreeMap<&'static str, u64>>>,
}

impl Calls {
    /// Counters for `cloud`, registered in `registry`.
    pub fn new(cloud: &str, registry: &mut Registry) -> Self {
        let family = Family::<CallLabels, Counter>::default();
        registry.register(
            "emulator_calls",
            "Calls received by the cloud emulator, by operation and outcome",
            family.clone(),
        );
        let delayed = Family::<DelayLabels, Counter>::default();
        registry.register(
            "emulator_delayed_calls",
            "Calls held back by an injected latency before being served",
            delayed.clone(),
        );
        Self {
            cloud: cloud.to_string(),
            family,
            delayed,
            totals: Mutex::default(),
        }
    }

    /// Counts a call held back by an injected latency (it is counted again when served).
    pub fn record_delay(&self, operation: &str) {
        self.delayed
            .get_or_create(&DelayLabels {
                cloud: self.cloud.clone(),
                operation: operation.to_string(),
            })
            .inc();
    }

    /// Counts one call.
    pub fn record(&self, operation: &str, outcome: Outcome) {
        self.family
            .get_or_create(&CallLabels {
                cloud: self.cloud.clone(),
                operation: operation.to_string(),
                outcome: outcome.as_str().to_string(),
            })
            .inc();
        let mut totals = self
            .totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *totals
            .entry(operation.to_string())
            .or_default()
            .entry(outcome.as_str())
            .or_default() += 1;
    }

    /// Every operation's counts by outcome (`{"CreateCluster": {"ok": 1}}`).
    pub fn snapshot(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Forgets the JSON totals (Prometheus counters keep counting, as counters must).
    pub fn reset(&self) {
        self.totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}
