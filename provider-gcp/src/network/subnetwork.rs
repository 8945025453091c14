//! The subnetwork service: the nodes' subnetwork in the cluster's region, with Private Google
//! Access and one secondary range for Pods and one for Services.

use google_cloud_compute_v1::model as gce;
use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};

use super::{Built, Compute, SERVICE, Scope, after_delete, created_or_pending, description};
use crate::client::{Failure, absent_if_not_found, counted};
use crate::reconcile::cluster::CreatedNetwork;
use crate::scope;

/// Reads the subnetwork `name` in the region; `None` when there is none.
pub(super) async fn get(c: &Compute, name: &str) -> Result<Option<gce::Subnetwork>, Failure> {
    absent_if_not_found(
        counted(
            &c.calls,
            SERVICE,
            "subnetworks.get",
            c.clients
                .subnetworks
                .get()
                .set_project(&c.project)
                .set_region(&c.region)
                .set_subnetwork(name)
                .send(),
        )
        .await,
    )
}

/// One build turn: waits for the VPC network; the subnetwork is ready when it is there and ours
/// (its primary range goes into `built`), else it is created with `plan`'s three blocks.
pub(super) async fn reconcile(
    s: &Scope<'_>,
    plan: &CreatedNetwork,
    built: &mut Built,
) -> Result<Progress, ProviderError> {
    let c = s.compute;
    if !built.network {
        return Ok(Progress::Blocked("waiting for the VPC network".into()));
    }
    if let Some(sub) = get(c, &s.names.subnetwork).await? {
        s.check(
            "subnetwork",
            &s.names.subnetwork,
            sub.description.as_deref(),
        )?;
        built.subnet_cidr = sub.ip_cidr_range.clone();
        return Ok(Progress::Ready);
    }
    let body = gce::Subnetwork::new()
        .set_name(&s.names.subnetwork)
        .set_network(s.network_url())
        .set_ip_cidr_range(&plan.nodes)
        .set_private_ip_google_access(true)
        .set_description(description(s.owner))
        .set_secondary_ip_ranges([
            gce::SubnetworkSecondaryRange::new()
                .set_range_name(scope::DEFAULT_PODS_RANGE)
                .set_ip_cidr_range(&plan.pods),
            gce::SubnetworkSecondaryRange::new()
                .set_range_name(scope::DEFAULT_SERVICES_RANGE)
                .set_ip_cidr_range(&plan.services),
        ]);
    created_or_pending(
        counted(
            &c.calls,
            SERVICE,
            "subnetworks.insert",
            c.clients
                .subnetworks
                .insert()
                .set_project(&c.project)
                .set_region(&c.region)
                .set_body(body)
                .send(),
        )
        .await,
        "subnetwork",
    )
}

/// One tear-down turn: deletes the subnetwork when it is there and ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    let c = s.compute;
    match get(c, &s.names.subnetwork).await? {
        Some(sub) if s.owns(sub.description.as_deref()) => after_delete(
            counted(
                &c.calls,
                SERVICE,
                "subnetworks.delete",
                c.clients
                    .subnetworks
                    .delete()
                    .set_project(&c.project)
                    .set_region(&c.region)
                    .set_subnetwork(&s.names.subnetwork)
                    .send(),
            )
            .await,
            "subnetwork",
        ),
        _ => Ok(Removal::Gone),
    }
}
