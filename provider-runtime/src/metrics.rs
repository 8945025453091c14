//! Prometheus metrics every provider exposes at `/metrics` (OpenMetrics text).
//!
//! | metric | labels |
//! | --- | --- |
//! | `capi_provider_reconciles_total` | `kind` |
//! | `capi_provider_reconcile_duration_seconds` (histogram) | `kind` |
//! | `capi_provider_reconcile_errors_total` | `kind`, `category` |
//! | `capi_provider_cloud_calls_total` | `service`, `operation`, `outcome` |
//! | `capi_provider_leader` (gauge, 1 while leading or without election) | |
//!
//! Every series also carries the constant label `provider` (e.g. `eks`). Label values are short,
//! bounded names (a kind, an error category, an API operation), never free text.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Content type of the `/metrics` response.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: Cow<'static, str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    kind: Cow<'static, str>,
    category: Cow<'static, str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CloudCallLabels {
    service: Cow<'static, str>,
    operation: Cow<'static, str>,
    outcome: CallOutcome,
}

/// How one cloud API call ended, as counted in `capi_provider_cloud_calls_total`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum CallOutcome {
    /// The call succeeded.
    Success,
    /// The cloud answered "not found" (often an expected answer, e.g. during deletion).
    NotFound,
    /// The cloud throttled the call (HTTP 429 or the cloud's equivalent).
    Throttled,
    /// Any other failure: 4xx, 5xx, timeout, dropped connection.
    Error,
}

impl CallOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::NotFound => "not_found",
            Self::Throttled => "throttled",
            Self::Error => "error",
        }
    }
}

impl EncodeLabelValue for CallOutcome {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), fmt::Error> {
        fmt::Write::write_str(encoder, self.as_str())
    }
}

type HistogramFamily = Family<KindLabels, Histogram, fn() -> Histogram>;

fn reconcile_histogram() -> Histogram {
    // 5 ms .. ~82 s: a pass never waits on the cloud, so anything slower is a problem to see.
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

struct Inner {
    registry: Registry,
    reconciles: Family<KindLabels, Counter>,
    reconcile_duration: HistogramFamily,
    reconcile_errors: Family<ErrorLabels, Counter>,
    cloud_calls: Family<CloudCallLabels, Counter>,
    leader: Gauge,
}

/// The provider's metrics registry; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry whose series carry `provider="<provider>"`.
    pub fn new(provider: &str) -> Self {
        let mut registry = Registry::with_prefix_and_labels(
            "capi_provider",
            [(Cow::Borrowed("provider"), Cow::Owned(provider.to_owned()))].into_iter(),
        );
        let reconciles = Family::<KindLabels, Counter>::default();
        registry.register(
            "reconciles",
            "Reconcile passes run, by kind",
            reconciles.clone(),
        );
        let reconcile_duration =
            HistogramFamily::new_with_constructor(reconcile_histogram as fn() -> Histogram);
        registry.register_with_unit(
            "reconcile_duration",
            "Duration of reconcile passes, by kind",
            prometheus_client::registry::Unit::Seconds,
            reconcile_duration.clone(),
        );
        let reconcile_errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "reconcile_errors",
            "Failed reconcile passes, by kind and error category",
            reconcile_errors.clone(),
        );
        let cloud_calls = Family::<CloudCallLabels, Counter>::default();
        registry.register(
            "cloud_calls",
            "Cloud API calls, by service, operation and outcome",
            cloud_calls.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this process runs the controllers (leading, or leader election off)",
            leader.clone(),
        );
        Self {
            inner: Arc::new(Inner {
                registry,
                reconciles,
                reconcile_duration,
                reconcile_errors,
                cloud_calls,
                leader,
            }),
        }
    }

    /// The counter of cloud calls (`capi_provider_cloud_calls_total`).
    pub fn call_counter(&self) -> CallCounter {
        CallCounter {
            family: self.inner.cloud_calls.clone(),
        }
    }

    /// Records one finished reconcile pass of `kind`.
    pub fn reconcile_finished(&self, kind: &'static str, elapsed: Duration) {
        let labels = KindLabels {
            kind: Cow::Borrowed(kind),
        };
        self.inner.reconciles.get_or_create(&labels).inc();
        self.inner
            .reconcile_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Records one failed reconcile pass of `kind` with the error's short category.
    pub fn reconcile_failed(&self, kind: &'static str, category: &'static str) {
        self.inner
            .reconcile_errors
            .get_or_create(&ErrorLabels {
                kind: Cow::Borrowed(kind),
                category: Cow::Borrowed(category),
            })
            .inc();
    }

    /// Sets the `leader` gauge.
    pub fn set_leader(&self, leading: bool) {
        self.inner.leader.set(i64::from(leading));
    }

    /// The registry in OpenMetrics text (what `/metrics` serves).
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.inner.registry)?;
        Ok(out)
    }
}

/// Counts cloud API calls by service, operation and outcome; cheap to clone.
#[derive(Clone)]
pub struct CallCounter {
    family: Family<CloudCallLabels, Counter>,
}

impl fmt::Debug for CallCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallCounter").finish_non_exhaustive()
    }
}

impl CallCounter {
    /// Counts one call, e.g. `record("eks", "DescribeCluster", CallOutcome::Success)`.
    pub fn record(
        &self,
        service: impl Into<Cow<'static, str>>,
        operation: impl Into<Cow<'static, str>>,
        outcome: CallOutcome,
    ) {
        self.family
            .get_or_create(&CloudCallLabels {
                service: service.into(),
                operation: operation.into(),
                outcome,
            })
            .inc();
    }

    /// How many calls were counted for these labels (for tests and benchmarks).
    pub fn count(
        &self,
        service: &'static str,
        operation: &'static str,
        outcome: CallOutcome,
    ) -> u64 {
        self.family
            .get(&CloudCallLabels {
                service: Cow::Borrowed(service),
                operation: Cow::Borrowed(operation),
                outcome,
            })
            .map(|c| c.get())
            .unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn encodes_every_metric_with_the_provider_label() {
        let m = Metrics::new("eks");
        m.reconcile_finished("EKSControlPlane", Duration::from_millis(20));
        m.reconcile_failed("EKSControlPlane", "throttled");
        m.call_counter()
            .record("eks", "DescribeCluster", CallOutcome::Throttled);
        m.set_leader(true);
        let text = m.encode().unwrap();
        assert!(
            text.contains(
                r#"capi_provider_reconciles_total{provider="eks",kind="EKSControlPlane"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains("capi_provider_reconcile_duration_seconds_bucket{"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"capi_provider_reconcile_errors_total{provider="eks",kind="EKSControlPlane",category="throttled"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"capi_provider_cloud_calls_total{provider="eks",service="eks",operation="DescribeCluster",outcome="throttled"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"capi_provider_leader{provider="eks"} 1"#),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn cloud_call_counts_are_readable_back() {
        let calls = Metrics::new("t").call_counter();
        calls.record("gke", "GetCluster", CallOutcome::Success);
        calls.record(String::from("gke"), "GetCluster", CallOutcome::Success);
        assert_eq!(calls.count("gke", "GetCluster", CallOutcome::Success), 2);
        assert_eq!(calls.count("gke", "GetCluster", CallOutcome::Error), 0);
    }
}
