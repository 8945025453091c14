//! What every OKE reconciler needs to know about the cluster an object belongs to: the
//! compartment, region and availability domains, the credentials, the cluster's name in OKE,
//! its VCN and subnets, and the tags to put on what it creates. Read from the Cluster, its
//! OKECluster (when it has one) and its OKEControlPlane.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use contract::api::IdentityRef;
use contract::conditions::Reason;
use provider_runtime::pacing::Pacing;
use provider_runtime::pacing::looks::Expiring;
use provider_runtime::{CloudCalls, ProviderError, cluster_objects, identity};

use crate::api::{OKECluster, OKEClusterSpec};
use crate::client::answers::AvailabilityDomain;
use crate::client::{self, Credential, Endpoints, Oci, Service, q};

/// The provider's name: field manager, finalizer prefix, ownership tag, clusterctl name.
pub const PROVIDER: &str = "oke";

/// How long availability domains read from Identity are reused.
const DOMAINS_TTL: Duration = Duration::from_secs(3600);

/// How long a cluster's CA read from its kubeconfig is reused.
const CA_TTL: Duration = Duration::from_secs(3600);

/// What every reconciler shares: the client cache and the provider's settings.
pub struct Shared {
    /// OCI clients per region and API key.
    pub clients: ClientCache,
    /// How it paces its looks at OKE (busy: 15s; tokens: five minutes, OCI's clock skew).
    pub pacing: Pacing,
    /// Each cluster's CA (PEM), read from its kubeconfig, by cluster OCID.
    pub cas: Expiring<String, Vec<u8>>,
    /// The availability domains of each (region, compartment).
    pub domains: Expiring<(String, String), Vec<String>>,
}

impl Shared {
    /// Settings with clients talking to OCI's public endpoints, or to `endpoint` for every
    /// service (an emulator).
    pub fn new(endpoint: Option<&str>) -> Self {
        client::install_crypto();
        Self {
            clients: ClientCache::new(endpoint),
            pacing: Pacing::new(Duration::from_secs(15), Duration::from_secs(300)),
            cas: Expiring::new(CA_TTL),
            domains: Expiring::new(DOMAINS_TTL),
        }
    }

    /// The availability domains of `oci`'s region seen from `compartment` (Identity's
    /// ListAvailabilityDomains, cached an hour).
    ///
    /// # Errors
    /// OCI's; terminal `InvalidSpec` when OCI lists none (a compartment or region the user
    /// cannot see into).
    pub async fn availability_domains(
        &self,
        oci: &Oci,
        calls: &CloudCalls,
        compartment: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let key = (oci.region().to_string(), compartment.to_string());
        if let Some(ads) = self.domains.get(&key) {
            return Ok(ads);
        }
        let listed = oci
            .list_of::<AvailabilityDomain>(
                calls,
                "ListAvailabilityDomains",
                Service::Identity,
                &format!("/availabilityDomains?compartmentId={}", q(compartment)),
            )
            .await?;
        let mut ads: Vec<String> = listed.into_iter().filter_map(|a| a.name).collect();
        ads.sort();
        if ads.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                format!(
                    "OCI lists no availability domains in {} for compartment {compartment}: check spec.oke.compartmentID and spec.region, and that the user's policies let it read the compartment",
                    oci.region()
                ),
            ));
        }
        self.domains.put(key, ads.clone());
        Ok(ads)
    }
}

/// OCI clients per region and API key ([`identity::ClientCache`]).
pub struct ClientCache {
    clients: identity::ClientCache<Credential, Oci>,
    endpoint: Option<String>,
    http: reqwest::Client,
}

impl ClientCache {
    /// A cache whose clients talk to OCI's public endpoints, or all to `endpoint`.
    pub fn new(endpoint: Option<&str>) -> Self {
        Self {
            clients: identity::ClientCache::default(),
            endpoint: endpoint.map(String::from),
            http: client::http_client(),
        }
    }

