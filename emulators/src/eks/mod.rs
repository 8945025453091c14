//! The Amazon EKS API (REST-JSON), as the AWS SDK for Rust sends it.
//!
//! [`Eks`] holds the emulated account's clusters, nodegroups, add-ons, access entries and identity
//! provider configs; [`router`] serves the EKS REST paths next to the kit's control endpoint;
//! [`Eks::spawn_ticker`] moves resources through their lifecycles and performs the side effects
//! (workload API servers, EC2 instances in moto, Kubernetes Nodes) outside of any request.
//! [`server::serve_eks`] runs all of it on a listener.

mod access;
mod addons;
pub mod api;
pub mod catalog;
mod clusters;
pub mod ec2;
pub mod error;
mod nodegroups;
pub mod outside;
pub mod server;
pub mod sigv4;
pub mod state;
mod tags;
mod ticker;
pub mod token;
pub mod verifier;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::kit::idempotency::Tokens;
use crate::kit::workload::WorkloadServers;
use crate::kit::{self, Kit, Timing};

pub use api::router;
pub use error::EksError;
pub use server::{ServerHandle, serve_eks};
pub use state::State;

/// How the emulated EKS is set up.
#[derive(Debug, Clone)]
pub struct EksConfig {
    /// The region it serves (`us-west-2`).
    pub region: String,
    /// The account its ARNs name (`123456789012`).
    pub account_id: String,
    /// Access key ids and their secrets. Requests must be SigV4-signed with one of them; empty
    /// means any caller is accepted unchecked.
    pub credentials: Vec<(String, String)>,
    /// Real workload API servers backing the clusters, if wanted.
    pub workload: Option<Arc<WorkloadServers>>,
    /// moto's EC2 endpoint (`http://127.0.0.1:5000`), where node instances are launched.
    pub ec2_endpoint: Option<String>,
    /// How long a cluster accepts an EKS token after its `X-Amz-Date`: [`token::TOKEN_LIFETIME`]
    /// (15 minutes) as on EKS, shorter to watch a provider refresh its tokens in a test.
    pub token_lifetime: jiff::SignedDuration,
    /// Clusters the account may have in the region ([`CLUSTER_QUOTA`] on EKS); a create
    /// beyond it fails with `ResourceLimitExceededException`, as on EKS.
    pub cluster_quota: usize,
    /// STS endpoints (`http://127.0.0.1:5000`) tokens may be presigned for besides AWS's hosts
    /// (a client whose STS is moto presigns for moto).
    pub sts_endpoints: Vec<String>,
}

/// EKS's default quota of clusters per region and account.
pub const CLUSTER_QUOTA: usize = 100;

impl EksConfig {
    /// A configuration for `region` and `account_id` with no credentials check, no workload
    /// servers, no moto and EKS's token lifetime.
    pub fn new(region: &str, account_id: &str) -> Self {
        Self {
            region: region.to_string(),
            account_id: account_id.to_string(),
            credentials: Vec::new(),
            workload: None,
            ec2_endpoint: None,
            token_lifetime: token::TOKEN_LIFETIME,
            cluster_quota: CLUSTER_QUOTA,
            sts_endpoints: Vec::new(),
        }
    }
}

/// The emulated EKS service.
#[derive(Debug)]
pub struct Eks {
    config: EksConfig,
    kit: Arc<Kit>,
    state: Mutex<State>,
    tokens: Tokens,
    ec2: Option<ec2::Ec2>,
    node_sync: tokio::sync::Mutex<()>,
    ticker: kit::Ticker,
}

