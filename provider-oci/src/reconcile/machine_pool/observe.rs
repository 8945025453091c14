//! Reading OKE: the node pool (by its recorded OCID, else by name in its cluster, ours first),
//! read whole with its nodes and mapped to the shared [`ManagedPool`] with OKE's own view
//! ([`ObservedPool`]); the state of the work request the kernel tracks; the provider IDs of its
//! nodes (their instance OCIDs, a `DELETING` node included until it is gone); and the kind's
//! status from what was read.

use std::collections::BTreeMap;

use contract::plan::Lifecycle;
use contract::scaling::{InstanceLife, provider_id_list};
use provider_runtime::CloudError;
use provider_runtime::ProviderError;
use provider_runtime::machine_pool::{ManagedPool, PoolLook, PoolObserved};

use super::desired::MEMORY_PER_OCPU;
use super::{At, PoolClients};
use crate::client::answers::{
    KeyValue, NodePool, NodePoolCyclingDetails, NodePoolSummary, NodeShapeConfig,
};
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

/// The labels of `labels` by key: a label without a key is none, one without a value is empty.
fn labels_of(labels: Option<&[KeyValue]>) -> BTreeMap<String, String> {
    labels
        .into_iter()
        .flatten()
        .filter_map(|l| Some((l.key.clone()?, l.value.clone().unwrap_or_default())))
        .collect()
}

/// The flexible shape's `(ocpus, memoryInGBs)`: none without OCPUs; OCI's default memory for
/// the OCPUs when it gives none.
fn flex_of(config: Option<&NodeShapeConfig>) -> Option<(i32, i32)> {
    let config = config?;
    let ocpus = config.ocpus.map(|f| f.round() as i32)?;
    let memory = config
        .memory_in_gbs
        .map_or(ocpus * MEMORY_PER_OCPU, |f| f.round() as i32);
    Some((ocpus, memory))
}

/// The pool's node cycling `(maximumSurge, maximumUnavailable)` when it is on; none when it is
/// off or OKE says nothing of it.
///
/// # Errors
/// Cycling on without its surge or unavailability: read as empty, they would be asked for
/// again.
fn cycling_of(
    details: Option<&NodePoolCyclingDetails>,
) -> Result<Option<(String, String)>, CloudError> {
    let Some(d) = details.filter(|d| d.is_node_cycling_enabled == Some(true)) else {
        return Ok(None);
    };
    let field = |v: &Option<String>, name: &str| {
        v.clone().ok_or_else(|| {
            CloudError::Transient(format!(
                "GetNodePool: the answer has no `nodePoolCyclingDetails.{name}`"
            ))
        })
    };
    Ok(Some((
        field(&d.maximum_surge, "maximumSurge")?,
        field(&d.maximum_unavailable, "maximumUnavailable")?,
    )))
}

fn observed(p: &NodePool) -> Result<ObservedPool, CloudError> {
    Ok(ObservedPool {
        size: Some(p.node_config_details.size),
        labels: labels_of(p.initial_node_labels.as_deref()),
        shape: p.node_shape.clone(),
        flex: flex_of(p.node_shape_config.as_ref()),
        cycling: cycling_of(p.node_pool_cycling_details.as_ref())?,
    })
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
) -> Result<Option<(NodePool, Seen)>, ProviderError> {
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
    find_named::<NodePoolSummary, NodePool>(&clients.oci, &clients.calls, &named, &clients.owner)
        .await
}

/// The instances of the pool's nodes (`p` read whole), and whether each is gone (a node
/// without a state is taken as there).
fn nodes(p: &NodePool) -> Vec<(String, InstanceLife)> {
    p.nodes
        .iter()
        .flatten()
        .map(|n| {
            let life = match n.lifecycle_state.as_deref() {
                Some("DELETED") => InstanceLife::Gone,
                _ => InstanceLife::Present,
            };
            (n.id.clone(), life)
        })
        .collect()
}

