//! C57/C58: the real clusterctl installs the EKS, GKE, AKS and OKE releases from the provider
//! repository `cargo run -p xtask -- release` writes (the same files as `manifests/`) into one
//! real management plane (a team mixing clouds), fully offline, reads the repository's versions
//! with `clusterctl upgrade plan`, and renders their cluster templates: the default flavor,
//! `byo-network` and `clusterclass` (with each release's ClusterClass), whose objects the real
//! apiserver and Cluster API core's webhooks admit and core's topology controller turns into the
//! provider's objects.
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
const RELEASES: [&str; 4] = ["eks", "gke", "aks", "oke"];
const FIELD_MANAGER: &str = "clusterctl-test";

/// `<base>/cluster-api/<v>/…` from the bed's core CRDs, `<base>/infrastructure-eks/v0.1.0/…`
/// (and gke, aks, oke) as the release command writes them; returns the clusterctl config naming
/// all of them.
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
    let gke_infra = format!("gke:{}", xtask::gke::VERSION);
    let aks_infra = format!("aks:{}", xtask::aks::VERSION);
    let oke_infra = format!("oke:{}", xtask::oke::VERSION);
    let both = format!("{infra},{gke_infra},{aks_infra},{oke_infra}");
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
        Some(
            xtask::eks::RELEASE
                .image_default(xtask::release::REGISTRY)
                .as_str()
        ),
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

    // `clusterctl upgrade plan` reads the repository's versions: none newer, then the one put
    // beside it.
    let plan = |want: &str| {
        let out = ctl.run(&["upgrade", "plan"], &[]);
        assert!(out.status.success(), "clusterctl upgrade plan failed");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let row = text
            .lines()
            .find(|l| l.starts_with("infrastructure-eks "))
            .unwrap_or_else(|| panic!("no infrastructure-eks row in the plan:\n{text}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "infrastructure-eks",
                xtask::eks::NAMESPACE,
                "InfrastructureProvider",
                xtask::eks::VERSION,
            ]
            .into_iter()
            .chain(want.split(' '))
            .collect::<Vec<_>>(),
            "{text}"
        );
    };
    plan("Already up to date");
    let eks_repo = repo.join("infrastructure-eks");
    let next = eks_repo.join("v0.1.99");
    std::fs::create_dir_all(&next).unwrap();
    for entry in std::fs::read_dir(eks_repo.join(xtask::eks::VERSION)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), next.join(entry.file_name())).unwrap();
    }
    plan("v0.1.99");
    std::fs::remove_dir_all(&next).unwrap();

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
    release_beside(&ctl, &client, &gke_infra, &gke()).await;
    release_beside(&ctl, &client, &aks_infra, &aks()).await;
    release_beside(&ctl, &client, &oke_infra, &oke()).await;

    plane.stop().await;
    eprintln!("clusterctl test took {:?}", started.elapsed());
}

