//! The provider under test, in-process with only the EKSCluster reconciler, and the figures
//! read from its metrics endpoint.

use std::sync::Arc;
use std::time::Duration;

use provider_aws::api::EKSCluster;
use provider_aws::reconcile::cluster;
use provider_aws::scope::Shared;
use provider_runtime::pacing::Pacing;

use crate::support::{self, free_port};

/// A running provider: its stop switch, its task and the port of its metrics.
pub struct Provider {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    /// Where it serves `/metrics`.
    pub metrics_port: u16,
}

impl Provider {
    /// Starts the provider with only the EKSCluster reconciler (poll 1 s, rest 2 s), its metrics
    /// on a free port.
    pub fn start(client: &kube::Client) -> Self {
        let metrics_port = free_port();
        let shared = Arc::new(Shared {
            pacing: Pacing {
                poll: Duration::from_secs(1),
                rest: Duration::from_secs(2),
                ..Shared::default().pacing
            },
            ..Shared::default()
        });
        let (stop, task) = support::spawn_provider(
            client,
            &[
                "--health-probe-bind-address=0".into(),
                format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
            ],
            |operator| operator.controller::<EKSCluster, _>(cluster::reconciler(shared)),
        );
        Provider {
            stop,
            task,
            metrics_port,
        }
    }

    /// Stops the provider and waits for it; fails if it ended with an error.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }

    /// EC2 calls that change something, counted from the provider's metrics.
    pub async fn ec2_writes(&self) -> u64 {
        metric(self.metrics_port, |l| {
            l.starts_with("capi_provider_cloud_calls_total{")
                && l.contains("service=\"ec2\"")
                && !l.contains("operation=\"Describe")
        })
        .await
    }

    /// EC2 Describe calls.
    pub async fn ec2_reads(&self) -> u64 {
        metric(self.metrics_port, |l| {
            l.starts_with("capi_provider_cloud_calls_total{") && l.contains("operation=\"Describe")
        })
        .await
    }

    /// Finished EKSCluster passes.
    pub async fn passes(&self) -> u64 {
        metric(self.metrics_port, |l| {
            l.starts_with("capi_provider_reconciles_total{") && l.contains("kind=\"EKSCluster\"")
        })
        .await
    }
}

/// The body of a plain HTTP GET of `path` on the local `port`.
async fn http_get(port: u16, path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.ok()?;
    let mut buf = String::new();
    stream.read_to_string(&mut buf).await.ok()?;
    Some(buf)
}

/// The sum of the provider's metric series whose line passes `keep`.
async fn metric(port: u16, keep: impl Fn(&str) -> bool) -> u64 {
    let body = http_get(port, "/metrics").await.unwrap();
    body.lines()
        .filter(|l| !l.starts_with('#') && keep(l))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}
