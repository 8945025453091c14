//! What the spec asks GKE for, taken once per pass and in GKE's terms: [`DesiredCluster`],
//! which create, update and diff all read, and [`validate`], which makes it. Pure.

use google_cloud_container_v1::model as gke;
use kube::ResourceExt;
use provider_runtime::ProviderError;

use crate::api::{GKEControlPlane, ReleaseChannel};
use crate::scope::Infra;

/// What the spec asks GKE for, in GKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredCluster {
    /// Whether the public endpoint is on.
    pub public: bool,
    /// The authorized networks, sorted, one per CIDR.
    pub authorized: Vec<(String, String)>,
    /// The logging components on, in the order GKE is sent them.
    pub logging: Vec<gke::logging_component_config::Component>,
    /// The workload pool (empty: workload identity off).
    pub workload_pool: String,
    /// The Secrets encryption key (empty: none).
    pub kms_key: String,
    /// The release channel.
    pub channel: gke::release_channel::Channel,
    /// Whether the DNS endpoint takes outside traffic.
    pub dns_external: bool,
    /// Nodes get internal addresses only (create only: immutable on GKE).
    pub private_nodes: bool,
    /// The cluster's description: the Cluster API cluster it is made for.
    pub description: String,
    /// The user's `spec.gke.requestOverrides`, when they ask for anything.
    pub request_overrides: Option<serde_json::Value>,
    /// Where the cluster is created: network, subnetwork, zones, secondary ranges.
    pub network: Network,
}

/// Where a cluster is created, from its infrastructure.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The VPC network's name (empty: not known).
    pub network: String,
    /// The subnetwork's name (empty: not known).
    pub subnetwork: String,
    /// The zones nodes may run in.
    pub zones: Vec<String>,
    /// The Pods range's name.
    pub pods_range: String,
    /// The Services range's name.
    pub services_range: String,
}

fn channel(c: Option<ReleaseChannel>) -> gke::release_channel::Channel {
    use gke::release_channel::Channel;
    match c {
        None => Channel::default(),
        Some(ReleaseChannel::Rapid) => Channel::Rapid,
        Some(ReleaseChannel::Regular) => Channel::Regular,
        Some(ReleaseChannel::Stable) => Channel::Stable,
        Some(ReleaseChannel::Extended) => Channel::Extended,
    }
}

/// The spec of `cp`, for the cluster in `infra`. GKE takes everything the CRD admits, so
/// nothing is refused here; a network the create needs and lacks is refused by the create.
///
/// # Errors
/// None today; the signature is the role's.
pub fn validate(cp: &GKEControlPlane, infra: &Infra) -> Result<DesiredCluster, ProviderError> {
    use gke::logging_component_config::Component;
    let common = &cp.spec.common;
    let mut authorized: Vec<(String, String)> = common
        .endpoint_access
        .public_cidrs
        .iter()
        .map(|c| (c.clone(), String::new()))
        .chain(cp.spec.gke.authorized_networks.iter().map(|n| {
            (
                n.cidr_block.clone(),
                n.display_name.clone().unwrap_or_default(),
            )
        }))
        .collect();
    authorized.sort();
    authorized.dedup_by(|a, b| a.0 == b.0);
    let log = &common.logging;
    let mut logging = Vec::new();
    if log.api_server || log.controller_manager || log.scheduler {
        logging.push(Component::SystemComponents);
    }
    for (on, c) in [
        (log.api_server, Component::Apiserver),
        (log.controller_manager, Component::ControllerManager),
        (log.scheduler, Component::Scheduler),
    ] {
        if on {
            logging.push(c);
        }
    }
    let workload_pool = if common.oidc_issuer.as_ref().is_some_and(|o| o.enabled) {
        cp.spec
            .gke
            .workload_identity_pool
            .clone()
            .unwrap_or_else(|| format!("{}.svc.id.goog", infra.project))
    } else {
        String::new()
    };
    Ok(DesiredCluster {
        public: common.endpoint_access.public,
        authorized,
        logging,
        workload_pool,
        kms_key: common
            .encryption
            .as_ref()
            .map(|e| e.kms_key_id.clone())
            .unwrap_or_default(),
        channel: channel(cp.spec.gke.release_channel),
        dns_external: cp.spec.gke.dns_endpoint_external_traffic,
        private_nodes: cp.spec.gke.private_nodes,
        description: format!(
            "Cluster API cluster {}/{}",
            cp.namespace().unwrap_or_default(),
            cp.labels()
                .get(contract::capi::CLUSTER_NAME_LABEL)
                .cloned()
                .unwrap_or_default()
        ),
        request_overrides: contract::overrides::effective(cp.spec.gke.request_overrides.as_ref())
            .cloned(),
        network: Network {
            network: infra.network.clone(),
            subnetwork: infra.subnetwork.clone(),
            zones: infra.zones.clone(),
            pods_range: infra.pods_range.clone(),
            services_range: infra.services_range.clone(),
        },
    })
}
