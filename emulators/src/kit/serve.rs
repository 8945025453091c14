//! A cloud emulator served on a listener, the same for every cloud: its URL, the emulated
//! service, and stopping both in order (in-flight requests finish, for at most 5 s; then the
//! service's ticker and workload API servers).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::Kit;

/// What the serving needs of an emulated cloud.
pub trait Emulated: Send + Sync + 'static {
    /// Its kit: faults, call counters, delays.
    fn kit(&self) -> &Arc<Kit>;
    /// Stops its ticker and every workload API server.
    fn shutdown(&self) -> impl Future<Output = ()> + Send;
}

/// A running emulator of the cloud `S`.
#[derive(Debug)]
pub struct Served<S> {
    url: String,
    service: Arc<S>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    front: Option<super::tls::Front>,
}

impl<S: Emulated> Served<S> {
    /// Serves `app` (the routes of `service`) on `listener` from now on.
    ///
    /// # Errors
    /// When the listener's address cannot be read.
    pub fn start(listener: TcpListener, service: Arc<S>, app: Router) -> Result<Self> {
        let addr = listener
            .local_addr()
            .context("reading the listener's address")?;
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
        Ok(Self {
            url,
            service,
            stop: Some(stop),
            task,
            front: None,
        })
    }

    /// Also serves the routes under the cloud's own host names ([`super::tls::Front`]).
    #[must_use]
    pub fn with_front(mut self, front: super::tls::Front) -> Self {
        self.front = Some(front);
        self
    }

    /// The proxy serving the cloud's own host names, if this cloud has one.
    pub fn front(&self) -> Option<&super::tls::Front> {
        self.front.as_ref()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The emulated service and its state.
    pub fn service(&self) -> &Arc<S> {
        &self.service
    }

    /// The kit: faults, call counters, delays.
    pub fn kit(&self) -> &Arc<Kit> {
        self.service.kit()
    }

    /// Stops serving (in-flight requests finish, for at most 5 s), then the service's ticker and
    /// every workload API server.
    pub async fn shutdown(mut self) {
        self.front = None;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
        self.service.shutdown().await;
    }
}