/// The pool named `name` read whole (`p`), as the kernel reads it: its nodes' errors are its
/// issues, and a failed pool without them says why in OKE's words.
///
/// # Errors
/// A malformed answer ([`observed`]).
fn managed(name: &str, p: &NodePool, seen: Seen) -> Result<ManagedPool<ObservedPool>, CloudError> {
    let state = p.lifecycle_state.clone();
    let mut issues: Vec<String> = p
        .nodes
        .iter()
        .flatten()
        .filter_map(|n| {
            let e = n.node_error.as_ref()?;
            Some(format!(
                "node {}: {}: {}",
                n.name.as_deref().unwrap_or_default(),
                e.code,
                e.message
            ))
        })
        .collect();
    if matches!(state.as_str(), "FAILED" | "NEEDS_ATTENTION") && issues.is_empty() {
        issues.push(format!(
            "node pool {name} is {state}: {}",
            p.lifecycle_details
                .as_deref()
                .filter(|d| !d.is_empty())
                .unwrap_or("no details given")
        ));
    }
    let detail = observed(p)?;
    Ok(ManagedPool {
        id: seen.id,
        lifecycle: lifecycle(&state),
        issues,
        state,
        version: p.kubernetes_version.clone().filter(|v| !v.is_empty()),
        tags: seen.tags,
        desired_size: detail.size,
        detail,
    })
}

/// One look: the pool (kept for the pass's change, [`super::PoolClients`]), the state of the
/// work request [`PoolLook::operation`] names, and its nodes' provider IDs when the look asks
/// for them. No cluster found, no pool in it.
///
/// # Errors
/// OKE's.
pub(super) async fn observe(
    at: &At,
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
    let pool = managed(&at.pool, &p, seen)?;
    let operation = match look.operation(&pool) {
        Some(op) => {
            clients
                .oci
                .work_request_state(&clients.calls, &op.id)
                .await?
        }
        None => None,
    };
    let nodes = nodes(&p);
    let listed = provider_id_list(nodes.iter().map(|(id, life)| (id.as_str(), *life)));
    look.seen(Some(pool), operation, async { Ok(listed) }).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn pool(extra: serde_json::Value) -> NodePool {
        let mut body = serde_json::json!({
            "id": "ocid1.nodepool.oc1.iad.a",
            "lifecycleState": "ACTIVE",
            "nodeShape": "VM.Standard.E4.Flex",
            "nodeConfigDetails": { "size": 3 },
            "initialNodeLabels": [{ "key": "role", "value": "web" }, { "value": "no key" }],
            "nodeShapeConfig": { "ocpus": 2.0 },
            "nodes": [
                { "id": "ocid1.instance.oc1.iad.a", "lifecycleState": "ACTIVE" },
                { "id": "ocid1.instance.oc1.iad.b", "lifecycleState": "DELETED", "name": "n-b",
                  "nodeError": { "code": "LimitExceeded", "message": "no capacity" } },
            ],
        });
        if let (Some(b), serde_json::Value::Object(e)) = (body.as_object_mut(), extra) {
            b.extend(e);
        }
        provider_runtime::read_answer("GetNodePool", body).unwrap()
    }

    #[test]
    fn a_pool_read_whole_is_what_the_diff_and_the_kernel_need() {
        let p = pool(serde_json::json!({
            "nodePoolCyclingDetails": { "isNodeCyclingEnabled": true, "maximumSurge": "1", "maximumUnavailable": "0" },
        }));
        let o = observed(&p).unwrap();
        assert_eq!(o.size, Some(3));
        assert_eq!(o.shape, "VM.Standard.E4.Flex");
        assert_eq!(o.labels, BTreeMap::from([("role".into(), "web".into())]));
        assert_eq!(o.flex, Some((2, 2 * MEMORY_PER_OCPU)));
        assert_eq!(o.cycling, Some(("1".into(), "0".into())));
        assert_eq!(
            nodes(&p),
            vec![
                (
                    "ocid1.instance.oc1.iad.a".to_string(),
                    InstanceLife::Present
                ),
                ("ocid1.instance.oc1.iad.b".to_string(), InstanceLife::Gone),
            ]
        );
        let seen = Seen::of(&p, None);
        let managed = managed("p", &p, seen).unwrap();
        assert_eq!(
            managed.issues,
            vec!["node n-b: LimitExceeded: no capacity".to_string()]
        );
        assert_eq!(
            observed(&pool(serde_json::json!({}))).unwrap().cycling,
            None
        );
    }

    #[test]
    fn cycling_on_without_its_bounds_is_refused_naming_the_field() {
        let p = pool(serde_json::json!({
            "nodePoolCyclingDetails": { "isNodeCyclingEnabled": true, "maximumUnavailable": "0" },
        }));
        assert_eq!(
            observed(&p).unwrap_err(),
            CloudError::Transient(
                "GetNodePool: the answer has no `nodePoolCyclingDetails.maximumSurge`".into()
            )
        );
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("NEEDS_ATTENTION"), Lifecycle::Degraded);
        assert_eq!(lifecycle("ACTIVE"), Lifecycle::Running);
        assert_eq!(lifecycle("INACTIVE"), Lifecycle::Other("INACTIVE".into()));
    }
}
