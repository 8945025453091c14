//! What every area of the test shares: the local provider repository clusterctl installs from,
//! stand-in CRDs for what the bed does not install, a clusterctl that logs each run, and the
//! helpers that pick rendered objects, apply them and check their labels and conditions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};

pub const CORE_VERSION: &str = "v1.14.2";
const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";
const CLUSTERCTL_LABEL: &str = "clusterctl.cluster.x-k8s.io";
/// Every template a release must ship besides its `clusterclass-<name>.yaml` (the local
/// repository carries each template file of `manifests/<name>/`, these and any other).
const FLAVORS: [&str; 3] = [
    "cluster-template.yaml",
    "cluster-template-byo-network.yaml",
    "cluster-template-clusterclass.yaml",
];

/// The releases installed, by clusterctl name.
const RELEASES: [&str; 4] = ["eks", "gke", "aks", "oke"];
const FIELD_MANAGER: &str = "clusterctl-test";

/// `<base>/cluster-api/<v>/…` from the bed's core CRDs, `<base>/infrastructure-eks/v0.1.0/…`
/// (and gke, aks, oke) as the release command writes them; returns the clusterctl config naming
/// all of them.
pub fn local_repository(base: &Path, assets: &testbed::Assets) -> PathBuf {
    assert!(
        assets
            .versions()
            .contains(&format!("cluster-api {CORE_VERSION}")),
        "the bed's Cluster API is not {CORE_VERSION}: {}",
        assets.versions()
    );
    let core = base.join("cluster-api").join(CORE_VERSION);
    std::fs::create_dir_all(&core).unwrap();
    let mut components =
        String::from("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n");
    let mut crds: Vec<_> = std::fs::read_dir(assets.capi_crd_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    crds.sort();
    for crd in crds {
        components.push_str("---\n");
        let text = std::fs::read_to_string(crd).unwrap();
        components.push_str(text.trim_start_matches("---\n"));
    }
    std::fs::write(core.join("core-components.yaml"), components).unwrap();
    std::fs::copy(assets.capi_metadata(), core.join("metadata.yaml")).unwrap();

    // The providers' repository exactly as `cargo run -p xtask -- release` writes it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let releases: Vec<_> = RELEASES
        .iter()
        .map(|name| xtask::dist::release_named(name).unwrap())
        .collect();
    let providers =
        xtask::release::write_repository(root, base, &releases, xtask::release::REGISTRY).unwrap();
    for name in RELEASES {
        let dir = base
            .join(format!("infrastructure-{name}"))
            .join(xtask::release::VERSION);
        let templates = xtask::release::templates(&dir).unwrap();
        for flavor in FLAVORS
            .iter()
            .map(|f| f.to_string())
            .chain([format!("clusterclass-{name}.yaml")])
        {
            assert!(
                templates.contains(&flavor),
                "the {name} release lacks {flavor}: {templates:?}"
            );
        }
    }
    // Core's entry, then the releases' (the folder's own clusterctl.yaml is replaced).
    let entries = std::fs::read_to_string(&providers)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && *l != "providers:")
        .map(|l| format!("{l}\n"))
        .collect::<String>();

    let config = base.join("clusterctl.yaml");
    let text = format!(
        "providers:\n\
         - name: cluster-api\n  type: CoreProvider\n  url: file://{}/core-components.yaml\n\
         {entries}\
         cert-manager:\n  externallyProvisioned: true\n  timeout: 2m\n",
        core.display(),
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// A namespaced CRD of any content, with `labels` on it.
fn stub_crd(group: &str, version: &str, kind: &str, labels: Value) -> CustomResourceDefinition {
    let plural = format!("{}s", kind.to_lowercase());
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{plural}.{group}"), "labels": labels },
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": { "kind": kind, "plural": plural, "listKind": format!("{kind}List") },
            "versions": [{
                "name": version, "served": true, "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                }},
            }],
        },
    }))
    .unwrap()
}

/// cert-manager's two CRDs, namespaced, any content: enough for clusterctl's cert-manager check.
pub fn cert_manager_crds() -> Vec<CustomResourceDefinition> {
    ["Issuer", "Certificate"]
        .iter()
        .map(|kind| stub_crd("cert-manager.io", "v1", kind, json!({})))
        .collect()
}

/// Stand-ins for the kubeadm bootstrap provider's two CRDs (the bed installs no bootstrap
/// provider): ClusterClass `eks` names a KubeadmConfigTemplate for its machine pools' bootstrap
/// configs, which Cluster API requires and EKS never uses. Any content, with the contract label
/// core reads to find the kind's version.
pub fn kubeadm_bootstrap_crds() -> Vec<CustomResourceDefinition> {
    ["KubeadmConfig", "KubeadmConfigTemplate"]
        .iter()
        .map(|kind| {
            stub_crd(
                "bootstrap.cluster.x-k8s.io",
                "v1beta2",
                kind,
                json!({ "cluster.x-k8s.io/v1beta2": "v1beta2" }),
            )
        })
        .collect()
}

