//! The resource group service: the group the cluster's resources live in. An existing group is
//! used as it is; a missing one is created, tagged as ours, and deleted with the cluster once no
//! managed cluster is left in it.

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use reqwest::Method;
use serde_json::json;

use super::{Built, Scope, after_delete};
use crate::client;
use crate::client::answers::{Named, ResourceGroup, tags};

/// One build turn of the resource group service: read the group, and create it when it is
/// missing.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let n = s.net;
    let found = n
        .arm
        .get::<ResourceGroup>(
            &n.calls,
            "ResourceGroups_Get",
            &s.group_path(),
            client::RESOURCES,
        )
        .await?;
    if let Some(g) = found {
        if g.deleting() {
            return Ok(Progress::waiting(format!(
                "the resource group {} is being deleted",
                n.infra.resource_group
            )));
        }
        built.group_ours = s.owner.owns(&tags(&g.tags));
        built.group = true;
        return Ok(Progress::Ready);
    }
    n.arm
        .call(
            &n.calls,
            "ResourceGroups_CreateOrUpdate",
            Method::PUT,
            &s.group_path(),
            client::RESOURCES,
            Some(&json!({ "location": n.infra.location, "tags": s.tags() })),
            None,
        )
        .await?;
    built.group_ours = true;
    built.group = true;
    Ok(Progress::Ready)
}

/// One tear-down turn of the resource group service: delete the group when it is ours and holds
/// no managed cluster.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    let n = s.net;
    let found = n
        .arm
        .get::<ResourceGroup>(
            &n.calls,
            "ResourceGroups_Get",
            &s.group_path(),
            client::RESOURCES,
        )
        .await?;
    let Some(g) = found.filter(|g| s.owner.owns(&tags(&g.tags))) else {
        return Ok(Removal::Gone);
    };
    if g.deleting() {
        return Ok(Removal::waiting(format!(
            "the resource group {} is being deleted",
            n.infra.resource_group
        )));
    }
    let clusters = n
        .arm
        .list::<Named>(
            &n.calls,
            "ManagedClusters_ListByResourceGroup",
            &format!(
                "{}/providers/Microsoft.ContainerService/managedClusters",
                s.group_path()
            ),
            client::CONTAINER,
        )
        .await?;
    if let Some(c) = clusters.first() {
        return Ok(Removal::waiting(format!(
            "the resource group {} still holds the managed cluster {}",
            n.infra.resource_group, c.name
        )));
    }
    after_delete(
        n.arm
            .call(
                &n.calls,
                "ResourceGroups_Delete",
                Method::DELETE,
                &s.group_path(),
                client::RESOURCES,
                None,
                None,
            )
            .await,
        format!("resource group {}", n.infra.resource_group),
    )
}
