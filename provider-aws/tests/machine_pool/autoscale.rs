//! An autoscaled pool: bounds pushed to the node group, an outside change written back.

use std::time::Duration;

use aws_sdk_eks::types::NodegroupScalingConfig;
use contract::capi::REPLICAS_MANAGED_BY_ANNOTATION;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::helpers::settled_at;
use crate::setup::Ctx;
use crate::support::eventually;
use crate::{EKS_NAME, NODEGROUP, POOL};

/// Proves C50: with `spec.scaling` set, the MachinePool is annotated replicas-managed-by and the
/// node group's bounds follow; a desired size changed outside (as an autoscaler would) is
/// written back to the MachinePool, and the provider does not push it back.
pub async fn writes_back_an_outside_change(ctx: &Ctx) {
    ctx.pools
        .patch(
            POOL,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"scaling": {"minReplicas": 1, "maxReplicas": 4}}})),
        )
        .await
        .unwrap();
    eventually(
        "the MachinePool to be annotated replicas-managed-by",
        Duration::from_secs(30),
        || async {
            let mp = ctx.machine_pools.get(POOL).await.ok()?;
            mp.annotations()
                .get(REPLICAS_MANAGED_BY_ANNOTATION)
                .filter(|v| !v.is_empty())
                .map(|_| ())
        },
    )
    .await;
    bounds_follow(ctx).await;
    ctx.aws
        .eks
        .update_nodegroup_config()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .scaling_config(NodegroupScalingConfig::builder().desired_size(3).build())
        .send()
        .await
        .expect("an outside scale change (as an autoscaler would make)");
    settled_at(3, ctx).await;
    let ng = ctx
        .aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(NODEGROUP)
        .send()
        .await
        .unwrap();
    assert_eq!(
        ng.nodegroup()
            .and_then(|n| n.scaling_config())
            .and_then(|s| s.desired_size()),
        Some(3),
        "the provider did not push back"
    );
}

/// Waits until the node group is ACTIVE with the bounds 1..4 of `spec.scaling`.
async fn bounds_follow(ctx: &Ctx) {
    eventually(
        "the node group bounds to follow spec.scaling",
        Duration::from_secs(30),
        || async {
            let out = ctx
                .aws
                .eks
                .describe_nodegroup()
                .cluster_name(EKS_NAME)
                .nodegroup_name(NODEGROUP)
                .send()
                .await
                .ok()?;
            let ng = out.nodegroup()?;
            let s = ng.scaling_config()?;
            (s.min_size() == Some(1)
                && s.max_size() == Some(4)
                && ng.status().map(|s| s.as_str()) == Some("ACTIVE"))
            .then_some(())
        },
    )
    .await;
}
