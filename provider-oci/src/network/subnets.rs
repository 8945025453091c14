//! The subnets service: the API endpoint's subnet (public, the first quarter of the VCN's
//! block), the Service load balancers' (public, the second quarter) and the nodes' (private,
//! the second half).

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Kind, Scope, each_ready};
use crate::client::answers::Subnet;
use crate::reconcile::cluster::CreatedNetwork;

pub(super) const SUBNET: Kind<Subnet> = Kind {
    collection: "subnets",
    noun: "subnet",
    list: "ListSubnets",
    create: "CreateSubnet",
    delete: "DeleteSubnet",
    update: "UpdateSubnet",
    in_vcn: true,
    answer: PhantomData,
};

/// One build turn: once the route tables and security lists are there, creates the endpoint,
/// the load balancers' and the nodes' subnet over `plan`'s blocks and waits until each is
/// available.
pub(super) async fn reconcile(
    s: &Scope<'_>,
    plan: &CreatedNetwork,
    built: &mut Built,
) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    let (Some(public), Some(private), Some(endpoint_list), Some(nodes_list)) = (
        &built.public_routes,
        &built.private_routes,
        &built.endpoint_list,
        &built.nodes_list,
    ) else {
        return Ok(Progress::Blocked(
            "waiting for the route tables and security lists".into(),
        ));
    };
    let subnet = |cidr: &str, routes: &str, list: &str, private: bool| {
        json!({
            "vcnId": vcn,
            "cidrBlock": cidr,
            "routeTableId": routes,
            "securityListIds": [list],
            "prohibitPublicIpOnVnic": private,
        })
    };
    built.endpoint_subnet = each_ready!(
        s.ensure(SUBNET, "endpoint", vcn, || subnet(
            &plan.endpoint,
            public,
            endpoint_list,
            false
        ))
        .await?
    );
    built.lb_subnet = each_ready!(
        s.ensure(SUBNET, "load-balancers", vcn, || subnet(
            &plan.lb, public, nodes_list, false
        ))
        .await?
    );
    built.nodes_subnet = each_ready!(
        s.ensure(SUBNET, "nodes", vcn, || subnet(
            &plan.nodes,
            private,
            nodes_list,
            true
        ))
        .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the nodes', the load balancers' and the endpoint subnet, in
/// that order, if ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[
        (SUBNET, "nodes"),
        (SUBNET, "load-balancers"),
        (SUBNET, "endpoint"),
    ])
    .await
}
