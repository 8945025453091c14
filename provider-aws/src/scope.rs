//! What every EKS reconciler needs to know about the cluster an object belongs to: the region,
//! the credentials, the cluster's name in EKS, its network, and the tags to put on what it
//! creates. Read from the Cluster, its EKSCluster (when it has one) and its EKSControlPlane.

use std::collections::BTreeMap;
use std::sync::Arc;

use contract::api::{ClusterSpecCommon, IdentityRef};
use contract::conditions::Reason;
use provider_runtime::pacing::Pacing;
use provider_runtime::{ProviderError, cluster_objects, identity};

use crate::api::{EKSCluster, EKSClusterSpec};
use crate::client::{AwsCredentials, Clients, Endpoints};

/// The provider's name: field manager, finalizer prefix, ownership tag, clusterctl name.
pub const PROVIDER: &str = "eks";

/// What every reconciler shares: the client cache and the provider's settings.
pub struct Shared {
    /// SDK clients per region and identity.
    pub clients: ClientCache,
    /// How it paces its looks at EKS (busy: 30s; tokens: 15 minutes).
    pub pacing: Pacing,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            clients: ClientCache::default(),
            pacing: Pacing::new(
                std::time::Duration::from_secs(30),
                crate::client::token::TOKEN_LIFETIME,
            ),
        }
    }
}

/// SDK clients per region and credentials ([`provider_runtime::identity::ClientCache`]), talking
/// to the configured endpoints.
#[derive(Default)]
pub struct ClientCache {
    clients: identity::ClientCache<AwsCredentials, Clients>,
    endpoints: Endpoints,
}

impl ClientCache {
    /// A cache whose clients talk to `endpoints` (tests and local emulators).
    pub fn with_endpoints(endpoints: Endpoints) -> Self {
        Self {
            clients: identity::ClientCache::default(),
            endpoints,
        }
    }

    /// Clients for `region` and `credentials`, built once.
    pub async fn get(&self, region: &str, credentials: AwsCredentials) -> Clients {
        let id = credentials.access_key_id.clone();
        self.clients
            .get(region, &id, &credentials, || {
                Clients::with_endpoints(region, credentials.clone(), &self.endpoints)
            })
            .await
    }
}

/// Where the cluster's infrastructure settings come from.
#[derive(Debug, Clone)]
pub enum InfraSource {
    /// The Cluster's EKSCluster.
    EksCluster(Arc<EKSCluster>),
    /// No EKSCluster: the control plane's `spec.infrastructure`.
    ControlPlane(ClusterSpecCommon),
}

/// The infrastructure an object works within.
#[derive(Debug, Clone)]
pub struct Infra {
    /// Region.
    pub region: String,
    /// Identity reference (in the Cluster's namespace).
    pub identity_ref: Option<IdentityRef>,
    /// User tags for every AWS resource.
    pub additional_tags: BTreeMap<String, String>,
    /// Subnet ids the control plane and default node groups use.
    pub subnet_ids: Vec<String>,
    /// Security groups for the control plane (besides EKS's own).
    pub security_group_ids: Vec<String>,
}

impl cluster_objects::InfraOf for Infra {
    type InfraCluster = EKSCluster;
    type Own = EKSClusterSpec;
    const OWN_FIELDS: &'static str = "region, network.subnetIDs";

    /// From the EKSCluster: its spec for region/identity/tags, its status for the network.
    fn from_infra_cluster(c: &EKSCluster) -> Self {
        let network = crate::network::AwsNetwork::of(c);
        let network = network.as_ref();
        Self {
            region: c.spec.common.region.clone(),
            identity_ref: c.spec.common.identity_ref.clone(),
            additional_tags: c.spec.common.additional_tags.0.clone(),
            subnet_ids: network
                .map(|n| n.subnets.iter().map(|s| s.id.clone()).collect())
                .unwrap_or_default(),
            security_group_ids: network
                .and_then(|n| n.security_group_id.clone())
                .into_iter()
                .collect(),
        }
    }

    /// From a control plane's own `spec.infrastructure` (bring-your-own network, no EKSCluster).
    fn from_own(spec: &EKSClusterSpec) -> Self {
        let spec = &spec.common;
        let network = spec.network.as_ref();
        Self {
            region: spec.region.clone(),
            identity_ref: spec.identity_ref.clone(),
            additional_tags: spec.additional_tags.0.clone(),
            subnet_ids: network.map(|n| n.subnet_ids.clone()).unwrap_or_default(),
            security_group_ids: Vec::new(),
        }
    }

    fn locatable(&self) -> bool {
        !self.region.is_empty()
    }
}

/// Credentials and clients for `infra`, for an object in `namespace`.
pub async fn clients_for(
    cache: &ClientCache,
    client: &kube::Client,
    namespace: &str,
    infra: &Infra,
) -> Result<Clients, ProviderError> {
    if infra.region.is_empty() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no AWS region: set spec.region on the EKSCluster (or spec.infrastructure.region on the EKSControlPlane when the Cluster has no EKSCluster)",
        ));
    }
    let credentials = identity::credentials(client, namespace, infra.identity_ref.as_ref()).await?;
    Ok(cache.get(&infra.region, credentials).await)
}
