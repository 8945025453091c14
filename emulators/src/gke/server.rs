//! Running the GKE emulator on a listener, in-process (tests) or from the `emulator` binary.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{Gke, GkeConfig, api};
use crate::kit::{Kit, Timing};

/// A running GKE emulator.
#[derive(Debug)]
pub struct GkeServer {
    url: String,
    gke: Arc<Gke>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl GkeServer {
    /// `http://127.0.0.1:<port>`: the endpoint of both APIs (`with_endpoint`) and, with
    /// `/token`, the token URI.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token URI service-account keys must name.
    pub fn token_uri(&self) -> String {
        format!("{}/token", self.url)
    }

    /// The emulated service and its state.
    pub fn gke(&self) -> &Arc<Gke> {
        &self.gke
    }

    /// The kit: faults, call counters, delays.
    pub fn kit(&self) -> &Arc<Kit> {
        self.gke.kit()
    }

    /// Stops serving (in-flight requests finish, for at most 5 s), the ticker, and every workload
    /// API server.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
        self.gke.shutdown().await;
    }
}

/// Serves GKE on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read or a trusted key is unreadable.
pub async fn serve_gke(
    config: GkeConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<GkeServer> {
    let addr = listener
        .local_addr()
        .context("reading the listener's address")?;
    let kit = Arc::new(Kit::new("gke", timing));
    let gke = Arc::new(Gke::new(config, kit)?);
    gke.spawn_ticker();
    let app = api::router(gke.clone());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    let url = if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    };
    Ok(GkeServer {
        url,
        gke,
        stop: Some(stop),
        task,
    })
}
