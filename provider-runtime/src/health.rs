//! `/healthz`, `/readyz` and `/metrics` over HTTP.
//!
//! `/healthz` answers 200 while the process runs. `/readyz` answers 200 once the start-up check
//! passed (every CRD the provider serves, plus Cluster API's, is installed) and, with leader
//! election on, while the process is either leading or standing by with a working lease client.
//! When the health and metrics addresses are equal, one listener serves all three paths.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::future::BoxFuture;
use futures::{FutureExt, TryFutureExt};
use tokio::net::TcpListener;

use crate::flags::BindAddress;
use crate::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE};

/// Where leader election stands, as `/readyz` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LeaderState {
    /// Leader election is off: the controllers run unconditionally.
    Disabled = 0,
    /// The lease client is not yet working.
    Starting = 1,
    /// This process holds the lease.
    Leading = 2,
    /// Another process holds the lease; this one is ready to take over.
    Standby = 3,
}

impl LeaderState {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Disabled,
            2 => Self::Leading,
            3 => Self::Standby,
            _ => Self::Starting,
        }
    }
}

/// Shared readiness state; cheap to clone.
#[derive(Clone, Debug)]
pub struct Health {
    crds_installed: Arc<AtomicBool>,
    leader: Arc<AtomicU8>,
}

impl Default for Health {
    fn default() -> Self {
        Self::new()
    }
}

impl Health {
    /// Not ready: CRDs unchecked, leader election not started.
    pub fn new() -> Self {
        Self {
            crds_installed: Arc::new(AtomicBool::new(false)),
            leader: Arc::new(AtomicU8::new(LeaderState::Starting as u8)),
        }
    }

    /// Records the outcome of the start-up CRD check.
    pub fn set_crds_installed(&self, installed: bool) {
        self.crds_installed.store(installed, Ordering::Release);
    }

    /// Records the leader-election state.
    pub fn set_leader(&self, state: LeaderState) {
        self.leader.store(state as u8, Ordering::Release);
    }

    /// The current leader-election state.
    pub fn leader(&self) -> LeaderState {
        LeaderState::from_u8(self.leader.load(Ordering::Acquire))
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.crds_installed.load(Ordering::Acquire)
            && matches!(
                self.leader(),
                LeaderState::Disabled | LeaderState::Leading | LeaderState::Standby
            )
    }
}

#[derive(Clone)]
struct AppState {
    health: Health,
    metrics: Metrics,
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(state): State<AppState>) -> Response {
    if state.health.is_ready() {
        (StatusCode::OK, "ok").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    match state.metrics.encode() {
        Ok(body) => ([(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], body).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "encoding failed").into_response(),
    }
}

fn router(health_routes: bool, metrics_route: bool, state: AppState) -> Router {
    let mut router = Router::new();
    if health_routes {
        router = router
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz));
    }
    if metrics_route {
        router = router.route("/metrics", get(metrics));
    }
    router.with_state(state)
}

/// The bound HTTP listeners, ready to serve.
pub struct Servers {
    bound: Vec<(SocketAddr, TcpListener, Router)>,
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Servers")
            .field("addresses", &self.local_addrs())
            .finish()
    }
}

impl Servers {
    /// Binds the health and metrics listeners (one when both addresses are equal; none for
    /// disabled ones). Fails when an address cannot be bound, so a port clash stops start-up.
    pub async fn bind(
        health_addr: BindAddress,
        metrics_addr: BindAddress,
        health: Health,
        metrics: Metrics,
    ) -> std::io::Result<Self> {
        let state = AppState { health, metrics };
        let mut plan: Vec<(SocketAddr, bool, bool)> = Vec::new();
        match (health_addr.addr(), metrics_addr.addr()) {
            (Some(h), Some(m)) if h == m => plan.push((h, true, true)),
            (h, m) => {
                if let Some(h) = h {
                    plan.push((h, true, false));
                }
                if let Some(m) = m {
                    plan.push((m, false, true));
                }
            }
        }
        let mut bound = Vec::with_capacity(plan.len());
        for (addr, health_routes, metrics_route) in plan {
            let listener = TcpListener::bind(addr).await?;
            let local = listener.local_addr()?;
            bound.push((
                local,
                listener,
                router(health_routes, metrics_route, state.clone()),
            ));
        }
        Ok(Self { bound })
    }

