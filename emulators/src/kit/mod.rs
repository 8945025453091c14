//! The emulator kit shared by every cloud: [`Kit`] counts calls and injects faults per operation,
//! holds the lifecycle delays in force, and serves the control endpoint (`/_emulator/...`) and
//! Prometheus metrics (`/metrics`). A cloud module calls [`Kit::enter`] first in every handler and
//! turns a [`Fault`] into its own error shape.

pub mod calls;
pub mod faults;
pub mod idempotency;
pub mod lifecycle;
pub mod milestones;
pub mod promises;
pub mod serve;
pub mod tls;
pub mod workload;

use std::sync::{Arc, RwLock};

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use prometheus_client::registry::Registry;
use serde::{Deserialize, Serialize};

pub use calls::{Calls, Outcome};
pub use faults::{Fault, FaultRule, Faults};
pub use lifecycle::{Delays, Lifecycle, Timing};
pub use promises::{EarlyCall, Promises};
pub use serve::{Emulated, Served};

/// Who a workload API server's token webhook says the caller is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    /// User name.
    pub username: String,
    /// Groups (e.g. `system:masters` for the cluster creator).
    pub groups: Vec<String>,
}

/// A cloud's check of the bearer tokens its clusters accept (EKS: presigned STS URLs).
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` for the cluster with emulator id `cluster_id`; the error says why not
    /// (never echoing the token).
    fn verify(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String>;
}

/// Where a node instance is in its life, as the control endpoint lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstanceState {
    /// Launched and serving (or booting).
    Running,
    /// Chosen for removal and not yet gone: its Node and provider ID still exist.
    ShuttingDown,
}

/// One node instance of a cloud's node pools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInstance {
    /// What the cloud's kubelet writes into `Node.spec.providerID`.
    #[serde(rename = "providerID")]
    pub provider_id: String,
    /// Its state.
    pub state: InstanceState,
    /// The cluster and pool it belongs to (`<cluster>/<pool>`).
    pub pool: String,
}

/// The node instances that exist, for `GET /_emulator/instances`: an instance that is gone is not
/// listed. The conformance suite reads this (the profile's `instancesUrl`) to judge when a
/// provider ID may leave a pool's list (C51).
pub trait NodeInstances: Send + Sync + 'static {
    /// Every instance that exists, shutting-down ones included.
    fn node_instances(&self) -> Vec<NodeInstance>;
}

/// One cloud resource as `GET /_emulator/inventory` lists it: what a fault test compares with
/// what the provider's objects say (duplicates, leaks, deletions of what was not ours).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryItem {
    /// `<service>:<type>`, e.g. `eks:cluster`, `ec2:subnet`.
    pub kind: String,
    /// The cloud's id (ARN, resource id, OCID).
    pub id: String,
    /// Its name (the `Name` tag where the cloud has no names); empty when it has none.
    pub name: String,
    /// The resource it lives in (a node pool's cluster), empty at the top.
    pub parent: String,
    /// The value of a provider's ownership tag (`capi-managed-<provider>`), if it carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The cloud's state word, where it has one (`ACTIVE`, `available`, `DELETING`).
    pub state: String,
}

impl InventoryItem {
    /// An item whose owner is read from `tags`.
    pub fn new(
        kind: &str,
        id: String,
        name: String,
        parent: &str,
        tags: &std::collections::BTreeMap<String, String>,
        state: String,
    ) -> Self {
        let owner = tags
            .iter()
            .find(|(k, _)| k.starts_with("capi-managed-"))
            .map(|(_, v)| v.clone());
        Self {
            kind: kind.to_string(),
            id,
            name,
            parent: parent.to_string(),
            owner,
            state,
        }
    }
}

/// Shared pieces of one cloud emulator.
#[derive(Debug)]
pub struct Kit {
    cloud: &'static str,
    /// Fault rules.
    pub faults: Faults,
    /// Call counters.
    pub calls: Calls,
    /// The `Retry-After` of every 429 answered, and the calls that did not wait for it.
    pub promises: Promises,
    /// When resources reached a state (the ticker records them).
    pub milestones: milestones::Milestones,
    timing: RwLock<Timing>,
    registry: Registry,
}

impl Kit {
    /// A kit for `cloud` with the given initial delays.
    pub fn new(cloud: &'static str, timing: Timing) -> Self {
        let mut registry = Registry::default();
        let calls = Calls::new(cloud, &mut registry);
        let promises = Promises::new(cloud, &mut registry);
        Self {
            cloud,
            faults: Faults::default(),
            calls,
            promises,
            milestones: milestones::Milestones::default(),
            timing: RwLock::new(timing),
            registry,
        }
    }

    /// The cloud's short name.
    pub fn cloud(&self) -> &'static str {
        self.cloud
    }

    /// The delays in force.
    pub fn timing(&self) -> Timing {
        *self
            .timing
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the delays.
    pub fn set_timing(&self, timing: Timing) {
        *self
            .timing
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = timing;
    }

    /// Starts a call of `operation` to `target` (its method and path, e.g. `GET /clusters/a`):
    /// judges it against the `Retry-After` of earlier 429s to the same target ([`Promises`]),
    /// then applies an injected latency, or returns the injected fault (already counted) for the
    /// cloud to answer with. The caller counts the call's own outcome with [`Kit::finish`].
    pub async fn enter(&self, operation: &str, target: &str) -> Result<(), Fault> {
        let now = std::time::Instant::now();
        self.promises.arrive(operation, target, now);
        match self.faults.pick(operation, random_unit()) {
            None => Ok(()),
            Some(Fault::Latency(delay)) => {
                self.calls.record_delay(operation);
                tokio::time::sleep(delay).await;
                Ok(())
            }
            Some(fault) => {
                if let Fault::Throttle(after) = &fault {
                    // Every cloud's answer says at least one second.
                    let said = (*after).max(std::time::Duration::from_secs(1));
                    self.promises.promise(target, now, said);
                }
                self.calls.record(operation, Outcome::Fault);
                Err(fault)
            }
        }
    }

    /// Counts a served call that answered a deleted resource (OCI's DELETED, TERMINATED).
    pub fn finish_gone(&self, operation: &str) {
        self.calls.record(operation, Outcome::Gone);
    }

    /// Counts a served call.
    pub fn finish(&self, operation: &str, ok: bool) {
        self.calls
            .record(operation, if ok { Outcome::Ok } else { Outcome::Error });
    }

    /// The Prometheus exposition of the counters.
    pub fn metrics_text(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// A cloud's background ticker: calls `tick` on its service every 100 ms (missed ticks wait)
/// until the service is dropped or [`Ticker::stop`] runs; a second start replaces the first.
#[derive(Debug, Default)]
pub struct Ticker {
    handle: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Ticker {
    /// Starts ticking `service` (held weakly, so the ticker never keeps it alive).
    pub fn start<S: Send + Sync + 'static>(&self, service: &Arc<S>, tick: fn(&Arc<S>)) {
        let weak = Arc::downgrade(service);
        let handle = tokio::spawn(async move {
            let mut interval = tokio::time::interval(std::time::Duration::from_millis(100));
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(service) = weak.upgrade() else { break };
                tick(&service);
            }
        });
        if let Some(old) = self.lock().replace(handle) {
            old.abort();
        }
    }

    /// Stops ticking.
    pub fn stop(&self) {
        if let Some(t) = self.lock().take() {
            t.abort();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<tokio::task::JoinHandle<()>>> {
        self.handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A response whose body fails at once: the client gets the status line and headers, then the
/// connection is cut (an injected "dropped connection").
pub fn dropped_connection() -> Response {
    let stream = futures::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::other(
            "connection dropped by fault injection",
        ))
    });
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        header::CONTENT_LENGTH,
        header::HeaderValue::from_static("64"),
    );
    response
}

/// An HTTP client (for moto, the clouds' own APIs, tests). rustls's process-wide provider is
/// set to ring first: built beside Google's clients, reqwest has rustls without a provider of
/// its own and would refuse to build a client otherwise.
pub fn http_client(timeout: std::time::Duration) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// A uniform random number in [0, 1).
pub fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    random_fill(&mut bytes);
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// `application/x-www-form-urlencoded` text (a form body, a URL's query) as its pairs, in
/// order, repeats kept.
pub fn form_pairs(text: &str) -> Vec<(String, String)> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// A form as a map (a repeated name keeps its last value).
pub fn form(text: &str) -> std::collections::HashMap<String, String> {
    form_pairs(text).into_iter().collect()
}

/// A new 2048-bit RSA private key, PKCS#8 PEM (`openssl genpkey`: ring cannot generate RSA
/// keys), for the clouds whose callers sign with one (a GCP service account, an OCI API key).
///
/// # Errors
/// When `openssl` is missing or fails.
pub fn rsa_private_key_pem() -> anyhow::Result<String> {
    use anyhow::Context as _;
    let out = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
        ])
        .output()
        .context("running openssl genpkey (is openssl installed?)")?;
    if !out.status.success() {
        anyhow::bail!(
            "openssl genpkey failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).context("openssl printed PEM")
}

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    random_fill(&mut bytes);
    hex::encode(bytes)
}

fn random_fill(bytes: &mut [u8]) {
    use ring::rand::SecureRandom;
    // The system RNG fails only if the OS has no entropy source; zeros are then still usable ids
    // for an emulator, so the error is deliberately ignored.
    let _ = ring::rand::SystemRandom::new().fill(bytes);
}

#[derive(Clone)]
struct ControlState {
    kit: Arc<Kit>,
    verifier: Arc<dyn TokenVerifier>,
    instances: Arc<dyn NodeInstances>,
}

/// The control endpoint and metrics, merged into each cloud's router:
/// - `GET|POST|DELETE /_emulator/faults` — list, add (a [`FaultRule`]), clear;
/// - `GET|DELETE /_emulator/calls` — counts by operation and outcome, reset;
/// - `GET|PUT /_emulator/timing` — the lifecycle delays ([`Timing`]);
/// - `POST /_emulator/tokenreview/{cluster}` — the token webhook of workload API servers;
/// - `GET /_emulator/instances` — `{"instances": [NodeInstance…]}`;
/// - `GET /_emulator/early` — `{"early": [EarlyCall…]}`, calls sent before their `Retry-After`;
/// - `GET /_emulator/milestones` — `{"milestones": [Milestone…]}`, when resources reached a state;
/// - `GET /metrics` — Prometheus text.
pub fn control_router(
    kit: Arc<Kit>,
    verifier: Arc<dyn TokenVerifier>,
    instances: Arc<dyn NodeInstances>,
) -> Router {
    Router::new()
        .route(
            "/_emulator/faults",
            get(list_faults).post(add_fault).delete(clear_faults),
        )
        .route("/_emulator/calls", get(calls).delete(reset_calls))
        .route("/_emulator/timing", get(get_timing).put(put_timing))
        .route("/_emulator/tokenreview/{cluster}", post(token_review))
        .route("/_emulator/instances", get(list_instances))
        .route("/_emulator/early", get(list_early))
        .route("/_emulator/milestones", get(list_milestones))
        .route("/metrics", get(metrics))
        .with_state(ControlState {
            kit,
            verifier,
            instances,
        })
}

async fn list_faults(State(s): State<ControlState>) -> Json<Vec<FaultRule>> {
    Json(s.kit.faults.rules())
}
async fn add_fault(State(s): State<ControlState>, Json(rule): Json<FaultRule>) -> StatusCode {
    s.kit.faults.add(rule);
    StatusCode::NO_CONTENT
}
async fn clear_faults(State(s): State<ControlState>) -> StatusCode {
    s.kit.faults.clear();
    StatusCode::NO_CONTENT
}
async fn calls(State(s): State<ControlState>) -> impl IntoResponse {
    Json(s.kit.calls.snapshot())
}
async fn reset_calls(State(s): State<ControlState>) -> StatusCode {
    s.kit.calls.reset();
    StatusCode::NO_CONTENT
}
async fn list_instances(State(s): State<ControlState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "instances": s.instances.node_instances() }))
}
async fn list_early(State(s): State<ControlState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "early": s.kit.promises.early() }))
}
async fn list_milestones(State(s): State<ControlState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "milestones": s.kit.milestones.all() }))
}
async fn get_timing(State(s): State<ControlState>) -> Json<Timing> {
    Json(s.kit.timing())
}
async fn put_timing(State(s): State<ControlState>, Json(timing): Json<Timing>) -> StatusCode {
    s.kit.set_timing(timing);
    StatusCode::NO_CONTENT
}
async fn metrics(State(s): State<ControlState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.kit.metrics_text(),
    )
}

/// `authentication.k8s.io/v1` TokenReview, as a kube-apiserver's token webhook sends it.
async fn token_review(
    State(s): State<ControlState>,
    Path(cluster): Path<String>,
    Json(review): Json<serde_json::Value>,
) -> Json<serde_json::Value> {
    let token = review["spec"]["token"].as_str().unwrap_or_default();
    let status = match s.verifier.verify(&cluster, token) {
        Ok(user) => serde_json::json!({
            "authenticated": true,
            "user": { "username": user.username, "groups": user.groups }
        }),
        Err(why) => {
            tracing::info!(cluster, reason = %why, "token review refused");
            serde_json::json!({ "authenticated": false, "error": why })
        }
    };
    Json(serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "status": status
    }))
}
