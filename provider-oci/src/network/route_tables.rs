//! The route tables service: the public route table (everything to the internet gateway) and
//! the private one (everything to the NAT gateway, the Oracle Services Network to the service
//! gateway).

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Kind, Scope, each_ready};
use crate::client::answers::RouteTable;

pub(super) const ROUTE_TABLE: Kind<RouteTable> = Kind {
    collection: "routeTables",
    noun: "route table",
    list: "ListRouteTables",
    create: "CreateRouteTable",
    delete: "DeleteRouteTable",
    update: "UpdateRouteTable",
    in_vcn: true,
    answer: PhantomData,
};

/// One build turn: once the three gateways are there, creates the public then the private
/// route table and waits until each is available.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    let (Some(igw), Some(nat), Some(sgw), Some(osn)) = (
        &built.internet_gateway,
        &built.nat_gateway,
        &built.service_gateway,
        &built.services_cidr,
    ) else {
        return Ok(Progress::Blocked("waiting for the gateways".into()));
    };
    built.public_routes = each_ready!(
        s.ensure(ROUTE_TABLE, "public-routes", vcn, || json!({
            "vcnId": vcn,
            "routeRules": [{ "destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": igw, "description": "to the internet" }],
        }))
        .await?
    );
    built.private_routes = each_ready!(
        s.ensure(ROUTE_TABLE, "private-routes", vcn, || json!({
            "vcnId": vcn,
            "routeRules": [
                { "destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": nat, "description": "to the internet through NAT" },
                { "destination": osn, "destinationType": "SERVICE_CIDR_BLOCK", "networkEntityId": sgw, "description": "to the Oracle Services Network" },
            ],
        }))
        .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the private, then the public route table, if ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[
        (ROUTE_TABLE, "private-routes"),
        (ROUTE_TABLE, "public-routes"),
    ])
    .await
}