    /// The addresses actually bound (a `:0` port resolves to the chosen one).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.bound.iter().map(|(addr, _, _)| *addr).collect()
    }

    /// Serves until `shutdown` resolves; each listener shuts down gracefully.
    pub fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> BoxFuture<'static, std::io::Result<()>> {
        let shutdown = shutdown.shared();
        let servers: Vec<_> = self
            .bound
            .into_iter()
            .map(|(_, listener, router)| {
                axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown.clone())
                    .into_future()
                    .map_ok(|_| ())
            })
            .collect();
        futures::future::try_join_all(servers)
            .map_ok(|_| ())
            .boxed()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await.unwrap();
        let mut buf = String::new();
        stream.read_to_string(&mut buf).await.unwrap();
        let code = buf.split_whitespace().nth(1).unwrap().parse().unwrap();
        (code, buf)
    }

    #[test]
    fn readiness_needs_crds_and_a_working_lease_client() {
        let h = Health::new();
        assert!(!h.is_ready());
        h.set_leader(LeaderState::Disabled);
        assert!(!h.is_ready(), "CRDs not checked yet");
        h.set_crds_installed(true);
        assert!(h.is_ready());
        h.set_leader(LeaderState::Starting);
        assert!(!h.is_ready());
        h.set_leader(LeaderState::Standby);
        assert!(h.is_ready());
        h.set_leader(LeaderState::Leading);
        assert!(h.is_ready());
    }

    #[tokio::test]
    async fn one_listener_serves_all_paths_when_addresses_are_equal() {
        let health = Health::new();
        let addr = BindAddress::Listen("127.0.0.1:0".parse().unwrap());
        // Port 0 twice is "equal" and yields one listener.
        let servers = Servers::bind(addr, addr, health.clone(), Metrics::new("test"))
            .await
            .unwrap();
        let addrs = servers.local_addrs();
        assert_eq!(addrs.len(), 1);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(servers.serve(async move {
            let _ = rx.await;
        }));
        assert_eq!(get(addrs[0], "/healthz").await.0, 200);
        assert_eq!(get(addrs[0], "/readyz").await.0, 503);
        health.set_crds_installed(true);
        health.set_leader(LeaderState::Disabled);
        assert_eq!(get(addrs[0], "/readyz").await.0, 200);
        let (code, body) = get(addrs[0], "/metrics").await;
        assert_eq!(code, 200);
        assert!(body.contains("application/openmetrics-text"), "{body}");
        assert!(body.contains("# EOF"), "{body}");
        tx.send(()).unwrap();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn separate_addresses_get_separate_listeners_and_zero_disables() {
        let local = BindAddress::Listen("127.0.0.1:0".parse().unwrap());
        let servers = Servers::bind(
            local,
            BindAddress::Disabled,
            Health::new(),
            Metrics::new("t"),
        )
        .await
        .unwrap();
        let addrs = servers.local_addrs();
        assert_eq!(addrs.len(), 1);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(servers.serve(async move {
            let _ = rx.await;
        }));
        assert_eq!(get(addrs[0], "/metrics").await.0, 404);
        assert_eq!(get(addrs[0], "/healthz").await.0, 200);
        tx.send(()).unwrap();
        task.await.unwrap().unwrap();

        let m = BindAddress::Listen("127.0.0.1:0".parse().unwrap());
        let h = BindAddress::Listen("[::1]:0".parse().unwrap());
        if let Ok(two) = Servers::bind(h, m, Health::new(), Metrics::new("t")).await {
            assert_eq!(two.local_addrs().len(), 2);
        }
    }
}
