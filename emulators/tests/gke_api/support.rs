//! What the GKE API tests share: the bed (server, key, clients), names, error codes, operation
//! waits, pool specs and the managed instances of a pool's group.

use std::time::Duration;

use emulators::gke::{GkeConfig, GkeServer, ServiceAccountKey, serve_gke};
use emulators::kit::{Delays, Timing};
use google_cloud_compute_v1::client::InstanceGroupManagers;
use google_cloud_compute_v1::model as compute;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{self, Cluster, NodeConfig, NodePool, NodeTaint};
use google_cloud_gax::error::rpc::Code;
use google_cloud_gax::paginator::ItemPaginator as _;

pub(crate) const PROJECT: &str = "capi-gke-test";
pub(crate) const ZONE: &str = "us-central1-a";
pub(crate) const REGION: &str = "us-central1";

pub(crate) fn timing() -> Timing {
    Timing {
        cluster: Delays::uniform(0.6),
        pool: Delays::uniform(0.4),
        addon: Delays::uniform(0.2),
        instance_shutdown: 1.2,
    }
}

pub(crate) struct Bed {
    pub(crate) server: GkeServer,
    pub(crate) key: ServiceAccountKey,
    pub(crate) container: ClusterManager,
}

pub(crate) async fn bed_with(config: impl FnOnce(&mut GkeConfig)) -> Bed {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let key = ServiceAccountKey::generate(
        PROJECT,
        &format!("capg@{PROJECT}.iam.gserviceaccount.com"),
        &format!("{url}/token"),
    )
    .unwrap();
    let mut cfg = GkeConfig {
        keys: vec![key.clone()],
        ..GkeConfig::default()
    };
    config(&mut cfg);
    let server = serve_gke(cfg, timing(), listener).await.unwrap();
    let container = ClusterManager::builder()
        .with_endpoint(server.url())
        .with_credentials(credentials(&key))
        .build()
        .await
        .unwrap();
    Bed {
        server,
        key,
        container,
    }
}

pub(crate) async fn bed() -> Bed {
    bed_with(|_| {}).await
}

pub(crate) fn credentials(key: &ServiceAccountKey) -> google_cloud_auth::credentials::Credentials {
    google_cloud_auth::credentials::service_account::Builder::new(key.to_json())
        .build()
        .unwrap()
}

pub(crate) fn parent() -> String {
    format!("projects/{PROJECT}/locations/{ZONE}")
}

pub(crate) fn cluster_name(name: &str) -> String {
    format!("{}/clusters/{name}", parent())
}

pub(crate) fn code(e: &google_cloud_container_v1::Error) -> Code {
    e.status().map(|s| s.code).unwrap_or(Code::Unknown)
}

pub(crate) fn message(e: &google_cloud_container_v1::Error) -> String {
    e.status()
        .map(|s| s.message.clone())
        .unwrap_or_else(|| e.to_string())
}

/// Polls an operation until DONE, as a provider would.
pub(crate) async fn wait(bed: &Bed, op: &model::Operation) -> model::Operation {
    for _ in 0..200 {
        let now = bed
            .container
            .get_operation()
            .set_name(format!("{}/operations/{}", parent(), op.name))
            .send()
            .await
            .unwrap();
        if now.status == model::operation::Status::Done {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("operation {} never finished", op.name);
}

pub(crate) fn pool(name: &str, nodes: i32) -> NodePool {
    NodePool::new()
        .set_name(name)
        .set_initial_node_count(nodes)
        .set_config(
            NodeConfig::new()
                .set_machine_type("e2-standard-2")
                .set_labels([("team", "a")])
                .set_taints([NodeTaint::new()
                    .set_key("dedicated")
                    .set_value("gpu")
                    .set_effect(model::node_taint::Effect::NoSchedule)]),
        )
}

pub(crate) async fn create(bed: &Bed, name: &str, version: &str) -> model::Operation {
    bed.container
        .create_cluster()
        .set_parent(parent())
        .set_cluster(
            Cluster::new()
                .set_name(name)
                .set_initial_cluster_version(version)
                .set_resource_labels([("capi-managed-gke", "default_demo")])
                .set_node_pools([pool("pool-a", 2)]),
        )
        .send()
        .await
        .unwrap()
}

pub(crate) async fn managed_instances(bed: &Bed, group_url: &str) -> Vec<compute::ManagedInstance> {
    let groups = InstanceGroupManagers::builder()
        .with_endpoint(bed.server.url())
        .with_credentials(credentials(&bed.key))
        .build()
        .await
        .unwrap();
    let mut items = groups
        .list_managed_instances()
        .set_project(PROJECT)
        .set_zone(ZONE)
        .set_instance_group_manager(group_url.rsplit('/').next().unwrap())
        .set_max_results(1u32)
        .by_item();
    let mut out = Vec::new();
    while let Some(item) = items.next().await {
        out.push(item.unwrap());
    }
    out
}
