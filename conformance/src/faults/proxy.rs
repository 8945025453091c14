//! A proxy between one provider process and kube-apiserver: it counts the provider's writes by
//! resource, and answers a seeded share of its updates `409 Conflict` without forwarding them.
//!
//! The provider talks plain HTTP to it on loopback; it forwards to kube-apiserver over TLS with
//! the credentials of the kubeconfig the provider would otherwise have used (its
//! ServiceAccount's token, or the admin's), dropping whatever `Authorization` the provider sent.
//! Watches stream through unchanged, so a kube-apiserver restart still ends them.
//!
//! What it judges with: writes per replica (a standby that writes is acting without the Lease),
//! writes while a settled cluster is watched (a provider that hot-loops on refused writes moves
//! no resourceVersion but keeps writing), and how many conflicts it injected.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::json;

use super::plan::Rng;

/// What a proxy has seen; shared with its server task.
#[derive(Debug)]
pub struct ProxyStats {
    /// Conflicts to inject per thousand eligible updates.
    conflict_permille: AtomicU32,
    rng: Mutex<Rng>,
    writes: Mutex<BTreeMap<String, u64>>,
    conflicts: AtomicU64,
    errors: AtomicU64,
}

/// Writes by `"<METHOD> <resource>"`, e.g. `"PATCH eksclusters.infrastructure.cluster.x-k8s.io/status"`.
pub type Writes = BTreeMap<String, u64>;

