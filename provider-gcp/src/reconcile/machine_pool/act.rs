//! The GKE calls that change a node pool: create, tag (adopt), upgrade, update, delete, one
//! function a step of the kernel's. Every change is a long-running Operation whose name the
//! kernel tracks. A create spreads the pool over its zones (the MachinePool's failure domains),
//! its count per zone.

use std::collections::BTreeMap;

use contract::scaling::ScalingIntent;
use contract::version::KubeVersion;
use google_cloud_container_v1::model as gke;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Request, Started};
use provider_runtime::machine_pool::{ManagedPool, PoolCreate, PoolWant};

use super::desired::{PoolSpec, Taint, invalid, per_zone, pool_zones};
use super::diff::PoolChange;
use super::observe::{ObservedPool, get_node_pool};
use super::{At, PoolClients, SERVICE};
use crate::client::counted;
use crate::reconcile::gke_version;
use crate::scope;
use provider_runtime::CloudError;
use provider_runtime::overrides::overridden;

/// What a step answers.
type Answered = Result<Started<ManagedPool<ObservedPool>>, ProviderError>;

fn node_taints(taints: &[Taint]) -> gke::NodeTaints {
    gke::NodeTaints::new().set_taints(taints.iter().map(|(k, v, e)| {
        gke::NodeTaint::new()
            .set_key(k)
            .set_value(v)
            .set_effect(e.clone())
    }))
}

/// The node pool `name` as `want` asks, at `version`.
///
/// # Errors
/// A terminal `InvalidSpec` for zones the cluster does not have, a count that does not divide
/// over them, or overrides that make no request.
fn pool_body(
    clients: &PoolClients,
    name: &str,
    want: &PoolWant<'_, PoolSpec>,
    version: Option<&KubeVersion>,
    request: &Request,
) -> Result<gke::NodePool, ProviderError> {
    let zones = pool_zones(want.machine_pool, &clients.infra).map_err(invalid)?;
    let spec = want.spec;
    let count = per_zone(
        want.scaling.initial_count(),
        zones.len(),
        "MachinePool.spec.replicas",
    )
    .map_err(invalid)?;
    let mut config = gke::NodeConfig::new()
        .set_machine_type(&spec.machine_type)
        .set_labels(spec.labels.clone())
        .set_taints(node_taints(&spec.taints).taints)
        .set_spot(spec.spot)
        .set_resource_labels(request.tags.clone());
    if let Some(disk) = spec.disk_size_gb {
        config = config.set_disk_size_gb(disk);
    }
    if let Some(image) = &spec.image_type {
        config = config.set_image_type(image);
    }
    if let Some(account) = &spec.service_account {
        config = config.set_service_account(account);
    }
    let mut pool = gke::NodePool::new()
        .set_name(name)
        .set_initial_node_count(count)
        .set_locations(zones.clone())
        .set_config(config)
        .set_management(
            gke::NodeManagement::new()
                .set_auto_repair(true)
                .set_auto_upgrade(false),
        );
    if let Some(v) = version {
        pool = pool.set_version(gke_version(v));
    }
    if let Some((surge, unavailable)) = spec.upgrade {
        pool = pool.set_upgrade_settings(
            gke::node_pool::UpgradeSettings::new()
                .set_max_surge(surge)
                .set_max_unavailable(unavailable),
        );
    }
    if let ScalingIntent::Autoscaled { min, max, .. } = want.scaling {
        let min = per_zone(min, zones.len(), "spec.scaling.minReplicas").map_err(invalid)?;
        let max = per_zone(max, zones.len(), "spec.scaling.maxReplicas").map_err(invalid)?;
        pool = pool.set_autoscaling(
            gke::NodePoolAutoscaling::new()
                .set_enabled(true)
                .set_min_node_count(min)
                .set_max_node_count(max),
        );
    }
    if let Some(patch) = &spec.request_overrides {
        pool = overridden(&pool, patch, scope::PROVIDER)?;
    }
    Ok(pool)
}

/// CreateNodePool named `at.pool` as `want` asks, at `version`, over the MachinePool's zones. A
/// pool of that name made meanwhile (by a pass that crashed before recording it) is done: the
/// next pass sees it.
///
/// # Errors
/// GKE's; a terminal `InvalidSpec` for a spec or overrides GKE cannot be asked.
pub(super) async fn create(at: &At, new: PoolCreate<'_, PoolSpec>) -> Answered {
    let (want, version, request) = (new.want, new.version, new.request);
    let (clients, name) = (&at.clients, at.pool.as_str());
    let pool = pool_body(clients, name, &want, version, request)?;
    let result = counted(
        &clients.calls,
        SERVICE,
        "CreateNodePool",
        clients
            .gke
            .container
            .create_node_pool()
            .set_parent(clients.cluster_path())
            .set_node_pool(pool)
            .send(),
    )
    .await;
    match result {
        Ok(op) => Ok(Started::Created {
            id: op.name,
            observed: None,
            overrides: want.spec.request_overrides.is_some(),
        }),
        // Made by a pass that crashed before recording it: the next pass finds it.
        Err(f) if f.already_exists => {
            tracing::info!(message = %f.error, "the pool exists already");
            Ok(Started::Done)
        }
        Err(f) => Err(f.into()),
    }
}

