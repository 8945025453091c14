//! Google Kubernetes Engine (API v1, REST/JSON) and the Compute Engine subset its users need, as
//! Google's Rust clients (`google-cloud-container-v1`, `google-cloud-compute-v1`) send them.
//!
//! [`Gke`] holds the emulated projects' clusters, node pools (as managed instance groups of
//! instances), operations, networks, subnetworks and routers; [`api::router`] serves
//! `/v1/projects/*/locations/*/…`, `/compute/v1/projects/*/…` and the OAuth token endpoint
//! `/token` next to the kit's control endpoint; the ticker ([`Gke::spawn_ticker`]) moves
//! operations PENDING → RUNNING → DONE and applies what they do, outside of any request.
//! [`server::serve_gke`] runs all of it on a listener.

pub mod api;
pub mod auth;
pub mod catalog;
mod compute;
mod container;
pub mod error;
pub mod grpc;
pub mod outside;
mod render;
pub mod server;
pub mod state;
mod ticker;
mod validate;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use crate::kit::workload::WorkloadServers;
use crate::kit::{self, Kit, TokenVerifier, UserInfo};

pub use auth::ServiceAccountKey;
pub use error::GoogleError;
pub use server::{GkeServer, serve_gke};
pub use state::State;

/// How the emulated Google Cloud is set up.
#[derive(Debug, Clone)]
pub struct GkeConfig {
    /// Trusted service-account keys. Requests must carry a token of one of them, for its own
    /// project; none means any caller and any project is accepted unchecked.
    pub keys: Vec<ServiceAccountKey>,
    /// How long an access token from the token endpoint lives (Google: an hour).
    pub token_lifetime: Duration,
    /// Real workload API servers backing the clusters, if wanted.
    pub workload: Option<Arc<WorkloadServers>>,
    /// Clusters a project may have per location ([`CLUSTER_QUOTA`]).
    pub cluster_quota: usize,
    /// vCPUs a project may run per region (Compute Engine's `CPUS` quota).
    pub cpu_quota: u32,
}

/// GKE's limit of clusters per project and location.
pub const CLUSTER_QUOTA: usize = 50;

/// The emulated regional `CPUS` quota.
pub const CPU_QUOTA: u32 = 96;

impl Default for GkeConfig {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            token_lifetime: Duration::from_secs(3600),
            workload: None,
            cluster_quota: CLUSTER_QUOTA,
            cpu_quota: CPU_QUOTA,
        }
    }
}

/// The emulated service.
#[derive(Debug)]
pub struct Gke {
    config: GkeConfig,
    kit: Arc<Kit>,
    auth: auth::Auth,
    state: Mutex<State>,
    node_sync: tokio::sync::Mutex<()>,
    ticker: kit::Ticker,
}

