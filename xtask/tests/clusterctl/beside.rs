//! The other clouds' releases beside EKS's in the same management cluster, as a team mixing
//! clouds installs them: each installed by clusterctl with its own namespace, RBAC and
//! Deployment, its flavors rendered and admitted, its ClusterClass built by core's topology.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use serde_json::{Value, json};
use test_support::eventually;

use super::support::{
    Clusterctl, apply, assert_installed_as, condition_true, dynamic_api, kinds_of, one,
};

/// Another cloud's release beside EKS's in the same management cluster, as a team mixing clouds
/// installs it: what is the cloud's own in the checks.
pub struct Beside {
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
pub async fn release_beside(ctl: &Clusterctl, client: &kube::Client, infra: &str, case: &Beside) {
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

pub fn gke() -> Beside {
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

pub fn aks() -> Beside {
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

pub fn oke() -> Beside {
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
