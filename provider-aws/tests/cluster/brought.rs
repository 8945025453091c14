//! A brought network: read, reported, never changed.

use provider_aws::network::AwsNetwork;
use std::time::Duration;

use kube::api::PostParams;
use serde_json::json;

use crate::BYO;
use crate::helpers::{cluster, counts, eks_cluster, endpoint_untouched, owned, provisioned};
use crate::setup::{Ctx, OtherNetworks};
use crate::support::eventually;

/// Proves that an EKSCluster on a brought network is provisioned with the network reported as
/// not managed (its VPC, no security group, each subnet's zone and whether it is public), two
/// failure domains core copies into the Cluster, `spec.controlPlaneEndpoint` untouched, and
/// nothing created in EC2.
pub async fn reads_a_brought_network(ctx: &Ctx, others: &OtherNetworks) {
    let byo_network = json!({"subnetIDs": others.byo_subnets});
    ctx.eks
        .create(&PostParams::default(), &eks_cluster(BYO, Some(byo_network)))
        .await
        .unwrap();
    ctx.clusters
        .create(&PostParams::default(), &cluster(BYO))
        .await
        .unwrap();
    let byo = eventually(
        "the brought-network EKSCluster to be provisioned",
        Duration::from_secs(60),
        || async {
            let c = ctx.eks.get(BYO).await.ok()?;
            provisioned(&c).then_some(c)
        },
    )
    .await;
    let byo_status = byo.status.clone().unwrap();
    let n = AwsNetwork::of(&byo).unwrap();
    assert!(!n.managed);
    assert_eq!(n.vpc_id.as_deref(), Some(others.byo_vpc.as_str()));
    assert_eq!(n.security_group_id, None);
    let seen: Vec<(&str, &str, bool)> = n
        .subnets
        .iter()
        .map(|s| (s.id.as_str(), s.availability_zone.as_str(), s.public))
        .collect();
    assert_eq!(
        seen,
        [
            (others.byo_subnets[0].as_str(), "eu-west-1a", true),
            (others.byo_subnets[1].as_str(), "eu-west-1b", false)
        ]
    );
    assert_eq!(byo_status.common.failure_domains.len(), 2);
    assert!(endpoint_untouched(&ctx.dynamic, BYO).await);
    eventually(
        "the brought-network Cluster to show infrastructureProvisioned",
        Duration::from_secs(60),
        || async {
            let c = ctx.clusters.get(BYO).await.ok()?;
            let s = c.status?;
            (s.initialization?.infrastructure_provisioned == Some(true)
                && s.failure_domains == byo_status.common.failure_domains)
                .then_some(())
        },
    )
    .await;
    assert!(
        counts(&owned(&ctx.ec2, BYO).await)
            .values()
            .all(|n| *n == 0),
        "nothing created for a brought network"
    );
}