impl Gke {
    /// Empty projects.
    ///
    /// # Errors
    /// When a trusted key cannot be read.
    pub fn new(config: GkeConfig, kit: Arc<Kit>) -> anyhow::Result<Self> {
        let auth = auth::Auth::new(&config.keys, config.token_lifetime)?;
        Ok(Self {
            config,
            kit,
            auth,
            state: Mutex::new(State::default()),
            node_sync: tokio::sync::Mutex::new(()),
            ticker: kit::Ticker::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &GkeConfig {
        &self.config
    }

    /// The kit (faults, counters, delays).
    pub fn kit(&self) -> &Arc<Kit> {
        &self.kit
    }

    /// Read access to the state, for tests and diagnostics.
    pub fn with_state<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.lock())
    }

    /// Every node instance that exists (leaving ones included), for the control endpoint.
    pub fn instances(&self) -> Vec<kit::NodeInstance> {
        let st = self.lock();
        st.clusters
            .values()
            .flat_map(|c| {
                c.pools.iter().flat_map(move |p| {
                    p.instances.iter().map(move |i| kit::NodeInstance {
                        provider_id: provider_id(&c.project, &i.zone, &i.name),
                        state: if i.leaving_at.is_some() {
                            kit::InstanceState::ShuttingDown
                        } else {
                            kit::InstanceState::Running
                        },
                        pool: format!("{}/{}", c.name, p.name),
                    })
                })
            })
            .collect()
    }

    /// Every resource the emulated projects hold, for the fault suite's inventory: clusters
    /// (owner from their labels), their node pools and instances (their cluster's owner), and
    /// the Compute networks, subnetworks and routers (owner from the `capi-managed-*=` word of
    /// their description, where the provider writes it).
    pub fn inventory(&self) -> Vec<kit::InventoryItem> {
        use std::collections::BTreeMap;
        let st = self.lock();
        let mut out = Vec::new();
        for c in st.clusters.values() {
            let cluster = kit::InventoryItem::new(
                "container:cluster",
                c.id.clone(),
                c.name.clone(),
                &c.project,
                &c.labels,
                c.status.as_str().to_string(),
            );
            let owner: BTreeMap<String, String> = cluster
                .owner
                .iter()
                .map(|o| ("capi-managed-gke".to_string(), o.clone()))
                .collect();
            for p in &c.pools {
                out.push(kit::InventoryItem::new(
                    "container:node-pool",
                    format!("{}/{}", c.id, p.name),
                    p.name.clone(),
                    &c.name,
                    &owner,
                    p.status.as_str().to_string(),
                ));
                // Instances are named by GKE, not by the provider: listed without a name, so
                // they count for leaks but not as duplicates or as what must come back.
                for i in &p.instances {
                    out.push(kit::InventoryItem::new(
                        "compute:instance",
                        format!("{}/{}", i.zone, i.name),
                        String::new(),
                        &format!("{}/{}", c.name, p.name),
                        &owner,
                        if i.leaving_at.is_some() {
                            "STOPPING"
                        } else {
                            "RUNNING"
                        }
                        .to_string(),
                    ));
                }
            }
            out.push(cluster);
        }
        for (kind, map) in [
            ("compute:network", &st.networks),
            ("compute:subnetwork", &st.subnetworks),
            ("compute:router", &st.routers),
        ] {
            for (key, v) in map {
                let tags: BTreeMap<String, String> = v["description"]
                    .as_str()
                    .unwrap_or_default()
                    .split_whitespace()
                    .filter_map(|w| w.split_once('='))
                    .filter(|(k, _)| k.starts_with("capi-managed-"))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                out.push(kit::InventoryItem::new(
                    kind,
                    v["id"].as_str().map_or_else(|| key.clone(), str::to_string),
                    v["name"].as_str().unwrap_or_default().to_string(),
                    "",
                    &tags,
                    String::new(),
                ));
            }
        }
        out
    }

    /// Starts the background ticker (every 100 ms). It stops when the `Gke` is dropped or
    /// [`Gke::shutdown`] runs.
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
        // Every mutation leaves the state consistent before it can panic.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Who a workload API server's caller is: an access token issued for an account of the
    /// cluster's project (without trusted keys, any non-empty token is the cluster's admin).
    fn authenticate_workload(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        let project = self
            .lock()
            .clusters
            .values()
            .find(|c| c.workload_id == cluster_id)
            .map(|c| c.project.clone())
            .ok_or("no such cluster")?;
        if !self.auth.enabled() {
            if token.is_empty() {
                return Err("no token".into());
            }
            return Ok(UserInfo {
                username: "kubernetes-admin".into(),
                groups: vec!["system:masters".into()],
            });
        }
        let principal = self.auth.access_token(token)?;
        if principal.project != project {
            return Err(format!(
                "the token's account belongs to project {:?}, not the cluster's",
                principal.project
            ));
        }
        Ok(UserInfo {
            username: principal.email,
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        })
    }
}

/// The token webhook's view of [`Gke`].
pub struct GkeTokenVerifier(pub Weak<Gke>);

impl TokenVerifier for GkeTokenVerifier {
    fn verify(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        self.0
            .upgrade()
            .ok_or("the GKE emulator has stopped")?
            .authenticate_workload(cluster_id, token)
    }
}

/// The instances' view of [`Gke`].
pub struct GkeInstances(pub Weak<Gke>);

impl kit::NodeInstances for GkeInstances {
    fn node_instances(&self) -> Vec<kit::NodeInstance> {
        self.0.upgrade().map(|g| g.instances()).unwrap_or_default()
    }
}

/// `gce://<project>/<zone>/<instance>`, what GKE's kubelets write into `spec.providerID`.
pub fn provider_id(project: &str, zone: &str, instance: &str) -> String {
    format!("gce://{project}/{zone}/{instance}")
}

/// A project's number (GKE's self links of operations use it), fixed per project id.
pub fn project_number(project: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, project.as_bytes());
    let n = digest
        .as_ref()
        .iter()
        .take(8)
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    format!("{}", 100_000_000_000 + n % 900_000_000_000)
}

/// Now, RFC 3339 (`2026-12-01T18:00:00.123456Z`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

/// A random numeric id, as Compute gives resources.
pub fn numeric_id() -> u64 {
    let hex = kit::random_hex(8);
    u64::from_str_radix(&hex, 16).unwrap_or(1) >> 1
}

/// `n` random lowercase hex digits.
fn hex(n: usize) -> String {
    let mut h = kit::random_hex(n.div_ceil(2));
    h.truncate(n);
    h
}
