//! Oracle Container Engine for Kubernetes (OKE, API 20180222) and the Core Services subset
//! (API 20160918) an infra-cluster-owned network needs, REST/JSON as OCI's SDKs send them, every
//! request authenticated by its OCI HTTP signature.
//!
//! [`Oke`] holds the emulated tenancy's compartments, networks, clusters, node pools (each node
//! a compute instance) and work requests; [`api::router`] serves them next to the kit's control
//! endpoint; the ticker ([`Oke::spawn_ticker`]) moves work requests ACCEPTED → IN_PROGRESS →
//! SUCCEEDED / FAILED and what they change outside of any request. [`server::serve_oke`] runs all
//! of it on a listener.

pub mod api;
pub mod catalog;
mod containerengine;
pub mod core;
pub mod error;
pub mod outside;
pub mod server;
pub mod signature;
pub mod state;
mod ticker;
pub mod token;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use crate::kit::idempotency::Tokens;
use crate::kit::workload::WorkloadServers;
use crate::kit::{self, Kit, TokenVerifier, UserInfo};

pub use server::{OkeServer, serve_oke};
pub use signature::{KeyRing, PublicKey};
pub use state::State;

/// The default region.
pub const REGION: &str = "us-ashburn-1";

/// The default tenancy.
pub const TENANCY: &str =
    "ocid1.tenancy.oc1..aaaaaaaaemulatedtenancy00000000000000000000000000000000";

/// The compartment the emulator makes besides the tenancy's root one.
pub const COMPARTMENT: &str =
    "ocid1.compartment.oc1..aaaaaaaaemulatedcompartment000000000000000000000000000000";

/// Clusters the tenancy may have in the region (OKE's default service limit).
pub const CLUSTER_LIMIT: usize = 15;

/// OCPUs the tenancy's node instances may use in the region.
pub const OCPU_LIMIT: u32 = 100;

/// How the emulated tenancy is set up.
#[derive(Debug, Clone)]
pub struct OkeConfig {
    /// The region served (`us-ashburn-1`).
    pub region: String,
    /// The tenancy (its root compartment).
    pub tenancy: String,
    /// Compartments besides the root one.
    pub compartments: Vec<String>,
    /// The API signing keys uploaded; with none, a request's signature is checked in form
    /// (signed headers, date, body digest) but against no key.
    pub keys: Vec<PublicKey>,
    /// How long a cluster accepts a token of `oci ce cluster generate-token` after its date.
    pub token_lifetime: Duration,
    /// Real workload API servers backing the clusters, if wanted.
    pub workload: Option<Arc<WorkloadServers>>,
    /// Clusters the tenancy may have.
    pub cluster_limit: usize,
    /// OCPUs node instances may use.
    pub ocpu_limit: u32,
}

impl Default for OkeConfig {
    fn default() -> Self {
        Self {
            region: REGION.into(),
            tenancy: TENANCY.into(),
            compartments: vec![COMPARTMENT.into()],
            keys: Vec::new(),
            token_lifetime: token::LIFETIME,
            workload: None,
            cluster_limit: CLUSTER_LIMIT,
            ocpu_limit: OCPU_LIMIT,
        }
    }
}

/// The emulated service.
#[derive(Debug)]
pub struct Oke {
    config: OkeConfig,
    kit: Arc<Kit>,
    keys: KeyRing,
    tokens: Tokens,
    state: Mutex<State>,
    node_sync: tokio::sync::Mutex<()>,
    ticker: kit::Ticker,
}

