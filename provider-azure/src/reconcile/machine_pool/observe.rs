//! Reading AKS: the agent pool (mapped to the kernel's [`ManagedPool`] with [`ObservedPool`],
//! AKS's own view of it), the state of the operation `status.operation` tracks, and the provider
//! IDs of its nodes (its scale set's instances, written as AKS's cloud provider writes them);
//! `observe` reads them in that order, as [`PoolLook`] allows.

use std::collections::BTreeMap;

use contract::plan::Lifecycle;
use contract::scaling::{InstanceLife, provider_id_list};
use provider_runtime::machine_pool::{ManagedPool, PoolLook, PoolObserved};
use provider_runtime::{CloudError, ProviderError, read_answer};
use serde_json::Value;

use super::{At, PoolClients};
use crate::client;
use crate::client::answers;

/// What AKS says about a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedPool {
    /// Its properties as read: the body of the next PUT.
    pub props: Value,
    /// Its ETag, when given.
    pub etag: Option<String>,
    /// `count`.
    pub count: Option<i32>,
    /// Autoscaling `(minCount, maxCount)`, when on.
    pub autoscaling: Option<(i32, i32)>,
    /// `nodeLabels`.
    pub labels: BTreeMap<String, String>,
    /// `nodeTaints`, sorted.
    pub taints: Vec<String>,
    /// `mode`.
    pub mode: String,
    /// `upgradeSettings` `(maxSurge, maxUnavailable)`.
    pub upgrade: (Option<String>, Option<String>),
}

/// The name an agent pool's read is counted and refused under.
const GET: &str = "AgentPools_Get";

/// The pool as read, in the diff's terms; `props` are its properties as ARM answered them (kept
/// for the next PUT).
///
/// # Errors
/// An answer that lacks a field a decision needs (the mode; a bound while the autoscaler is on):
/// the field is named.
fn observed(pool: &answers::AgentPool, props: Value) -> Result<ObservedPool, CloudError> {
    let p = &pool.properties;
    let mut taints = p.node_taints.clone().unwrap_or_default();
    taints.sort();
    let upgrade = p.upgrade_settings.clone().unwrap_or_default();
    Ok(ObservedPool {
        props,
        etag: pool.etag().map(String::from),
        count: Some(p.count),
        autoscaling: p.autoscaling(GET)?,
        labels: p.node_labels.clone().unwrap_or_default(),
        taints,
        mode: p.mode(GET)?.to_string(),
        upgrade: (upgrade.max_surge, upgrade.max_unavailable),
    })
}

fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "Creating" => Lifecycle::Creating,
        "Succeeded" | "Canceled" => Lifecycle::Running,
        "Updating" | "Upgrading" | "Scaling" | "Starting" | "Stopping" => Lifecycle::Updating,
        "Deleting" => Lifecycle::Deleting,
        "Failed" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// `azure://` and the instance's ARM id, its resource group in lower case (as AKS's cloud
/// provider writes `spec.providerID`).
pub fn provider_id(vm_id: &str) -> String {
    let parts: Vec<&str> = vm_id.split('/').collect();
    let fixed: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i > 0 && parts[i - 1].eq_ignore_ascii_case("resourceGroups") {
                p.to_ascii_lowercase()
            } else {
                (*p).to_string()
            }
        })
        .collect();
    format!("azure://{}", fixed.join("/"))
}

/// The agent pool `name`, or `None` when AKS has none of that name.
///
/// # Errors
/// ARM's classified failures.
pub(super) async fn describe(
    clients: &PoolClients,
    name: &str,
) -> Result<Option<ManagedPool<ObservedPool>>, ProviderError> {
    let Some(raw) = clients
        .arm
        .get::<Value>(
            &clients.calls,
            GET,
            &clients.pool_path(name),
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(None);
    };
    let pool: answers::AgentPool = read_answer(GET, raw.clone())?;
    let props = raw.pointer("/properties").cloned().unwrap_or_default();
    let detail = observed(&pool, props)?;
    let p = &pool.properties;
    let state = p.provisioning_state.clone();
    Ok(Some(ManagedPool {
        id: pool.id.clone(),
        lifecycle: lifecycle(&state),
        issues: if state == "Failed" {
            vec![format!("agent pool {name} is in provisioning state Failed")]
        } else {
            Vec::new()
        },
        state,
        version: p
            .current_orchestrator_version
            .clone()
            .filter(|v| !v.is_empty()),
        tags: answers::tags(&p.tags),
        desired_size: detail.count,
        detail,
    }))
}

