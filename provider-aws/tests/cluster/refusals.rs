//! What the provider refuses to build on: subnet ids EC2 does not know, and a VPC of the wanted
//! name that is not ours.

use std::time::Duration;

use aws_sdk_ec2::types::Tag;
use kube::api::PostParams;
use serde_json::json;

use crate::helpers::{cluster, counts, eks_cluster, owned, provisioned};
use crate::setup::{Ctx, OtherNetworks};
use crate::support::{condition, eventually};
use crate::{BAD, CONFLICT, UNKNOWN_SUBNET};

/// Proves that a brought network naming a subnet EC2 does not know is a terminal InvalidSpec
/// (NetworkReady and Ready) naming the field and the id, and the cluster is not provisioned.
pub async fn reports_unknown_subnet_ids(ctx: &Ctx, others: &OtherNetworks) {
    let bad_network = json!({"subnetIDs": [others.byo_subnets[0], UNKNOWN_SUBNET]});
    ctx.eks
        .create(&PostParams::default(), &eks_cluster(BAD, Some(bad_network)))
        .await
        .unwrap();
    ctx.clusters
        .create(&PostParams::default(), &cluster(BAD))
        .await
        .unwrap();
    let bad = eventually(
        "the bad EKSCluster to report InvalidSpec",
        Duration::from_secs(60),
        || async {
            let c = ctx.eks.get(BAD).await.ok()?;
            let n = condition(&c, "NetworkReady")?;
            (n.status == "False" && n.reason == "InvalidSpec").then_some(c)
        },
    )
    .await;
    let message = &condition(&bad, "NetworkReady").unwrap().message;
    assert!(
        message.contains("spec.network.subnetIDs") && message.contains(UNKNOWN_SUBNET),
        "{message}"
    );
    assert_eq!(condition(&bad, "Ready").unwrap().reason, "InvalidSpec");
    assert!(!provisioned(&bad));
}

/// Proves that a VPC carrying the name the provider would use but not its tag is a
/// NameConflict naming that VPC, and nothing is created beside it; returns the VPC's id.
pub async fn never_adopts_a_vpc_not_tagged_ours(ctx: &Ctx) -> String {
    let squatter = ctx
        .ec2
        .create_vpc()
        .cidr_block("10.60.0.0/16")
        .tag_specifications(
            aws_sdk_ec2::types::TagSpecification::builder()
                .resource_type(aws_sdk_ec2::types::ResourceType::Vpc)
                .tags(Tag::builder().key("Name").value("net-conflict-vpc").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    let squatter = squatter.vpc().and_then(|v| v.vpc_id()).unwrap().to_string();
    ctx.eks
        .create(&PostParams::default(), &eks_cluster(CONFLICT, None))
        .await
        .unwrap();
    ctx.clusters
        .create(&PostParams::default(), &cluster(CONFLICT))
        .await
        .unwrap();
    let conflict = eventually(
        "the conflicting EKSCluster to report NameConflict",
        Duration::from_secs(60),
        || async {
            let c = ctx.eks.get(CONFLICT).await.ok()?;
            let n = condition(&c, "NetworkReady")?;
            (n.status == "False" && n.reason == "NameConflict").then_some(c)
        },
    )
    .await;
    let message = &condition(&conflict, "NetworkReady").unwrap().message;
    assert!(message.contains(&squatter), "{message}");
    assert!(
        counts(&owned(&ctx.ec2, CONFLICT).await)
            .values()
            .all(|n| *n == 0),
        "nothing created beside a conflict"
    );
    squatter
}
