//! C57/C58: the real clusterctl installs the generated `manifests/eks/` and `manifests/gke/`
//! releases from a local repository into one real management plane (a team mixing clouds),
//! fully offline, and renders their cluster templates: the default flavor, `byo-network` and
//! `clusterclass` (with ClusterClass `eks` / `gke`), whose objects the real apiserver and Cluster
//! API core's webhooks admit and core's topology controller turns into the provider's objects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use test_support::eventually;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use serde_json::{Value, json};

const CORE_VERSION: &str = "v1.14.2";
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
const RELEASES: [&str; 3] = ["eks", "gke", "aks"];
const FIELD_MANAGER: &str = "clusterctl-test";

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

    let mut entries = String::new();
    for name in RELEASES {
        let dir = base
            .join(format!("infrastructure-{name}"))
            .join(xtask::release::VERSION);
        std::fs::create_dir_all(&dir).unwrap();
        let release = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../manifests/{name}"));
        let templates = xtask::release::templates(&release).unwrap();
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
        for file in ["infrastructure-components.yaml", "metadata.yaml"]
            .into_iter()
            .chain(templates.iter().map(String::as_str))
        {
            std::fs::copy(release.join(file), dir.join(file)).unwrap();
        }
        entries.push_str(&format!(
            "- name: {name}\n  type: InfrastructureProvider\n  url: file://{}/infrastructure-components.yaml\n",
            dir.display()
        ));
    }

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
fn cert_manager_crds() -> Vec<CustomResourceDefinition> {
    ["Issuer", "Certificate"]
        .iter()
        .map(|kind| stub_crd("cert-manager.io", "v1", kind, json!({})))
        .collect()
}

