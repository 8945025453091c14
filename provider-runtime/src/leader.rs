//! Leader election on a `coordination.k8s.io` Lease (kube-lease-manager).
//!
//! The controllers run only while this process holds the lease. When the lease is lost they are
//! stopped and the operator returns an error, so the process exits non-zero and its
//! supervisor restarts it as a fresh candidate (controller-runtime behaves the same way). On a
//! normal shutdown the lease is released so a standby takes over at once.

use std::future::Future;
use std::time::Duration;

use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;

use crate::health::{Health, LeaderState};
use crate::metrics::Metrics;
use crate::shutdown::Stop;

/// How long a lease stays valid after its last renewal.
pub const LEASE_DURATION_SECONDS: u64 = 15;
/// How long before expiry the holder renews.
pub const LEASE_GRACE_SECONDS: u64 = 5;

/// Where the in-cluster service account states the pod's namespace.
const POD_NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// Where the lease lives and who we are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This candidate's identity (unique per process).
    pub identity: String,
}

impl LeaseConfig {
    /// Resolves defaults: namespace from the flag, else the pod's namespace file, else the
    /// client's default namespace; name from the flag, else `<provider>-provider-leader`.
    pub fn resolve(
        provider: &str,
        namespace_flag: Option<&str>,
        name_flag: Option<&str>,
        client_default_namespace: &str,
    ) -> Self {
        let namespace = namespace_flag
            .map(str::to_owned)
            .or_else(|| {
                std::fs::read_to_string(POD_NAMESPACE_FILE)
                    .ok()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| client_default_namespace.to_owned());
        let name = name_flag
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{provider}-provider-leader"));
        Self {
            namespace,
            name,
            identity: identity(),
        }
    }
}

/// `<hostname>_<random>`: readable in the Lease, unique across restarts.
fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_owned())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let random = (crate::pacing::retry::jitter() * (u64::MAX as f64)) as u64;
    format!("{host}_{random:016x}")
}

/// Runs `work` while this process holds the lease; see the module docs.
///
/// `work` receives a stop signal triggered on shutdown or on loss of the lease, and must
/// return once it fires.
pub(crate) async fn run_while_leading<W, F>(
    client: kube::Client,
    config: LeaseConfig,
    health: Health,
    metrics: Metrics,
    stop: Stop,
    work: W,
) -> anyhow::Result<()>
where
    W: FnOnce(Stop) -> F,
    F: Future<Output = anyhow::Result<()>>,
{
    health.set_leader(LeaderState::Starting);
    metrics.set_leader(false);
    let mut retry = Duration::from_secs(1);
    let manager = loop {
        let built = LeaseManagerBuilder::new(client.clone(), &config.name)
            .with_namespace(&config.namespace)
            .with_identity(&config.identity)
            .with_duration(LEASE_DURATION_SECONDS)
            .with_grace(LEASE_GRACE_SECONDS)
            .build();
        tokio::select! {
            result = built => match result {
                Ok(manager) => break manager,
                Err(error) => {
                    tracing::warn!(%error, lease = %config.name, namespace = %config.namespace, "cannot use the leader lease; retrying");
                }
            },
            () = stop.wait() => return Ok(()),
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            () = stop.wait() => return Ok(()),
        }
        retry = (retry * 2).min(Duration::from_secs(30));
    };
    let (mut leading, lease_task) = manager.watch().await;
    health.set_leader(LeaderState::Standby);
    tracing::info!(identity = %config.identity, lease = %config.name, namespace = %config.namespace, "waiting for the leader lease");

    let outcome = async {
        // Stand by until we lead.
        loop {
            if *leading.borrow_and_update() {
                break;
            }
            tokio::select! {
                changed = leading.changed() => if changed.is_err() {
                    anyhow::bail!("the leader-election task ended");
                },
                () = stop.wait() => return Ok(()),
            }
        }
        tracing::info!(identity = %config.identity, "became leader; starting controllers");
        health.set_leader(LeaderState::Leading);
        metrics.set_leader(true);

        let lost = Stop::new();
        let work_stop = stop.or(lost.wait());
        let work = work(work_stop);
        tokio::pin!(work);
        tokio::select! {
            result = &mut work => result,
            () = lease_lost(&mut leading) => {
                tracing::error!("lost the leader lease; stopping controllers");
                lost.trigger();
                metrics.set_leader(false);
                let _ = work.await;
                anyhow::bail!("lost the leader lease")
            }
        }
    }
    .await;

    metrics.set_leader(false);
    // Closing the channel makes the lease task release the lease before it ends.
    drop(leading);
    match tokio::time::timeout(Duration::from_secs(5), lease_task).await {
        Ok(Ok(Ok(_))) => tracing::info!("leader lease released"),
        Ok(Ok(Err(error))) => tracing::warn!(%error, "could not release the leader lease"),
        Ok(Err(error)) => tracing::warn!(%error, "leader-election task failed"),
        Err(_) => tracing::warn!("timed out releasing the leader lease"),
    }
    outcome
}

async fn lease_lost(leading: &mut watch::Receiver<bool>) {
    loop {
        if leading.changed().await.is_err() || !*leading.borrow_and_update() {
            return;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_defaults() {
        let c = LeaseConfig::resolve("eks", Some("capi-system"), Some("my-lease"), "default");
        assert_eq!(c.namespace, "capi-system");
        assert_eq!(c.name, "my-lease");
    }

    #[test]
    fn out_of_cluster_defaults_use_the_client_namespace_and_the_provider_name() {
        let c = LeaseConfig::resolve("gke", None, None, "from-kubeconfig");
        if !std::path::Path::new(POD_NAMESPACE_FILE).exists() {
            assert_eq!(c.namespace, "from-kubeconfig");
        }
        assert_eq!(c.name, "gke-provider-leader");
    }

    #[test]
    fn identities_are_unique_per_candidate() {
        assert_ne!(identity(), identity());
    }
}
