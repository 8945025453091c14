//! Azure Kubernetes Service behind Azure Resource Manager (REST/JSON, `Microsoft.ContainerService`
//! at api-version 2026-08-01, from Microsoft's published REST API specification), with the
//! `Microsoft.Resources`, `Microsoft.Network` and `Microsoft.Compute` subset its users need and
//! Microsoft Entra ID's token endpoint.
//!
//! [`Aks`] holds the emulated subscription's resource groups, managed clusters (agent pools as
//! scale sets of instances in each cluster's node resource group), virtual networks and
//! asynchronous operations; [`api::router`] serves them next to the kit's control endpoint; the
//! ticker ([`Aks::spawn_ticker`]) completes operations outside of any request.
//! [`server::serve_aks`] runs all of it on a listener.

pub mod api;
pub mod arm;
pub mod catalog;
pub mod entra;
mod managed;
mod network;
pub mod outside;
pub mod server;
pub mod state;
mod ticker;
pub mod validate;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use crate::kit::workload::WorkloadServers;
use crate::kit::{self, Kit, TokenVerifier, UserInfo};

pub use entra::{AKS_SERVER_APP, ARM_RESOURCE, Principal};
pub use server::{AksServer, serve_aks};
pub use state::State;

/// How the emulated Azure is set up.
#[derive(Debug, Clone)]
pub struct AksConfig {
    /// The Entra tenant.
    pub tenant: String,
    /// The one subscription served.
    pub subscription: String,
    /// Service principals that may get tokens; none means any client id gets one.
    pub principals: Vec<Principal>,
    /// How long an Entra token lives (Entra: 60–90 minutes).
    pub token_lifetime: Duration,
    /// Real workload API servers backing the clusters, if wanted.
    pub workload: Option<Arc<WorkloadServers>>,
    /// vCPUs the subscription may run per location ("Total Regional vCPUs").
    pub vcpu_quota: u32,
    /// Whether ARM's request buckets answer 429 when empty (else they only count).
    pub throttle: bool,
}

/// The emulated regional vCPU quota.
pub const VCPU_QUOTA: u32 = 100;

/// The default tenant id.
pub const TENANT: &str = "72f988bf-0000-4000-8000-00000000cafe";

/// The default subscription id.
pub const SUBSCRIPTION: &str = "00000000-0000-4000-8000-0000000a4b5e";

impl Default for AksConfig {
    fn default() -> Self {
        Self {
            tenant: TENANT.into(),
            subscription: SUBSCRIPTION.into(),
            principals: Vec::new(),
            token_lifetime: Duration::from_secs(3600),
            workload: None,
            vcpu_quota: VCPU_QUOTA,
            throttle: true,
        }
    }
}

/// The emulated service.
#[derive(Debug)]
pub struct Aks {
    config: AksConfig,
    kit: Arc<Kit>,
    entra: entra::Entra,
    throttle: arm::Throttle,
    state: Mutex<State>,
    node_sync: tokio::sync::Mutex<()>,
    ticker: kit::Ticker,
}