/// Stand-ins for the kubeadm bootstrap provider's two CRDs (the bed installs no bootstrap
/// provider): ClusterClass `eks` names a KubeadmConfigTemplate for its machine pools' bootstrap
/// configs, which Cluster API requires and EKS never uses. Any content, with the contract label
/// core reads to find the kind's version.
fn kubeadm_bootstrap_crds() -> Vec<CustomResourceDefinition> {
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

impl Clusterctl {
    /// `clusterctl generate cluster <name> --flavor <flavor> --list-variables`: the required and
    /// the optional variables, as listed.
    fn variables(&self, infra: &str, flavor: &str) -> (String, String) {
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
    fn render(
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
fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let mut found = docs.iter().filter(|d| d["kind"] == json!(kind));
    let doc = found.next().unwrap_or_else(|| panic!("no {kind} rendered"));
    assert!(found.next().is_none(), "more than one {kind} rendered");
    doc
}

fn kinds_of(docs: &[Value]) -> Vec<&str> {
    let mut kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    kinds.sort_unstable();
    kinds
}

fn dynamic_api(
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
async fn apply(client: &kube::Client, namespace: &str, doc: &Value) -> DynamicObject {
    let kind = doc["kind"].as_str().unwrap();
    let name = doc["metadata"]["name"].as_str().unwrap();
    dynamic_api(client, namespace, doc["apiVersion"].as_str().unwrap(), kind)
        .patch(name, &PatchParams::apply(FIELD_MANAGER), &Patch::Apply(doc))
        .await
        .unwrap_or_else(|e| panic!("{kind} {namespace}/{name} was refused: {e}"))
}

fn condition_true(obj: &DynamicObject, kind: &str) -> bool {
    obj.data["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == json!(kind) && c["status"] == json!("True"))
        })
}

/// C58 for `byo-network`: the subnet ids are a required variable; the rendered Cluster has only
/// a controlPlaneRef and the EKSControlPlane carries the subnets; the apiserver and core's
/// webhooks admit every object.
async fn byo_network_flavor(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
    let (required, optional) = ctl.variables(infra, "byo-network");
    for variable in ["AWS_SUBNET_IDS", "KUBERNETES_VERSION"] {
        assert!(
            required.contains(variable),
            "{variable} is not listed as required:\n{required}"
        );
    }
    assert!(optional.contains("AWS_REGION"), "{optional}");

    let out = ctl.run(
        &[
            "generate",
            "cluster",
            "brought",
            "--infrastructure",
            infra,
            "--flavor",
            "byo-network",
            "--kubernetes-version",
            "v1.33.0",
        ],
        &[],
    );
    assert!(!out.status.success(), "rendered without AWS_SUBNET_IDS");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("AWS_SUBNET_IDS"),
        "the failure does not name AWS_SUBNET_IDS"
    );

    let namespace = "team-byo";
    let docs = ctl.render(
        infra,
        "byo-network",
        "brought",
        namespace,
        &[("AWS_SUBNET_IDS", "[subnet-0a, subnet-0b]")],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "Cluster",
            "EKSControlPlane",
            "EKSMachinePool",
            "MachinePool"
        ]
    );
    let cluster = one(&docs, "Cluster");
    assert!(
        cluster["spec"].get("infrastructureRef").is_none(),
        "{cluster}"
    );
    assert_eq!(
        cluster["spec"]["controlPlaneRef"]["kind"],
        json!("EKSControlPlane")
    );
    let control_plane = one(&docs, "EKSControlPlane");
    assert_eq!(
        control_plane["spec"]["infrastructure"]["network"]["subnetIDs"],
        json!(["subnet-0a", "subnet-0b"])
    );
    assert_eq!(one(&docs, "MachinePool")["spec"]["replicas"], json!(2));

    test_support::create_namespace(client, namespace).await;
    for doc in &docs {
        apply(client, namespace, doc).await;
    }
    let stored = dynamic_api(client, namespace, "cluster.x-k8s.io/v1beta2", "Cluster")
        .get("brought")
        .await
        .unwrap();
    assert!(
        stored.data["spec"].get("infrastructureRef").is_none(),
        "{:?}",
        stored.data
    );
}

/// C58 for `clusterclass`: the rendering carries ClusterClass `eks` and its templates; core
/// reconciles the class (every template found, variables ready) and its topology controller
/// creates the EKSCluster, EKSControlPlane, MachinePool, EKSMachinePool and (unused)
/// KubeadmConfig from the templates, with the class's patches applied and the topology's
/// version. No provider runs: this is core alone.
async fn clusterclass_flavor(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
    let (required, optional) = ctl.variables(infra, "clusterclass");
    assert!(required.contains("KUBERNETES_VERSION"), "{required}");
    for variable in ["AWS_REGION", "EKS_ROLE_ARN", "AWS_NODE_MACHINE_TYPE"] {
        assert!(
            optional.contains(variable),
            "{variable} not listed:\n{optional}"
        );
    }

    let namespace = "team-cc";
    let name = "classy";
    test_support::create_namespace(client, namespace).await;
    // clusterctl resolves every kind of the ClusterClass against the management cluster.
    testbed::install_crds(client, &kubeadm_bootstrap_crds())
        .await
        .unwrap();
    let docs = ctl.render(
        infra,
        "clusterclass",
        name,
        namespace,
        &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_NODE_MACHINE_TYPE", "m5.large"),
        ],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "Cluster",
            "ClusterClass",
            "EKSClusterTemplate",
            "EKSControlPlaneTemplate",
            "EKSMachinePoolTemplate",
            "KubeadmConfigTemplate",
        ]
    );
    assert_eq!(
        one(&docs, "Cluster")["spec"]["topology"]["classRef"]["name"],
        json!("eks")
    );

    for doc in docs.iter().filter(|d| d["kind"] != json!("Cluster")) {
        apply(client, namespace, doc).await;
    }
    let classes = dynamic_api(
        client,
        namespace,
        "cluster.x-k8s.io/v1beta2",
        "ClusterClass",
    );
    eventually(
        "ClusterClass eks to be reconciled",
        Duration::from_secs(60),
        || async {
            let class = classes.get("eks").await.ok()?;
            let reconciled = class.data["status"]["observedGeneration"]
                == json!(class.metadata.generation)
                && condition_true(&class, "VariablesReady")
                && condition_true(&class, "RefVersionsUpToDate");
            reconciled.then_some(())
        },
    )
    .await;

    apply(client, namespace, one(&docs, "Cluster")).await;
    let clusters = dynamic_api(client, namespace, "cluster.x-k8s.io/v1beta2", "Cluster");
    let (infra_name, cp_name) = eventually(
        "topology to set the Cluster's references",
        Duration::from_secs(60),
        || async {
            let cluster = clusters.get(name).await.ok()?;
            let spec = &cluster.data["spec"];
            Some((
                spec["infrastructureRef"]["name"].as_str()?.to_owned(),
                spec["controlPlaneRef"]["name"].as_str()?.to_owned(),
            ))
        },
    )
    .await;
    let infra_api = dynamic_api(
        client,
        namespace,
        "infrastructure.cluster.x-k8s.io/v1alpha1",
        "EKSCluster",
    );
    let eks_cluster = eventually("the EKSCluster", Duration::from_secs(60), || async {
        infra_api.get(&infra_name).await.ok()
    })
    .await;
    assert_eq!(eks_cluster.data["spec"]["region"], json!("eu-west-1"));
    assert_eq!(
        eks_cluster.data["spec"]["network"]["cidrBlock"],
        json!("10.0.0.0/16")
    );
    let cp_api = dynamic_api(
        client,
        namespace,
        "controlplane.cluster.x-k8s.io/v1alpha1",
        "EKSControlPlane",
    );
    let control_plane = eventually("the EKSControlPlane", Duration::from_secs(60), || async {
        cp_api.get(&cp_name).await.ok()
    })
    .await;
    assert_eq!(control_plane.data["spec"]["version"], json!("v1.33.0"));
    assert_eq!(
        control_plane.data["spec"]["eks"]["roleARN"],
        json!("arn:aws:iam::123456789012:role/eks-cluster")
    );

    let pools = dynamic_api(client, namespace, "cluster.x-k8s.io/v1beta2", "MachinePool");
    let pool = eventually(
        "topology to create the MachinePool",
        Duration::from_secs(60),
        || async {
            let listed = pools
                .list(
                    &ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")),
                )
                .await
                .ok()?;
            listed.items.into_iter().next()
        },
    )
    .await;
    let spec = &pool.data["spec"];
    assert_eq!(spec["replicas"], json!(2), "{spec}");
    assert_eq!(
        spec["template"]["spec"]["version"],
        json!("v1.33.0"),
        "{spec}"
    );
    let bootstrap = &spec["template"]["spec"]["bootstrap"]["configRef"];
    assert_eq!(bootstrap["kind"], json!("KubeadmConfig"), "{spec}");
    let infra_ref = &spec["template"]["spec"]["infrastructureRef"];
    assert_eq!(infra_ref["kind"], json!("EKSMachinePool"), "{spec}");
    let machine_pools = dynamic_api(
        client,
        namespace,
        "infrastructure.cluster.x-k8s.io/v1alpha1",
        "EKSMachinePool",
    );
    let eks_pool = machine_pools
        .get(infra_ref["name"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(eks_pool.data["spec"]["machineType"], json!("m5.large"));
    assert_eq!(
        eks_pool.data["spec"]["eks"]["nodeRoleARN"],
        json!("arn:aws:iam::123456789012:role/eks-nodes")
    );
    dynamic_api(
        client,
        namespace,
        "bootstrap.cluster.x-k8s.io/v1beta2",
        "KubeadmConfig",
    )
    .get(bootstrap["name"].as_str().unwrap())
    .await
    .unwrap();
}

fn labels_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!("{:?}", meta.labels)
}

