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

use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::cloud_error::CloudError;

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
    waits: Arc<Waits>,
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
                waits: Arc::default(),
                leader,
            }),
        }
    }

    /// The handle providers use to count their cloud calls.
    pub fn cloud_calls(&self) -> CloudCalls {
        CloudCalls {
            family: self.inner.cloud_calls.clone(),
            waits: self.inner.waits.clone(),
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

/// Counts a provider's cloud API calls; cheap to clone, shared by all passes.
#[derive(Clone)]
pub struct CloudCalls {
    family: Family<CloudCallLabels, Counter>,
    waits: Arc<Waits>,
}

/// Until when each request target must not be called again (a 429's `Retry-After`), and
/// after that, until when it is called one request at a time.
///
/// A `Retry-After` speaks for the request it answered (RFC 9110 §10.2.3), so the wait is kept
/// per service and target — what the provider names in [`CloudCalls::admit`]: the method and
/// path of a REST call (ARM, OCI; EKS's operation and resource names, which are its path), the
/// action of a Query API whose every request is `POST /` (EC2), the method of a client that
/// hides its paths (Google's). The wait holds every pass of the process, those in flight
/// included: a control plane's read answered 429 and a pool's read of the same managed cluster a
/// moment later were both early when it was kept per object (the fault suite's AKS run). It does
/// not hold the rest of the service: with a tenth of the answers 429, a hold per service kept
/// every EKS call of a hundred clusters waiting most of the time (P9 at 100 clusters: 6.2× the
/// fault-free time). Under an account's throttling another target answers 429 in its turn and is
/// held in its turn; the engine's hold of the whole cluster ([`crate::backoff::Holds`]) keeps the
/// throttled cluster's other objects away meanwhile.
///
/// For as long again after its `Retry-After` (the wait's *careful* time) the target takes one
/// call at a time: the calls the wait held are all let go at its end, and several sent together
/// are several in flight when the next 429 comes, which reach the cloud after it (P9 at 100
/// clusters: two or three creates a run, each within 15 ms of the create they followed). A call
/// waits its turn behind the one admitted before it, never past the careful time and never
/// longer than [`TURN_WAIT`] (its pass is then requeued, sending nothing); a 429 answered
/// meanwhile holds it like any other. Calls admitted before the 429 hold no turn (they
/// were sent before anyone knew).
///
/// Times are tokio's ([`tokio::time::Instant`]), the wall clock's outside tests.
#[derive(Debug, Default)]
struct Waits(std::sync::Mutex<std::collections::HashMap<String, Wait>>);

/// What a 429 left on one target.
#[derive(Debug)]
struct Wait {
    /// Until when nothing is sent.
    until: Instant,
    /// Until when one call at a time is sent.
    careful_until: Instant,
    /// The turn of the call in flight while careful.
    turn: Arc<tokio::sync::Semaphore>,
}

/// A target in its careful time: whose turn it is, and until when.
struct Careful {
    turn: Arc<tokio::sync::Semaphore>,
    until: Instant,
}

impl Waits {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Wait>> {
        // Each critical section leaves the map whole; a panic elsewhere cannot corrupt it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `Err(left)` while `key` is held; `Ok(Some(_))` while it is careful.
    fn check(&self, key: &str) -> Result<Option<Careful>, Duration> {
        let now = Instant::now();
        match self.lock().get(key) {
            Some(wait) if wait.until > now => Err(wait.until - now),
            Some(wait) if wait.careful_until > now => Ok(Some(Careful {
                turn: wait.turn.clone(),
                until: wait.careful_until,
            })),
            _ => Ok(None),
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
            turn: Arc::new(tokio::sync::Semaphore::new(1)),
        });
        wait.until = wait.until.max(until);
        wait.careful_until = wait.careful_until.max(careful_until);
    }

    /// Waits for `key`'s turn while it is careful: the turn, or `None` once it is not careful
    /// (any more). Never longer than [`TURN_WAIT`]: the pass is then requeued for the rest of
    /// the careful time rather than hold its worker behind a slow call.
    async fn turn(&self, key: &str) -> Result<Option<OwnedSemaphorePermit>, NotYet> {
        let give_up = Instant::now() + TURN_WAIT;
        let mut turn: Option<OwnedSemaphorePermit> = None;
        loop {
            let Some(careful) = self.check(key).map_err(NotYet::Held)? else {
                return Ok(None);
            };
            // The turn of this careful time (a wait dropped and kept again has a new one).
            if let Some(permit) = turn.take()
                && Arc::ptr_eq(permit.semaphore(), &careful.turn)
            {
                return Ok(Some(permit));
            }
            let deadline = careful.until.min(give_up);
            match tokio::time::timeout_at(deadline, careful.turn.acquire_owned()).await {
                // Checked again above: the call before may have been answered 429.
                Ok(Ok(permit)) => turn = Some(permit),
                // Still careful, and waited long enough.
                Err(_elapsed) if deadline < careful.until => {
                    return Err(NotYet::Busy(careful.until - Instant::now()));
                }
                // The careful time is over: checked again above.
                Err(_elapsed) => {}
                // Never closed; were it, the call goes without a turn.
                Ok(Err(_closed)) => return Ok(None),
            }
        }
    }
}

/// The longest a call waits for its turn while its target is careful: longer than a cloud
/// usually takes to answer, short enough not to hold a worker.
const TURN_WAIT: Duration = Duration::from_secs(2);

/// Why a call is not sent now, and for how long.
enum NotYet {
    /// The target's `Retry-After` is not over.
    Held(Duration),
    /// The call before it, in the careful time after a `Retry-After`, has not been answered.
    Busy(Duration),
}

impl fmt::Debug for CloudCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CloudCalls").finish_non_exhaustive()
    }
}

