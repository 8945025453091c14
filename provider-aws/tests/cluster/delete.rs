//! Deleting the Clusters.

use std::collections::BTreeSet;
use std::time::Duration;

use kube::api::DeleteParams;

use crate::created::Managed;
use crate::helpers::{filter, owned};
use crate::setup::{Ctx, OtherNetworks};
use crate::support::{self, condition, eventually};
use crate::{BAD, BYO, CONFLICT, MANAGED};

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