fn assert_installed_by_clusterctl(what: &str, meta: &kube::api::ObjectMeta) {
    assert_installed_as(what, meta, "infrastructure-eks");
}

fn assert_installed_as(what: &str, meta: &kube::api::ObjectMeta, provider: &str) {
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
    let gke = format!("gke:{}", xtask::gke::VERSION);
    let aks = format!("aks:{}", xtask::aks::VERSION);
    let both = format!("{infra},{gke},{aks}");
    let out = ctl.run(
        &[
            "init",
            "--core",
            &core,
            "--bootstrap=-",
            "--control-plane=-",
            "--infrastructure",
            &both,
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
    // The one-space defaults of EKS_WATCH_NAMESPACE and EKS_WATCH_FILTER render as empty flags:
    // all namespaces, no filter.
    let args = container.args.clone().unwrap_or_default();
    for flag in ["--namespace=", "--watch-filter="] {
        assert!(
            args.iter().any(|a| a == flag),
            "the manager does not get {flag:?}: {args:?}"
        );
    }

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

    byo_network_flavor(&ctl, &client, &infra).await;
    clusterclass_flavor(&ctl, &client, &infra).await;
    gke_release(&ctl, &client, &gke).await;
    aks_release(&ctl, &client, &aks).await;

    plane.stop().await;
    eprintln!("clusterctl test took {:?}", started.elapsed());
}

/// The GKE release beside EKS's in the same management cluster: installed by clusterctl with
/// its own namespace, RBAC and Deployment; its flavors render (`byo-network` needs the network
/// names, the default needs the project) and its ClusterClass is built by core's topology.
async fn gke_release(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
    let release = &xtask::gke::RELEASE;
    for crd in provider_gcp::api::crds() {
        let name = crd.metadata.name.unwrap();
        let got = Api::<CustomResourceDefinition>::all(client.clone())
            .get(&name)
            .await
            .unwrap();
        assert_installed_as(&name, &got.metadata, "infrastructure-gke");
    }
    let deployment = Api::<Deployment>::namespaced(client.clone(), &release.namespace())
        .get(&release.deployment())
        .await
        .unwrap();
    assert_installed_as(
        "the GKE Deployment",
        &deployment.metadata,
        "infrastructure-gke",
    );
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(
        pod.containers[0].image.as_deref(),
        Some("ghcr.io/example/provider-gcp:v0.1.0")
    );
    let env = pod.containers[0].env.clone().unwrap_or_default();
    assert!(
        env.iter()
            .any(|e| e.name == "GOOGLE_APPLICATION_CREDENTIALS"),
        "{env:?}"
    );

    let (required, _) = ctl.variables(infra, "byo-network");
    for variable in [
        "GCP_PROJECT",
        "GCP_NETWORK",
        "GCP_SUBNETWORK",
        "KUBERNETES_VERSION",
    ] {
        assert!(
            required.contains(variable),
            "{variable} not required:\n{required}"
        );
    }
    let namespace = "team-gke";
    test_support::create_namespace(client, namespace).await;
    let docs = ctl.render(
        infra,
        "byo-network",
        "brought",
        namespace,
        &[
            ("GCP_PROJECT", "capi-project-1"),
            ("GCP_NETWORK", "shared-vpc"),
            ("GCP_SUBNETWORK", "shared-nodes"),
        ],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "Cluster",
            "GKEControlPlane",
            "GKEMachinePool",
            "MachinePool"
        ]
    );
    let control_plane = one(&docs, "GKEControlPlane");
    assert_eq!(
        control_plane["spec"]["infrastructure"]["network"],
        json!({"id": "shared-vpc", "subnetIDs": ["shared-nodes"]})
    );
    for doc in &docs {
        apply(client, namespace, doc).await;
    }
    let docs = ctl.render(
        infra,
        "",
        "made",
        namespace,
        &[("GCP_PROJECT", "capi-project-1")],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "Cluster",
            "GKECluster",
            "GKEControlPlane",
            "GKEMachinePool",
            "MachinePool"
        ]
    );
    for doc in &docs {
        apply(client, namespace, doc).await;
    }

    // ClusterClass gke through core's topology.
    let name = "classy-gke";
    let docs = ctl.render(
        infra,
        "clusterclass",
        name,
        namespace,
        &[
            ("GCP_PROJECT", "capi-project-1"),
            ("GCP_REGION", "europe-west4"),
            ("GCP_NODE_MACHINE_TYPE", "n2-standard-4"),
        ],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "Cluster",
            "ClusterClass",
            "GKEClusterTemplate",
            "GKEControlPlaneTemplate",
            "GKEMachinePoolTemplate",
            "KubeadmConfigTemplate",
        ]
    );
    for doc in docs.iter().filter(|d| d["kind"] != json!("Cluster")) {
        apply(client, namespace, doc).await;
    }
    let classes = dynamic_api(
        client,
        namespace,
        "cluster.x-k8s.io/v1beta2",
        "ClusterClass",
    );
    eventually(
        "ClusterClass gke to be reconciled",
        Duration::from_secs(60),
        || async {
            let class = classes.get("gke").await.ok()?;
            (condition_true(&class, "VariablesReady")
                && condition_true(&class, "RefVersionsUpToDate"))
            .then_some(())
        },
    )
    .await;
    apply(client, namespace, one(&docs, "Cluster")).await;
    let clusters = dynamic_api(client, namespace, "cluster.x-k8s.io/v1beta2", "Cluster");
    let (infra_name, cp_name) = eventually(
        "topology to set the GKE Cluster's references",
        Duration::from_secs(60),
        || async {
            let cluster = clusters.get(name).await.ok()?;
            let spec = &cluster.data["spec"];
            Some((
                spec["infrastructureRef"]["name"].as_str()?.to_owned(),
                spec["controlPlaneRef"]["name"].as_str()?.to_owned(),
            ))
        },
    )
    .await;
    let gke_cluster = eventually("the GKECluster", Duration::from_secs(60), || async {
        dynamic_api(
            client,
            namespace,
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "GKECluster",
        )
        .get(&infra_name)
        .await
        .ok()
    })
    .await;
    assert_eq!(gke_cluster.data["spec"]["region"], json!("europe-west4"));
    assert_eq!(
        gke_cluster.data["spec"]["gke"]["project"],
        json!("capi-project-1")
    );
    let control_plane = eventually("the GKEControlPlane", Duration::from_secs(60), || async {
        dynamic_api(
            client,
            namespace,
            "controlplane.cluster.x-k8s.io/v1alpha1",
            "GKEControlPlane",
        )
        .get(&cp_name)
        .await
        .ok()
    })
    .await;
    assert_eq!(control_plane.data["spec"]["version"], json!("v1.33.0"));
    let pool = eventually("the GKEMachinePool", Duration::from_secs(60), || async {
        let listed = dynamic_api(
            client,
            namespace,
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "GKEMachinePool",
        )
        .list(&ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")))
        .await
        .ok()?;
        listed.items.into_iter().next()
    })
    .await;
    assert_eq!(pool.data["spec"]["machineType"], json!("n2-standard-4"));
}

