//! A network the user brings (`spec.network.id`, `spec.network.subnetIDs`,
//! `spec.oke.endpointSubnetID` and `spec.oke.serviceLBSubnetIDs`): read only.
//!
//! The provider checks that the VCN and every subnet exist and that every subnet is in the
//! VCN, and learns whether the endpoint subnet is public (it allows public IPs on its VNICs).
//! It creates, changes and deletes nothing.

use std::time::Duration;

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::infra_cluster::{NetworkReport, ReportOf};

use super::OciNetwork;
use super::{Network, gone};
use crate::api::OKECluster;
use crate::client::Service as Api;

/// Reads the brought VCN and its subnets: ready, looked at again after `rest_interval`, when
/// they all exist and the subnets are in the VCN.
pub async fn observe(n: &Network, rest_interval: Duration) -> ReportOf<OKECluster> {
    let invalid =
        |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
    let get = |collection: &'static str, op: &'static str, id: &str| {
        let path = format!("/{collection}/{id}");
        async move { n.oci.get(&n.calls, op, Api::Core, &path).await }
    };
    let vcn = match get("vcns", "GetVcn", &n.infra.vcn).await {
        Err(f) => return NetworkReport::failed(f.into()),
        Ok(Some((v, _))) if !gone(&v) => v,
        Ok(_) => {
            return invalid(format!(
                "the VCN {} (spec.network.id) does not exist; create it, or let the provider create the network (spec.network.cidrBlock)",
                n.infra.vcn
            ));
        }
    };
    let mut subnets = vec![(n.infra.endpoint_subnet.clone(), "spec.oke.endpointSubnetID")];
    subnets.extend(
        n.infra
            .node_subnets
            .iter()
            .map(|s| (s.clone(), "spec.network.subnetIDs")),
    );
    subnets.extend(
        n.infra
            .lb_subnets
            .iter()
            .map(|s| (s.clone(), "spec.oke.serviceLBSubnetIDs")),
    );
    let mut endpoint_public = false;
    let mut subnet_blocks = std::collections::BTreeMap::new();
    for (i, (subnet, field)) in subnets.iter().enumerate() {
        let s = match get("subnets", "GetSubnet", subnet).await {
            Err(f) => return NetworkReport::failed(f.into()),
            Ok(Some((s, _))) if !gone(&s) => s,
            Ok(_) => return invalid(format!("the subnet {subnet} ({field}) does not exist")),
        };
        if s["vcnId"] != vcn["id"] {
            return invalid(format!(
                "the subnet {subnet} ({field}) is in VCN {}, not in {} (spec.network.id)",
                s["vcnId"].as_str().unwrap_or_default(),
                n.infra.vcn
            ));
        }
        if i == 0 {
            endpoint_public = s["prohibitPublicIpOnVnic"] != true;
        }
        if let Some(block) = s["cidrBlock"].as_str() {
            subnet_blocks.insert(subnet.clone(), block.to_string());
        }
    }
    let status = OciNetwork {
        vcn_id: Some(n.infra.vcn.clone()),
        cidr_block: vcn["cidrBlock"].as_str().map(String::from),
        endpoint_subnet_id: Some(n.infra.endpoint_subnet.clone()),
        node_subnet_ids: n.infra.node_subnets.clone(),
        service_lb_subnet_ids: n.infra.lb_subnets.clone(),
        endpoint_subnet_public: endpoint_public,
        subnet_blocks,
        availability_domains: n.infra.availability_domains.clone(),
        managed: false,
    };
    let message = format!(
        "using the brought VCN {} with {} node subnet(s) in {}",
        vcn["displayName"].as_str().unwrap_or(&n.infra.vcn),
        n.infra.node_subnets.len(),
        n.infra.availability_domains.join(", ")
    );
    NetworkReport::ready(status.seen(), message, rest_interval)
}
