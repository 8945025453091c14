//! What the provider refuses or cannot do: a surge EKS lacks, a node group of the wanted name
//! that is someone else's, and an instance type EC2 does not have.

use std::time::Duration;

use aws_sdk_eks::types::NodegroupScalingConfig;
use kube::ResourceExt;
use kube::api::PostParams;
use serde_json::json;

use crate::helpers::{create_machine_pool, delete_machine_pool, pool_gone, pool_object};
use crate::setup::Ctx;
use crate::support::{condition, eventually};
use crate::{ACCOUNT, EKS_NAME};

/// Proves that admission rejects `spec.update.maxSurge`, naming the field and EKS (which has no
/// surge).
pub async fn surge_is_rejected(ctx: &Ctx) {
    let surge = ctx
        .pools
        .create(
            &PostParams::default(),
            &pool_object("surging", json!({"update": {"maxSurge": 1}})),
        )
        .await;
    let message = surge.expect_err("maxSurge is rejected").to_string();
    assert!(
        message.contains("spec.update.maxSurge") && message.contains("EKS"),
        "{message}"
    );
}

/// Proves that a node group of the wanted name that is not ours is a NameConflict pointing at
/// `spec.adopt`, that its instances are not published, and that deleting the pool leaves it
/// alone.
pub async fn leaves_a_foreign_node_group_alone(ctx: &Ctx) {
    let foreign_name = "pools-foreign";
    ctx.aws
        .eks
        .create_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(foreign_name)
        .node_role(format!("arn:aws:iam::{ACCOUNT}:role/someone-elses-nodes"))
        .set_subnets(Some(ctx.subnets.clone()))
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(1)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .expect("someone else's node group");
    ctx.pools
        .create(&PostParams::default(), &pool_object("foreign", json!({})))
        .await
        .unwrap();
    create_machine_pool(&ctx.client, "foreign", 1).await;
    let conflicted = eventually("a NameConflict", Duration::from_secs(60), || async {
        let p = ctx.pools.get("foreign").await.ok()?;
        condition(&p, "Ready")
            .filter(|c| c.reason == "NameConflict")
            .map(|c| (c.clone(), p.clone()))
    })
    .await;
    assert!(
        conflicted.0.message.contains("spec.adopt"),
        "{}",
        conflicted.0.message
    );
    assert!(
        conflicted.1.spec.common.provider_id_list.is_empty(),
        "someone else's instances are not published"
    );
    delete_machine_pool(&ctx.client, "foreign").await;
    pool_gone(
        ctx,
        "the conflicting EKSMachinePool to be gone",
        "foreign",
        Duration::from_secs(60),
    )
    .await;
    let kept = ctx
        .aws
        .eks
        .describe_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(foreign_name)
        .send()
        .await
        .unwrap();
    assert_ne!(
        kept.nodegroup()
            .and_then(|n| n.status())
            .map(|s| s.as_str()),
        Some("DELETING"),
        "a node group that is not ours is never deleted"
    );
}

/// Proves that with an instance type EC2 does not have, EKS takes the node group but its launch
/// fails (CREATE_FAILED with a health issue), the pool says so in Ready with EKS's message, and
/// it looks again at the poll interval rather than in a hot loop: no create again, no status
/// write.
pub async fn reports_a_failed_launch_without_a_hot_loop(ctx: &Ctx) {
    ctx.pools
        .create(
            &PostParams::default(),
            &pool_object("huge", json!({"machineType": "m5.huge"})),
        )
        .await
        .unwrap();
    create_machine_pool(&ctx.client, "huge", 1).await;
    let failed = eventually(
        "the failed node group reported",
        Duration::from_secs(90),
        || async {
            let p = ctx.pools.get("huge").await.ok()?;
            condition(&p, "Ready")
                .filter(|c| c.status == "False" && c.reason == "CloudError")
                .filter(|c| c.message.contains("does not exist"))
                .cloned()
        },
    )
    .await;
    assert!(
        failed.message.contains("CREATE_FAILED") && failed.message.contains("m5.huge"),
        "{}",
        failed.message
    );
    ctx.kit.calls.reset();
    let before = ctx.pools.get("huge").await.unwrap().resource_version();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let calls = ctx.kit.calls.snapshot();
    let describes: u64 = calls
        .get("DescribeNodegroup")
        .map(|by_outcome| by_outcome.values().sum())
        .unwrap_or(0);
    // Two pools polled about once a second (1 s poll, 2 s rest) for 5 s; a hot loop is hundreds.
    assert!(
        describes <= 20,
        "{describes} DescribeNodegroup calls in 5 s: {calls:?}"
    );
    assert!(
        !calls.contains_key("CreateNodegroup"),
        "a failed node group is not created again: {calls:?}"
    );
    assert_eq!(
        ctx.pools.get("huge").await.unwrap().resource_version(),
        before,
        "a failed pool's status stays still"
    );
    delete_machine_pool(&ctx.client, "huge").await;
    pool_gone(
        ctx,
        "the failed EKSMachinePool to be gone",
        "huge",
        Duration::from_secs(60),
    )
    .await;
}

