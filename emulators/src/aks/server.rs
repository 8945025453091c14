//! Running the AKS emulator on a listener, in-process (tests) or from the `emulator` binary.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{Aks, AksConfig, api};
use crate::kit::{Kit, Timing};

/// A running AKS emulator.
#[derive(Debug)]
pub struct AksServer {
    url: String,
    aks: Arc<Aks>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl AksServer {
    /// `http://127.0.0.1:<port>`: Azure Resource Manager's endpoint and Entra's authority host.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The tenant's token endpoint, `<url>/<tenant>/oauth2/v2.0/token`.
    pub fn token_url(&self) -> String {
        format!(
            "{}/{}/oauth2/v2.0/token",
            self.url,
            self.aks.config().tenant
        )
    }

    /// The emulated service and its state.
    pub fn aks(&self) -> &Arc<Aks> {
        &self.aks
    }

    /// The kit: faults, call counters, delays.
    pub fn kit(&self) -> &Arc<Kit> {
        self.aks.kit()
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
        self.aks.shutdown().await;
    }
}

/// Serves AKS on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read or the signing key cannot be made.
pub async fn serve_aks(
    config: AksConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<AksServer> {
    let addr = listener
        .local_addr()
        .context("reading the listener's address")?;
    let kit = Arc::new(Kit::new("aks", timing));
    let aks = Arc::new(Aks::new(config, kit)?);
    aks.spawn_ticker();
    let app = api::router(aks.clone());
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
    Ok(AksServer {
        url,
        aks,
        stop: Some(stop),
        task,
    })
}
