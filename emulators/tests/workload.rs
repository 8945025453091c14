//! Real workload API servers: token webhook authentication, Nodes, and several servers at once.
//!
//! Uses the test-bed assets (`TESTBED_ASSETS`, else found or built by `testbed::Assets::locate`).
//! Prints start-up times and resident memory (run with `--nocapture` to see them; with
//! `--test-threads=1` for undisturbed numbers).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use emulators::kit::workload::{NodeSpec, WorkloadEndpoint, WorkloadServers};
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};
use testbed::{Assets, KubeconfigAuth};

const GOOD_TOKEN: &str = "k8s-aws-v1.the-one-good-token";

struct Reviewer {
    cluster: String,
    calls: AtomicUsize,
}

/// A token-review endpoint that accepts exactly [`GOOD_TOKEN`] for one cluster.
async fn review(
    State(reviewer): State<Arc<Reviewer>>,
    Path(cluster): Path<String>,
    Json(body): Json<Value>,
) -> Json<Value> {
    reviewer.calls.fetch_add(1, Ordering::SeqCst);
    assert_eq!(body["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(body["kind"], "TokenReview");
    let ok = cluster == reviewer.cluster && body["spec"]["token"] == GOOD_TOKEN;
    let status = if ok {
        json!({
            "authenticated": true,
            "user": {
                "username": "kubernetes-admin",
                "uid": "aws-iam-authenticator:123456789012:AKIDEXAMPLE",
                "groups": ["system:masters", "system:authenticated"],
            },
        })
    } else {
        json!({ "authenticated": false, "error": "token not accepted" })
    };
    Json(json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "status": status,
    }))
}

/// Serves the token review on a free loopback port; returns the base URL.
async fn serve_reviewer(reviewer: Arc<Reviewer>) -> String {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new()
        .route("/_emulator/tokenreview/{cluster}", post(review))
        .with_state(reviewer);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://127.0.0.1:{port}/_emulator/tokenreview")
}