/// Proves that a node group made outside Cluster API is adopted only once the plan is accepted:
/// with `spec.adoption` the pool first reports the plan (the MachinePool's size against the node
/// group's, and the autoscaler range going, since the MachinePool sets the count) and EKS's node
/// group keeps its tags; accepted, the node group is tagged as the Cluster's, sized by the
/// MachinePool and served; with `deletionPolicy: Orphan`, deleting the pool leaves the node group running,
/// untagged.
pub async fn adopts_a_node_group_after_its_plan_and_orphans_it(ctx: &Ctx) {
    let stranger = "pools-stranger";
    ctx.aws
        .eks
        .create_nodegroup()
        .cluster_name(EKS_NAME)
        .nodegroup_name(stranger)
        .node_role(format!("arn:aws:iam::{ACCOUNT}:role/eks-nodes"))
        .set_subnets(Some(ctx.subnets.clone()))
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(3)
                .desired_size(1)
                .build(),
        )
        .tags("team", "platform")
        .send()
        .await
        .expect("a node group made outside Cluster API");
    let nodegroup = || async {
        let out = ctx
            .aws
            .eks
            .describe_nodegroup()
            .cluster_name(EKS_NAME)
            .nodegroup_name(stranger)
            .send()
            .await
            .unwrap();
        out.nodegroup().cloned().unwrap()
    };
    let tags = || async {
        let ng = nodegroup().await;
        (ng.tags().cloned().unwrap_or_default(), ng.status().cloned())
    };
    let (key, value) = contract::naming::ownership_tag("eks", crate::NS, crate::CLUSTER);
    let pool = pool_object("adopted", json!({"cloudName": stranger, "adoption": {}}));
    ctx.pools
        .create(&PostParams::default(), &pool)
        .await
        .unwrap();
    create_machine_pool(&ctx.client, "adopted", 2).await;
    let planned = eventually("the adoption's plan", Duration::from_secs(60), || async {
        let p = ctx.pools.get("adopted").await.ok()?;
        condition(&p, "Ready")
            .filter(|c| c.reason == "AdoptionPlanned")
            .map(|c| (c.message.clone(), p.clone()))
    })
    .await;
    let adoption = planned.1.status.clone().unwrap().common.adoption.unwrap();
    let rows: Vec<(String, String, String)> = adoption
        .changes
        .iter()
        .map(|c| (c.field.clone(), c.cloud.clone(), c.spec.clone()))
        .collect();
    assert!(
        rows.contains(&("MachinePool spec.replicas".into(), "1".into(), "2".into())),
        "{rows:?}"
    );
    assert!(
        rows.contains(&(
            "spec.scaling".into(),
            "1 to 3 nodes".into(),
            "none (MachinePool spec.replicas sets the count)".into()
        )),
        "{rows:?}"
    );
    assert!(
        !adoption.kept.iter().any(|k| k.starts_with("spec.scaling")),
        "{adoption:?}"
    );
    assert!(
        planned.0.contains("spec.adoption.accept: true"),
        "{}",
        planned.0
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (seen, _) = tags().await;
    assert!(!seen.contains_key(&key), "a plan writes nothing: {seen:?}");

    let accept = json!({"spec": {"adoption": {"accept": true}}});
    ctx.pools
        .patch(
            "adopted",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&accept),
        )
        .await
        .unwrap();
    let adopted = eventually(
        "the node group adopted",
        Duration::from_secs(90),
        || async {
            let p = ctx.pools.get("adopted").await.ok()?;
            let (seen, _) = tags().await;
            (condition(&p, "Ready")?.status == "True" && seen.get(&key) == Some(&value))
                .then_some(p)
        },
    )
    .await;
    assert_eq!(adopted.spec.common.scaling, None, "the count stays fixed");
    let sized = eventually(
        "the node group sized by the MachinePool",
        Duration::from_secs(60),
        || async {
            let s = nodegroup().await.scaling_config()?.clone();
            (s.desired_size() == Some(2)).then_some(s)
        },
    )
    .await;
    assert_eq!(sized.min_size(), Some(0), "{sized:?}");
    assert!(!adopted.spec.common.provider_id_list.is_empty());

    let orphan = json!({"spec": {"deletionPolicy": "Orphan"}});
    ctx.pools
        .patch(
            "adopted",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&orphan),
        )
        .await
        .unwrap();
    delete_machine_pool(&ctx.client, "adopted").await;
    pool_gone(
        ctx,
        "the orphaned pool to be gone",
        "adopted",
        Duration::from_secs(60),
    )
    .await;
    let (seen, status) = tags().await;
    assert!(!seen.contains_key(&key), "our tag is removed: {seen:?}");
    assert_eq!(seen.get("team").map(String::as_str), Some("platform"));
    assert_ne!(
        status.as_ref().map(|s| s.as_str()),
        Some("DELETING"),
        "an orphaned node group keeps running"
    );
}