    /// The client for `region` as `credential`, built once.
    ///
    /// # Errors
    /// Terminal `Unauthorized` when the key cannot be read.
    pub async fn get(&self, region: &str, credential: Credential) -> Result<Oci, ProviderError> {
        let id = credential.cache_id();
        self.clients
            .try_get(region, &id, &credential, || async {
                let key = credential.api_key("the API key")?;
                Ok(Oci::new(
                    self.http.clone(),
                    Endpoints::of(region, self.endpoint.as_deref()),
                    region,
                    Arc::new(key),
                ))
            })
            .await
    }
}

/// The infrastructure an object works within.
#[derive(Debug, Clone, Default)]
pub struct Infra {
    /// The compartment.
    pub compartment: String,
    /// The region.
    pub region: String,
    /// The availability domains nodes may run in (empty: every one of the region).
    pub availability_domains: Vec<String>,
    /// Identity reference (in the Cluster's namespace).
    pub identity_ref: Option<IdentityRef>,
    /// User tags for every resource.
    pub additional_tags: BTreeMap<String, String>,
    /// The VCN (empty: not known yet).
    pub vcn: String,
    /// The API endpoint's subnet.
    pub endpoint_subnet: String,
    /// The nodes' subnets.
    pub node_subnets: Vec<String>,
    /// The Service load balancers' subnets.
    pub lb_subnets: Vec<String>,
}

impl cluster_objects::InfraOf for Infra {
    type InfraCluster = OKECluster;
    type Own = OKEClusterSpec;
    const OWN_FIELDS: &'static str = "region, oke.compartmentID, network.id and network.subnetIDs";

    /// From the OKECluster: its spec, and its status for the network.
    fn from_infra_cluster(c: &OKECluster) -> Self {
        let mut infra = Self::from_own(&c.spec);
        if let Some(n) = crate::network::OciNetwork::of(c) {
            if let Some(v) = &n.vcn_id {
                infra.vcn.clone_from(v);
            }
            if let Some(s) = &n.endpoint_subnet_id {
                infra.endpoint_subnet.clone_from(s);
            }
            if !n.node_subnet_ids.is_empty() {
                infra.node_subnets.clone_from(&n.node_subnet_ids);
            }
            if !n.service_lb_subnet_ids.is_empty() {
                infra.lb_subnets.clone_from(&n.service_lb_subnet_ids);
            }
            if !n.availability_domains.is_empty() {
                infra
                    .availability_domains
                    .clone_from(&n.availability_domains);
            }
        }
        infra
    }

    /// From a spec (an OKECluster's, or a control plane's own `spec.infrastructure`, whose
    /// network is brought by OCID).
    fn from_own(spec: &OKEClusterSpec) -> Self {
        let network = spec.common.network.clone().unwrap_or_default();
        let endpoint_subnet = spec
            .oke
            .endpoint_subnet_id
            .clone()
            .or_else(|| network.subnet_ids.first().cloned())
            .unwrap_or_default();
        Self {
            compartment: spec.oke.compartment_id.clone(),
            region: spec.common.region.clone(),
            availability_domains: spec.oke.availability_domains.clone(),
            identity_ref: spec.common.identity_ref.clone(),
            additional_tags: spec.common.additional_tags.0.clone(),
            vcn: network.id.clone().unwrap_or_default(),
            endpoint_subnet,
            node_subnets: network.subnet_ids.clone(),
            lb_subnets: spec.oke.service_lb_subnet_ids.clone(),
        }
    }

    fn locatable(&self) -> bool {
        !self.compartment.is_empty() && !self.region.is_empty()
    }
}

/// Credentials and the OCI client for `infra`, for an object in `namespace`.
///
/// # Errors
/// Terminal `InvalidSpec` without a compartment or region; the identity's errors.
pub async fn oci_for(
    shared: &Arc<Shared>,
    client: &kube::Client,
    namespace: &str,
    infra: &Infra,
) -> Result<Oci, ProviderError> {
    if infra.compartment.is_empty() || infra.region.is_empty() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "no OCI compartment or region: set spec.oke.compartmentID and spec.region on the OKECluster (or spec.infrastructure on the OKEControlPlane when the Cluster has no OKECluster)",
        ));
    }
    let credential = identity::credentials(client, namespace, infra.identity_ref.as_ref()).await?;
    shared.clients.get(&infra.region, credential).await
}