impl Aks {
    /// An empty subscription.
    ///
    /// # Errors
    /// When the token signing key cannot be made.
    pub fn new(config: AksConfig, kit: Arc<Kit>) -> anyhow::Result<Self> {
        let entra = entra::Entra::new(
            &config.tenant,
            config.principals.clone(),
            config.token_lifetime,
        )?;
        Ok(Self {
            throttle: arm::Throttle::new(config.throttle),
            config,
            kit,
            entra,
            state: Mutex::new(State::default()),
            node_sync: tokio::sync::Mutex::new(()),
            ticker: kit::Ticker::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AksConfig {
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

    /// Every scale-set instance that exists (deleting ones included), for the control endpoint.
    pub fn instances(&self) -> Vec<kit::NodeInstance> {
        let st = self.lock();
        st.clusters
            .values()
            .flat_map(|c| {
                c.pools.iter().flat_map(move |p| {
                    p.vms.iter().map(move |v| kit::NodeInstance {
                        provider_id: provider_id(
                            &c.subscription,
                            &c.node_group,
                            &p.vmss(),
                            v.instance_id,
                        ),
                        state: if v.leaving_at.is_some() {
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

    /// Every resource the emulated subscriptions hold, for the fault suite's inventory: resource
    /// groups, managed clusters, virtual networks (owner from their tags), agent pools and
    /// scale-set instances (their cluster's owner) and subnets (their network's).
    pub fn inventory(&self) -> Vec<kit::InventoryItem> {
        let st = self.lock();
        let mut out = Vec::new();
        for g in st.groups.values() {
            out.push(kit::InventoryItem::new(
                "arm:resource-group",
                format!(
                    "/subscriptions/{}/resourceGroups/{}",
                    g.subscription, g.name
                ),
                g.name.clone(),
                "",
                &tags_of(&g.tags),
                if g.deleting { "Deleting" } else { "Succeeded" }.to_string(),
            ));
        }
        for c in st.clusters.values() {
            let cluster = kit::InventoryItem::new(
                "aks:managed-cluster",
                c.id(),
                c.name.clone(),
                &c.group,
                &tags_of(&c.tags),
                c.state.as_str().to_string(),
            );
            let owner = owner_tags(&cluster);
            for p in &c.pools {
                out.push(kit::InventoryItem::new(
                    "aks:agent-pool",
                    format!("{}/agentPools/{}", c.id(), p.name),
                    p.name.clone(),
                    &c.name,
                    &owner,
                    p.state.as_str().to_string(),
                ));
                // Instances are named by the scale set, not by the provider: listed without a
                // name, so they count for leaks but not as duplicates or as what must come back.
                for v in &p.vms {
                    out.push(kit::InventoryItem::new(
                        "compute:vmss-instance",
                        provider_id(&c.subscription, &c.node_group, &p.vmss(), v.instance_id),
                        String::new(),
                        &format!("{}/{}", c.name, p.name),
                        &owner,
                        if v.leaving_at.is_some() {
                            "Deleting"
                        } else {
                            "Running"
                        }
                        .to_string(),
                    ));
                }
            }
            out.push(cluster);
        }
        for n in st.vnets.values() {
            let vnet = kit::InventoryItem::new(
                "network:virtual-network",
                n.id(),
                n.name.clone(),
                &n.group,
                &tags_of(&n.tags),
                n.state.as_str().to_string(),
            );
            let owner = owner_tags(&vnet);
            for name in n.subnets.keys() {
                out.push(kit::InventoryItem::new(
                    "network:subnet",
                    format!("{}/subnets/{name}", n.id()),
                    name.clone(),
                    &n.name,
                    &owner,
                    n.state.as_str().to_string(),
                ));
            }
            out.push(vnet);
        }
        out
    }

    /// Starts the background ticker (every 100 ms); it stops when the `Aks` is dropped or
    /// [`Aks::shutdown`] runs.
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

    /// Who a workload API server's caller is, as AKS decides it for the cluster's
    /// authentication mode: with AKS-managed Entra, an Entra token of the tenant for AKS's
    /// server application (the cluster's creator is its admin; other principals are only
    /// authenticated, with no group to authorize them); the static admin token only while local
    /// accounts are enabled.
    fn authenticate_workload(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        let (aad, local_disabled, admin_token, creator) = self
            .lock()
            .clusters
            .values()
            .find(|c| c.workload_id == cluster_id)
            .map(|c| {
                (
                    c.props["aadProfile"]["managed"] == true,
                    c.local_accounts_disabled(),
                    c.admin_token.clone(),
                    c.creator.clone(),
                )
            })
            .ok_or("no such cluster")?;
        if !token.is_empty() && same_secret(token, &admin_token) {
            if local_disabled {
                return Err("local accounts are disabled on this cluster".into());
            }
            return Ok(UserInfo {
                username: "clusterAdmin".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
            });
        }
        if !aad {
            return Err("the cluster does not use Microsoft Entra ID; only its admin credential is accepted".into());
        }
        let caller = self.entra.verify(token)?;
        if caller.audience != AKS_SERVER_APP {
            return Err(format!(
                "the token's audience is {:?}, not AKS's server application {AKS_SERVER_APP}",
                caller.audience
            ));
        }
        let admin = caller.object_id == creator || !self.entra.checks_principals();
        Ok(UserInfo {
            username: caller.object_id,
            groups: if admin {
                vec!["system:masters".into(), "system:authenticated".into()]
            } else {
                vec!["system:authenticated".into()]
            },
        })
    }
}

/// The token webhook's view of [`Aks`].
pub struct AksTokenVerifier(pub Weak<Aks>);

impl TokenVerifier for AksTokenVerifier {
    fn verify(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        self.0
            .upgrade()
            .ok_or("the AKS emulator has stopped")?
            .authenticate_workload(cluster_id, token)
    }
}

/// The instances' view of [`Aks`].
pub struct AksInstances(pub Weak<Aks>);

impl kit::NodeInstances for AksInstances {
    fn node_instances(&self) -> Vec<kit::NodeInstance> {
        self.0.upgrade().map(|a| a.instances()).unwrap_or_default()
    }
}

/// ARM tags (a JSON object of strings) as a map.
fn tags_of(tags: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    tags.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// The ownership tag of an inventory item, to hand on to what lives in it.
fn owner_tags(item: &kit::InventoryItem) -> std::collections::BTreeMap<String, String> {
    item.owner
        .iter()
        .map(|o| ("capi-managed-aks".to_string(), o.clone()))
        .collect()
}

/// What AKS's cloud provider writes into `Node.spec.providerID`:
/// `azure:///subscriptions/<sub>/resourceGroups/<node group, lower case>/providers/Microsoft.Compute/virtualMachineScaleSets/<vmss>/virtualMachines/<n>`.
pub fn provider_id(subscription: &str, node_group: &str, vmss: &str, instance: u32) -> String {
    format!(
        "azure:///subscriptions/{subscription}/resourceGroups/{}/providers/Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{instance}",
        node_group.to_ascii_lowercase()
    )
}

/// Whether two secrets are equal, comparing every byte whatever the first difference.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Now, RFC 3339.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

/// `n` random lowercase hex digits.
fn hex(n: usize) -> String {
    let mut h = kit::random_hex(n.div_ceil(2));
    h.truncate(n);
    h
}