/// Another cloud's release beside EKS's in the same management cluster, as a team mixing clouds
/// installs it: what is the cloud's own in the checks.
struct Beside {
    /// The release.
    release: &'static xtask::release::Release,
    /// Its kinds' prefix (`GKE`).
    prefix: &'static str,
    /// Its manager's image.
    image: &'static str,
    /// The environment variables its manager reads its own credentials from.
    env: &'static [&'static str],
    /// `byo-network`: its required variables, the values rendered and the control plane's
    /// `spec.infrastructure.network` they make.
    byo_required: &'static [&'static str],
    byo_vars: Vec<(&'static str, String)>,
    byo_network: Value,
    /// The default flavor's values, and a field of the InfraCluster they make.
    default_vars: Vec<(&'static str, String)>,
    default_check: Option<(&'static str, Value)>,
    /// The clusterclass flavor's values, and what core's topology makes of them: the
    /// InfraCluster's region and cloud block, the pool's machine type.
    class_vars: Vec<(&'static str, String)>,
    class_region: &'static str,
    class_block: (&'static str, Value),
    class_machine_type: &'static str,
}

/// The release beside EKS's: installed by clusterctl with its own namespace, RBAC and
/// Deployment; its flavors render (`byo-network` needs the network, the default the account
/// scope) and the apiserver and core's webhooks admit them; its ClusterClass is built by core's
/// topology into the cloud's objects with the class's variables.
async fn release_beside(ctl: &Clusterctl, client: &kube::Client, infra: &str, case: &Beside) {
    let release = case.release;
    let provider = release.provider_label();
    let prefix = case.prefix;
    for crd in (release.crds)() {
        let name = crd.metadata.name.unwrap();
        let got = Api::<CustomResourceDefinition>::all(client.clone())
            .get(&name)
            .await
            .unwrap();
        assert_installed_as(&name, &got.metadata, &provider);
    }
    let deployment = Api::<Deployment>::namespaced(client.clone(), &release.namespace())
        .get(&release.deployment())
        .await
        .unwrap();
    assert_installed_as(
        &format!("the {prefix} Deployment"),
        &deployment.metadata,
        &provider,
    );
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.containers[0].image.as_deref(), Some(case.image));
    let env = pod.containers[0].env.clone().unwrap_or_default();
    for name in case.env {
        assert!(env.iter().any(|e| e.name == *name), "{name}: {env:?}");
    }

    let (required, _) = ctl.variables(infra, "byo-network");
    for variable in case.byo_required.iter().chain(&["KUBERNETES_VERSION"]) {
        assert!(
            required.contains(variable),
            "{variable} not required:\n{required}"
        );
    }
    let namespace = format!("team-{}", release.name);
    test_support::create_namespace(client, &namespace).await;
    let sorted = |mut kinds: Vec<String>| {
        kinds.sort();
        kinds
    };
    let docs = ctl.render(
        infra,
        "byo-network",
        "brought",
        &namespace,
        &pairs(&case.byo_vars),
    );
    assert_eq!(
        kinds_of(&docs),
        sorted(vec![
            "Cluster".into(),
            format!("{prefix}ControlPlane"),
            format!("{prefix}MachinePool"),
            "MachinePool".into()
        ])
    );
    let control_plane = one(&docs, &format!("{prefix}ControlPlane"));
    assert_eq!(
        control_plane["spec"]["infrastructure"]["network"],
        case.byo_network
    );
    for doc in &docs {
        apply(client, &namespace, doc).await;
    }
    let docs = ctl.render(infra, "", "made", &namespace, &pairs(&case.default_vars));
    assert_eq!(
        kinds_of(&docs),
        sorted(vec![
            "Cluster".into(),
            format!("{prefix}Cluster"),
            format!("{prefix}ControlPlane"),
            format!("{prefix}MachinePool"),
            "MachinePool".into()
        ])
    );
    if let Some((pointer, want)) = &case.default_check {
        assert_eq!(
            one(&docs, &format!("{prefix}Cluster")).pointer(pointer),
            Some(want)
        );
    }
    for doc in &docs {
        apply(client, &namespace, doc).await;
    }

    // The ClusterClass through core's topology.
    let class = release.name;
    let name = format!("classy-{class}");
    let docs = ctl.render(
        infra,
        "clusterclass",
        &name,
        &namespace,
        &pairs(&case.class_vars),
    );
    assert_eq!(
        kinds_of(&docs),
        sorted(vec![
            "Cluster".into(),
            "ClusterClass".into(),
            format!("{prefix}ClusterTemplate"),
            format!("{prefix}ControlPlaneTemplate"),
            format!("{prefix}MachinePoolTemplate"),
            "KubeadmConfigTemplate".into(),
        ])
    );
    for doc in docs.iter().filter(|d| d["kind"] != json!("Cluster")) {
        apply(client, &namespace, doc).await;
    }
    let classes = dynamic_api(
        client,
        &namespace,
        "cluster.x-k8s.io/v1beta2",
        "ClusterClass",
    );
    eventually(
        &format!("ClusterClass {class} to be reconciled"),
        Duration::from_secs(60),
        || async {
            let class = classes.get(class).await.ok()?;
            (condition_true(&class, "VariablesReady")
                && condition_true(&class, "RefVersionsUpToDate"))
            .then_some(())
        },
    )
    .await;
    apply(client, &namespace, one(&docs, "Cluster")).await;
    let clusters = dynamic_api(client, &namespace, "cluster.x-k8s.io/v1beta2", "Cluster");
    let (infra_name, cp_name) = eventually(
        &format!("topology to set the {prefix} Cluster's references"),
        Duration::from_secs(60),
        || async {
            let cluster = clusters.get(&name).await.ok()?;
            let spec = &cluster.data["spec"];
            Some((
                spec["infrastructureRef"]["name"].as_str()?.to_owned(),
                spec["controlPlaneRef"]["name"].as_str()?.to_owned(),
            ))
        },
    )
    .await;
    let infra_kind = format!("{prefix}Cluster");
    let infra_cluster = eventually(
        &format!("the {infra_kind}"),
        Duration::from_secs(60),
        || async {
            dynamic_api(
                client,
                &namespace,
                "infrastructure.cluster.x-k8s.io/v1alpha1",
                &infra_kind,
            )
            .get(&infra_name)
            .await
            .ok()
        },
    )
    .await;
    assert_eq!(
        infra_cluster.data["spec"]["region"],
        json!(case.class_region)
    );
    let (block, want) = &case.class_block;
    assert_eq!(infra_cluster.data["spec"][*block], *want);
    let cp_kind = format!("{prefix}ControlPlane");
    let control_plane = eventually(
        &format!("the {cp_kind}"),
        Duration::from_secs(60),
        || async {
            dynamic_api(
                client,
                &namespace,
                "controlplane.cluster.x-k8s.io/v1alpha1",
                &cp_kind,
            )
            .get(&cp_name)
            .await
            .ok()
        },
    )
    .await;
    assert_eq!(control_plane.data["spec"]["version"], json!("v1.33.0"));
    let pool_kind = format!("{prefix}MachinePool");
    let pool = eventually(
        &format!("the {pool_kind}"),
        Duration::from_secs(60),
        || async {
            let listed = dynamic_api(
                client,
                &namespace,
                "infrastructure.cluster.x-k8s.io/v1alpha1",
                &pool_kind,
            )
            .list(&ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")))
            .await
            .ok()?;
            listed.items.into_iter().next()
        },
    )
    .await;
    assert_eq!(
        pool.data["spec"]["machineType"],
        json!(case.class_machine_type)
    );
}

/// Variables as `clusterctl` takes them.
fn pairs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, x)| (*k, x.as_str())).collect()
}

fn gke() -> Beside {
    Beside {
        release: &xtask::gke::RELEASE,
        prefix: "GKE",
        image: "ghcr.io/capi-managed/provider-gcp:v0.1.0",
        env: &["GOOGLE_APPLICATION_CREDENTIALS"],
        byo_required: &["GCP_PROJECT", "GCP_NETWORK", "GCP_SUBNETWORK"],
        byo_vars: vec![
            ("GCP_PROJECT", "capi-project-1".into()),
            ("GCP_NETWORK", "shared-vpc".into()),
            ("GCP_SUBNETWORK", "shared-nodes".into()),
        ],
        byo_network: json!({"id": "shared-vpc", "subnetIDs": ["shared-nodes"]}),
        default_vars: vec![("GCP_PROJECT", "capi-project-1".into())],
        default_check: None,
        class_vars: vec![
            ("GCP_PROJECT", "capi-project-1".into()),
            ("GCP_REGION", "europe-west4".into()),
            ("GCP_NODE_MACHINE_TYPE", "n2-standard-4".into()),
        ],
        class_region: "europe-west4",
        class_block: ("gke", json!({"project": "capi-project-1"})),
        class_machine_type: "n2-standard-4",
    }
}

fn aks() -> Beside {
    let subscription = "00000000-0000-4000-8000-000000000001";
    let subnet = format!(
        "/subscriptions/{subscription}/resourceGroups/shared-net/providers/Microsoft.Network/virtualNetworks/shared/subnets/nodes"
    );
    Beside {
        release: &xtask::aks::RELEASE,
        prefix: "AKS",
        image: "ghcr.io/capi-managed/provider-azure:v0.1.0",
        env: &["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"],
        byo_required: &["AZURE_SUBSCRIPTION_ID", "AZURE_SUBNET_ID"],
        byo_vars: vec![
            ("AZURE_SUBSCRIPTION_ID", subscription.into()),
            ("AZURE_SUBNET_ID", subnet.clone()),
        ],
        byo_network: json!({"subnetIDs": [subnet]}),
        // The resource group defaults to the Cluster's name.
        default_vars: vec![("AZURE_SUBSCRIPTION_ID", subscription.into())],
        default_check: Some(("/spec/aks/resourceGroup", json!("made"))),
        class_vars: vec![
            ("AZURE_SUBSCRIPTION_ID", subscription.into()),
            ("AZURE_RESOURCE_GROUP", "classy-group".into()),
            ("AZURE_LOCATION", "westeurope".into()),
            ("AZURE_NODE_VM_SIZE", "Standard_D4s_v5".into()),
        ],
        class_region: "westeurope",
        class_block: (
            "aks",
            json!({"subscriptionID": subscription, "resourceGroup": "classy-group"}),
        ),
        class_machine_type: "Standard_D4s_v5",
    }
}

fn oke() -> Beside {
    let compartment = "ocid1.compartment.oc1..aaaaaaaateamcompartment";
    Beside {
        release: &xtask::oke::RELEASE,
        prefix: "OKE",
        image: "ghcr.io/capi-managed/provider-oci:v0.1.0",
        env: &[
            "OCI_TENANCY_ID",
            "OCI_USER_ID",
            "OCI_CREDENTIALS_FINGERPRINT",
            "OCI_CREDENTIALS_KEY",
        ],
        byo_required: &[
            "OCI_COMPARTMENT_ID",
            "OCI_VCN_ID",
            "OCI_ENDPOINT_SUBNET_ID",
            "OCI_NODE_SUBNET_ID",
        ],
        byo_vars: vec![
            ("OCI_COMPARTMENT_ID", compartment.into()),
            ("OCI_VCN_ID", "ocid1.vcn.oc1.iad.aaaaaaaashared".into()),
            (
                "OCI_ENDPOINT_SUBNET_ID",
                "ocid1.subnet.oc1.iad.aaaaaaaaendpoint".into(),
            ),
            (
                "OCI_NODE_SUBNET_ID",
                "ocid1.subnet.oc1.iad.aaaaaaaanodes".into(),
            ),
        ],
        byo_network: json!({"id": "ocid1.vcn.oc1.iad.aaaaaaaashared", "subnetIDs": ["ocid1.subnet.oc1.iad.aaaaaaaanodes"]}),
        default_vars: vec![("OCI_COMPARTMENT_ID", compartment.into())],
        default_check: Some(("/spec/network/cidrBlock", json!("10.0.0.0/16"))),
        class_vars: vec![
            ("OCI_COMPARTMENT_ID", compartment.into()),
            ("OCI_REGION", "eu-frankfurt-1".into()),
            ("OCI_NODE_SHAPE", "VM.Standard3.Flex".into()),
        ],
        class_region: "eu-frankfurt-1",
        class_block: ("oke", json!({"compartmentID": compartment})),
        class_machine_type: "VM.Standard3.Flex",
    }
}
