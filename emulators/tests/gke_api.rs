//! The GKE emulator through Google's own Rust clients (`google-cloud-container-v1`,
//! `google-cloud-compute-v1`, `google-cloud-auth`), which no one here wrote: what they send must
//! be understood and what the emulator answers must decode, errors included.

// `initialNodeCount` and `currentNodeVersion` are deprecated in the API and still sent and
// answered by GKE; the tests use them on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

use std::time::Duration;

use emulators::gke::{GkeConfig, GkeServer, ServiceAccountKey, serve_gke};
use emulators::kit::{Delays, Timing};
use google_cloud_compute_v1::client::{InstanceGroupManagers, Networks, Routers, Subnetworks};
use google_cloud_compute_v1::model as compute;
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{
    self, Cluster, ClusterUpdate, IPAllocationPolicy, NodeConfig, NodePool, NodeTaint, NodeTaints,
};
use google_cloud_gax::error::rpc::Code;
use google_cloud_gax::paginator::ItemPaginator as _;
use google_cloud_lro::Poller as _;

const PROJECT: &str = "capi-gke-test";
const ZONE: &str = "us-central1-a";
const REGION: &str = "us-central1";

fn timing() -> Timing {
    Timing {
        cluster: Delays::uniform(0.6),
        pool: Delays::uniform(0.4),
        addon: Delays::uniform(0.2),
        instance_shutdown: 1.2,
    }
}

struct Bed {
    server: GkeServer,
    key: ServiceAccountKey,
    container: ClusterManager,
}

