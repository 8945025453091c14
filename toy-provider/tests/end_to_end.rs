//! The unbroken toy through real Cluster API core: a cluster from the release's template reaches
//! Provisioned with Nodes on its MachinePool, then deletes without leaving anything in the cloud.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toy_provider::cloud_client::CloudClient;

const NS: &str = "toy-e2e";
const CLUSTER: &str = "toy1";
const BIN: &str = env!("CARGO_BIN_EXE_toy-provider");

fn release_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("release")
}

fn api_for(client: &kube::Client, api_version: &str, kind: &str) -> Api<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    Api::namespaced_with(client.clone(), NS, &ar)
}

fn spawn(args: &[&str], kubeconfig: &Path, log: &Path, stdout: Stdio) -> Child {
    let log = std::fs::File::create(log).unwrap();
    Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn until<T>(
    what: &str,
    secs: u64,
    logs: &[PathBuf],
    mut probe: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        if tokio::time::Instant::now() > deadline {
            let tails: Vec<String> = logs
                .iter()
                .map(|l| format!("--- {}\n{}", l.display(), testbed::process::tail(l, 40)))
                .collect();
            panic!("timed out waiting for {what}\n{}", tails.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toy_cluster_from_the_template_provisions_with_nodes_and_deletes_cleanly() {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();
    let kubeconfig = plane.kubeconfig_path().to_path_buf();

    // The release's CRDs (core runs as cluster-admin in the bed: RBAC is not needed here).
    let components =
        std::fs::read_to_string(release_dir().join("infrastructure-components.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&components).unwrap();
    let crds: Vec<CustomResourceDefinition> = docs
        .into_iter()
        .filter(|d| d["kind"] == "CustomResourceDefinition")
        .map(|d| serde_json::from_value(d).unwrap())
        .collect();
    assert_eq!(crds.len(), 6);
    plane.install_crds(&crds).await.unwrap();

    // The cloud, then the provider.
    let cloud_log = plane.log_dir().join("toy-cloud.log");
    let provider_log = plane.log_dir().join("toy-provider.log");
    let logs = [provider_log.clone(), cloud_log.clone()];
    let kubeconfig_arg = kubeconfig.to_string_lossy().into_owned();
    let mut cloud = spawn(
        &["cloud", "--workload-kubeconfig", &kubeconfig_arg],
        &kubeconfig,
        &cloud_log,
        Stdio::piped(),
    );
    let mut lines = BufReader::new(cloud.stdout.take().unwrap()).lines();
    let mut url = String::new();
    while let Some(line) = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        if let Some(v) = line.strip_prefix("TOY_CLOUD=") {
            url = v.to_string();
        }
        if line == "ready" {
            break;
        }
    }
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "cloud printed {url:?}"
    );
    let provider = spawn(
        &["run", "--cloud", &url, "--watch-filter="],
        &kubeconfig,
        &provider_log,
        Stdio::null(),
    );
    let cloud_api = CloudClient::new(&url).unwrap();

    // The template, rendered as clusterctl would.
    test_support::create_namespace(&client, NS).await;
    let template = std::fs::read_to_string(release_dir().join("cluster-template.yaml"))
        .unwrap()
        .replace("${CLUSTER_NAME}", CLUSTER)
        .replace("${KUBERNETES_VERSION}", "v1.31.0")
        .replace("${WORKER_MACHINE_COUNT:=2}", "2");
    let objects: Vec<Value> = serde_saphyr::from_multiple(&template).unwrap();
    for mut obj in objects {
        obj["metadata"]["namespace"] = json!(NS);
        let api = api_for(
            &client,
            obj["apiVersion"].as_str().unwrap(),
            obj["kind"].as_str().unwrap(),
        );
        let obj: DynamicObject = serde_json::from_value(obj).unwrap();
        api.create(&PostParams::default(), &obj).await.unwrap();
    }

    let clusters = api_for(&client, "cluster.x-k8s.io/v1beta2", "Cluster");
    let machine_pools = api_for(&client, "cluster.x-k8s.io/v1beta2", "MachinePool");
    let control_planes = api_for(
        &client,
        "controlplane.cluster.x-k8s.io/v1alpha1",
        "ToyControlPlane",
    );
    let pool_name = format!("{CLUSTER}-pool-0");

    until("the Cluster to be Provisioned", 120, &logs, async || {
        let c = clusters.get(CLUSTER).await.ok()?;
        (c.data["status"]["phase"] == "Provisioned").then_some(())
    })
    .await;
    let mp = until(
        "two nodeRefs and phase Running on the MachinePool",
        120,
        &logs,
        async || {
            let mp = machine_pools.get(&pool_name).await.ok()?;
            let refs = mp.data["status"]["nodeRefs"].as_array().map_or(0, Vec::len);
            (refs == 2 && mp.data["status"]["phase"] == "Running").then_some(mp)
        },
    )
    .await;

    // What core saw is what the toy published.
    let cluster = clusters.get(CLUSTER).await.unwrap();
    let cp = control_planes.get(CLUSTER).await.unwrap();
    assert_eq!(
        cluster.data["spec"]["controlPlaneEndpoint"],
        cp.data["spec"]["controlPlaneEndpoint"]
    );
    assert_eq!(cp.data["status"]["externalManagedControlPlane"], true);
    assert_eq!(cp.data["status"]["version"], "v1.31.0");
    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get(&format!("{CLUSTER}-kubeconfig"))
        .await
        .unwrap();
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    let mut ids: Vec<String> = mp.data["spec"]["providerIDList"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut node_ids: Vec<String> = Api::<Node>::all(client.clone())
        .list(&ListParams::default().labels("toy.cluster.x-k8s.io/node=true"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.spec.and_then(|s| s.provider_id))
        .collect();
    node_ids.sort();
    assert_eq!(ids, node_ids);
    assert!(
        ids.iter()
            .all(|id| id.starts_with(&format!("toy://{NS}/{CLUSTER}/{pool_name}/")))
    );

    // Delete: everything goes, in the cloud too.
    clusters
        .delete(CLUSTER, &DeleteParams::default())
        .await
        .unwrap();
    until("the Cluster to be gone", 120, &logs, async || {
        clusters
            .get_opt(CLUSTER)
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    until(
        "the cloud to be empty and the Nodes gone",
        30,
        &logs,
        async || {
            let empty = cloud_api.list_clusters().await.ok()?.is_empty();
            let nodes = Api::<Node>::all(client.clone())
                .list(&ListParams::default().labels("toy.cluster.x-k8s.io/node=true"))
                .await
                .ok()?
                .items
                .len();
            (empty && nodes == 0).then_some(())
        },
    )
    .await;

    drop(provider);
    drop(cloud);
    plane.stop().await;
}