/// The pool's name from its id (its self link).
fn name_of(id: &str) -> Option<&str> {
    id.rsplit_once("/nodePools/").map(|(_, n)| n)
}

/// Adopting, or putting our labels back: `tags` added to the pool's resource labels.
pub(super) async fn tag(at: &At, id: &str, tags: &BTreeMap<String, String>) -> Answered {
    relabel(at, id, |l| l.extend(tags.clone())).await
}

/// Removes our ownership label (`key`).
pub(super) async fn untag(at: &At, id: &str, key: &str) -> Answered {
    relabel(at, id, |l| {
        l.remove(key);
    })
    .await
}

/// UpdateNodePool with the pool's resource labels as `change` leaves them (GKE replaces the
/// whole map).
async fn relabel(
    at: &At,
    id: &str,
    change: impl FnOnce(&mut BTreeMap<String, String>),
) -> Answered {
    let clients = &at.clients;
    let name =
        name_of(id).ok_or_else(|| invalid("the node pool's name cannot be read from its id"))?;
    let Some(current) = get_node_pool(clients, name).await? else {
        return Err(CloudError::NotFound(format!("GKE node pool {name} is gone")).into());
    };
    let mut labels: BTreeMap<String, String> = current
        .config
        .map(|c| c.resource_labels.into_iter().collect())
        .unwrap_or_default();
    change(&mut labels);
    counted(
        &clients.calls,
        SERVICE,
        "UpdateNodePool",
        clients
            .gke
            .container
            .update_node_pool()
            .set_name(clients.pool_path(name))
            .set_resource_labels(gke::ResourceLabels::new().set_labels(labels))
            .send(),
    )
    .await?;
    Ok(Started::Done)
}

pub(super) async fn upgrade(at: &At, to: &KubeVersion) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let op = counted(
        &clients.calls,
        SERVICE,
        "UpdateNodePool",
        clients
            .gke
            .container
            .update_node_pool()
            .set_name(clients.pool_path(name))
            .set_node_version(gke_version(to))
            .send(),
    )
    .await?;
    Ok(Started::Operation(op.name))
}

pub(super) async fn update(at: &At, change: &PoolChange) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let c = &clients.gke.container;
    let path = clients.pool_path(name);
    let op = match change {
        PoolChange::Autoscaling(bounds) => {
            let autoscaling = match bounds {
                Some((min, max)) => gke::NodePoolAutoscaling::new()
                    .set_enabled(true)
                    .set_min_node_count(*min)
                    .set_max_node_count(*max),
                None => gke::NodePoolAutoscaling::new().set_enabled(false),
            };
            counted(
                &clients.calls,
                SERVICE,
                "SetNodePoolAutoscaling",
                c.set_node_pool_autoscaling()
                    .set_name(&path)
                    .set_autoscaling(autoscaling)
                    .send(),
            )
            .await?
        }
        PoolChange::Size(n) => {
            counted(
                &clients.calls,
                SERVICE,
                "SetNodePoolSize",
                c.set_node_pool_size()
                    .set_name(&path)
                    .set_node_count(*n)
                    .send(),
            )
            .await?
        }
        PoolChange::Settings {
            labels,
            taints,
            upgrade,
        } => {
            let mut request = c.update_node_pool().set_name(&path);
            if let Some(labels) = labels {
                request = request.set_labels(gke::NodeLabels::new().set_labels(labels.clone()));
            }
            if let Some(taints) = taints {
                request = request.set_taints(node_taints(taints));
            }
            if let Some((surge, unavailable)) = upgrade {
                request = request.set_upgrade_settings(
                    gke::node_pool::UpgradeSettings::new()
                        .set_max_surge(*surge)
                        .set_max_unavailable(*unavailable),
                );
            }
            counted(&clients.calls, SERVICE, "UpdateNodePool", request.send()).await?
        }
    };
    Ok(Started::Operation(op.name))
}

pub(super) async fn delete(at: &At) -> Answered {
    let (clients, name) = (&at.clients, at.pool.as_str());
    let outcome = counted(
        &clients.calls,
        SERVICE,
        "DeleteNodePool",
        clients
            .gke
            .container
            .delete_node_pool()
            .set_name(clients.pool_path(name))
            .send(),
    )
    .await;
    Started::after_delete(match outcome {
        Ok(op) if op.name.is_empty() => Ok(Started::Untracked),
        Ok(op) => Ok(Started::Operation(op.name)),
        Err(f) => Err(f.error),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pools_name_is_read_from_its_self_link() {
        assert_eq!(
            name_of(
                "https://container.googleapis.com/v1/projects/p/locations/r/clusters/c/nodePools/np"
            ),
            Some("np")
        );
        assert_eq!(name_of("np"), None);
    }
}
