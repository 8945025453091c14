//! The VPC network service: one network in custom mode, so that it makes no subnetworks of its
//! own (the [`super::subnetwork`] service makes the one the nodes use).

use google_cloud_compute_v1::model as gce;
use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};

use super::{Built, Compute, SERVICE, Scope, after_delete, created_or_pending, description};
use crate::client::{Failure, absent_if_not_found, counted};

/// Reads the VPC network `name` of the project; `None` when there is none.
pub(super) async fn get(c: &Compute, name: &str) -> Result<Option<gce::Network>, Failure> {
    absent_if_not_found(
        counted(
            &c.calls,
            SERVICE,
            "networks.get",
            c.clients
                .networks
                .get()
                .set_project(&c.project)
                .set_network(name)
                .send(),
        )
        .await,
    )
}

/// One build turn: the network is ready when it is there and ours, else it is created.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let c = s.compute;
    if let Some(n) = get(c, &s.names.network).await? {
        s.check("VPC network", &s.names.network, n.description.as_deref())?;
        built.network = true;
        return Ok(Progress::Ready);
    }
    let body = gce::Network::new()
        .set_name(&s.names.network)
        .set_auto_create_subnetworks(false)
        .set_description(description(s.owner));
    created_or_pending(
        counted(
            &c.calls,
            SERVICE,
            "networks.insert",
            c.clients
                .networks
                .insert()
                .set_project(&c.project)
                .set_body(body)
                .send(),
        )
        .await,
        "VPC network",
    )
}

/// One tear-down turn: deletes the network when it is there and ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    let c = s.compute;
    match get(c, &s.names.network).await? {
        Some(n) if s.owns(n.description.as_deref()) => after_delete(
            counted(
                &c.calls,
                SERVICE,
                "networks.delete",
                c.clients
                    .networks
                    .delete()
                    .set_project(&c.project)
                    .set_network(&s.names.network)
                    .send(),
            )
            .await,
            "VPC network",
        ),
        _ => Ok(Removal::Gone),
    }
}
