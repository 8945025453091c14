//! What the command's tests share: the command run as a user runs it, the peers' released CRDs,
//! untyped objects, and waiting.

#![allow(dead_code)] // each test binary uses its part

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

/// The API of `kind` in `ns`.
pub fn api(
    client: &kube::Client,
    ns: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
    )
}

/// Creates `obj` in `ns`, failing the test with the API server's message.
pub async fn create(client: &kube::Client, ns: &str, obj: Value) {
    let api_version = obj["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let typed: DynamicObject = serde_json::from_value(obj.clone()).unwrap();
    if let Err(e) = api(client, ns, group, version, kind)
        .create(&PostParams::default(), &typed)
        .await
    {
        panic!("creating {kind}: {e}");
    }
}

/// Polls `check` every half second until it answers, failing after `limit` with `what`.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `kubectl managed migrate <args>` on the management cluster `kubeconfig`, in `ns`.
pub fn migrate(kubeconfig: &Path, ns: &str, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubectl-managed"));
    command
        .arg("migrate")
        .args(args)
        .args(["--namespace", ns, "--timeout", "5m"])
        .env("KUBECONFIG", kubeconfig)
        .kill_on_drop(true);
    command
}

/// Runs it to the end and shows what it said.
pub async fn run(kubeconfig: &Path, ns: &str, args: &[&str]) -> Output {
    let out = migrate(kubeconfig, ns, args).output().await.unwrap();
    eprintln!(
        "$ kubectl managed migrate {}\n{}",
        args.join(" "),
        text(&out)
    );
    out
}

/// What a run printed, both streams.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// CAPG's released module.
pub const CAPG: &str = "sigs.k8s.io/cluster-api-provider-gcp@v1.13.1";
/// CAPOCI's released module.
pub const CAPOCI: &str = "github.com/oracle/cluster-api-provider-oci@v0.24.0";
/// CAPZ's released module.
pub const CAPZ: &str = "sigs.k8s.io/cluster-api-provider-azure@v1.26.0";

/// The CRDs of a peer's three managed kinds (`<prefix>managedclusters`, `…controlplanes`,
/// `…machinepools`) from its released `module`.
pub fn managed_crds(module: &str, prefix: &str) -> Vec<CustomResourceDefinition> {
    let files: Vec<String> = ["clusters", "controlplanes", "machinepools"]
        .iter()
        .map(|kind| format!("infrastructure.cluster.x-k8s.io_{prefix}managed{kind}.yaml"))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    peer_crds(&module_dir(module), &files)
}

/// The directory of a released Go module, downloaded through the module proxy (cached by Go).
pub fn module_dir(module: &str) -> PathBuf {
    let out = std::process::Command::new("go")
        .args(["mod", "download", "-json", module])
        .env("GOFLAGS", "-mod=mod")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("go is needed to fetch the peers' released CRDs");
    assert!(
        out.status.success(),
        "go mod download {module}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    PathBuf::from(info["Dir"].as_str().unwrap())
}

/// The module's CRDs in `files` (under config/crd/bases), labelled with the contract their
/// versions follow, conversion left to the API server (no conversion webhook runs here).
pub fn peer_crds(dir: &Path, files: &[&str]) -> Vec<CustomResourceDefinition> {
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(dir.join("config/crd/bases").join(file)).unwrap();
            let mut crd: CustomResourceDefinition = serde_saphyr::from_str(&text).unwrap();
            let versions: Vec<String> = crd.spec.versions.iter().map(|v| v.name.clone()).collect();
            crd.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert("cluster.x-k8s.io/v1beta1".into(), versions.join("_"));
            crd.spec.conversion = None;
            crd
        })
        .collect()
}

/// The `type` condition of `obj`.
pub fn condition<'a>(obj: &'a DynamicObject, type_: &str) -> Option<&'a Value> {
    obj.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Creates the kubeconfig Secret `name` of Cluster `cluster` in `ns` as a peer writes it, owned
/// by `owners` (owner references, the peer's controller among them).
pub async fn peer_secret(
    client: &kube::Client,
    ns: &str,
    name: &str,
    cluster: &str,
    owners: Value,
) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"cluster.x-k8s.io/cluster-name": cluster},
                     "ownerReferences": owners},
        "type": "cluster.x-k8s.io/secret",
        "stringData": {"value": "written by the peer"},
    }))
    .unwrap();
    Api::<Secret>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// The controller owner reference to `obj`, a peer object served at `api_version`.
pub fn controller_of(api_version: &str, obj: &DynamicObject) -> Value {
    json!({"apiVersion": api_version, "kind": obj.types.as_ref().map(|t| t.kind.clone()),
           "name": obj.metadata.name, "uid": obj.metadata.uid, "controller": true})
}
