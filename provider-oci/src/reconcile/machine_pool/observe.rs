//! Reading OKE: the node pool (by its recorded OCID, else by name in its cluster, ours first),
//! read whole with its nodes and mapped to the shared [`ManagedPool`] with OKE's own view
//! ([`ObservedPool`]); the state of the work request the kernel tracks; the provider IDs of its
//! nodes (their instance OCIDs, a `DELETING` node included until it is gone); and the kind's
//! status from what was read.

use std::collections::BTreeMap;

use contract::api::{MachinePoolStatusCommon, RequestOverridesStatus};
use contract::plan::Lifecycle;
use contract::scaling::{InstanceLife, provider_id_list};
use provider_runtime::ProviderError;
use provider_runtime::machine_pool::{ManagedPool, PoolConnected, PoolLook, PoolObserved};
use serde_json::Value;

use super::PoolClients;
use super::desired::MEMORY_PER_OCPU;
use crate::api::OKEMachinePoolStatus;
use crate::client::q;
use crate::reconcile::{Named, Seen, find_named};

/// What OKE says about a pool, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedPool {
    /// `nodeConfigDetails.size`.
    pub size: Option<i32>,
    /// `initialNodeLabels`, by key.
    pub labels: BTreeMap<String, String>,
    /// `nodeShape`.
    pub shape: String,
    /// `nodeShapeConfig` `(ocpus, memoryInGBs)`.
    pub flex: Option<(i32, i32)>,
    /// `nodePoolCyclingDetails` `(maximumSurge, maximumUnavailable)`, when cycling is on.
    pub cycling: Option<(String, String)>,
}

fn labels_of(v: &Value) -> BTreeMap<String, String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            Some((
                l["key"].as_str()?.to_string(),
                l["value"].as_str().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

fn observed(p: &Value) -> ObservedPool {
    let int = |v: &Value| v.as_f64().map(|f| f.round() as i32);
    ObservedPool {
        size: p["nodeConfigDetails"]["size"]
            .as_i64()
            .and_then(|n| i32::try_from(n).ok()),
        labels: labels_of(&p["initialNodeLabels"]),
        shape: p["nodeShape"].as_str().unwrap_or_default().to_string(),
        flex: int(&p["nodeShapeConfig"]["ocpus"]).map(|o| {
            (
                o,
                int(&p["nodeShapeConfig"]["memoryInGBs"]).unwrap_or(o * MEMORY_PER_OCPU),
            )
        }),
        cycling: (p["nodePoolCyclingDetails"]["isNodeCyclingEnabled"] == true).then(|| {
            let s = |k: &str| {
                p["nodePoolCyclingDetails"][k]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            };
            (s("maximumSurge"), s("maximumUnavailable"))
        }),
    }
}

/// OKE's node-pool lifecycleState in the shared terms.
pub fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "CREATING" => Lifecycle::Creating,
        "ACTIVE" => Lifecycle::Running,
        "UPDATING" => Lifecycle::Updating,
        "NEEDS_ATTENTION" => Lifecycle::Degraded,
        "DELETING" => Lifecycle::Deleting,
        "FAILED" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// The pool named `name` in the cluster `cluster_id`: by the OCID recorded in the status, else
/// by name in the cluster (ours first), with what a change of it needs.
///
/// # Errors
/// OKE's.
pub(super) async fn find(
    clients: &PoolClients,
    cluster_id: &str,
    name: &str,
) -> Result<Option<(Value, Seen)>, ProviderError> {
    let named = Named {
        get: "GetNodePool",
        list: "ListNodePools",
        collection: "/nodePools",
        filter: format!(
            "compartmentId={}&clusterId={}&name={}",
            q(&clients.infra.compartment),
            q(cluster_id),
            q(name)
        ),
        name,
        recorded: clients.recorded.as_deref(),
    };
    find_named(&clients.oci, &clients.calls, &named, &clients.owner).await
}

/// The instances of the pool's nodes (`p` read whole), and whether each is gone.
fn nodes(p: &Value) -> Vec<(String, InstanceLife)> {
    p["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let life = match n["lifecycleState"].as_str() {
                Some("DELETED") => InstanceLife::Gone,
                _ => InstanceLife::Present,
            };
            Some((n["id"].as_str()?.to_string(), life))
        })
        .collect()
}