/// The bed's clusterctl with the local repository's config, the bed's kubeconfig and a config
/// home of its own; every run is logged with its output.
pub struct Clusterctl {
    pub bin: PathBuf,
    pub config: PathBuf,
    pub kubeconfig: PathBuf,
    pub xdg: PathBuf,
}

impl Clusterctl {
    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .arg("--config")
            .arg(&self.config)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env("XDG_CONFIG_HOME", &self.xdg)
            .env("CLUSTERCTL_DISABLE_VERSIONCHECK", "true")
            .env_remove("KUBERNETES_VERSION");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        eprintln!(
            "$ clusterctl {} -> {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

impl Clusterctl {
    /// `clusterctl generate cluster <name> --flavor <flavor> --list-variables`: the required and
    /// the optional variables, as listed.
    pub fn variables(&self, infra: &str, flavor: &str) -> (String, String) {
        let out = self.run(
            &[
                "generate",
                "cluster",
                "x",
                "--infrastructure",
                infra,
                "--flavor",
                flavor,
                "--list-variables",
            ],
            &[],
        );
        assert!(out.status.success(), "--list-variables of {flavor} failed");
        let listing = String::from_utf8_lossy(&out.stdout).to_string();
        let (required, optional) = listing
            .split_once("Optional Variables:")
            .unwrap_or((listing.as_str(), ""));
        assert!(
            required.contains("Required Variables:"),
            "no required variables listed for {flavor}:\n{listing}"
        );
        (required.to_owned(), optional.to_owned())
    }

    /// Renders `flavor` as Cluster `name` in `namespace` at Kubernetes v1.33.0 with two
    /// workers; panics when clusterctl fails.
    pub fn render(
        &self,
        infra: &str,
        flavor: &str,
        name: &str,
        namespace: &str,
        env: &[(&str, &str)],
    ) -> Vec<Value> {
        let mut args = vec!["generate", "cluster", name, "--infrastructure", infra];
        // The default flavor is `cluster-template.yaml`: no --flavor.
        if !flavor.is_empty() {
            args.extend(["--flavor", flavor]);
        }
        args.extend([
            "--kubernetes-version",
            "v1.33.0",
            "--worker-machine-count",
            "2",
            "--target-namespace",
            namespace,
        ]);
        let out = self.run(&args, env);
        assert!(out.status.success(), "rendering {flavor} failed");
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).unwrap();
        for doc in &docs {
            assert_eq!(doc["metadata"]["namespace"], json!(namespace), "{doc}");
        }
        docs
    }
}

/// The one rendered object of `kind`.
pub fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let mut found = docs.iter().filter(|d| d["kind"] == json!(kind));
    let doc = found.next().unwrap_or_else(|| panic!("no {kind} rendered"));
    assert!(found.next().is_none(), "more than one {kind} rendered");
    doc
}

pub fn kinds_of(docs: &[Value]) -> Vec<&str> {
    let mut kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    kinds.sort_unstable();
    kinds
}

pub fn dynamic_api(
    client: &kube::Client,
    namespace: &str,
    api_version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    Api::namespaced_with(client.clone(), namespace, &resource)
}

/// Server-side applies a rendered object, as `kubectl apply --server-side` would; panics with
/// the apiserver's (or a webhook's) refusal.
pub async fn apply(client: &kube::Client, namespace: &str, doc: &Value) -> DynamicObject {
    let kind = doc["kind"].as_str().unwrap();
    let name = doc["metadata"]["name"].as_str().unwrap();
    dynamic_api(client, namespace, doc["apiVersion"].as_str().unwrap(), kind)
        .patch(name, &PatchParams::apply(FIELD_MANAGER), &Patch::Apply(doc))
        .await
        .unwrap_or_else(|e| panic!("{kind} {namespace}/{name} was refused: {e}"))
}

pub fn condition_true(obj: &DynamicObject, kind: &str) -> bool {
    obj.data["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == json!(kind) && c["status"] == json!("True"))
        })
}

fn labels_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!("{:?}", meta.labels)
}

pub fn assert_installed_by_clusterctl(what: &str, meta: &kube::api::ObjectMeta) {
    assert_installed_as(what, meta, "infrastructure-eks");
}

pub fn assert_installed_as(what: &str, meta: &kube::api::ObjectMeta, provider: &str) {
    let labels = meta.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get(PROVIDER_LABEL).map(String::as_str),
        Some(provider),
        "{what}: {}",
        labels_of(meta)
    );
    assert!(
        labels.contains_key(CLUSTERCTL_LABEL),
        "{what}: {}",
        labels_of(meta)
    );
}
