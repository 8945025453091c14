//! A network the user brings: a VPC network and one of its subnetworks, by name. Two reads (the
//! network, then the subnetwork with its secondary ranges) check that they fit GKE; nothing is
//! written, ever.

use std::time::Duration;

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::cluster_objects::InfraOf as _;
use provider_runtime::infra_cluster::{NetworkReport, ReportOf};

use super::GcpNetwork;
use super::{Compute, last_segment, subnetwork, vpc};
use crate::api::{GKECluster, GKEClusterSpec};
use crate::scope::Infra;

/// Reads and checks the network `spec` brings: the VPC network exists, the subnetwork exists
/// in the region and belongs to that network, and it has the Pods and Services secondary
/// ranges. A missing or mismatched piece is a terminal `InvalidSpec`; once all is in place the
/// network is ready and looked at again after `rest_interval`.
pub async fn observe(
    spec: &GKEClusterSpec,
    c: &Compute,
    rest_interval: Duration,
) -> ReportOf<GKECluster> {
    let infra = Infra::from_own(spec);
    let invalid =
        |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
    let network = match vpc::get(c, &infra.network).await {
        Err(f) => return NetworkReport::failed(f.into()),
        Ok(None) => {
            return invalid(format!(
                "the VPC network {} (spec.network.id) does not exist in project {}",
                infra.network, c.project
            ));
        }
        Ok(Some(n)) => n,
    };
    let subnet = match subnetwork::get(c, &infra.subnetwork).await {
        Err(f) => return NetworkReport::failed(f.into()),
        Ok(None) => {
            return invalid(format!(
                "the subnetwork {} (spec.network.subnetIDs) does not exist in {} of project {}",
                infra.subnetwork, c.region, c.project
            ));
        }
        Ok(Some(s)) => s,
    };
    let owner_network = subnet
        .network
        .as_deref()
        .map(last_segment)
        .unwrap_or_default();
    if owner_network != network.name.as_deref().unwrap_or_default() {
        return invalid(format!(
            "the subnetwork {} belongs to the network {owner_network}, not {} (spec.network.id)",
            infra.subnetwork, infra.network
        ));
    }
    let ranges: Vec<&str> = subnet
        .secondary_ip_ranges
        .iter()
        .filter_map(|r| r.range_name.as_deref())
        .collect();
    for (range, field) in [
        (&infra.pods_range, "spec.gke.podsRange"),
        (&infra.services_range, "spec.gke.servicesRange"),
    ] {
        if !ranges.contains(&range.as_str()) {
            return invalid(format!(
                "the subnetwork {} has no secondary range named {range} ({field}); GKE needs one for Pods and one for Services",
                infra.subnetwork
            ));
        }
    }
    let status = GcpNetwork {
        network: Some(infra.network.clone()),
        subnetwork: Some(infra.subnetwork.clone()),
        cidr_block: subnet.ip_cidr_range.clone(),
        pods_range_name: Some(infra.pods_range.clone()),
        services_range_name: Some(infra.services_range.clone()),
        router: None,
        zones: infra.zones.clone(),
        managed: false,
    };
    let message = format!(
        "using the brought VPC network {} and subnetwork {} in {}",
        infra.network,
        infra.subnetwork,
        infra.zones.join(", ")
    );
    NetworkReport::ready(status.seen(), message, rest_interval)
}
