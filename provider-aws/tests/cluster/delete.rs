//! Deleting the Clusters.

use std::collections::BTreeSet;
use std::time::Duration;

use kube::api::DeleteParams;

use crate::created::Managed;
use crate::helpers::{filter, owned};
use crate::setup::{Ctx, OtherNetworks};
use crate::support::{self, condition, eventually};
use crate::{BAD, BYO, CONFLICT, MANAGED, ORPHANED};

/// Proves that with a subnet that is not ours inside our VPC, deleting the managed Cluster
/// waits (Ready says Deleting, the VPC still has dependencies) and never deletes that subnet;
/// then removes the subnet, as its owner would, to let the deletion go on.
pub async fn waits_for_a_foreign_dependency(ctx: &Ctx, managed: &Managed) {
    let intruder =
        support::create_subnet(&ctx.ec2, &managed.vpc_id, "10.0.250.0/24", "eu-west-1c").await;
    ctx.clusters
        .delete(MANAGED, &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the managed EKSCluster to wait on the VPC's foreign dependency",
        Duration::from_secs(120),
        || async {
            let c = ctx.eks.get(MANAGED).await.ok()?;
            let ready = condition(&c, "Ready")?;
            (ready.reason == "Deleting" && ready.message.contains("still has dependencies"))
                .then_some(())
        },
    )
    .await;
    let still = ctx
        .ec2
        .describe_subnets()
        .filters(filter("subnet-id", &intruder))
        .send()
        .await
        .unwrap();
    assert_eq!(
        still.subnets().len(),
        1,
        "a subnet that is not ours is never deleted"
    );
    ctx.ec2
        .delete_subnet()
        .subnet_id(&intruder)
        .send()
        .await
        .unwrap();
}

/// Proves that once every Cluster is deleted, every EKSCluster and Cluster is gone, no resource
/// tagged as the managed cluster's is left, and the bystander VPC, the brought VPC and its
/// subnets, and the VPC that was in the way (`squatter`) are all left alone.
pub async fn removes_only_what_is_ours(
    ctx: &Ctx,
    managed: &Managed,
    others: &OtherNetworks,
    squatter: &str,
) {
    for name in [BYO, BAD, CONFLICT] {
        ctx.clusters
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    for name in [MANAGED, BYO, BAD, CONFLICT] {
        eventually(
            &format!("EKSCluster {name} and its Cluster to be gone"),
            Duration::from_secs(240),
            || async {
                let gone = ctx.eks.get_opt(name).await.ok()?.is_none()
                    && ctx.clusters.get_opt(name).await.ok()?.is_none();
                gone.then_some(())
            },
        )
        .await;
    }
    let left = owned(&ctx.ec2, MANAGED).await;
    assert!(
        left.values().all(BTreeSet::is_empty),
        "tagged resources left behind: {left:?}"
    );
    let vpcs = ctx.ec2.describe_vpcs().send().await.unwrap();
    let remaining: BTreeSet<&str> = vpcs.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
    assert!(
        remaining.contains(others.bystander.as_str()),
        "the untagged bystander VPC is left alone"
    );
    assert!(
        remaining.contains(others.byo_vpc.as_str()),
        "the brought VPC is left alone"
    );
    assert!(
        remaining.contains(squatter),
        "the VPC that was in the way is left alone"
    );
    assert!(!remaining.contains(managed.vpc_id.as_str()));
    let byo_left = ctx
        .ec2
        .describe_subnets()
        .filters(filter("vpc-id", &others.byo_vpc))
        .send()
        .await
        .unwrap();
    assert_eq!(
        byo_left.subnets().len(),
        2,
        "the brought subnets are left alone"
    );
}

/// Proves that a Cluster deleted with `deletionPolicy: Orphan` on its EKSCluster leaves every
/// resource of its created network in moto, none of them tagged as its own any more.
pub async fn orphan_leaves_the_network_untagged(ctx: &Ctx) {
    let mut kept = crate::helpers::eks_cluster(
        ORPHANED,
        Some(serde_json::json!({"cidrBlock": "10.20.0.0/16"})),
    );
    kept.spec.common.deletion_policy = contract::api::DeletionPolicy::Orphan;
    ctx.eks
        .create(&kube::api::PostParams::default(), &kept)
        .await
        .unwrap();
    ctx.clusters
        .create(
            &kube::api::PostParams::default(),
            &crate::helpers::cluster(ORPHANED),
        )
        .await
        .unwrap();
    eventually(
        "the orphaned EKSCluster to be provisioned",
        Duration::from_secs(180),
        || async {
            let c = ctx.eks.get(ORPHANED).await.ok()?;
            crate::helpers::provisioned(&c).then_some(())
        },
    )
    .await;
    let made = owned(&ctx.ec2, ORPHANED).await;
    let vpc = made["vpc"].first().cloned().expect("a VPC was made");
    assert!(
        made.values()
            .map(std::collections::BTreeSet::len)
            .sum::<usize>()
            > 5,
        "{made:?}"
    );
    ctx.clusters
        .delete(ORPHANED, &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the orphaned EKSCluster and its Cluster to be gone",
        Duration::from_secs(120),
        || async {
            let gone = ctx.eks.get_opt(ORPHANED).await.ok()?.is_none()
                && ctx.clusters.get_opt(ORPHANED).await.ok()?.is_none();
            gone.then_some(())
        },
    )
    .await;
    let left = owned(&ctx.ec2, ORPHANED).await;
    assert!(
        left.values().all(std::collections::BTreeSet::is_empty),
        "nothing carries the orphaned Cluster's tag: {left:?}"
    );
    let vpcs = ctx
        .ec2
        .describe_vpcs()
        .filters(filter("vpc-id", &vpc))
        .send()
        .await
        .unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "the orphaned VPC stays");
    let subnets = ctx
        .ec2
        .describe_subnets()
        .filters(filter("vpc-id", &vpc))
        .send()
        .await
        .unwrap();
    assert_eq!(
        subnets.subnets().len(),
        made["subnet"].len(),
        "its subnets stay"
    );
}
