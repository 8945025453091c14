//! What every AKS reconciler needs to know about the cluster an object belongs to: the
//! subscription, resource group, location and zones, the credentials, the cluster's name in AKS,
//! its nodes' subnet, and the tags to put on what it creates. Read from the Cluster, its
//! AKSCluster (when it has one) and its AKSControlPlane.

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::IdentityRef;
use contract::conditions::Reason;
use provider_runtime::pacing::Pacing;
use provider_runtime::{CloudCalls, ProviderError, cluster_objects, identity};

use crate::api::{AKSCluster, AKSClusterSpec};
use crate::client::{self, Arm, Credential, Tokens};

/// The provider's name: field manager, finalizer prefix, ownership tag, clusterctl name.
pub const PROVIDER: &str = "aks";

/// The default availability zones.
pub const DEFAULT_ZONES: [&str; 3] = ["1", "2", "3"];

/// What every reconciler shares: the client cache and the provider's settings.
pub struct Shared {
    /// ARM clients per subscription and identity.
    pub clients: ClientCache,
    /// How it paces its looks at AKS (busy: 15s; Entra tokens: an hour).
    pub pacing: Pacing,
    /// Each cluster's API server address and CA, from its user credential, by cluster id.
    pub access: std::sync::Mutex<BTreeMap<String, ClusterAccess>>,
}

/// Where a cluster's API server is and what it trusts, as its user kubeconfig says.
#[derive(Clone, Debug)]
pub struct ClusterAccess {
    /// The `server` URL.
    pub server: String,
    /// The CA, PEM.
    pub ca_pem: Option<Vec<u8>>,
    /// The FQDN it was read for (a change reads it again).
    pub fqdn: String,
    /// When it was read.
    pub read_at: std::time::Instant,
}

impl Shared {
    /// Settings with clients talking to ARM at `endpoint`.
    pub fn new(endpoint: &str) -> Self {
        client::install_crypto();
        Self {
            clients: ClientCache::new(endpoint),
            pacing: Pacing::new(
                std::time::Duration::from_secs(15),
                std::time::Duration::from_secs(3600),
            ),
            access: std::sync::Mutex::new(BTreeMap::new()),
        }
    }
}

/// ARM clients per subscription and identity ([`identity::ClientCache`]).
pub struct ClientCache {
    clients: identity::ClientCache<Credential, Arm>,
    endpoint: String,
    http: reqwest::Client,
}

impl ClientCache {
    /// A cache whose clients talk to ARM at `endpoint`.
    pub fn new(endpoint: &str) -> Self {
        Self {
            clients: identity::ClientCache::default(),
            endpoint: endpoint.to_string(),
            http: client::http_client(),
        }
    }

    /// The client for `subscription` as `credential`, built once.
    pub async fn get(&self, subscription: &str, credential: Credential) -> Arm {
        let id = credential.cache_id();
        self.clients
            .get(subscription, &id, &credential, || async {
                Arm::new(
                    self.http.clone(),
                    &self.endpoint,
                    subscription,
                    Arc::new(Tokens::new(self.http.clone(), credential.clone())),
                )
            })
            .await
    }
}

/// The infrastructure an object works within.
#[derive(Debug, Clone)]
pub struct Infra {
    /// The subscription.
    pub subscription: String,
    /// The resource group.
    pub resource_group: String,
    /// The location.
    pub location: String,
    /// The availability zones nodes may run in.
    pub zones: Vec<String>,
    /// Identity reference (in the Cluster's namespace).
    pub identity_ref: Option<IdentityRef>,
    /// User tags for every resource.
    pub additional_tags: BTreeMap<String, String>,
    /// The nodes' subnet's ARM id (empty: not known yet).
    pub subnet: String,
}

/// The resource group an ARM id names (`/subscriptions/s/resourceGroups/<group>/…`).
pub fn group_of(id: &str) -> Option<&str> {
    let mut parts = id.split('/');
    while let Some(p) = parts.next() {
        if p.eq_ignore_ascii_case("resourceGroups") {
            return parts.next().filter(|g| !g.is_empty());
        }
    }
    None
}

