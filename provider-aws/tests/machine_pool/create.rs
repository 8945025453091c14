//! The pool created: its node group, its nodes, its status, and a quiet rest after.

use std::time::Duration;

use kube::ResourceExt;
use kube::api::PostParams;
use provider_aws::api::EKSMachinePool;
use serde_json::json;

use crate::helpers::{create_machine_pool, pool_object, settled_at};
use crate::setup::Ctx;
use crate::support::condition;
use crate::{ACCOUNT, CLUSTER, EKS_NAME, NODEGROUP, POOL};

/// Proves that a new pool of two becomes a node group of two nodes whose IDs are moto's
/// instances and the workload's Nodes; that the pool is owned by its MachinePool, labelled with
/// its Cluster, provisioned, at rest and guarded by a finalizer; that the node group carries the
/// ownership tag, the labels and `requestOverrides` (the provider's own fields winning over
/// them); and that core reports the MachinePool Running.
pub async fn creates_the_node_group(ctx: &Ctx) {
    ctx.pools
        .create(
            &PostParams::default(),
            &pool_object(
                POOL,
                json!({
                    "labels": {"role": "worker"},
                    "eks": {
                        "nodeRoleARN": format!("arn:aws:iam::{ACCOUNT}:role/eks-nodes"),
                        // A field no typed field covers, and one the provider manages (ignored).
                        "requestOverrides": {"nodeRepairConfig": {"enabled": true}, "scalingConfig": {"desiredSize": 7}},
                    },
                }),
            ),
        )
        .await
        .expect("EKSMachinePool");
    create_machine_pool(&ctx.client, POOL, 2).await;

    // Created: two nodes whose IDs are moto's instances and the workload's Nodes.
    let pool = settled_at(2, ctx).await;
    check_pool_object(&pool);
    check_node_group(ctx).await;
    let applied = pool.status.as_ref().unwrap().request_overrides.as_ref();
    assert_eq!(
        applied.map(|a| a.operation.as_str()),
        Some("CreateNodegroup"),
        "status shows which request carried the overrides, as the control plane's does"
    );
    assert!(applied.and_then(|a| a.generation).is_some());
    let mp = ctx.machine_pools.get(POOL).await.unwrap();
    assert_eq!(
        mp.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running"),
        "MachinePool phase"
    );
}

/// The settled pool's owner, label, status, conditions and finalizer.
fn check_pool_object(pool: &EKSMachinePool) {
    assert!(
        pool.owner_references()
            .iter()
            .any(|o| o.kind == "MachinePool" && o.name == POOL && o.controller == Some(true)),
        "C13: the MachinePool is the controller owner"
    );
    assert_eq!(
        pool.labels()
            .get("cluster.x-k8s.io/cluster-name")
            .map(String::as_str),
        Some(CLUSTER)
    );
    let status = pool.status.clone().unwrap();
    assert!(status.common.ready, "status.ready");
    assert_eq!(
        status
            .common
            .initialization
            .as_ref()
            .and_then(|i| i.provisioned),
        Some(true),
        "initialization.provisioned"
    );
    assert_eq!(status.common.version.as_deref(), Some("v1.31"));
    assert_eq!(status.common.cloud_name.as_deref(), Some(NODEGROUP));
    assert!(
        status
            .common
            .cloud_id
            .as_deref()
            .is_some_and(|a| a.contains(NODEGROUP)),
        "{status:?}"
    );
    assert_eq!(status.common.operation, None, "nothing in flight at rest");
    let upgrading = condition(pool, "Upgrading").expect("Upgrading condition");
    assert_eq!(
        (upgrading.status.as_str(), upgrading.reason.as_str()),
        ("False", "UpToDate")
    );
    assert!(
        pool.finalizers().iter().any(|f| f.starts_with("eks.")),
        "finalizer: {:?}",
        pool.finalizers()
    );
}

/// The node group as EKS describes it: ownership tag, labels, and what `requestOverrides` did.
async fn check_node_group(ctx: &Ctx) {
    let ng = ctx
        .aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await
        .unwrap();
    let ng = ng.nodegroup().unwrap();
    assert_eq!(
        ng.tags()
            .and_then(|t| t.get("capi-managed-eks"))
            .map(String::as_str),
        Some("pools_prod"),
        "ownership tag"
    );
    assert_eq!(
        ng.labels().and_then(|l| l.get("role")).map(String::as_str),
        Some("worker")
    );
    assert_eq!(
        ng.node_repair_config().and_then(|r| r.enabled()),
        Some(true),
        "requestOverrides reached CreateNodegroup (and the request was still signed correctly)"
    );
    assert_eq!(
        ng.scaling_config().and_then(|s| s.desired_size()),
        Some(2),
        "the provider's fields win over requestOverrides"
    );
}

/// Proves that a settled pool at rest only reads from EKS (and keeps reading) and never writes
/// its status.
pub async fn only_reads_at_rest(ctx: &Ctx) {
    ctx.kit.calls.reset();
    let before = ctx.pools.get(POOL).await.unwrap().resource_version();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let calls = ctx.kit.calls.snapshot();
    let writes: Vec<&String> = calls
        .keys()
        .filter(|op| !op.starts_with("Describe") && !op.starts_with("List"))
        .collect();
    assert!(writes.is_empty(), "EKS writes at rest: {calls:?}");
    assert!(
        calls.contains_key("DescribeNodegroup"),
        "the pass keeps looking: {calls:?}"
    );
    assert_eq!(
        ctx.pools.get(POOL).await.unwrap().resource_version(),
        before,
        "no status write at rest"
    );
}