impl CloudCalls {
    /// A handle that counts into a private registry; for unit tests of provider code.
    pub fn detached() -> Self {
        Metrics::new("test").cloud_calls()
    }

    /// Before a call to `target` of `service`: `Err(Held)` with the time left, sending nothing,
    /// while the target's last `Retry-After` is not over; else the admitted call, whose
    /// [`Admitted::answered`] counts the answer and keeps its `Retry-After`. For as long again
    /// after a `Retry-After`, a call first waits for the answer to the call admitted before it
    /// ([`Waits`]). The provider names the target as its cloud scopes a `Retry-After`:
    /// `"GET /subscriptions/…/managedClusters/a"`, `"DescribeCluster a"`, `"CreateTags"`.
    ///
    /// # Errors
    /// [`CloudError::Held`] while the wait lasts.
    pub async fn admit(
        &self,
        service: &'static str,
        target: impl Into<String>,
    ) -> Result<Admitted<'_>, CloudError> {
        let target = target.into();
        let key = format!("{service} {target}");
        match self.waits.turn(&key).await {
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
                    "{service} asked to wait (Retry-After) before {target} a moment ago, and the call sent since has not been answered after {}s; trying again in {:.1}s",
                    TURN_WAIT.as_secs(),
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
    /// one at a time for as long again ([`Waits`]). The next call's turn comes after this.
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
        let (control_plane, pool) = (m.cloud_calls(), m.cloud_calls());
        let cluster = "GET /subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/a";
        // A pool's call sent before the 429 below came back.
        let in_flight = pool.admit("arm", cluster).await.expect("nothing held yet");
        control_plane
            .admit("arm", cluster)
            .await
            .expect("nothing held yet")
            .answered(
                "ManagedClusters_Get",
                Err(&throttled(Duration::from_secs(2))),
            );
        // Another pass's handle is held too, and told how long is left and before what.
        match pool.admit("arm", cluster).await {
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
        assert!(pool.admit("arm", other_cluster).await.is_ok());
        assert!(pool.admit("compute", cluster).await.is_ok());
        // The call in flight answered later with a shorter Retry-After does not shorten the
        // wait; one without any holds nothing.
        in_flight.answered(
            "ManagedClusters_Get",
            Err(&throttled(Duration::from_millis(1))),
        );
        assert!(pool.admit("arm", cluster).await.is_err());
        pool.admit("oci", "GET /clusters/x")
            .await
            .expect("not held")
            .answered(
                "GetCluster",
                Err(&CloudError::Throttled {
                    message: "slow down".into(),
                    retry_after: None,
                }),
            );
        assert!(pool.admit("oci", "GET /clusters/x").await.is_ok());
        assert_eq!(
            pool.count("arm", "ManagedClusters_Get", CallOutcome::Throttled),
            2
        );
        // A wait that is over holds nothing, and is not kept.
        pool.admit("eks", "DescribeCluster a")
            .await
            .expect("not held")
            .answered("DescribeCluster", Err(&throttled(Duration::ZERO)));
        assert!(pool.admit("eks", "DescribeCluster a").await.is_ok());
        let kept = m.cloud_calls().waits.0.lock().unwrap().len();
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
            .await
            .unwrap()
            .answered(target, Err(&throttled(after)));
        tokio::time::sleep(after + into).await;
    }

    // Tokio's clock, paused: it moves only when every task waits, so no step races a timer.
    #[tokio::test(start_paused = true)]
    async fn after_a_retry_after_a_target_is_called_one_at_a_time_for_as_long_again() {
        let calls = CloudCalls::detached();
        let create = "CreateCluster";
        let after = Duration::from_millis(400);
        careful_after(&calls, create, after, Duration::from_millis(20)).await;
        // The Retry-After is over: one call goes, the next waits for its answer.
        let first = calls.admit("eks", create).await.expect("the wait is over");
        let second = tokio::time::timeout(Duration::from_millis(50), calls.admit("eks", create));
        assert!(
            second.await.is_err(),
            "a second call went while one was in flight"
        );
        // Another target is not careful.
        let other = calls.admit("eks", "DescribeCluster a").await.unwrap();
        let other_too = calls.admit("eks", "DescribeCluster a").await.unwrap();
        other.answered("DescribeCluster", Ok(()));
        other_too.answered("DescribeCluster", Ok(()));
        // Answered: the next call goes.
        first.answered(create, Ok(()));
        let second = calls.admit("eks", create).await.expect("its turn");
        // A call waiting its turn behind one answered 429 is held, not sent.
        let calls_too = calls.clone();
        let waiting = tokio::spawn(async move {
            calls_too
                .admit("eks", create)
                .await
                .map(|sent| sent.answered(create, Ok(())))
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        second.answered(create, Err(&throttled(after)));
        match waiting.await.unwrap() {
            Err(CloudError::Held { left, .. }) => assert_eq!(left, after),
            other => panic!("not held: {other:?}"),
        }
        // A call in flight that is never answered delays the next only to the careful time's end.
        tokio::time::sleep(after + Duration::from_millis(20)).await;
        let unanswered = calls.admit("eks", create).await.expect("the wait is over");
        let started = Instant::now();
        let next = calls.admit("eks", create).await.expect("careful time over");
        let waited = started.elapsed();
        assert!(
            waited >= after - Duration::from_millis(20) && waited < after,
            "{waited:?}"
        );
        // Once the wait and as long again are over, calls go together.
        let together = tokio::time::timeout(Duration::from_millis(1), calls.admit("eks", create))
            .await
            .expect("not careful any more")
            .unwrap();
        for sent in [unanswered, next, together] {
            sent.answered(create, Ok(()));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_waits_its_turn_no_longer_than_a_moment_and_is_then_requeued() {
        let calls = CloudCalls::detached();
        let create = "CreateCluster";
        let after = Duration::from_secs(10);
        careful_after(&calls, create, after, Duration::from_secs(1)).await;
        // A call in flight for long: the next waits TURN_WAIT, then its pass is requeued for
        // the rest of the careful time (20 s from the 429), sending nothing.
        let slow = calls.admit("eks", create).await.expect("the wait is over");
        let started = Instant::now();
        match calls.admit("eks", create).await {
            Err(CloudError::Held { left, message }) => {
                let waited = started.elapsed();
                assert!(
                    waited >= TURN_WAIT && waited < TURN_WAIT + Duration::from_millis(5),
                    "{waited:?}"
                );
                let rest = after * 2 - after - Duration::from_secs(1) - TURN_WAIT;
                assert!(
                    left <= rest && left > rest - Duration::from_millis(5),
                    "{left:?}"
                );
                assert!(
                    message.contains(create) && message.contains("not been answered"),
                    "{message}"
                );
            }
            Ok(_) => panic!("sent beside a call in flight"),
            Err(other) => panic!("{other:?}"),
        }
        slow.answered(create, Ok(()));
        assert!(calls.admit("eks", create).await.is_ok(), "its turn now");
    }

    #[test]
    fn encodes_every_metric_with_the_provider_label() {
        let m = Metrics::new("eks");
        m.reconcile_finished("EKSControlPlane", Duration::from_millis(20));
        m.reconcile_failed("EKSControlPlane", "throttled");
        m.cloud_calls()
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
        let calls = CloudCalls::detached();
        calls.record("gke", "GetCluster", CallOutcome::Success);
        calls.record(String::from("gke"), "GetCluster", CallOutcome::Success);
        assert_eq!(calls.count("gke", "GetCluster", CallOutcome::Success), 2);
        assert_eq!(calls.count("gke", "GetCluster", CallOutcome::Error), 0);
    }
}
