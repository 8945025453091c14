//! A scale from outside Cluster API finding the pool by the provider's tags and waiting for the
//! update.

use std::time::Duration;

use aws_sdk_eks::types::{ClusterStatus, NodegroupScalingConfig, NodegroupStatus};

use crate::support::*;

#[tokio::test]
async fn an_outside_scale_finds_the_pool_by_the_providers_tags_and_waits_for_the_update() {
    use emulators::eks::outside::{EksApi, ScaleRequest, scale_pool};

    let s = start(fast()).await;
    let c = client(s.url());
    let owner = |value: &str| {
        std::collections::HashMap::from([("capi-managed-eks".to_string(), value.to_string())])
    };
    // Ours (as the provider names and tags them), and a decoy tagged for another cluster.
    for (name, tag) in [("ns1-c1", "ns1_c1"), ("ns1-c2", "ns1_c2")] {
        c.create_cluster()
            .name(name)
            .version("1.34")
            .role_arn(ROLE)
            .resources_vpc_config(vpc())
            .set_tags(Some(owner(tag)))
            .send()
            .await
            .unwrap();
    }
    wait_cluster(&c, "ns1-c1", ClusterStatus::Active).await;
    c.create_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(2)
                .desired_size(2)
                .build(),
        )
        .set_tags(Some(owner("ns1_c1")))
        .send()
        .await
        .unwrap();

    // Still CREATING: the resize waits for the node group, then for its update.
    let api = EksApi::new(s.url(), REGION, Some((AKID.into(), SECRET.into())));
    let request = ScaleRequest {
        namespace: "ns1".into(),
        cluster: "c1".into(),
        pool: "c1-pool-0".into(),
        nodegroup: None,
        replicas: 3,
    };
    let scaled = scale_pool(&api, &request, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        (scaled.cluster.as_str(), scaled.nodegroup.as_str()),
        ("ns1-c1", "ns1-c1-pool-0")
    );
    assert_eq!((scaled.from, scaled.to), (2, 3));
    let ng = c
        .describe_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let scaling = ng.scaling_config.unwrap();
    assert_eq!(
        (scaling.min_size, scaling.desired_size, scaling.max_size),
        (Some(0), Some(3), Some(3)),
        "the maximum moved with the desired size, the minimum did not"
    );
    assert_eq!(ng.status, Some(NodegroupStatus::Active));

    // The same size again changes nothing.
    let again = scale_pool(&api, &request, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!((again.from, again.to), (3, 3));

    // A pool that does not exist, a cluster nobody owns, a caller EKS does not know.
    let missing = ScaleRequest {
        pool: "c1-pool-9".into(),
        ..request.clone()
    };
    let e = scale_pool(&api, &missing, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("no node group ns1-c1-pool-9"),
        "{e:#}"
    );
    let unowned = ScaleRequest {
        cluster: "c3".into(),
        ..request.clone()
    };
    let e = scale_pool(&api, &unowned, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no EKS cluster is tagged capi-managed-eks=ns1_c3"),
        "{e:#}"
    );
    let stranger = EksApi::new(s.url(), REGION, Some((AKID.into(), "wrong".into())));
    let e = scale_pool(&stranger, &request, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("InvalidSignatureException"), "{e:#}");
    s.shutdown().await;
}
