//! C57: clusterctl installs core and the four releases from the local repository (EKS's CRDs,
//! roles and Deployment carry clusterctl's labels, its manager gets the image's default and the
//! empty watch flags, the inventory records it), and `clusterctl upgrade plan` reads the
//! repository's versions.

use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::json;

use super::support::{CORE_VERSION, Clusterctl, assert_installed_by_clusterctl};

/// `clusterctl init` of core and of `infrastructure` (every release, comma-separated) from the
/// local repository, then what it installed for EKS.
pub async fn init(ctl: &Clusterctl, client: &kube::Client, infrastructure: &str) {
    let core = format!("cluster-api:{CORE_VERSION}");
    let out = ctl.run(
        &[
            "init",
            "--core",
            &core,
            "--bootstrap=-",
            "--control-plane=-",
            "--infrastructure",
            infrastructure,
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
}

/// `clusterctl upgrade plan` reads the repository `repo`'s versions: none newer, then the one
/// put beside it.
pub fn upgrade_plan(ctl: &Clusterctl, repo: &Path) {
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
}