impl cluster_objects::InfraOf for Infra {
    type InfraCluster = AKSCluster;
    type Own = AKSClusterSpec;
    const OWN_FIELDS: &'static str =
        "region, aks.subscriptionID, aks.resourceGroup and network.subnetIDs";

    /// From the AKSCluster: its spec, and its status for the network.
    fn from_infra_cluster(c: &AKSCluster) -> Self {
        let mut infra = Self::from_own(&c.spec);
        if let Some(n) = crate::network::AzureNetwork::of(c) {
            if let Some(s) = &n.subnet {
                infra.subnet.clone_from(s);
            }
            if !n.zones.is_empty() {
                infra.zones.clone_from(&n.zones);
            }
        }
        infra
    }

    /// From a spec (an AKSCluster's, or a control plane's own `spec.infrastructure`, whose
    /// subnet is brought by id).
    fn from_own(spec: &AKSClusterSpec) -> Self {
        let zones = if spec.aks.zones.is_empty() {
            DEFAULT_ZONES.iter().map(|z| (*z).to_string()).collect()
        } else {
            spec.aks.zones.clone()
        };
        let subnet = spec
            .common
            .network
            .as_ref()
            .and_then(|n| n.subnet_ids.first())
            .cloned()
            .unwrap_or_default();
        let resource_group = if spec.aks.resource_group.is_empty() {
            group_of(&subnet).unwrap_or_default().to_string()
        } else {
            spec.aks.resource_group.clone()
        };
        Self {
            subscription: spec.aks.subscription_id.clone(),
            resource_group,
            location: spec.common.region.clone(),
            zones,
            identity_ref: spec.common.identity_ref.clone(),
            additional_tags: spec.common.additional_tags.0.clone(),
            subnet,
        }
    }

    fn locatable(&self) -> bool {
        !self.subscription.is_empty() && !self.resource_group.is_empty()
    }
}

/// One pass's ARM reach for a managed cluster: the client for its subscription and identity,
/// where every call is counted, and the cluster's ARM path.
pub struct Clients {
    /// What every pass shares (the caches of CAs and answers).
    pub shared: Arc<Shared>,
    /// ARM, for the subscription, as the identity.
    pub arm: Arm,
    /// Where every call is counted and admitted.
    pub calls: CloudCalls,
    /// `/subscriptions/…/managedClusters/<name>`.
    pub cluster_path: String,
    /// The agent pool the control plane keeps as the cluster's System pool
    /// (`spec.aks.systemPool.name`).
    pub system_pool: String,
}

impl Clients {
    /// The clients for the managed cluster `name` in `resource_group`, whose System pool is
    /// `system_pool`.
    pub fn new(
        shared: &Arc<Shared>,
        arm: Arm,
        calls: CloudCalls,
        resource_group: &str,
        name: &str,
        system_pool: &str,
    ) -> Self {
        let cluster_path = format!(
            "{}/providers/Microsoft.ContainerService/managedClusters/{name}",
            arm.group_path(resource_group)
        );
        Self {
            shared: shared.clone(),
            arm,
            calls,
            cluster_path,
            system_pool: system_pool.to_string(),
        }
    }
}

/// Credentials and the ARM client for `infra`, for an object in `namespace`.
///
/// # Errors
/// Terminal `InvalidSpec` without a subscription, resource group or location; the identity's
/// errors.
pub async fn arm_for(
    shared: &Arc<Shared>,
    client: &kube::Client,
    namespace: &str,
    infra: &Infra,
) -> Result<Arm, ProviderError> {
    if infra.subscription.is_empty() || infra.resource_group.is_empty() || infra.location.is_empty()
    {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no Azure subscription, resource group or location: set spec.aks.subscriptionID, spec.aks.resourceGroup and spec.region on the AKSCluster (or spec.infrastructure on the AKSControlPlane when the Cluster has no AKSCluster)",
        ));
    }
    let credential = identity::credentials(client, namespace, infra.identity_ref.as_ref()).await?;
    Ok(shared.clients.get(&infra.subscription, credential).await)
}
