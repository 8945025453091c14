//! Reading GKE: the node pool, mapped to the shared [`ManagedPool`] with GKE's own view
//! ([`ObservedPool`]), its size read from its instance groups' target sizes (GKE's NodePool
//! keeps only the count it was created with); the state of the operation the kernel tracks;
//! the provider IDs of its nodes (the groups' managed instances, a deleting one included until
//! it is gone); the one look a pass takes ([`observe`]); and the kind's status.

use std::collections::BTreeMap;

use contract::plan::Lifecycle;
use contract::scaling::{InstanceLife, provider_id_list};
use google_cloud_container_v1::model as gke;
use google_cloud_gax::paginator::ItemPaginator as _;
use provider_runtime::ProviderError;
use provider_runtime::machine_pool::{ManagedPool, PoolLook, PoolObserved};

use super::desired::{Taint, sort_taints};
use super::{At, PoolClients, SERVICE};
use crate::api::GKEMachinePoolObserved;
use crate::client::{absent_if_not_found, counted};
use crate::reconcile::control_plane::get_operation;

/// The Compute method that lists a pool's instances (counted, and held by its `Retry-After`).
const LIST_MANAGED_INSTANCES: &str = "instanceGroupManagers.listManagedInstances";

/// What GKE says about a pool, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedPool {
    /// Its self link.
    pub self_link: String,
    /// Its zones.
    pub zones: Vec<String>,
    /// Its instance groups.
    pub groups: Vec<String>,
    /// Nodes per zone, from the instance groups' target sizes.
    pub per_zone: Option<i32>,
    /// Autoscaling `(min, max)` per zone, when on.
    pub autoscaling: Option<(i32, i32)>,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Taints, sorted.
    pub taints: Vec<Taint>,
    /// `(maxSurge, maxUnavailable)`.
    pub upgrade: (i32, i32),
}

/// One look: the pool, the state of the operation [`PoolLook::operation`] names once the pool
/// is found, and its nodes' provider IDs when the look asks for them.
///
/// # Errors
/// GKE's and Compute's, but not-found.
pub(super) async fn observe(
    at: &At,
    look: PoolLook<'_>,
) -> Result<PoolObserved<ObservedPool>, ProviderError> {
    let clients = &at.clients;
    let pool = describe(clients, &at.pool).await?;
    let operation = match pool.as_ref().and_then(|p| look.operation(p)) {
        Some(op) => get_operation(&clients.gke, &clients.calls, &clients.parent, &op.id).await?,
        None => None,
    };
    look.seen(pool, operation, provider_ids(clients, &at.pool))
        .await
}

/// The node pool `name` as GKE has it, `None` when GKE has none.
pub(super) async fn get_node_pool(
    clients: &PoolClients,
    name: &str,
) -> Result<Option<gke::NodePool>, ProviderError> {
    Ok(absent_if_not_found(
        counted(
            &clients.calls,
            SERVICE,
            "GetNodePool",
            clients
                .gke
                .container
                .get_node_pool()
                .set_name(clients.pool_path(name))
                .send(),
        )
        .await,
    )?)
}

