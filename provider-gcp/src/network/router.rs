//! The Cloud NAT service: a Cloud Router on the VPC network with one NAT, its addresses
//! allocated by Google, for every range of every subnetwork, so that private nodes reach the
//! internet.

use google_cloud_compute_v1::model as gce;
use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};

use super::{Compute, SERVICE, Scope, after_delete, created_or_pending, description};
use crate::client::{Failure, absent_if_not_found, counted};

/// Reads the Cloud Router `name` in the region; `None` when there is none.
async fn get(c: &Compute, name: &str) -> Result<Option<gce::Router>, Failure> {
    absent_if_not_found(
        counted(
            &c.calls,
            SERVICE,
            "routers.get",
            c.clients
                .routers
                .get()
                .set_project(&c.project)
                .set_region(&c.region)
                .set_router(name)
                .send(),
        )
        .await,
    )
}

/// One build turn: the router is ready when it is there and ours, else it is created with its
/// NAT.
pub(super) async fn reconcile(s: &Scope<'_>) -> Result<Progress, ProviderError> {
    let c = s.compute;
    if let Some(r) = get(c, &s.names.router).await? {
        s.check("Cloud Router", &s.names.router, r.description.as_deref())?;
        return Ok(Progress::Ready);
    }
    let body = gce::Router::new()
        .set_name(&s.names.router)
        .set_network(s.network_url())
        .set_description(description(s.owner))
        .set_nats([gce::RouterNat::new()
            .set_name(&s.names.nat)
            .set_nat_ip_allocate_option(gce::router_nat::NatIpAllocateOption::AutoOnly)
            .set_source_subnetwork_ip_ranges_to_nat(
                gce::router_nat::SourceSubnetworkIpRangesToNat::AllSubnetworksAllIpRanges,
            )]);
    created_or_pending(
        counted(
            &c.calls,
            SERVICE,
            "routers.insert",
            c.clients
                .routers
                .insert()
                .set_project(&c.project)
                .set_region(&c.region)
                .set_body(body)
                .send(),
        )
        .await,
        "Cloud Router with its NAT",
    )
}

/// One tear-down turn: deletes the router, and its NAT with it, when it is there and ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    let c = s.compute;
    match get(c, &s.names.router).await? {
        Some(r) if s.owns(r.description.as_deref()) => after_delete(
            counted(
                &c.calls,
                SERVICE,
                "routers.delete",
                c.clients
                    .routers
                    .delete()
                    .set_project(&c.project)
                    .set_region(&c.region)
                    .set_router(&s.names.router)
                    .send(),
            )
            .await,
            "Cloud Router",
        ),
        _ => Ok(Removal::Gone),
    }
}
