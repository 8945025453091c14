//! What every GKE reconciler needs to know about the cluster an object belongs to: the project,
//! region and zones, the credentials, the cluster's name in GKE, its network, and the labels to
//! put on what it creates. Read from the Cluster, its GKECluster (when it has one) and its
//! GKEControlPlane.

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::IdentityRef;
use contract::conditions::Reason;
use provider_runtime::pacing::Pacing;
use provider_runtime::{ProviderError, cluster_objects, identity};

use crate::api::{GKECluster, GKEClusterSpec};
use crate::client::{Clients, Endpoints, ServiceAccountKey};

/// The provider's name: field manager, finalizer prefix, ownership label, clusterctl name.
pub const PROVIDER: &str = "gke";

/// Default secondary range names of a brought subnetwork.
pub const DEFAULT_PODS_RANGE: &str = "pods";
/// See [`DEFAULT_PODS_RANGE`].
pub const DEFAULT_SERVICES_RANGE: &str = "services";

/// What every reconciler shares: the client cache and the provider's settings.
pub struct Shared {
    /// Clients per project and identity.
    pub clients: ClientCache,
    /// How it paces its looks at GKE (busy: 15s; Google tokens: an hour).
    pub pacing: Pacing,
    /// The HTTP client of token exchanges.
    pub http: reqwest::Client,
}

impl Shared {
    /// Settings with the clients talking to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        crate::client::install_crypto();
        Self {
            clients: ClientCache::with_endpoints(endpoints),
            pacing: Pacing::new(
                std::time::Duration::from_secs(15),
                crate::client::token::TOKEN_LIFETIME,
            ),
            http: reqwest::Client::new(),
        }
    }
}

/// Clients per project and identity ([`provider_runtime::identity::ClientCache`]).
pub struct ClientCache {
    clients: identity::ClientCache<ServiceAccountKey, Clients>,
    endpoints: Endpoints,
}

impl ClientCache {
    /// A cache whose clients talk to `endpoints`.
    pub fn with_endpoints(endpoints: Endpoints) -> Self {
        Self {
            clients: identity::ClientCache::default(),
            endpoints,
        }
    }

    /// Clients for `project` as `key`, built once.
    ///
    /// # Errors
    /// When the clients cannot be built from the key.
    pub async fn get(
        &self,
        project: &str,
        key: ServiceAccountKey,
    ) -> Result<Clients, ProviderError> {
        let id = key.cache_id();
        self.clients
            .try_get(project, &id, &key, || {
                Clients::new(key.clone(), &self.endpoints)
            })
            .await
    }
}

/// The infrastructure an object works within.
#[derive(Debug, Clone)]
pub struct Infra {
    /// The project.
    pub project: String,
    /// The region.
    pub region: String,
    /// The zones nodes may run in.
    pub zones: Vec<String>,
    /// Identity reference (in the Cluster's namespace).
    pub identity_ref: Option<IdentityRef>,
    /// User labels for every resource.
    pub additional_tags: BTreeMap<String, String>,
    /// The VPC network's name (empty: not known yet).
    pub network: String,
    /// The subnetwork's name.
    pub subnetwork: String,
    /// The Pods range's name.
    pub pods_range: String,
    /// The Services range's name.
    pub services_range: String,
}

/// The region's zones a, b and c: the default failure domains.
pub fn default_zones(region: &str) -> Vec<String> {
    ["a", "b", "c"]
        .iter()
        .map(|z| format!("{region}-{z}"))
        .collect()
}

impl cluster_objects::InfraOf for Infra {
    type InfraCluster = GKECluster;
    type Own = GKEClusterSpec;
    const OWN_FIELDS: &'static str = "region, gke.project, network.id and network.subnetIDs";

    /// From the GKECluster: its spec for project/region/identity/labels, its status for the
    /// network.
    fn from_infra_cluster(c: &GKECluster) -> Self {
        let network = crate::network::GcpNetwork::of(c);
        let network = network.as_ref();
        let mut infra = Self::from_own(&c.spec);
        infra.network = network.and_then(|n| n.network.clone()).unwrap_or_default();
        infra.subnetwork = network
            .and_then(|n| n.subnetwork.clone())
            .unwrap_or_default();
        if let Some(n) = network {
            if let Some(p) = &n.pods_range_name {
                infra.pods_range.clone_from(p);
            }
            if let Some(s) = &n.services_range_name {
                infra.services_range.clone_from(s);
            }
            if !n.zones.is_empty() {
                infra.zones.clone_from(&n.zones);
            }
        }
        infra
    }

    /// From a spec (a GKECluster's, or a control plane's own `spec.infrastructure`, whose
    /// network is brought by name).
    fn from_own(spec: &GKEClusterSpec) -> Self {
        let network = spec.common.network.as_ref();
        let zones = if spec.gke.zones.is_empty() {
            default_zones(&spec.common.region)
        } else {
            spec.gke.zones.clone()
        };
        Self {
            project: spec.gke.project.clone(),
            region: spec.common.region.clone(),
            zones,
            identity_ref: spec.common.identity_ref.clone(),
            additional_tags: spec.common.additional_tags.0.clone(),
            network: network
                .and_then(|n| n.id.as_deref())
                .map(|n| crate::network::last_segment(n).to_string())
                .unwrap_or_default(),
            subnetwork: network
                .and_then(|n| n.subnet_ids.first())
                .map(|s| crate::network::last_segment(s).to_string())
                .unwrap_or_default(),
            pods_range: spec
                .gke
                .pods_range
                .clone()
                .filter(|r| !r.contains('/'))
                .unwrap_or_else(|| DEFAULT_PODS_RANGE.into()),
            services_range: spec
                .gke
                .services_range
                .clone()
                .filter(|r| !r.contains('/'))
                .unwrap_or_else(|| DEFAULT_SERVICES_RANGE.into()),
        }
    }

    fn locatable(&self) -> bool {
        !self.project.is_empty() && !self.region.is_empty()
    }
}

/// Credentials and clients for `infra`, for an object in `namespace`.
///
/// # Errors
/// Terminal `InvalidSpec` without a project or region; the identity's errors.
pub async fn clients_for(
    shared: &Arc<Shared>,
    client: &kube::Client,
    namespace: &str,
    infra: &Infra,
) -> Result<Clients, ProviderError> {
    if infra.project.is_empty() || infra.region.is_empty() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no Google Cloud project or region: set spec.gke.project and spec.region on the GKECluster (or spec.infrastructure on the GKEControlPlane when the Cluster has no GKECluster)",
        ));
    }
    let key = identity::credentials(client, namespace, infra.identity_ref.as_ref()).await?;
    shared.clients.get(&infra.project, key).await
}
