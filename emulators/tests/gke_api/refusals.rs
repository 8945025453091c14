//! What GKE refuses, refused with its errors.

use emulators::gke::ServiceAccountKey;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{self, Cluster, NodeConfig, NodePool};
use google_cloud_gax::error::rpc::Code;

use crate::support::*;

#[tokio::test]
async fn what_gke_refuses_is_refused_with_its_errors() {
    let bed = bed_with(|c| c.cpu_quota = 8).await;
    let refused = |cluster: Cluster| {
        let client = bed.container.clone();
        async move {
            client
                .create_cluster()
                .set_parent(parent())
                .set_cluster(cluster)
                .send()
                .await
                .unwrap_err()
        }
    };
    // Built one at a time: the client's Cluster is large, and a debug test thread's stack small.
    type Case = (fn() -> Cluster, &'static str);
    let cases: Vec<Case> = vec![
        (
            || Cluster::new().set_name("Capi").set_initial_node_count(1),
            "cluster.name",
        ),
        (
            || {
                Cluster::new()
                    .set_name("a".repeat(41))
                    .set_initial_node_count(1)
            },
            "cluster.name",
        ),
        (
            || Cluster::new().set_name("nodes"),
            "initial_node_count must be greater than zero",
        ),
        (
            || {
                Cluster::new()
                    .set_name("old")
                    .set_initial_cluster_version("1.29")
                    .set_initial_node_count(1)
            },
            "Master version \"1.29\" is unsupported",
        ),
        (
            || {
                Cluster::new()
                    .set_name("big")
                    .set_node_pools([NodePool::new()
                        .set_name("p")
                        .set_initial_node_count(1)
                        .set_config(NodeConfig::new().set_machine_type("e2-mega-7"))])
            },
            "Machine type with name 'e2-mega-7' does not exist",
        ),
        (
            || {
                Cluster::new()
                    .set_name("net")
                    .set_network("nowhere")
                    .set_initial_node_count(1)
            },
            "Network \"nowhere\" does not exist",
        ),
        (
            || {
                Cluster::new()
                    .set_name("lbl")
                    .set_resource_labels([("Team", "x")])
                    .set_initial_node_count(1)
            },
            "resourceLabels",
        ),
        (
            || {
                Cluster::new()
                    .set_name("chan")
                    .set_initial_cluster_version("1.34")
                    .set_release_channel(
                        model::ReleaseChannel::new()
                            .set_channel(model::release_channel::Channel::Stable),
                    )
                    .set_initial_node_count(1)
            },
            "not available in the STABLE release channel",
        ),
    ];
    for (cluster, expect) in cases {
        let e = Box::pin(refused(cluster())).await;
        assert_eq!(code(&e), Code::InvalidArgument, "{e:?}");
        assert!(
            message(&e).contains(expect),
            "{expect:?} not in {:?}",
            message(&e)
        );
    }

    // Quota: 8 vCPUs; a cluster asking for 3 × 4 fails when its operation completes.
    let op = bed
        .container
        .create_cluster()
        .set_parent(parent())
        .set_cluster(
            Cluster::new()
                .set_name("hungry")
                .set_node_pools([NodePool::new()
                    .set_name("p")
                    .set_initial_node_count(3)
                    .set_config(NodeConfig::new().set_machine_type("e2-standard-4"))]),
        )
        .send()
        .await
        .unwrap();
    let done = wait(&bed, &op).await;
    let error = done.error.expect("the operation fails");
    assert!(
        error
            .message
            .contains("Quota 'CPUS' exceeded. Limit: 8.0 in region us-central1"),
        "{}",
        error.message
    );
    let c = bed
        .container
        .get_cluster()
        .set_name(cluster_name("hungry"))
        .send()
        .await
        .unwrap();
    assert_eq!(c.status, model::cluster::Status::Error);

    // Without a token, or with another project's, nothing is served.
    let anonymous = ClusterManager::builder()
        .with_endpoint(bed.server.url())
        .with_credentials(google_cloud_auth::credentials::anonymous::Builder::new().build())
        .build()
        .await
        .unwrap();
    let e = anonymous
        .list_clusters()
        .set_parent(parent())
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), Code::Unauthenticated);
    let e = bed
        .container
        .list_clusters()
        .set_parent(format!("projects/someone-else/locations/{ZONE}"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), Code::PermissionDenied);
    let stranger =
        ServiceAccountKey::generate(PROJECT, &bed.key.client_email, &bed.key.token_uri).unwrap();
    let forged = ClusterManager::builder()
        .with_endpoint(bed.server.url())
        .with_credentials(credentials(&stranger))
        .build()
        .await
        .unwrap();
    let e = forged
        .list_clusters()
        .set_parent(parent())
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), Code::Unauthenticated);
    bed.server.shutdown().await;
}