async fn assets() -> Assets {
    match std::env::var_os(testbed::assets::ASSETS_ENV) {
        Some(dir) => Assets::at(PathBuf::from(dir)).unwrap(),
        None => tokio::task::spawn_blocking(Assets::locate)
            .await
            .unwrap()
            .unwrap(),
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("workload-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn client_with(
    endpoint: &WorkloadEndpoint,
    auth: KubeconfigAuth,
    dir: &std::path::Path,
) -> kube::Client {
    let path = dir.join(format!("user-{}.kubeconfig", endpoint.port));
    testbed::write_kubeconfig(&path, &endpoint.server, &endpoint.ca_pem, &auth).unwrap();
    testbed::client_from(&path).await.unwrap()
}

/// Resident set size in KiB, from ps.
fn rss_kib(pid: u32) -> u64 {
    let out = std::process::Command::new("ps")
        .args(["-o", "rss=", "-p", &pid.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn node(name: &str, provider_id: &str) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        provider_id: provider_id.into(),
        labels: BTreeMap::from([("eks.amazonaws.com/nodegroup".into(), "ng-1".into())]),
        taints: vec![("dedicated".into(), "batch".into(), "NoSchedule".into())],
        kubelet_version: None,
    }
}

fn is_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_server_authenticates_through_the_token_webhook_and_holds_the_nodes_it_is_given()
{
    let reviewer = Arc::new(Reviewer {
        cluster: "demo".into(),
        calls: AtomicUsize::new(0),
    });
    let base = serve_reviewer(reviewer.clone()).await;
    let dir = scratch_dir("one");
    let servers = WorkloadServers::new(assets().await, dir.clone(), base).unwrap();

    let started = Instant::now();
    let endpoint = servers.start_cluster("demo").await.unwrap();
    let took = started.elapsed();
    assert_eq!(endpoint.host, "127.0.0.1");
    assert_eq!(
        endpoint.server,
        format!("https://127.0.0.1:{}", endpoint.port)
    );
    assert_eq!(endpoint.ca_pem, servers.ca_pem());
    // Starting again returns the same server.
    assert_eq!(servers.start_cluster("demo").await.unwrap(), endpoint);
    let server_rss = rss_kib(servers.server_pid("demo").unwrap());
    let etcd_rss = rss_kib(servers.etcd_pid().unwrap());
    eprintln!(
        "workload: first start (with etcd) took {took:?}; kube-apiserver RSS {} MiB, etcd RSS {} MiB",
        server_rss / 1024,
        etcd_rss / 1024
    );

    // The one good token lists namespaces.
    let user = client_with(&endpoint, KubeconfigAuth::Token(GOOD_TOKEN.into()), &dir).await;
    let namespaces: Api<Namespace> = Api::all(user.clone());
    namespaces.list(&ListParams::default()).await.unwrap();
    assert!(reviewer.calls.load(Ordering::SeqCst) >= 1);

    // Any other token is refused with 401.
    let stranger = client_with(
        &endpoint,
        KubeconfigAuth::Token("k8s-aws-v1.wrong".into()),
        &dir,
    )
    .await;
    match Api::<Namespace>::all(stranger)
        .list(&ListParams::default())
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 401, "{status:?}"),
        other => panic!("expected 401, got {other:?}"),
    }

    // Two Nodes, Ready, with the provider IDs given.
    let a = node(
        "ip-10-0-1-23.us-west-2.compute.internal",
        "aws:///us-west-2a/i-0123456789abcdef0",
    );
    let b = node(
        "ip-10-0-2-45.us-west-2.compute.internal",
        "aws:///us-west-2b/i-0fedcba9876543210",
    );
    servers
        .set_nodes("demo", &[a.clone(), b.clone()])
        .await
        .unwrap();
    let nodes: Api<Node> = Api::all(user.clone());
    let list = nodes.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(list.len(), 2);
    for spec in [&a, &b] {
        let n = list
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(spec.name.as_str()))
            .unwrap();
        assert_eq!(
            n.spec.as_ref().unwrap().provider_id.as_deref(),
            Some(spec.provider_id.as_str())
        );
        assert!(is_ready(n), "{n:?}");
        let labels = n.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["eks.amazonaws.com/nodegroup"], "ng-1");
        assert_eq!(labels["kubernetes.io/hostname"], spec.name);
        let taints = n.spec.as_ref().unwrap().taints.as_ref().unwrap();
        assert_eq!(taints[0].key, "dedicated");
        let info = &n.status.as_ref().unwrap().node_info.as_ref().unwrap();
        assert!(info.kubelet_version.starts_with('v'), "{info:?}");
    }

    // Setting the same list again keeps the Ready transition time.
    let before = nodes.get(&a.name).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    servers
        .set_nodes("demo", &[a.clone(), b.clone()])
        .await
        .unwrap();
    let after = nodes.get(&a.name).await.unwrap();
    let transition = |n: &Node| {
        n.status.as_ref().unwrap().conditions.as_ref().unwrap()[0]
            .last_transition_time
            .clone()
    };
    assert_eq!(transition(&before), transition(&after));

    // Then one: the other is deleted; a changed provider ID replaces the Node.
    let mut a2 = a.clone();
    a2.provider_id = "aws:///us-west-2a/i-0aaaaaaaaaaaaaaaa".into();
    a2.kubelet_version = Some("v1.33.4-eks-1234567".into());
    servers.set_nodes("demo", &[a2.clone()]).await.unwrap();
    let list = nodes.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].metadata.name.as_deref(), Some(a2.name.as_str()));
    assert_eq!(
        list[0].spec.as_ref().unwrap().provider_id.as_deref(),
        Some(a2.provider_id.as_str())
    );
    assert_eq!(
        list[0]
            .status
            .as_ref()
            .unwrap()
            .node_info
            .as_ref()
            .unwrap()
            .kubelet_version,
        "v1.33.4-eks-1234567"
    );
    assert!(is_ready(&list[0]));

    // Stopping the cluster stops its server.
    servers.stop_cluster("demo").await;
    assert!(servers.endpoint("demo").is_none());
    assert!(servers.set_nodes("demo", &[]).await.is_err());
    servers.shutdown().await;
    assert!(servers.start_cluster("demo").await.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workload_servers_start_concurrently_and_keep_their_data_apart() {
    let reviewer = Arc::new(Reviewer {
        cluster: "none".into(),
        calls: AtomicUsize::new(0),
    });
    let base = serve_reviewer(reviewer).await;
    let dir = scratch_dir("three");
    let servers = WorkloadServers::new(assets().await, dir.clone(), base).unwrap();

    let ids = ["alpha", "beta", "gamma"];
    let started = Instant::now();
    let endpoints = futures::future::try_join_all(ids.iter().map(|id| servers.start_cluster(id)))
        .await
        .unwrap();
    let took = started.elapsed();
    let mut ports: Vec<u16> = endpoints.iter().map(|e| e.port).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), 3);
    assert_eq!(servers.running(), ids);

    let servers_rss: u64 = ids
        .iter()
        .map(|id| rss_kib(servers.server_pid(id).unwrap()))
        .sum();
    let etcd_rss = rss_kib(servers.etcd_pid().unwrap());
    eprintln!(
        "workload: 3 servers started concurrently in {took:?}; kube-apiservers RSS {} MiB in all, etcd RSS {} MiB",
        servers_rss / 1024,
        etcd_rss / 1024
    );

    // A namespace created in one cluster is not seen by the others (separate etcd prefixes).
    let alpha: Api<Namespace> = Api::all(servers.admin_client("alpha").unwrap());
    let ns: Namespace =
        serde_json::from_value(json!({ "metadata": { "name": "only-in-alpha" } })).unwrap();
    alpha.create(&PostParams::default(), &ns).await.unwrap();
    for id in ["beta", "gamma"] {
        let api: Api<Namespace> = Api::all(servers.admin_client(id).unwrap());
        assert!(
            api.get_opt("only-in-alpha").await.unwrap().is_none(),
            "{id}"
        );
    }

    // Stopping one leaves the others serving.
    let beta: Api<Namespace> = Api::all(servers.admin_client("beta").unwrap());
    let ns: Namespace =
        serde_json::from_value(json!({ "metadata": { "name": "kept-in-beta" } })).unwrap();
    beta.create(&PostParams::default(), &ns).await.unwrap();
    servers.stop_cluster("beta").await;
    assert_eq!(servers.running(), ["alpha", "gamma"]);
    let gamma: Api<Namespace> = Api::all(servers.admin_client("gamma").unwrap());
    gamma.get("default").await.unwrap();

    // Restarted (etcd already up), it finds its data again under its prefix.
    let started = Instant::now();
    servers.start_cluster("beta").await.unwrap();
    eprintln!(
        "workload: one more server (etcd running, 2 others serving) started in {:?}",
        started.elapsed()
    );
    let beta: Api<Namespace> = Api::all(servers.admin_client("beta").unwrap());
    assert!(beta.get_opt("kept-in-beta").await.unwrap().is_some());

    servers.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
