//! Running the EKS emulator on a listener, in-process (tests) or from the `emulator` binary.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{Eks, EksConfig, router};
use crate::kit::{Kit, Timing};

/// A running EKS emulator.
#[derive(Debug)]
pub struct ServerHandle {
    url: String,
    kit: Arc<Kit>,
    eks: Arc<Eks>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl ServerHandle {
    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The kit: faults, call counters, delays.
    pub fn kit(&self) -> &Arc<Kit> {
        &self.kit
    }

    /// The emulated service and its state.
    pub fn eks(&self) -> &Arc<Eks> {
        &self.eks
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
        self.eks.shutdown().await;
    }
}

/// Serves EKS on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read.
pub async fn serve_eks(
    config: EksConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<ServerHandle> {
    let addr = listener
        .local_addr()
        .context("reading the listener's address")?;
    let kit = Arc::new(Kit::new("eks", timing));
    let eks = Arc::new(Eks::new(config, kit.clone()));
    eks.spawn_ticker();
    let app = router(eks.clone());
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
    Ok(ServerHandle {
        url,
        kit,
        eks,
        stop: Some(stop),
        task,
    })
}