/// The pool named `name` read whole (`p`), as the kernel reads it: its nodes' errors are its
/// issues, and a failed pool without them says why in OKE's words.
fn managed(name: &str, p: &Value, seen: Seen) -> ManagedPool<ObservedPool> {
    let state = p["lifecycleState"]
        .as_str()
        .unwrap_or("UNKNOWN")
        .to_string();
    let mut issues: Vec<String> = p["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let e = &n["nodeError"];
            let message = e["message"].as_str()?;
            Some(format!(
                "node {}: {}: {message}",
                n["name"].as_str().unwrap_or_default(),
                e["code"].as_str().unwrap_or("error")
            ))
        })
        .collect();
    if matches!(state.as_str(), "FAILED" | "NEEDS_ATTENTION") && issues.is_empty() {
        issues.push(format!(
            "node pool {name} is {state}: {}",
            p["lifecycleDetails"]
                .as_str()
                .filter(|d| !d.is_empty())
                .unwrap_or("no details given")
        ));
    }
    let detail = observed(p);
    ManagedPool {
        id: seen.id,
        lifecycle: lifecycle(&state),
        issues,
        state,
        version: p["kubernetesVersion"]
            .as_str()
            .map(String::from)
            .filter(|v| !v.is_empty()),
        tags: seen.tags,
        desired_size: detail.size,
        detail,
    }
}

/// One look: the pool (kept for the pass's change, [`super::PoolClients`]), the state of the
/// work request [`PoolLook::operation`] names, and its nodes' provider IDs when the look asks
/// for them. No cluster found, no pool in it.
///
/// # Errors
/// OKE's.
pub(super) async fn observe(
    at: &PoolConnected<PoolClients>,
    look: PoolLook<'_>,
) -> Result<PoolObserved<ObservedPool>, ProviderError> {
    let clients = &at.clients;
    let Some(cluster_id) = clients.cluster_id.as_deref() else {
        return Ok(PoolObserved::nothing());
    };
    let found = find(clients, cluster_id, &at.pool).await?;
    clients.remember(found.as_ref().map(|(_, seen)| seen.clone()));
    let Some((p, seen)) = found else {
        return Ok(PoolObserved::nothing());
    };
    let pool = managed(&at.pool, &p, seen);
    let operation = match look.operation(&pool) {
        Some(op) => {
            clients
                .oci
                .work_request_state(&clients.calls, &op.id)
                .await?
        }
        None => None,
    };
    let provider_ids = if look.provider_ids() {
        let nodes = nodes(&p);
        provider_id_list(nodes.iter().map(|(id, life)| (id.as_str(), *life)))
    } else {
        Vec::new()
    };
    Ok(PoolObserved {
        pool: Some(pool),
        operation,
        provider_ids,
    })
}

/// The kind's whole status: the shared block, the pool's name, and its OCID when there is one
/// of ours to report on.
pub(super) fn status(
    common: MachinePoolStatusCommon,
    request_overrides: Option<RequestOverridesStatus>,
    _pool: Option<&ManagedPool<ObservedPool>>,
) -> OKEMachinePoolStatus {
    OKEMachinePoolStatus {
        common,
        observed_generation: None,
        request_overrides,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("NEEDS_ATTENTION"), Lifecycle::Degraded);
        assert_eq!(lifecycle("ACTIVE"), Lifecycle::Running);
        assert_eq!(lifecycle("INACTIVE"), Lifecycle::Other("INACTIVE".into()));
    }
}