impl Oke {
    /// An empty tenancy.
    pub fn new(config: OkeConfig, kit: Arc<Kit>) -> Self {
        Self {
            keys: KeyRing::new(config.keys.clone()),
            config,
            kit,
            tokens: Tokens::default(),
            state: Mutex::new(State::default()),
            node_sync: tokio::sync::Mutex::new(()),
            ticker: kit::Ticker::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &OkeConfig {
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

    /// How many clusters, node pools and network resources the tenancy still holds: not yet
    /// DELETED or TERMINATED (a deletion under way still holds).
    pub fn held(&self) -> usize {
        self.with_state(|st| {
            st.core
                .values()
                .filter(|r| r.state() != "TERMINATED")
                .count()
                + st.clusters
                    .values()
                    .filter(|c| c.life != state::Life::Deleted)
                    .count()
                + st.pools
                    .values()
                    .filter(|p| p.life != state::Life::Deleted)
                    .count()
        })
    }

    /// The region's three-letter key (`iad`).
    pub fn region_key(&self) -> &'static str {
        catalog::region_key(&self.config.region)
    }

    /// The tenancy's availability domains in the region.
    pub fn availability_domains(&self) -> Vec<String> {
        catalog::availability_domains(&self.config.region)
    }

    /// A new OCID of `kind` in the region (`ocid1.cluster.oc1.iad.aaaaaaaa…`).
    pub fn ocid(&self, kind: &str) -> String {
        format!("ocid1.{kind}.oc1.{}.{}", self.region_key(), unique())
    }

    /// Every node instance that exists (leaving ones included), for the control endpoint.
    pub fn instances(&self) -> Vec<kit::NodeInstance> {
        let st = self.lock();
        st.pools
            .values()
            .flat_map(|p| {
                let cluster = st
                    .clusters
                    .get(&p.cluster)
                    .map_or_else(|| p.cluster.clone(), |c| c.name.clone());
                p.nodes
                    .iter()
                    .map(move |n| kit::NodeInstance {
                        provider_id: provider_id(&n.id),
                        state: if n.leaving_at.is_some() {
                            kit::InstanceState::ShuttingDown
                        } else {
                            kit::InstanceState::Running
                        },
                        pool: format!("{cluster}/{}", p.name),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every resource the emulated tenancy holds, for the fault suite's inventory: clusters,
    /// node pools and the Core Services resources (owner from their freeform tags), and node
    /// instances (their pool's owner, else their cluster's).
    pub fn inventory(&self) -> Vec<kit::InventoryItem> {
        let st = self.lock();
        let mut out = Vec::new();
        for c in st.clusters.values() {
            out.push(kit::InventoryItem::new(
                "containerengine:cluster",
                c.id.clone(),
                c.name.clone(),
                &c.compartment,
                &tags_of(&c.freeform_tags),
                c.life.as_str().to_string(),
            ));
        }
        for p in st.pools.values() {
            let cluster = st.clusters.get(&p.cluster);
            let mut tags = tags_of(&p.freeform_tags);
            if !tags.keys().any(|k| k.starts_with("capi-managed-")) {
                tags = cluster
                    .map(|c| tags_of(&c.freeform_tags))
                    .unwrap_or_default();
            }
            let cluster_name = cluster.map_or_else(|| p.cluster.clone(), |c| c.name.clone());
            let pool = kit::InventoryItem::new(
                "containerengine:node-pool",
                p.id.clone(),
                p.name.clone(),
                &cluster_name,
                &tags,
                p.life.as_str().to_string(),
            );
            let owner: std::collections::BTreeMap<String, String> = pool
                .owner
                .iter()
                .map(|o| ("capi-managed-oke".to_string(), o.clone()))
                .collect();
            // Instances are named by OKE, not by the provider: listed without a name, so they
            // count for leaks but not as duplicates or as what must come back.
            for n in &p.nodes {
                out.push(kit::InventoryItem::new(
                    "compute:instance",
                    n.id.clone(),
                    String::new(),
                    &format!("{cluster_name}/{}", p.name),
                    &owner,
                    if n.leaving_at.is_some() {
                        "TERMINATING"
                    } else {
                        "ACTIVE"
                    }
                    .to_string(),
                ));
            }
            out.push(pool);
        }
        for r in st.core.values() {
            let parent = match r.kind {
                state::CoreKind::Vcn => r.compartment(),
                _ => r.vcn(),
            };
            out.push(kit::InventoryItem::new(
                &format!("core:{}", r.kind.ocid_type()),
                r.id().to_string(),
                r.body["displayName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                parent,
                &tags_of(&r.body["freeformTags"]),
                r.state().to_string(),
            ));
        }
        out
    }

    /// Starts the background ticker (every 100 ms); it stops when the `Oke` is dropped or
    /// [`Oke::shutdown`] runs.
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

    /// Who a workload API server's caller is: a token of `oci ce cluster generate-token` for
    /// this cluster, signed with an uploaded key of the tenancy and not older than the token
    /// lifetime. The cluster's creator is its admin (`system:masters`); other users of the
    /// tenancy are only authenticated (OCI IAM policies and Kubernetes RBAC decide the rest).
    fn authenticate_workload(&self, workload_id: &str, bearer: &str) -> Result<UserInfo, String> {
        let (cluster_id, creator) = self
            .lock()
            .clusters
            .values()
            .find(|c| c.workload_id == workload_id && !c.going())
            .map(|c| (c.id.clone(), c.creator.clone()))
            .ok_or("no such cluster")?;
        let caller = token::verify(
            &self.keys,
            bearer,
            &cluster_id,
            jiff::Timestamp::now(),
            self.config.token_lifetime,
        )?;
        if !self.keys.is_empty() && caller.tenancy != self.config.tenancy {
            return Err("the token was signed with a key of another tenancy".into());
        }
        let admin = caller.user == creator || creator.is_empty();
        Ok(UserInfo {
            username: caller.user,
            groups: if admin {
                vec!["system:masters".into(), "system:authenticated".into()]
            } else {
                vec!["system:authenticated".into()]
            },
        })
    }
}

/// The token webhook's view of [`Oke`].
pub struct OkeTokenVerifier(pub Weak<Oke>);

impl TokenVerifier for OkeTokenVerifier {
    fn verify(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        self.0
            .upgrade()
            .ok_or("the OKE emulator has stopped")?
            .authenticate_workload(cluster_id, token)
    }
}

/// The instances' view of [`Oke`].
pub struct OkeInstances(pub Weak<Oke>);

impl kit::NodeInstances for OkeInstances {
    fn node_instances(&self) -> Vec<kit::NodeInstance> {
        self.0.upgrade().map(|o| o.instances()).unwrap_or_default()
    }
}

/// Freeform tags (a JSON object of strings) as a map.
fn tags_of(tags: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    tags.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// What OKE's cloud controller writes into `Node.spec.providerID`: the instance's OCID.
pub fn provider_id(instance: &str) -> String {
    instance.to_string()
}

/// A new OCID of a global resource (`ocid1.user.oc1..aaaaaaaa…`: no region).
pub fn global_ocid(kind: &str) -> String {
    format!("ocid1.{kind}.oc1..{}", unique())
}

/// Makes an API signing key as `openssl genpkey` does (ring cannot generate RSA keys): the
/// private key (PKCS#8 PEM) and its public half, whose fingerprint OCI shows.
///
/// # Errors
/// When `openssl` is missing or fails.
pub fn generate_api_key(key_id_prefix: &str) -> anyhow::Result<(String, PublicKey)> {
    let pem = crate::kit::rsa_private_key_pem()?;
    let mut key = PublicKey::from_pem("", &pem)?;
    key.key_id = format!("{key_id_prefix}/{}", key.fingerprint());
    Ok((pem, key))
}

/// Now, RFC 3339 with milliseconds, as OCI writes times.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A new ETag.
pub fn new_etag() -> String {
    kit::random_hex(16)
}

/// The unique part of an OCID: `aaaaaaaa` and 52 base32 characters.
fn unique() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let hex = kit::random_hex(52);
    let tail: String = hex
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let n = u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("00"), 16).unwrap_or(0);
            char::from(ALPHABET[usize::from(n) % ALPHABET.len()])
        })
        .chain(std::iter::repeat('a'))
        .take(52)
        .collect();
    format!("aaaaaaaa{tail}")
}