async fn bed_with(config: impl FnOnce(&mut GkeConfig)) -> Bed {
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

async fn bed() -> Bed {
    bed_with(|_| {}).await
}

fn credentials(key: &ServiceAccountKey) -> google_cloud_auth::credentials::Credentials {
    google_cloud_auth::credentials::service_account::Builder::new(key.to_json())
        .build()
        .unwrap()
}

fn parent() -> String {
    format!("projects/{PROJECT}/locations/{ZONE}")
}

fn cluster_name(name: &str) -> String {
    format!("{}/clusters/{name}", parent())
}

fn code(e: &google_cloud_container_v1::Error) -> Code {
    e.status().map(|s| s.code).unwrap_or(Code::Unknown)
}

fn message(e: &google_cloud_container_v1::Error) -> String {
    e.status()
        .map(|s| s.message.clone())
        .unwrap_or_else(|| e.to_string())
}

/// Polls an operation until DONE, as a provider would.
async fn wait(bed: &Bed, op: &model::Operation) -> model::Operation {
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

fn pool(name: &str, nodes: i32) -> NodePool {
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

async fn create(bed: &Bed, name: &str, version: &str) -> model::Operation {
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

async fn managed_instances(bed: &Bed, group_url: &str) -> Vec<compute::ManagedInstance> {
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

#[tokio::test]
async fn a_provider_network_is_built_and_guarded_through_googles_compute_client() {
    let bed = bed().await;
    let creds = credentials(&bed.key);
    let url = bed.server.url().to_string();
    let networks = Networks::builder()
        .with_endpoint(&url)
        .with_credentials(creds.clone())
        .build()
        .await
        .unwrap();
    let subnets = Subnetworks::builder()
        .with_endpoint(&url)
        .with_credentials(creds.clone())
        .build()
        .await
        .unwrap();
    let routers = Routers::builder()
        .with_endpoint(&url)
        .with_credentials(creds)
        .build()
        .await
        .unwrap();

    let op = networks
        .insert()
        .set_project(PROJECT)
        .set_body(
            compute::Network::new()
                .set_name("capi-net")
                .set_auto_create_subnetworks(false),
        )
        .poller()
        .until_done()
        .await
        .unwrap();
    assert_eq!(op.status, Some(compute::operation::Status::Done));
    op.to_result().unwrap();
    let legacy = networks
        .insert()
        .set_project(PROJECT)
        .set_body(compute::Network::new().set_name("legacy"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(legacy.status().map(|s| s.code), Some(Code::InvalidArgument));

    let subnet = |name: &str, primary: &str, pods: &str| {
        compute::Subnetwork::new()
            .set_name(name)
            .set_network(format!("projects/{PROJECT}/global/networks/capi-net"))
            .set_ip_cidr_range(primary)
            .set_secondary_ip_ranges([
                compute::SubnetworkSecondaryRange::new()
                    .set_range_name("pods")
                    .set_ip_cidr_range(pods),
                compute::SubnetworkSecondaryRange::new()
                    .set_range_name("services")
                    .set_ip_cidr_range("10.8.0.0/20"),
            ])
    };
    subnets
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(subnet("nodes", "10.0.0.0/20", "10.4.0.0/14"))
        .poller()
        .until_done()
        .await
        .unwrap()
        .to_result()
        .unwrap();
    let overlap = subnets
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(subnet("more", "10.0.8.0/24", "10.20.0.0/16"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        overlap.status().map(|s| s.code),
        Some(Code::InvalidArgument),
        "{overlap:?}"
    );
    let got = subnets
        .get()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_subnetwork("nodes")
        .send()
        .await
        .unwrap();
    assert_eq!(got.secondary_ip_ranges.len(), 2);
    assert!(
        got.network
            .as_deref()
            .unwrap()
            .ends_with("/global/networks/capi-net")
    );
    let net = networks
        .get()
        .set_project(PROJECT)
        .set_network("capi-net")
        .send()
        .await
        .unwrap();
    assert_eq!(net.subnetworks.len(), 1);

    routers
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(
            compute::Router::new()
                .set_name("capi-nat-router")
                .set_network(format!("projects/{PROJECT}/global/networks/capi-net"))
                .set_nats([compute::RouterNat::new()
                    .set_name("capi-nat")
                    .set_nat_ip_allocate_option(compute::router_nat::NatIpAllocateOption::AutoOnly)
                    .set_source_subnetwork_ip_ranges_to_nat(compute::router_nat::SourceSubnetworkIpRangesToNat::AllSubnetworksAllIpRanges)]),
        )
        .poller()
        .until_done()
        .await
        .unwrap()
        .to_result()
        .unwrap();
    let router = routers
        .get()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_router("capi-nat-router")
        .send()
        .await
        .unwrap();
    assert_eq!(router.nats.len(), 1);

    // A VPC-native private cluster on it: the named ranges must exist.
    let private = |pods: &str| {
        Cluster::new()
            .set_name("private")
            .set_network("capi-net")
            .set_subnetwork("nodes")
            .set_initial_node_count(1)
            .set_ip_allocation_policy(
                IPAllocationPolicy::new()
                    .set_use_ip_aliases(true)
                    .set_cluster_secondary_range_name(pods)
                    .set_services_secondary_range_name("services"),
            )
            .set_network_config(model::NetworkConfig::new().set_default_enable_private_nodes(true))
            .set_control_plane_endpoints_config(
                model::ControlPlaneEndpointsConfig::new().set_ip_endpoints_config(
                    model::control_plane_endpoints_config::IPEndpointsConfig::new()
                        .set_enable_public_endpoint(false),
                ),
            )
    };
    let missing = bed
        .container
        .create_cluster()
        .set_parent(format!("projects/{PROJECT}/locations/{REGION}"))
        .set_cluster(private("pods-v2"))
        .send()
        .await
        .unwrap_err();
    assert!(
        message(&missing).contains("Secondary range \"pods-v2\" does not exist"),
        "{}",
        message(&missing)
    );
    let op = bed
        .container
        .create_cluster()
        .set_parent(format!("projects/{PROJECT}/locations/{REGION}"))
        .set_cluster(private("pods"))
        .send()
        .await
        .unwrap();
    assert!(
        op.target_link
            .contains("/locations/us-central1/clusters/private"),
        "{}",
        op.target_link
    );

    // What a cluster uses cannot be deleted.
    let e = subnets
        .delete()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_subnetwork("nodes")
        .send()
        .await
        .unwrap_err();
    assert!(
        e.status()
            .unwrap()
            .message
            .contains("already being used by"),
        "{e:?}"
    );
    let e = networks
        .delete()
        .set_project(PROJECT)
        .set_network("capi-net")
        .send()
        .await
        .unwrap_err();
    assert!(
        e.status()
            .unwrap()
            .message
            .contains("already being used by"),
        "{e:?}"
    );
    let regional = bed
        .container
        .get_cluster()
        .set_name(format!(
            "projects/{PROJECT}/locations/{REGION}/clusters/private"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(regional.locations.len(), 3);
    assert_eq!(regional.node_pools[0].instance_group_urls.len(), 3);
    bed.server.shutdown().await;
}
