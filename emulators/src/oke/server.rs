//! Running the OKE emulator on a listener, in-process (tests) or from the `emulator` binary.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{Oke, OkeConfig, api};
use crate::kit::{Kit, Timing};

/// A running OKE emulator.
#[derive(Debug)]
pub struct OkeServer {
    url: String,
    oke: Arc<Oke>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl OkeServer {
    /// `http://127.0.0.1:<port>`: the Container Engine and Core Services endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The emulated service and its state.
    pub fn oke(&self) -> &Arc<Oke> {
        &self.oke
    }

    /// The kit: faults, call counters, delays.
    pub fn kit(&self) -> &Arc<Kit> {
        self.oke.kit()
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
        self.oke.shutdown().await;
    }
}

/// Serves OKE on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read.
pub async fn serve_oke(
    config: OkeConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<OkeServer> {
    let addr = listener
        .local_addr()
        .context("reading the listener's address")?;
    let kit = Arc::new(Kit::new("oke", timing));
    let oke = Arc::new(Oke::new(config, kit));
    oke.spawn_ticker();
    let app = api::router(oke.clone());
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
    Ok(OkeServer {
        url,
        oke,
        stop: Some(stop),
        task,
    })
}
