//! A pool deleted after its Cluster.

use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use provider_aws::api::EKSControlPlane;
use serde_json::json;

use crate::helpers::{
    cluster_resource, create_machine_pool, machine_pools_api, orphaned, pool_gone, pool_object,
};
use crate::setup::Ctx;
use crate::support::eventually;
use crate::{CLUSTER, EKS_NAME, NS};

/// Proves that a pool left behind by its MachinePool and then by its Cluster is still cleaned
/// up: deleting it finds its EKS cluster through the objects labelled with the Cluster's name
/// (the one cleanup policy) and removes its node group, leaving the EKS cluster itself.
pub async fn deletes_a_pool_that_outlived_its_cluster(ctx: &Ctx) {
    ctx.pools
        .create(&PostParams::default(), &pool_object("orphan", json!({})))
        .await
        .unwrap();
    create_machine_pool(&ctx.client, "orphan", 1).await;
    eventually(
        "the orphan pool's node",
        Duration::from_secs(90),
        || async {
            let p = ctx.pools.get("orphan").await.ok()?;
            (p.spec.common.provider_id_list.len() == 1).then_some(())
        },
    )
    .await;
    remove_machine_pool_alone(ctx).await;
    remove_cluster_alone(ctx).await;
    let control_planes: Api<EKSControlPlane> = Api::namespaced(ctx.client.clone(), NS);
    let cp = control_planes.get_opt("prod-cp").await.unwrap();
    assert!(
        cp.is_some_and(|cp| cp.metadata.deletion_timestamp.is_none()),
        "the control plane outlives the Cluster here"
    );
    ctx.pools
        .delete("orphan", &DeleteParams::default())
        .await
        .unwrap();
    pool_gone(
        ctx,
        "the orphan EKSMachinePool to be gone",
        "orphan",
        Duration::from_secs(90),
    )
    .await;
    let left = ctx
        .aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name("pools-orphan")
        .send()
        .await;
    let code = left
        .as_ref()
        .err()
        .and_then(aws_sdk_eks::error::ProvideErrorMetadata::code);
    assert_eq!(
        code,
        Some("ResourceNotFoundException"),
        "the node group of a pool deleted after its Cluster is deleted: {left:?}"
    );
    ctx.aws
        .eks
        .describe_cluster()
        .name(EKS_NAME)
        .send()
        .await
        .expect("the EKS cluster itself is still there");
}

/// Core would delete the pool with its MachinePool: pauses it there, deletes the MachinePool
/// leaving its dependents, and drops core's finalizer, so the MachinePool goes alone.
async fn remove_machine_pool_alone(ctx: &Ctx) {
    let machine_pools_api = machine_pools_api(&ctx.client);
    machine_pools_api
        .patch(
            "orphan",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}})),
        )
        .await
        .unwrap();
    machine_pools_api
        .delete("orphan", &DeleteParams::orphan())
        .await
        .unwrap();
    orphaned(&machine_pools_api, "orphan").await;
    machine_pools_api
        .patch(
            "orphan",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
}

/// The Cluster goes without core deleting its control plane first (paused, orphan-deleted,
/// finalizer dropped), as after a forced removal: the EKSControlPlane, labelled with the
/// Cluster's name, is what is left to find the EKS cluster by. Waits until the Cluster is gone
/// and the pool has no MachinePool owner.
async fn remove_cluster_alone(ctx: &Ctx) {
    let clusters = Api::<kube::api::DynamicObject>::namespaced_with(
        ctx.client.clone(),
        NS,
        &cluster_resource(),
    );
    clusters
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    clusters
        .delete(CLUSTER, &DeleteParams::orphan())
        .await
        .unwrap();
    orphaned(&clusters, CLUSTER).await;
    clusters
        .patch(
            CLUSTER,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    eventually(
        "the Cluster to be gone",
        Duration::from_secs(90),
        || async {
            let gone = clusters.get_opt(CLUSTER).await.ok()?.is_none();
            let orphaned = ctx
                .pools
                .get("orphan")
                .await
                .ok()?
                .owner_references()
                .iter()
                .all(|o| o.kind != "MachinePool");
            (gone && orphaned).then_some(())
        },
    )
    .await;
}