impl ProxyStats {
    fn new(seed: u64) -> Self {
        Self {
            conflict_permille: AtomicU32::new(0),
            rng: Mutex::new(Rng::new(seed)),
            writes: Mutex::default(),
            conflicts: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Every write forwarded or refused so far.
    pub fn writes(&self) -> Writes {
        self.writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Conflicts injected so far.
    pub fn conflicts(&self) -> u64 {
        self.conflicts.load(Ordering::Relaxed)
    }

    /// Requests that could not be forwarded (kube-apiserver down, a reset connection).
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Sets the share of updates answered 409 (0.0 stops it).
    pub fn set_conflict_rate(&self, rate: f64) {
        let permille = (rate.clamp(0.0, 1.0) * 1000.0).round() as u32;
        self.conflict_permille.store(permille, Ordering::Relaxed);
    }

    fn count(&self, key: String) {
        *self
            .writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(key)
            .or_default() += 1;
    }

    fn should_conflict(&self) -> bool {
        let permille = self.conflict_permille.load(Ordering::Relaxed);
        if permille == 0 {
            return false;
        }
        let roll = self
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .between(0, 999);
        roll < u64::from(permille)
    }
}

/// Writes in `now` that were not yet in `before`, leader-election Leases left out (a standby
/// tries to take the Lease, and every replica renews it).
pub fn writes_since(before: &Writes, now: &Writes) -> Writes {
    now.iter()
        .filter(|(k, _)| !k.ends_with(" leases.coordination.k8s.io"))
        .filter_map(|(k, n)| {
            let d = n.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

/// Writes summed.
pub fn total(writes: &Writes) -> u64 {
    writes.values().sum()
}

/// `"PATCH x.g/status: 3, PUT y: 1"`.
pub fn describe(writes: &Writes) -> String {
    writes
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A running proxy.
pub struct ApiProxy {
    url: String,
    stats: Arc<ProxyStats>,
    task: tokio::task::JoinHandle<()>,
}

impl ApiProxy {
    /// Starts a proxy on a free loopback port, forwarding with `upstream`'s credentials.
    ///
    /// # Errors
    /// When `upstream` cannot be read or no port can be bound.
    pub async fn start(upstream: &std::path::Path, seed: u64) -> Result<Self> {
        let kubeconfig = kube::config::Kubeconfig::read_from(upstream)
            .with_context(|| format!("reading {}", upstream.display()))?;
        let config = kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .context("a client config from the provider's kubeconfig")?;
        let client = kube::Client::try_from(config).context("the proxy's client")?;
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .context("binding the proxy")?;
        let url = format!("http://{}", listener.local_addr()?);
        let stats = Arc::new(ProxyStats::new(seed));
        let shared = stats.clone();
        let app = axum::Router::new().fallback(move |request: Request<Body>| {
            let client = client.clone();
            let stats = shared.clone();
            async move { forward(&client, &stats, request).await }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { url, stats, task })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its counters.
    pub fn stats(&self) -> Arc<ProxyStats> {
        self.stats.clone()
    }
}

impl Drop for ApiProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The resource a request path names: `secrets`, `leases.coordination.k8s.io`,
/// `eksclusters.infrastructure.cluster.x-k8s.io/status`; and the object's name, if any.
pub fn resource_of(path: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return (path.to_string(), None),
    };
    let rest = match rest {
        ["namespaces", _ns, resource, tail @ ..] => {
            let mut r = vec![*resource];
            r.extend(tail);
            r
        }
        other => other.to_vec(),
    };
    let Some(resource) = rest.first() else {
        return (path.to_string(), None);
    };
    let mut key = if group.is_empty() {
        (*resource).to_string()
    } else {
        format!("{resource}.{group}")
    };
    if let Some(sub) = rest.get(2) {
        key.push('/');
        key.push_str(sub);
    }
    (key, rest.get(1).map(|n| (*n).to_string()))
}

async fn forward(
    client: &kube::Client,
    stats: &ProxyStats,
    request: Request<Body>,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let write = matches!(
        method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    if write {
        let (resource, name) = resource_of(&path);
        let updatable = matches!(method, Method::PUT | Method::PATCH)
            && resource != "leases.coordination.k8s.io";
        stats.count(format!("{method} {resource}"));
        if updatable && stats.should_conflict() {
            stats.conflicts.fetch_add(1, Ordering::Relaxed);
            return conflict(&resource, name.as_deref());
        }
    }
    let bytes = match axum::body::to_bytes(body, 64 << 20).await {
        Ok(b) => b,
        Err(e) => {
            return failure(
                StatusCode::BAD_REQUEST,
                &format!("reading the request: {e}"),
            );
        }
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or_else(|| path.clone(), |p| p.as_str().to_string());
    let mut upstream = Request::builder().method(method).uri(path_and_query);
    for (name, value) in &parts.headers {
        if keep_header(name) {
            upstream = upstream.header(name, value);
        }
    }
    let upstream = match upstream.body(kube::client::Body::from(bytes.to_vec())) {
        Ok(r) => r,
        Err(e) => return failure(StatusCode::BAD_REQUEST, &format!("the request: {e}")),
    };
    match client.send(upstream).await {
        Ok(answer) => {
            let (parts, body) = answer.into_parts();
            let mut out = Response::new(Body::new(body));
            *out.status_mut() = parts.status;
            copy_headers(&parts.headers, out.headers_mut());
            out
        }
        Err(e) => {
            stats.errors.fetch_add(1, Ordering::Relaxed);
            failure(
                StatusCode::BAD_GATEWAY,
                &format!("the conformance proxy could not reach kube-apiserver: {e}"),
            )
        }
    }
}

fn keep_header(name: &header::HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "authorization" | "host" | "connection" | "content-length" | "transfer-encoding"
    )
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if !matches!(
            name.as_str(),
            "connection" | "transfer-encoding" | "content-length"
        ) {
            to.append(name, value.clone());
        }
    }
}

/// kube-apiserver's answer to an update of a stale object.
fn conflict(resource: &str, name: Option<&str>) -> Response<Body> {
    // kube-apiserver names the resource without its subresource.
    let resource = resource.split('/').next().unwrap_or(resource);
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    let name = name.unwrap_or("");
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
        ),
        "reason": "Conflict",
        "details": {"name": name, "group": group, "kind": plural},
        "code": 409
    });
    json_answer(StatusCode::CONFLICT, &status)
}

fn failure(code: StatusCode, message: &str) -> Response<Body> {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "ServiceUnavailable",
        "code": code.as_u16()
    });
    json_answer(code, &status)
}

fn json_answer(code: StatusCode, body: &serde_json::Value) -> Response<Body> {
    let mut out = Response::new(Body::from(body.to_string()));
    *out.status_mut() = code;
    out.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_resource_and_object() {
        assert_eq!(
            resource_of("/api/v1/namespaces/ns/secrets/c-kubeconfig"),
            ("secrets".into(), Some("c-kubeconfig".into()))
        );
        assert_eq!(
            resource_of("/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"),
            ("leases.coordination.k8s.io".into(), Some("l".into()))
        );
        assert_eq!(
            resource_of(
                "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/ns/eksclusters/c/status"
            ),
            (
                "eksclusters.infrastructure.cluster.x-k8s.io/status".into(),
                Some("c".into())
            )
        );
        assert_eq!(
            resource_of("/api/v1/namespaces/ns/events"),
            ("events".into(), None)
        );
        assert_eq!(
            resource_of("/api/v1/namespaces/ns"),
            ("namespaces".into(), Some("ns".into()))
        );
    }

    #[test]
    fn standby_writes_leave_leases_out_and_count_only_what_is_new() {
        let before: Writes = [("PATCH secrets".to_string(), 2)].into();
        let now: Writes = [
            ("PATCH secrets".to_string(), 3),
            ("PUT leases.coordination.k8s.io".to_string(), 9),
            ("POST events".to_string(), 1),
        ]
        .into();
        let new = writes_since(&before, &now);
        assert_eq!(total(&new), 2);
        assert_eq!(describe(&new), "PATCH secrets: 1, POST events: 1");
        assert!(writes_since(&now, &now).is_empty());
    }

    #[test]
    fn the_conflict_share_follows_the_rate_and_the_seed() {
        let stats = ProxyStats::new(7);
        assert!(!(0..100).any(|_| stats.should_conflict()), "0 by default");
        stats.set_conflict_rate(0.2);
        let hits = (0..10_000).filter(|_| stats.should_conflict()).count();
        assert!((1_700..2_300).contains(&hits), "{hits}");
        let again = ProxyStats::new(7);
        again.set_conflict_rate(0.2);
        let stats = ProxyStats::new(7);
        stats.set_conflict_rate(0.2);
        let a: Vec<bool> = (0..50).map(|_| stats.should_conflict()).collect();
        let b: Vec<bool> = (0..50).map(|_| again.should_conflict()).collect();
        assert_eq!(a, b, "the same seed injects the same conflicts");
    }
}
