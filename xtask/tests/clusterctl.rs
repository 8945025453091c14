//! C57/C58: the real clusterctl installs the generated `manifests/eks/` release from a local
//! repository into a real management plane, fully offline, and renders its cluster template.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

const CORE_VERSION: &str = "v1.14.2";
const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";
const CLUSTERCTL_LABEL: &str = "clusterctl.cluster.x-k8s.io";

/// `<base>/cluster-api/<v>/…` from the bed's core CRDs, `<base>/infrastructure-eks/v0.1.0/…`
/// from the committed `manifests/eks/`; returns the clusterctl config naming both.
fn local_repository(base: &Path, assets: &testbed::Assets) -> PathBuf {
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

    let eks = base.join("infrastructure-eks").join(xtask::eks::VERSION);
    std::fs::create_dir_all(&eks).unwrap();
    let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifests/eks");
    for file in [
        "infrastructure-components.yaml",
        "metadata.yaml",
        "cluster-template.yaml",
    ] {
        std::fs::copy(release.join(file), eks.join(file)).unwrap();
    }

    let config = base.join("clusterctl.yaml");
    let text = format!(
        "providers:\n\
         - name: cluster-api\n  type: CoreProvider\n  url: file://{}/core-components.yaml\n\
         - name: eks\n  type: InfrastructureProvider\n  url: file://{}/infrastructure-components.yaml\n\
         cert-manager:\n  externallyProvisioned: true\n  timeout: 2m\n",
        core.display(),
        eks.display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// cert-manager's two CRDs, namespaced, any content: enough for clusterctl's cert-manager check.
fn cert_manager_crds() -> Vec<CustomResourceDefinition> {
    ["Issuer", "Certificate"]
        .iter()
        .map(|kind| {
            let plural = format!("{}s", kind.to_lowercase());
            serde_json::from_value(json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": { "name": format!("{plural}.cert-manager.io") },
                "spec": {
                    "group": "cert-manager.io",
                    "scope": "Namespaced",
                    "names": { "kind": kind, "plural": plural, "listKind": format!("{kind}List") },
                    "versions": [{
                        "name": "v1", "served": true, "storage": true,
                        "schema": { "openAPIV3Schema": {
                            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        }},
                    }],
                },
            }))
            .unwrap()
        })
        .collect()
}

struct Clusterctl {
    bin: PathBuf,
    config: PathBuf,
    kubeconfig: PathBuf,
    xdg: PathBuf,
}

impl Clusterctl {
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
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

fn labels_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!("{:?}", meta.labels)
}

fn assert_installed_by_clusterctl(what: &str, meta: &kube::api::ObjectMeta) {
    let labels = meta.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get(PROVIDER_LABEL).map(String::as_str),
        Some("infrastructure-eks"),
        "{what}: {}",
        labels_of(meta)
    );
    assert!(
        labels.contains_key(CLUSTERCTL_LABEL),
        "{what}: {}",
        labels_of(meta)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clusterctl_installs_the_release_and_renders_its_template() {
    let started = std::time::Instant::now();
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .unwrap();
    plane.install_crds(&cert_manager_crds()).await.unwrap();
    let client = plane.client().await.unwrap();

    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repository");
    let config = local_repository(&repo, plane.assets());
    let ctl = Clusterctl {
        bin: plane.assets().clusterctl(),
        config,
        kubeconfig: plane.kubeconfig_path().to_path_buf(),
        xdg: work.path().join("xdg"),
    };

    // C57: init from the local repository.
    let core = format!("cluster-api:{CORE_VERSION}");
    let infra = format!("eks:{}", xtask::eks::VERSION);
    let out = ctl.run(
        &[
            "init",
            "--core",
            &core,
            "--bootstrap=-",
            "--control-plane=-",
            "--infrastructure",
            &infra,
        ],
        &[],
    );
    assert!(out.status.success(), "clusterctl init failed");

    for crd in provider_aws::api::crds() {
        let name = crd.metadata.name.unwrap();
        let got = Api::<CustomResourceDefinition>::all(client.clone())
            .get(&name)
            .await
            .unwrap();
        assert_installed_by_clusterctl(&name, &got.metadata);
    }
    for name in ["capi-eks-manager-role", "capi-eks-aggregated-manager-role"] {
        let got = Api::<ClusterRole>::all(client.clone())
            .get(name)
            .await
            .unwrap();
        assert_installed_by_clusterctl(name, &got.metadata);
    }
    let deployment = Api::<Deployment>::namespaced(client.clone(), xtask::eks::NAMESPACE)
        .get(xtask::eks::DEPLOYMENT)
        .await
        .unwrap();
    assert_installed_by_clusterctl(xtask::eks::DEPLOYMENT, &deployment.metadata);
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    assert_eq!(container.name, "manager");
    assert_eq!(
        container.image.as_deref(),
        Some("ghcr.io/example/provider-aws:v0.1.0"),
        "clusterctl substitutes the image variable's default"
    );

    let providers = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("clusterctl.cluster.x-k8s.io", "v1alpha3", "Provider"),
        "providers",
    );
    let inventory: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), xtask::eks::NAMESPACE, &providers);
    let provider = inventory.get("infrastructure-eks").await.unwrap();
    assert_eq!(provider.data["providerName"], json!("eks"));
    assert_eq!(provider.data["type"], json!("InfrastructureProvider"));
    assert_eq!(provider.data["version"], json!(xtask::eks::VERSION));

    // C58: the template's variables.
    let out = ctl.run(
        &[
            "generate",
            "cluster",
            "x",
            "--infrastructure",
            &infra,
            "--list-variables",
        ],
        &[],
    );
    assert!(out.status.success(), "--list-variables failed");
    let listing = String::from_utf8_lossy(&out.stdout).to_string();
    let required = listing
        .split("Optional Variables:")
        .next()
        .unwrap_or_default();
    assert!(
        required.contains("Required Variables:") && required.contains("KUBERNETES_VERSION"),
        "KUBERNETES_VERSION is not listed as required:\n{listing}"
    );

    let out = ctl.run(
        &[
            "generate",
            "cluster",
            "x",
            "--infrastructure",
            &infra,
            "--target-namespace",
            "team-a",
        ],
        &[],
    );
    assert!(!out.status.success(), "rendered without KUBERNETES_VERSION");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("KUBERNETES_VERSION"),
        "the failure does not name KUBERNETES_VERSION"
    );

    let out = ctl.run(
        &[
            "generate",
            "cluster",
            "x",
            "--infrastructure",
            &infra,
            "--kubernetes-version",
            "v1.33.0",
            "--target-namespace",
            "team-a",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "rendering with KUBERNETES_VERSION failed"
    );
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(docs.len(), 5, "the template has five objects");
    for doc in &docs {
        assert_eq!(doc["metadata"]["namespace"], json!("team-a"), "{doc}");
    }

    plane.stop().await;
    eprintln!("clusterctl test took {:?}", started.elapsed());
}
