//! A network the user brings (`spec.network.id`, `spec.network.subnetIDs`,
//! `spec.oke.endpointSubnetID` and `spec.oke.serviceLBSubnetIDs`): read only.
//!
//! The provider checks that the VCN and every subnet exist and that every subnet is in the
//! VCN, and learns whether the endpoint subnet is public (it allows public IPs on its VNICs).
//! It creates, changes and deletes nothing.

use std::time::Duration;

use contract::conditions::Reason;
use provider_runtime::infra_cluster::{NetworkReport, ReportOf};
use provider_runtime::{CloudError, ProviderError};

use super::OciNetwork;
use super::{Network, gone};
use crate::api::OKECluster;
use crate::client::Service as Api;
use crate::client::answers::{Subnet, Vcn};

/// Reads the brought VCN and its subnets: ready, looked at again after `rest_interval`, when
/// they all exist and the subnets are in the VCN.
pub async fn observe(n: &Network, rest_interval: Duration) -> ReportOf<OKECluster> {
    let invalid =
        |m: String| NetworkReport::failed(ProviderError::terminal(Reason::InvalidSpec, m));
    let vcn_path = format!("/vcns/{}", n.infra.vcn);
    let vcn = match n
        .oci
        .get::<Vcn>(&n.calls, "GetVcn", Api::Core, &vcn_path)
        .await
    {
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
        let path = format!("/subnets/{subnet}");
        let s = match n
            .oci
            .get::<Subnet>(&n.calls, "GetSubnet", Api::Core, &path)
            .await
        {
            Err(f) => return NetworkReport::failed(f.into()),
            Ok(Some((s, _))) if !gone(&s) => s,
            Ok(_) => return invalid(format!("the subnet {subnet} ({field}) does not exist")),
        };
        if s.vcn_id != vcn.id {
            return invalid(format!(
                "the subnet {subnet} ({field}) is in VCN {}, not in {} (spec.network.id)",
                s.vcn_id, n.infra.vcn
            ));
        }
        if i == 0 {
            endpoint_public = match endpoint_public_of(&s) {
                Ok(public) => public,
                Err(e) => return NetworkReport::failed(e.into()),
            };
        }
        if let Some(block) = &s.cidr_block {
            subnet_blocks.insert(subnet.clone(), block.clone());
        }
    }
    let status = OciNetwork {
        vcn_id: Some(n.infra.vcn.clone()),
        cidr_block: Some(vcn.cidr_block.clone()),
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
        vcn.display_name,
        n.infra.node_subnets.len(),
        n.infra.availability_domains.join(", ")
    );
    NetworkReport::ready(status.seen(), message, rest_interval)
}

/// Whether the endpoint subnet `s` is public: it allows public IPs on its VNICs.
///
/// # Errors
/// OCI's answer does not say (read as public or private, the cluster's endpoint would be asked
/// to change).
fn endpoint_public_of(s: &Subnet) -> Result<bool, CloudError> {
    s.prohibit_public_ip_on_vnic
        .map(|prohibited| !prohibited)
        .ok_or_else(|| {
            CloudError::Transient("GetSubnet: the answer has no `prohibitPublicIpOnVnic`".into())
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_subnet_is_public_unless_it_prohibits_public_ips_and_unsaid_is_refused() {
        let subnet = |prohibit: Option<bool>| -> Subnet {
            let mut body = serde_json::json!({
                "id": "ocid1.subnet.oc1.iad.a",
                "compartmentId": "ocid1.compartment.oc1..a",
                "lifecycleState": "AVAILABLE",
                "vcnId": "ocid1.vcn.oc1.iad.a",
                "cidrBlock": "10.0.0.0/24",
                "routeTableId": "ocid1.routetable.oc1.iad.a",
                "virtualRouterMac": "00:00:17:00:00:01",
                "displayName": "endpoint",
            });
            if let Some(p) = prohibit {
                body["prohibitPublicIpOnVnic"] = serde_json::json!(p);
            }
            provider_runtime::read_answer("GetSubnet", body).unwrap()
        };
        assert_eq!(endpoint_public_of(&subnet(Some(false))), Ok(true));
        assert_eq!(endpoint_public_of(&subnet(Some(true))), Ok(false));
        assert_eq!(
            endpoint_public_of(&subnet(None)),
            Err(CloudError::Transient(
                "GetSubnet: the answer has no `prohibitPublicIpOnVnic`".into()
            ))
        );
    }
}