/// The AKS release beside EKS's and GKE's in the same management cluster: installed by
/// clusterctl with its own namespace, RBAC and Deployment; its flavors render (`byo-network`
/// needs the subnet, the default the subscription) and its ClusterClass is built by core's
/// topology.
async fn aks_release(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
    let release = &xtask::aks::RELEASE;
    for crd in provider_azure::api::crds() {
        let name = crd.metadata.name.unwrap();
        let got = Api::<CustomResourceDefinition>::all(client.clone())
            .get(&name)
            .await
            .unwrap();
        assert_installed_as(&name, &got.metadata, "infrastructure-aks");
    }
    let deployment = Api::<Deployment>::namespaced(client.clone(), &release.namespace())
        .get(&release.deployment())
        .await
        .unwrap();
    assert_installed_as(
        "the AKS Deployment",
        &deployment.metadata,
        "infrastructure-aks",
    );
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(
        pod.containers[0].image.as_deref(),
        Some("ghcr.io/example/provider-azure:v0.1.0")
    );
    let env = pod.containers[0].env.clone().unwrap_or_default();
    for name in ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"] {
        assert!(env.iter().any(|e| e.name == name), "{name}: {env:?}");
    }

    let (required, _) = ctl.variables(infra, "byo-network");
    for variable in [
        "AZURE_SUBSCRIPTION_ID",
        "AZURE_SUBNET_ID",
        "KUBERNETES_VERSION",
    ] {
        assert!(
            required.contains(variable),
            "{variable} not required:\n{required}"
        );
    }
    let namespace = "team-aks";
    test_support::create_namespace(client, namespace).await;
    let subscription = "00000000-0000-4000-8000-000000000001";
    let subnet = format!(
        "/subscriptions/{subscription}/resourceGroups/shared-net/providers/Microsoft.Network/virtualNetworks/shared/subnets/nodes"
    );
    let docs = ctl.render(
        infra,
        "byo-network",
        "brought",
        namespace,
        &[
            ("AZURE_SUBSCRIPTION_ID", subscription),
            ("AZURE_SUBNET_ID", &subnet),
        ],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "AKSControlPlane",
            "AKSMachinePool",
            "Cluster",
            "MachinePool"
        ]
    );
    let control_plane = one(&docs, "AKSControlPlane");
    assert_eq!(
        control_plane["spec"]["infrastructure"]["network"],
        json!({"subnetIDs": [subnet]})
    );
    for doc in &docs {
        apply(client, namespace, doc).await;
    }
    // The default flavor: the resource group defaults to the Cluster's name.
    let docs = ctl.render(
        infra,
        "",
        "made",
        namespace,
        &[("AZURE_SUBSCRIPTION_ID", subscription)],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "AKSCluster",
            "AKSControlPlane",
            "AKSMachinePool",
            "Cluster",
            "MachinePool"
        ]
    );
    assert_eq!(
        one(&docs, "AKSCluster")["spec"]["aks"]["resourceGroup"],
        json!("made")
    );
    for doc in &docs {
        apply(client, namespace, doc).await;
    }

    // ClusterClass aks through core's topology.
    let name = "classy-aks";
    let docs = ctl.render(
        infra,
        "clusterclass",
        name,
        namespace,
        &[
            ("AZURE_SUBSCRIPTION_ID", subscription),
            ("AZURE_RESOURCE_GROUP", "classy-group"),
            ("AZURE_LOCATION", "westeurope"),
            ("AZURE_NODE_VM_SIZE", "Standard_D4s_v5"),
        ],
    );
    assert_eq!(
        kinds_of(&docs),
        [
            "AKSClusterTemplate",
            "AKSControlPlaneTemplate",
            "AKSMachinePoolTemplate",
            "Cluster",
            "ClusterClass",
            "KubeadmConfigTemplate",
        ]
    );
    for doc in docs.iter().filter(|d| d["kind"] != json!("Cluster")) {
        apply(client, namespace, doc).await;
    }
    let classes = dynamic_api(
        client,
        namespace,
        "cluster.x-k8s.io/v1beta2",
        "ClusterClass",
    );
    eventually(
        "ClusterClass aks to be reconciled",
        Duration::from_secs(60),
        || async {
            let class = classes.get("aks").await.ok()?;
            (condition_true(&class, "VariablesReady")
                && condition_true(&class, "RefVersionsUpToDate"))
            .then_some(())
        },
    )
    .await;
    apply(client, namespace, one(&docs, "Cluster")).await;
    let clusters = dynamic_api(client, namespace, "cluster.x-k8s.io/v1beta2", "Cluster");
    let infra_name = eventually(
        "topology to set the AKS Cluster's references",
        Duration::from_secs(60),
        || async {
            let cluster = clusters.get(name).await.ok()?;
            cluster.data["spec"]["infrastructureRef"]["name"]
                .as_str()
                .map(str::to_owned)
        },
    )
    .await;
    let aks_cluster = eventually("the AKSCluster", Duration::from_secs(60), || async {
        dynamic_api(
            client,
            namespace,
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "AKSCluster",
        )
        .get(&infra_name)
        .await
        .ok()
    })
    .await;
    assert_eq!(aks_cluster.data["spec"]["region"], json!("westeurope"));
    assert_eq!(
        aks_cluster.data["spec"]["aks"],
        json!({"subscriptionID": subscription, "resourceGroup": "classy-group"})
    );
    let pool = eventually("the AKSMachinePool", Duration::from_secs(60), || async {
        let listed = dynamic_api(
            client,
            namespace,
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "AKSMachinePool",
        )
        .list(&ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")))
        .await
        .ok()?;
        listed.items.into_iter().next()
    })
    .await;
    assert_eq!(pool.data["spec"]["machineType"], json!("Standard_D4s_v5"));
}
