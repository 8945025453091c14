//! Reading AKS: the agent pool (mapped to the kernel's [`ManagedPool`] with [`ObservedPool`],
//! AKS's own view of it), the state of the operation `status.operation` tracks, and the provider
//! IDs of its nodes (its scale set's instances, written as AKS's cloud provider writes them);
//! `observe` reads them in that order, as [`PoolLook`] allows.

use std::collections::BTreeMap;

use contract::plan::Lifecycle;
use contract::scaling::{InstanceLife, provider_id_list};
use provider_runtime::ProviderError;
use provider_runtime::machine_pool::{ManagedPool, PoolConnected, PoolLook, PoolObserved};
use serde_json::Value;

use super::PoolClients;
use crate::client;

/// What AKS says about a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedPool {
    /// Its properties as read: the body of the next PUT.
    pub props: Value,
    /// Its ETag.
    pub etag: String,
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

fn observed(props: &Value, etag: &str) -> ObservedPool {
    let int = |v: &Value| v.as_i64().and_then(|n| i32::try_from(n).ok());
    let mut taints: Vec<String> = props["nodeTaints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(String::from))
        .collect();
    taints.sort();
    let s = |v: &Value| v.as_str().map(String::from);
    ObservedPool {
        props: props.clone(),
        etag: etag.to_string(),
        count: int(&props["count"]),
        autoscaling: (props["enableAutoScaling"] == true).then(|| {
            (
                int(&props["minCount"]).unwrap_or(0),
                int(&props["maxCount"]).unwrap_or(0),
            )
        }),
        labels: props["nodeLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        taints,
        mode: props["mode"].as_str().unwrap_or("User").to_string(),
        upgrade: (
            s(&props["upgradeSettings"]["maxSurge"]),
            s(&props["upgradeSettings"]["maxUnavailable"]),
        ),
    }
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
    let Some(pool) = clients
        .arm
        .get(
            &clients.calls,
            "AgentPools_Get",
            &clients.pool_path(name),
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(None);
    };
    let props = &pool["properties"];
    let state = props["provisioningState"]
        .as_str()
        .unwrap_or("Unknown")
        .to_string();
    let detail = observed(
        props,
        pool["eTag"]
            .as_str()
            .or_else(|| props["eTag"].as_str())
            .unwrap_or_default(),
    );
    Ok(Some(ManagedPool {
        id: pool["id"].as_str().unwrap_or_default().to_string(),
        lifecycle: lifecycle(&state),
        issues: if state == "Failed" {
            vec![format!("agent pool {name} is in provisioning state Failed")]
        } else {
            Vec::new()
        },
        state,
        version: props["currentOrchestratorVersion"]
            .as_str()
            .map(String::from)
            .filter(|v| !v.is_empty()),
        tags: props["tags"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
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
        .get(
            &clients.calls,
            "ManagedClusters_Get",
            &clients.cluster_path,
            client::CONTAINER,
        )
        .await?
    else {
        return Ok(Vec::new());
    };
    let Some(node_group) = cluster["properties"]["nodeResourceGroup"]
        .as_str()
        .filter(|g| !g.is_empty())
    else {
        return Ok(Vec::new());
    };
    let sets_path = format!(
        "{}/providers/Microsoft.Compute/virtualMachineScaleSets",
        clients.arm.group_path(node_group)
    );
    let sets = match clients
        .arm
        .list(
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
    for set in sets
        .iter()
        .filter(|s| s["tags"]["aks-managed-poolName"] == name)
    {
        let vmss = set["name"].as_str().unwrap_or_default();
        let vms = match clients
            .arm
            .list(
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
        ids.extend(
            vms.iter()
                .filter_map(|vm| vm["id"].as_str())
                .map(provider_id),
        );
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
    at: &PoolConnected<PoolClients>,
    look: PoolLook<'_>,
) -> Result<PoolObserved<ObservedPool>, ProviderError> {
    let clients = &at.clients;
    let pool = describe(clients, &at.pool).await?;
    let operation = match pool.as_ref().and_then(|p| look.operation(p)) {
        Some(op) => clients.arm.operation_state(&clients.calls, &op.id).await?,
        None => None,
    };
    let provider_ids = if look.provider_ids() {
        provider_ids(clients, &at.pool).await?
    } else {
        Vec::new()
    };
    Ok(PoolObserved {
        pool,
        operation,
        provider_ids,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