/// The pool `name` in the shared terms, its size read from its instance groups.
async fn describe(
    clients: &PoolClients,
    name: &str,
) -> Result<Option<ManagedPool<ObservedPool>>, ProviderError> {
    let Some(pool) = get_node_pool(clients, name).await? else {
        return Ok(None);
    };
    let mut detail = observed(&pool);
    let mut sizes = Vec::new();
    for url in &detail.groups {
        sizes.push(group_size(clients, url).await?);
    }
    // Every zone has the same count (setSize sizes each); a group not listed yet counts none.
    detail.per_zone = sizes
        .iter()
        .flatten()
        .copied()
        .max()
        .or(sizes.is_empty().then_some(0));
    let total = detail
        .per_zone
        .map(|n| n * i32::try_from(detail.zones.len().max(1)).unwrap_or(1));
    let mut issues = Vec::new();
    issues.extend(
        pool.conditions
            .iter()
            .map(|c| c.message.clone())
            .filter(|m| !m.is_empty()),
    );
    let tags = pool
        .config
        .as_ref()
        .map(|c| {
            c.resource_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(ManagedPool {
        id: pool.self_link.clone(),
        lifecycle: lifecycle(&pool.status),
        state: pool.status.name().unwrap_or("UNKNOWN").to_string(),
        version: Some(
            pool.version
                .split("-gke.")
                .next()
                .unwrap_or_default()
                .to_string(),
        )
        .filter(|v| !v.is_empty()),
        tags,
        issues,
        desired_size: total,
        detail,
    }))
}

/// The target size of the instance group at `url`, `None` when it is not there.
async fn group_size(clients: &PoolClients, url: &str) -> Result<Option<i32>, ProviderError> {
    let (zone, name) = group_of(url);
    let group = absent_if_not_found(
        counted(
            &clients.calls,
            "compute",
            "instanceGroupManagers.get",
            clients
                .gke
                .groups
                .get()
                .set_project(&clients.infra.project)
                .set_zone(zone)
                .set_instance_group_manager(name)
                .send(),
        )
        .await,
    )?;
    Ok(group.and_then(|g| g.target_size))
}

/// The provider IDs of the pool `name`'s nodes: its groups' managed instances, read afresh.
async fn provider_ids(clients: &PoolClients, name: &str) -> Result<Vec<String>, ProviderError> {
    let Some(pool) = get_node_pool(clients, name).await? else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::new();
    for url in &pool.instance_group_urls {
        let (zone, group) = group_of(url);
        let sent = clients.calls.admit("compute", LIST_MANAGED_INSTANCES)?;
        let mut items = clients
            .gke
            .groups
            .list_managed_instances()
            .set_project(&clients.infra.project)
            .set_zone(zone)
            .set_instance_group_manager(group)
            .by_item();
        let listed = loop {
            match items.next().await {
                None => break Ok(()),
                Some(Ok(item)) => {
                    if let Some(instance) = item.instance.as_deref() {
                        let instance_name = instance.rsplit('/').next().unwrap_or_default();
                        ids.push(format!(
                            "gce://{}/{zone}/{instance_name}",
                            clients.infra.project
                        ));
                    }
                }
                Some(Err(e)) => break Err(crate::client::classify(&e)),
            }
        };
        // One listing, counted once (a group gone counted a failure and a success before).
        sent.answered(LIST_MANAGED_INSTANCES, listed.as_ref().copied());
        match listed {
            Err(failure) if !failure.is_not_found() => return Err(failure.into()),
            _ => {}
        }
    }
    Ok(provider_id_list(
        ids.iter().map(|id| (id.as_str(), InstanceLife::Present)),
    ))
}

/// `(zone, name)` of an instance group manager URL.
fn group_of(url: &str) -> (&str, &str) {
    let mut parts = url.rsplit('/');
    let name = parts.next().unwrap_or_default();
    let _ = parts.next();
    let zone = parts.next().unwrap_or_default();
    (zone, name)
}

/// GKE's own view of `pool`, its size not yet read.
fn observed(pool: &gke::NodePool) -> ObservedPool {
    let config = pool.config.clone().unwrap_or_default();
    let mut taints: Vec<_> = config
        .taints
        .iter()
        .map(|t| (t.key.clone(), t.value.clone(), t.effect.clone()))
        .collect();
    sort_taints(&mut taints);
    ObservedPool {
        self_link: pool.self_link.clone(),
        zones: pool.locations.clone(),
        groups: pool.instance_group_urls.clone(),
        per_zone: None,
        autoscaling: pool
            .autoscaling
            .as_ref()
            .filter(|a| a.enabled)
            .map(|a| (a.min_node_count, a.max_node_count)),
        labels: config
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        taints,
        upgrade: pool
            .upgrade_settings
            .as_ref()
            .map_or((1, 0), |u| (u.max_surge, u.max_unavailable)),
    }
}

/// GKE's node-pool status in the shared terms.
fn lifecycle(status: &gke::node_pool::Status) -> Lifecycle {
    use gke::node_pool::Status;
    match status {
        Status::Provisioning => Lifecycle::Creating,
        Status::Running => Lifecycle::Running,
        Status::RunningWithError => Lifecycle::Degraded,
        Status::Reconciling => Lifecycle::Updating,
        Status::Stopping => Lifecycle::Deleting,
        Status::Error => Lifecycle::Failed,
        other => Lifecycle::Other(other.name().unwrap_or("UNKNOWN").to_string()),
    }
}

/// What only GKE reports of the pool: `status.gke`.
pub(super) fn report(pool: &ObservedPool) -> GKEMachinePoolObserved {
    GKEMachinePoolObserved {
        instance_groups: pool.groups.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn group_urls_name_their_zone() {
        assert_eq!(
            group_of(
                "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroupManagers/gke-c-p-1234567-grp"
            ),
            ("us-central1-a", "gke-c-p-1234567-grp")
        );
    }
}
