//! The service gateway service: the private route table's way to the region's Oracle Services
//! Network (the "All Services In Oracle Services Network" service), without the internet.

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Kind, Scope, each_ready};
use crate::client::Service as Api;
use crate::client::answers::{Service, ServiceGateway};

pub(super) const SERVICE_GATEWAY: Kind<ServiceGateway> = Kind {
    collection: "serviceGateways",
    noun: "service gateway",
    list: "ListServiceGateways",
    create: "CreateServiceGateway",
    delete: "DeleteServiceGateway",
    update: "UpdateServiceGateway",
    in_vcn: true,
    answer: PhantomData,
};

/// One build turn: finds the region's "All Services In Oracle Services Network" service, then
/// creates the gateway to it in the VCN and waits until it is available.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    let n = s.net;
    let services: Vec<Service> = n
        .oci
        .list_of(&n.calls, "ListServices", Api::Core, "/services")
        .await?;
    let Some(all) = services.iter().find(|v| {
        v.cidr_block
            .ends_with("-services-in-oracle-services-network")
    }) else {
        return Ok(Progress::Blocked(format!(
            "OCI lists no \"All Services In Oracle Services Network\" in {}",
            n.infra.region
        )));
    };
    built.services_cidr = Some(all.cidr_block.clone());
    let service = all.id.clone();
    built.service_gateway = each_ready!(
        s.ensure(
            SERVICE_GATEWAY,
            "sgw",
            vcn,
            || json!({ "vcnId": vcn, "services": [{ "serviceId": service }] })
        )
        .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the gateway if it is ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[(SERVICE_GATEWAY, "sgw")]).await
}
