//! C58 for EKS: the default template's variables and rendering, and the `byo-network` and
//! `clusterclass` flavors, rendered by clusterctl and admitted by the apiserver and core's
//! webhooks (the ClusterClass built by core's topology into EKS's objects).

use std::time::Duration;

use kube::api::ListParams;
use serde_json::{Value, json};
use test_support::eventually;

use super::support::{
    Clusterctl, apply, condition_true, dynamic_api, kinds_of, kubeadm_bootstrap_crds, one,
};

/// C58 for the default flavor: `KUBERNETES_VERSION` is a required variable, rendering fails
/// without it and with it renders five objects in the target namespace.
pub fn default_flavor(ctl: &Clusterctl, infra: &str) {
    let out = ctl.run(
        &[
            "generate",
            "cluster",
            "x",
            "--infrastructure",
            infra,
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
            infra,
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
            infra,
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
}

/// C58 for `byo-network`: the subnet ids are a required variable; the rendered Cluster has only
/// a controlPlaneRef and the EKSControlPlane carries the subnets; the apiserver and core's
/// webhooks admit every object.
pub async fn byo_network_flavor(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
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
pub async fn clusterclass_flavor(ctl: &Clusterctl, client: &kube::Client, infra: &str) {
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
