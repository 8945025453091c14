//! Nodegroups: scale, relabel, upgrade and block a cluster's deletion; their instances shut down
//! on a scale-in; an instance type EC2 lacks fails them with their health issue.

use std::time::Duration;
use test_support::eventually_true;

use aws_sdk_eks::error::ProvideErrorMetadata;
use aws_sdk_eks::types::{
    ClusterStatus, NodegroupScalingConfig, NodegroupStatus, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateParamType, UpdateStatus, UpdateTaintsPayload, UpdateType,
};
use emulators::kit::Timing;

use crate::support::*;

#[tokio::test]
async fn a_scale_in_completes_while_its_instance_shuts_down_and_a_deletion_waits_for_it() {
    let s = start(Timing {
        instance_shutdown: 2.0,
        ..fast()
    })
    .await;
    let c = client(s.url());
    active_cluster(&c, "window", "1.31").await;
    create_nodegroup(&c, "window", "ng", 2).await;
    wait_nodegroup(&c, "window", "ng", NodegroupStatus::Active).await;
    let before = listed_instances(&s).await;
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before.values().all(|st| st == "running"), "{before:?}");
    assert!(
        before.keys().all(|id| id.starts_with("aws:///")),
        "{before:?}"
    );

    let update = c
        .update_nodegroup_config()
        .cluster_name("window")
        .nodegroup_name("ng")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(5)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    let id = update.id().unwrap().to_string();
    eventually_true("the scale-in update", Duration::from_secs(15), || async {
        c.describe_update()
            .name("window")
            .update_id(&id)
            .nodegroup_name("ng")
            .send()
            .await
            .unwrap()
            .update
            .and_then(|u| u.status)
            == Some(UpdateStatus::Successful)
    })
    .await;
    // The update is done and the nodegroup ACTIVE at its new size, while the instance it chose
    // to remove is still shutting down: a provider ID may not leave the list yet.
    assert_eq!(
        nodegroup_status(&c, "window", "ng").await,
        Some(NodegroupStatus::Active)
    );
    let during = listed_instances(&s).await;
    assert_eq!(during.len(), 2, "{during:?}");
    assert_eq!(
        during.values().filter(|st| *st == "shutting-down").count(),
        1,
        "{during:?}"
    );
    eventually_true(
        "the shutting-down instance to be gone",
        Duration::from_secs(10),
        || async { listed_instances(&s).await.len() == 1 },
    )
    .await;

    // A deletion: the nodegroup stays DELETING until its last instance has shut down.
    c.delete_nodegroup()
        .cluster_name("window")
        .nodegroup_name("ng")
        .send()
        .await
        .unwrap();
    eventually_true(
        "the instance to shut down",
        Duration::from_secs(10),
        || async {
            listed_instances(&s)
                .await
                .values()
                .any(|st| st == "shutting-down")
        },
    )
    .await;
    assert_eq!(
        nodegroup_status(&c, "window", "ng").await,
        Some(NodegroupStatus::Deleting),
        "a nodegroup with an instance still shutting down is not gone"
    );
    eventually_true(
        "the nodegroup to be gone",
        Duration::from_secs(10),
        || async { nodegroup_status(&c, "window", "ng").await.is_none() },
    )
    .await;
    assert!(listed_instances(&s).await.is_empty());
}