impl Eks {
    /// An empty account.
    pub fn new(config: EksConfig, kit: Arc<Kit>) -> Self {
        let ec2 = config.ec2_endpoint.as_deref().map(|endpoint| {
            let key = config
                .credentials
                .first()
                .map(|(k, _)| k.as_str())
                .unwrap_or("AKIAEMULATOREKS00000");
            ec2::Ec2::new(endpoint, &config.region, key)
        });
        Self {
            config,
            kit,
            state: Mutex::new(State::default()),
            tokens: Tokens::default(),
            ec2,
            node_sync: tokio::sync::Mutex::new(()),
            ticker: kit::Ticker::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EksConfig {
        &self.config
    }

    /// The kit (faults, counters, delays).
    pub fn kit(&self) -> &Arc<Kit> {
        &self.kit
    }

    /// The delays in force.
    pub fn timing(&self) -> Timing {
        self.kit.timing()
    }

    /// Every resource of the account: clusters, node groups and add-ons, then (with moto) the
    /// EC2 resources moto holds; for `GET /_emulator/inventory`.
    ///
    /// # Errors
    /// When moto cannot be read.
    pub async fn inventory(&self) -> Result<Vec<kit::InventoryItem>, ec2::Ec2Error> {
        let mut out = Vec::new();
        {
            let st = self.lock();
            for c in st.clusters.values() {
                out.push(kit::InventoryItem::new(
                    "eks:cluster",
                    c.arn.clone(),
                    c.name.clone(),
                    "",
                    &c.tags,
                    c.life.state().as_str().to_string(),
                ));
                for n in c.nodegroups.values() {
                    out.push(kit::InventoryItem::new(
                        "eks:nodegroup",
                        n.arn.clone(),
                        n.name.clone(),
                        &c.name,
                        &n.tags,
                        n.life.state().as_str().to_string(),
                    ));
                }
                for a in c.addons.values() {
                    out.push(kit::InventoryItem::new(
                        "eks:addon",
                        a.arn.clone(),
                        a.name.clone(),
                        &c.name,
                        &a.tags,
                        a.life.state().as_str().to_string(),
                    ));
                }
            }
        }
        if let Some(ec2) = &self.ec2 {
            out.extend(ec2.inventory().await?);
        }
        Ok(out)
    }

    /// Every node instance that exists (shutting-down ones included), for the control endpoint.
    pub fn instances(&self) -> Vec<kit::NodeInstance> {
        let st = self.lock();
        st.clusters
            .values()
            .flat_map(|c| {
                c.nodegroups.values().flat_map(move |n| {
                    n.instances.iter().map(move |i| kit::NodeInstance {
                        provider_id: i.provider_id(),
                        state: if i.shutting_down {
                            kit::InstanceState::ShuttingDown
                        } else {
                            kit::InstanceState::Running
                        },
                        pool: format!("{}/{}", c.name, n.name),
                    })
                })
            })
            .collect()
    }

    /// Read access to the state, for tests and diagnostics.
    pub fn with_state<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.lock())
    }

    /// The secret of an access key id.
    pub fn secret_of(&self, access_key_id: &str) -> Option<String> {
        self.config
            .credentials
            .iter()
            .find(|(k, _)| k == access_key_id)
            .map(|(_, s)| s.clone())
    }

    /// Starts the background ticker (every 100 ms) that completes due transitions and runs their
    /// side effects. It stops when the `Eks` is dropped or [`Eks::shutdown`] runs.
    pub fn spawn_ticker(self: &Arc<Self>) {
        self.ticker.start(self, |service| service.tick());
    }

    /// Stops the ticker and every workload API server.
    pub async fn shutdown(&self) {
        self.ticker.stop();
        if let Some(w) = &self.config.workload {
            w.shutdown().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation leaves the state consistent before it can panic, so a poisoned lock is
        // still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn arn(&self, resource: &str) -> String {
        format!(
            "arn:aws:eks:{}:{}:{resource}",
            self.config.region, self.config.account_id
        )
    }
}

/// Now, as epoch seconds with millisecond precision (how restJson1 carries timestamps).
pub fn epoch_now() -> f64 {
    jiff::Timestamp::now().as_millisecond() as f64 / 1000.0
}

/// A random version-4-shaped UUID.
pub fn uuid() -> String {
    let h = crate::kit::random_hex(16);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

/// A request id for `x-amzn-RequestId`.
pub fn request_id() -> String {
    uuid()
}

/// `n` random hex digits, upper case.
fn upper_hex(n: usize) -> String {
    let mut h = crate::kit::random_hex(n.div_ceil(2));
    h.truncate(n);
    h.to_ascii_uppercase()
}

/// `n` random hex digits, lower case.
fn lower_hex(n: usize) -> String {
    let mut h = crate::kit::random_hex(n.div_ceil(2));
    h.truncate(n);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_their_aws_shapes() {
        let u = uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(u.matches('-').count(), 4);
        assert_eq!(upper_hex(32).len(), 32);
        assert!(
            upper_hex(32)
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
        assert_eq!(lower_hex(17).len(), 17);
    }
}