/// The provider IDs of the pool `name`'s nodes: the instances of its scale sets in the
/// cluster's node resource group (none while the cluster or the group is not there).
///
/// # Errors
/// ARM's classified failures.
async fn provider_ids(clients: &PoolClients, name: &str) -> Result<Vec<String>, ProviderError> {
    let Some(cluster) = clients
        .arm
        .get::<answers::ManagedCluster>(
            &clients.calls,
            "ManagedClusters_Get",
            &clients.cluster_path,
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(Vec::new());
    };
    let node_group = cluster.properties.node_resource_group;
    if node_group.is_empty() {
        return Ok(Vec::new());
    }
    let sets_path = format!(
        "{}/providers/Microsoft.Compute/virtualMachineScaleSets",
        clients.arm.group_path(&node_group)
    );
    let sets = match clients
        .arm
        .list::<answers::ScaleSet>(
            &clients.calls,
            "VirtualMachineScaleSets_List",
            &sets_path,
            client::COMPUTE,
        )
        .await
    {
        Ok(s) => s,
        Err(f) if f.error.is_not_found() => return Ok(Vec::new()),
        Err(f) => return Err(f.into()),
    };
    let mut ids = Vec::new();
    for set in sets.iter().filter(|s| s.of_pool(name)) {
        let vmss = set.name();
        let vms = match clients
            .arm
            .list::<answers::ScaleSetVm>(
                &clients.calls,
                "VirtualMachineScaleSetVMs_List",
                &format!("{sets_path}/{vmss}/virtualMachines"),
                client::COMPUTE,
            )
            .await
        {
            Ok(v) => v,
            Err(f) if f.error.is_not_found() => continue,
            Err(f) => return Err(f.into()),
        };
        ids.extend(vms.iter().map(|vm| provider_id(&vm.id)));
    }
    Ok(provider_id_list(
        ids.iter().map(|id| (id.as_str(), InstanceLife::Present)),
    ))
}

/// One look: the pool, then the state of the operation [`PoolLook`] names (once the pool is
/// found), then its nodes' provider IDs when the look asks for them (whether or not the pool is
/// found: an ID stays while its instance exists).
///
/// # Errors
/// ARM's classified failures.
pub(super) async fn observe(
    at: &At,
    look: PoolLook<'_>,
) -> Result<PoolObserved<ObservedPool>, ProviderError> {
    let clients = &at.clients;
    let pool = describe(clients, &at.pool).await?;
    let operation = match pool.as_ref().and_then(|p| look.operation(p)) {
        Some(op) => clients.arm.operation_state(&clients.calls, &op.id).await?,
        None => None,
    };
    look.seen(pool, operation, provider_ids(clients, &at.pool))
        .await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(props: Value) -> Result<ObservedPool, CloudError> {
        let pool: answers::AgentPool =
            read_answer(GET, json!({"id": "/p", "properties": props.clone()})).unwrap();
        observed(&pool, props)
    }

    #[test]
    fn a_pool_lacking_what_the_diff_compares_is_refused_not_changed() {
        let base = json!({"provisioningState": "Succeeded", "count": 2, "mode": "User"});
        let ok = read(base.clone()).unwrap();
        assert_eq!(
            (ok.count, ok.mode.as_str(), ok.autoscaling),
            (Some(2), "User", None)
        );
        let mut no_min = base.clone();
        no_min["enableAutoScaling"] = json!(true);
        no_min["maxCount"] = json!(5);
        let e = read(no_min).unwrap_err();
        assert!(e.to_string().contains("`properties.minCount`"), "{e}");
        let mut no_mode = base;
        no_mode.as_object_mut().unwrap().remove("mode");
        let e = read(no_mode).unwrap_err();
        assert!(e.to_string().contains("`properties.mode`"), "{e}");
    }

    #[test]
    fn provider_ids_are_written_as_aks_writes_them() {
        assert_eq!(
            provider_id(
                "/subscriptions/s/resourceGroups/MC_rg_c_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-1-vmss/virtualMachines/3"
            ),
            "azure:///subscriptions/s/resourceGroups/mc_rg_c_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-1-vmss/virtualMachines/3"
        );
    }
}