#[tokio::test]
async fn nodegroups_scale_relabel_upgrade_and_block_cluster_deletion() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "pools", "1.30").await;
    let created = c
        .create_nodegroup()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .instance_types("m5.large")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(4)
                .desired_size(2)
                .build(),
        )
        .labels("tier", "web")
        .labels("stale", "yes")
        .taints(
            Taint::builder()
                .key("dedicated")
                .value("web")
                .effect(TaintEffect::NoSchedule)
                .build(),
        )
        .tags("team", "platform")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    assert_eq!(created.status(), Some(&NodegroupStatus::Creating));
    assert_eq!(
        created.version(),
        Some("1.30"),
        "the cluster's version when none is given"
    );
    assert!(created.release_version().unwrap().starts_with("1.30."));
    let arn = created.nodegroup_arn().unwrap();
    assert!(
        arn.starts_with("arn:aws:eks:us-west-2:123456789012:nodegroup/pools/workers/"),
        "{arn}"
    );
    assert_eq!(created.instance_types(), ["m5.large"]);
    assert_eq!(
        created.capacity_type().map(|t| t.as_str()),
        Some("ON_DEMAND")
    );
    assert_eq!(created.taints()[0].effect(), Some(&TaintEffect::NoSchedule));
    assert_eq!(
        created.labels().unwrap().get("tier").map(String::as_str),
        Some("web")
    );
    assert_eq!(created.scaling_config().unwrap().desired_size(), Some(2));
    assert!(
        created.resources().unwrap().auto_scaling_groups()[0]
            .name()
            .unwrap()
            .starts_with("eks-workers-")
    );

    wait_nodegroup(&c, "pools", "workers", NodegroupStatus::Active).await;
    let ids = instance_ids(&s, "pools", "workers");
    assert_eq!(
        ids.len(),
        2,
        "an ACTIVE nodegroup has desiredSize instances"
    );
    assert!(
        ids.iter().all(|i| i.len() == 19 && i.starts_with("i-")),
        "{ids:?}"
    );

    let lopsided = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().min_size(3).build())
        .send()
        .await;
    assert_eq!(
        message(lopsided),
        "Minimum capacity 3 can't be greater than desired size 2"
    );

    let update = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().desired_size(3).build())
        .labels(
            UpdateLabelsPayload::builder()
                .add_or_update_labels("zone-pinned", "true")
                .remove_labels("stale")
                .build(),
        )
        .taints(
            UpdateTaintsPayload::builder()
                .add_or_update_taints(
                    Taint::builder()
                        .key("gpu")
                        .effect(TaintEffect::PreferNoSchedule)
                        .build(),
                )
                .remove_taints(
                    Taint::builder()
                        .key("dedicated")
                        .value("web")
                        .effect(TaintEffect::NoSchedule)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(update.r#type(), Some(&UpdateType::ConfigUpdate));
    let desired = update
        .params()
        .iter()
        .find(|p| p.r#type() == Some(&UpdateParamType::DesiredSize))
        .unwrap();
    assert_eq!(desired.value(), Some("3"));
    assert_eq!(
        nodegroup_status(&c, "pools", "workers").await,
        Some(NodegroupStatus::Updating)
    );
    let busy = c
        .update_nodegroup_config()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .scaling_config(NodegroupScalingConfig::builder().desired_size(1).build())
        .send()
        .await;
    assert_eq!(code(busy), "ResourceInUseException");
    let id = update.id().unwrap().to_string();
    let listed = c
        .list_updates()
        .name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.update_ids(), [id.as_str()]);
    assert!(
        c.list_updates()
            .name("pools")
            .send()
            .await
            .unwrap()
            .update_ids()
            .is_empty(),
        "nodegroup updates are not cluster updates"
    );
    assert_eq!(
        code(
            c.describe_update()
                .name("pools")
                .update_id(&id)
                .send()
                .await
        ),
        "ResourceNotFoundException"
    );
    eventually_true(
        "the nodegroup config update",
        Duration::from_secs(15),
        || async {
            let u = c
                .describe_update()
                .name("pools")
                .update_id(&id)
                .nodegroup_name("workers")
                .send()
                .await
                .unwrap()
                .update
                .unwrap();
            u.status() == Some(&UpdateStatus::Successful)
        },
    )
    .await;
    let ng = c
        .describe_nodegroup()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    assert_eq!(ng.status(), Some(&NodegroupStatus::Active));
    assert_eq!(ng.scaling_config().unwrap().desired_size(), Some(3));
    assert_eq!(
        ng.scaling_config().unwrap().min_size(),
        Some(1),
        "merged with the current scaling"
    );
    let labels = ng.labels().unwrap();
    assert_eq!(
        (
            labels.get("zone-pinned").map(String::as_str),
            labels.get("stale")
        ),
        (Some("true"), None)
    );
    assert_eq!(ng.taints().len(), 1);
    assert_eq!(ng.taints()[0].key(), Some("gpu"));
    let scaled = instance_ids(&s, "pools", "workers");
    assert_eq!(scaled.len(), 3);
    assert!(
        ids.iter().all(|i| scaled.contains(i)),
        "scaling out keeps the existing instances"
    );

    // Versions: never ahead of the cluster; the cluster waits for its nodegroups.
    let ahead = c
        .update_nodegroup_version()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .version("1.31")
        .send()
        .await;
    assert_eq!(code(ahead), "InvalidParameterException");
    c.update_cluster_version()
        .name("pools")
        .version("1.31")
        .send()
        .await
        .unwrap();
    wait_cluster(&c, "pools", ClusterStatus::Active).await;
    let blocked = c
        .update_cluster_version()
        .name("pools")
        .version("1.32")
        .send()
        .await;
    assert!(
        message(blocked)
            .starts_with("Nodegroups workers must be updated to match cluster version 1.31")
    );
    let upgrade = c
        .update_nodegroup_version()
        .cluster_name("pools")
        .nodegroup_name("workers")
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(upgrade.r#type(), Some(&UpdateType::VersionUpdate));
    let version = upgrade
        .params()
        .iter()
        .find(|p| p.r#type() == Some(&UpdateParamType::Version))
        .unwrap();
    assert_eq!(
        version.value(),
        Some("1.31"),
        "the cluster's version when none is given"
    );
    wait_nodegroup(&c, "pools", "workers", NodegroupStatus::Active).await;
    eventually_true(
        "the nodegroup version update",
        Duration::from_secs(15),
        || async {
            let ng = c
                .describe_nodegroup()
                .cluster_name("pools")
                .nodegroup_name("workers")
                .send()
                .await
                .unwrap()
                .nodegroup
                .unwrap();
            ng.version() == Some("1.31")
        },
    )
    .await;
    let replaced = instance_ids(&s, "pools", "workers");
    assert_eq!(replaced.len(), 3);
    assert!(
        replaced.iter().all(|i| !scaled.contains(i)),
        "a version update replaces the instances"
    );

    // Paging and deletion order.
    create_nodegroup(&c, "pools", "batch", 1).await;
    let page = c
        .list_nodegroups()
        .cluster_name("pools")
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(page.nodegroups(), ["batch"]);
    let rest = c
        .list_nodegroups()
        .cluster_name("pools")
        .next_token(page.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.nodegroups(), ["workers"]);
    let refused = c.delete_cluster().name("pools").send().await.unwrap_err();
    assert_eq!(refused.code(), Some("ResourceInUseException"));
    assert_eq!(refused.message(), Some("Cluster has nodegroups attached"));
    for ng in ["batch", "workers"] {
        let deleting = c
            .delete_nodegroup()
            .cluster_name("pools")
            .nodegroup_name(ng)
            .send()
            .await
            .unwrap()
            .nodegroup
            .unwrap();
        assert_eq!(deleting.status(), Some(&NodegroupStatus::Deleting));
    }
    eventually_true("the nodegroups to go", Duration::from_secs(15), || async {
        c.list_nodegroups()
            .cluster_name("pools")
            .send()
            .await
            .unwrap()
            .nodegroups()
            .is_empty()
    })
    .await;
    c.delete_cluster().name("pools").send().await.unwrap();
    wait_cluster_gone(&c, "pools").await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_node_group_of_an_instance_type_ec2_does_not_have_fails_with_its_health_issue() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "types", "1.31").await;
    c.create_nodegroup()
        .cluster_name("types")
        .nodegroup_name("huge")
        .node_role(NODE_ROLE)
        .subnets("subnet-0aaa")
        .subnets("subnet-0bbb")
        .instance_types("m5.huge")
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(1)
                .max_size(2)
                .desired_size(1)
                .build(),
        )
        .send()
        .await
        .expect("EKS accepts the request; the launch fails later, as in EKS");
    wait_nodegroup(&c, "types", "huge", NodegroupStatus::CreateFailed).await;
    let ng = c
        .describe_nodegroup()
        .cluster_name("types")
        .nodegroup_name("huge")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    let issues = ng.health().map(|h| h.issues()).unwrap_or_default();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let issue = &issues[0];
    assert_eq!(
        issue.code().map(|c| c.as_str()),
        Some("NodeCreationFailure")
    );
    assert!(
        issue
            .message()
            .is_some_and(|m| m.contains("The instance type 'm5.huge' does not exist")),
        "{issue:?}"
    );
    assert!(instance_ids(&s, "types", "huge").is_empty());
    // A type EC2 has launches as before.
    create_nodegroup(&c, "types", "fine", 1).await;
    wait_nodegroup(&c, "types", "fine", NodegroupStatus::Active).await;
    s.shutdown().await;
}
