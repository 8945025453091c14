//! Tags on cluster, nodegroup and add-on ARNs.

use crate::support::*;

#[tokio::test]
async fn tags_work_on_cluster_nodegroup_and_addon_arns() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "tagged", "1.33").await;
    create_nodegroup(&c, "tagged", "ng", 1).await;
    let addon = c
        .create_addon()
        .cluster_name("tagged")
        .addon_name("vpc-cni")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    let ng = c
        .describe_nodegroup()
        .cluster_name("tagged")
        .nodegroup_name("ng")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let arns = [
        "arn:aws:eks:us-west-2:123456789012:cluster/tagged".to_string(),
        ng.nodegroup_arn().unwrap().to_string(),
        addon.addon_arn().unwrap().to_string(),
    ];
    for arn in &arns {
        c.tag_resource()
            .resource_arn(arn)
            .tags("env", "test")
            .tags("owner", "me")
            .send()
            .await
            .unwrap();
        c.untag_resource()
            .resource_arn(arn)
            .tag_keys("owner")
            .send()
            .await
            .unwrap();
        let tags = c
            .list_tags_for_resource()
            .resource_arn(arn)
            .send()
            .await
            .unwrap();
        assert_eq!(tags.tags().unwrap().len(), 1, "{arn}");
        assert_eq!(
            tags.tags().unwrap().get("env").map(String::as_str),
            Some("test")
        );
    }
    let described = c
        .describe_cluster()
        .name("tagged")
        .send()
        .await
        .unwrap()
        .cluster
        .unwrap();
    assert_eq!(
        described.tags().unwrap().get("env").map(String::as_str),
        Some("test")
    );
    let unknown = c
        .list_tags_for_resource()
        .resource_arn("arn:aws:eks:us-west-2:123456789012:cluster/nope")
        .send()
        .await;
    assert_eq!(code(unknown), "NotFoundException");
    let malformed = c
        .tag_resource()
        .resource_arn("not-an-arn")
        .tags("a", "b")
        .send()
        .await;
    assert_eq!(code(malformed), "BadRequestException");
    let reserved = c
        .tag_resource()
        .resource_arn(&arns[0])
        .tags("aws:x", "b")
        .send()
        .await;
    assert_eq!(code(reserved), "BadRequestException");
    s.shutdown().await;
}
