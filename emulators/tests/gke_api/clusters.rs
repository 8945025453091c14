//! A cluster through its operations (create, node pools, updates, resizes, deletes) as Google's
//! client sees it.

use std::time::Duration;

use google_cloud_compute_v1::model as compute;
use google_cloud_container_v1::model::{self, Cluster, ClusterUpdate, NodeTaints};
use google_cloud_gax::error::rpc::Code;

use crate::support::*;

#[tokio::test]
async fn a_cluster_lives_through_its_operations_as_googles_client_sees_it() {
    let bed = bed().await;
    let config = bed
        .container
        .get_server_config()
        .set_name(parent())
        .send()
        .await
        .unwrap();
    assert!(
        config
            .valid_master_versions
            .iter()
            .any(|v| v.starts_with("1.32."))
    );
    assert_eq!(config.channels.len(), 4);

    let op = create(&bed, "capi-demo", "1.32").await;
    assert_eq!(op.operation_type, model::operation::Type::CreateCluster);
    assert_eq!(op.status, model::operation::Status::Pending);
    assert!(
        op.target_link
            .ends_with("/zones/us-central1-a/clusters/capi-demo"),
        "{}",
        op.target_link
    );
    assert!(
        op.self_link.contains("/operations/operation-"),
        "{}",
        op.self_link
    );
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.status, model::cluster::Status::Provisioning);

    // One operation per cluster at a time.
    let busy = bed
        .container
        .set_labels()
        .set_name(cluster_name("capi-demo"))
        .set_label_fingerprint(c.label_fingerprint.clone())
        .set_resource_labels([("a", "b")])
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&busy), Code::FailedPrecondition, "{busy:?}");
    assert!(message(&busy).contains(&op.name), "{}", message(&busy));
    // A second cluster of the same name is refused.
    let twice = bed
        .container
        .create_cluster()
        .set_parent(parent())
        .set_cluster(
            Cluster::new()
                .set_name("capi-demo")
                .set_initial_node_count(1),
        )
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&twice), Code::AlreadyExists);

    let done = wait(&bed, &op).await;
    assert!(done.error.is_none(), "{:?}", done.error);
    assert!(!done.end_time.is_empty());
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.status, model::cluster::Status::Running);
    assert_eq!(c.current_master_version, "1.32.9-gke.1010000");
    assert_eq!(c.node_pools.len(), 1);
    let np = &c.node_pools[0];
    assert_eq!(np.status, model::node_pool::Status::Running);
    assert_eq!(np.version, "1.32.9-gke.1010000");
    assert_eq!(
        np.config.as_ref().unwrap().taints[0].effect,
        model::node_taint::Effect::NoSchedule
    );
    assert_eq!(np.instance_group_urls.len(), 1);
    assert_eq!(
        c.resource_labels
            .get("capi-managed-gke")
            .map(String::as_str),
        Some("default_demo")
    );
    let instances = managed_instances(&bed, &np.instance_group_urls[0]).await;
    assert_eq!(instances.len(), 2, "{instances:?}");
    assert!(
        instances
            .iter()
            .all(|i| i.instance_status == Some(compute::managed_instance::InstanceStatus::Running))
    );
    let listed = bed.server.gke().instances();
    assert_eq!(listed.len(), 2);
    assert!(
        listed[0]
            .provider_id
            .starts_with(&format!("gce://{PROJECT}/{ZONE}/gke-capi-demo-pool-a-")),
        "{listed:?}"
    );

    // Labels need the current fingerprint.
    let stale = bed
        .container
        .set_labels()
        .set_name(cluster_name("capi-demo"))
        .set_label_fingerprint("00000000")
        .set_resource_labels([("capi-managed-gke", "default_demo"), ("env", "dev")])
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&stale), Code::FailedPrecondition);
    assert!(
        message(&stale).contains("fingerprint mismatch"),
        "{}",
        message(&stale)
    );
    let op = bed
        .container
        .set_labels()
        .set_name(cluster_name("capi-demo"))
        .set_label_fingerprint(c.label_fingerprint.clone())
        .set_resource_labels([("capi-managed-gke", "default_demo"), ("env", "dev")])
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, model::operation::Type::UpdateCluster);
    wait(&bed, &op).await;
    let c2 = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c2.resource_labels.len(), 2);
    assert_ne!(c2.label_fingerprint, c.label_fingerprint);

    // The master moves one minor at a time, and only one field per update.
    let jump = bed
        .container
        .update_cluster()
        .set_name(cluster_name("capi-demo"))
        .set_update(ClusterUpdate::new().set_desired_master_version("1.34"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&jump), Code::InvalidArgument);
    assert!(
        message(&jump).contains("more than a minor version at a time"),
        "{}",
        message(&jump)
    );
    let two = bed
        .container
        .update_cluster()
        .set_name(cluster_name("capi-demo"))
        .set_update(
            ClusterUpdate::new()
                .set_desired_master_version("1.33")
                .set_desired_logging_service("none"),
        )
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&two), Code::InvalidArgument);
    assert!(
        message(&two).contains("Exactly one update"),
        "{}",
        message(&two)
    );
    let ahead = bed
        .container
        .update_node_pool()
        .set_name(format!("{}/nodePools/pool-a", cluster_name("capi-demo")))
        .set_node_version("1.33")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&ahead), Code::InvalidArgument);
    assert!(
        message(&ahead).contains("cannot be greater than current master version"),
        "{}",
        message(&ahead)
    );
    let op = bed
        .container
        .update_cluster()
        .set_name(cluster_name("capi-demo"))
        .set_update(ClusterUpdate::new().set_desired_master_version("1.33"))
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, model::operation::Type::UpgradeMaster);
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.status, model::cluster::Status::Reconciling);
    wait(&bed, &op).await;
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.current_master_version, "1.33.5-gke.1201000");
    assert_eq!(c.current_node_version, "1.32.9-gke.1010000");

    // Nodes follow, and their taints can be cleared with an empty set.
    let op = bed
        .container
        .update_node_pool()
        .set_name(format!("{}/nodePools/pool-a", cluster_name("capi-demo")))
        .set_node_version("-")
        .set_taints(NodeTaints::new())
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, model::operation::Type::UpgradeNodes);
    wait(&bed, &op).await;
    let np = bed
        .container
        .get_node_pool()
        .set_name(format!("{}/nodePools/pool-a", cluster_name("capi-demo")))
        .send()
        .await
        .unwrap();
    assert_eq!(np.version, "1.33.5-gke.1201000");
    assert!(np.config.as_ref().unwrap().taints.is_empty());
    assert_eq!(
        np.config
            .as_ref()
            .unwrap()
            .labels
            .get("team")
            .map(String::as_str),
        Some("a")
    );

    // A resize completes while the removed instance still shuts down.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let op = bed
        .container
        .set_node_pool_size()
        .set_name(format!("{}/nodePools/pool-a", cluster_name("capi-demo")))
        .set_node_count(1)
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, model::operation::Type::SetNodePoolSize);
    wait(&bed, &op).await;
    let instances = managed_instances(&bed, &np.instance_group_urls[0]).await;
    let deleting: Vec<_> = instances
        .iter()
        .filter(|i| i.current_action == Some(compute::managed_instance::CurrentAction::Deleting))
        .collect();
    assert_eq!((instances.len(), deleting.len()), (2, 1), "{instances:?}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        managed_instances(&bed, &np.instance_group_urls[0])
            .await
            .len(),
        1
    );

    // Pools and the cluster go.
    let op = bed
        .container
        .delete_node_pool()
        .set_name(format!("{}/nodePools/pool-a", cluster_name("capi-demo")))
        .send()
        .await
        .unwrap();
    assert_eq!(op.operation_type, model::operation::Type::DeleteNodePool);
    wait(&bed, &op).await;
    let op = bed
        .container
        .delete_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.status, model::cluster::Status::Stopping);
    wait(&bed, &op).await;
    let gone = bed
        .container
        .get_cluster()
        .set_name(cluster_name("capi-demo"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&gone), Code::NotFound);
    let ops = bed
        .container
        .list_operations()
        .set_parent(parent())
        .send()
        .await
        .unwrap();
    assert!(ops.operations.len() >= 7, "{}", ops.operations.len());
    bed.server.shutdown().await;
}
