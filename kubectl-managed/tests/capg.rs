//! A CAPG Cluster moved to ours on the GKE emulator. CAPG does not run here (it speaks gRPC
//! over TLS to fixed Google hosts): its CRDs come from its released module (v1.13.1), its
//! objects are written as its GKE template renders them (with the cluster name its webhook
//! writes and the subnetwork listed), and the regional cluster with its node pool is made in the
//! emulator through the Kubernetes Engine API as CAPG makes it (its names and the node pool's
//! `capg-cluster-<name>` label). The move is proven from the cloud's side: the same cluster and
//! node pool (self link, creation time), no create or delete call, our label on both; then ours
//! scales the pool and deletes the cluster.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use demo::env::{Cloud, EnvOptions, Environment, GCP_PROJECT, GCP_REGION};
use emulators::gke::outside::{GoogleApi, create_network};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use reqwest::Method;
use serde_json::{Value, json};
use support::{condition, eventually, text};

const NS: &str = "from-capg";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";
/// The GKE cluster's name, as CAPG's webhook derives it (`<namespace>-<name>`).
const GKE_NAME: &str = "from-capg-g1-control-plane";

fn cluster_path() -> String {
    format!("/v1/projects/{GCP_PROJECT}/locations/{GCP_REGION}/clusters/{GKE_NAME}")
}

async fn get(api: &GoogleApi, path: &str) -> Option<Value> {
    api.ok(Method::GET, path, None).await.ok()
}

/// Create and delete calls the GKE emulator answered, by operation.
fn lifecycle_calls(env: &Environment) -> BTreeMap<String, u64> {
    env.gke()
        .unwrap()
        .server
        .service()
        .kit()
        .calls
        .snapshot()
        .into_iter()
        .filter(|(op, _)| {
            op.contains("Create")
                || op.contains("Delete")
                || op.contains("insert")
                || op.contains("delete")
        })
        .map(|(op, outcomes)| (op, outcomes.values().sum()))
        .collect()
}

#[tokio::test]
async fn a_capg_cluster_moves_to_ours_by_name_and_ours_then_scales_and_deletes_it() {
    let env = Environment::start(EnvOptions {
        clouds: vec![Cloud::Gke],
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    let client = env.plane.client().await.unwrap();
    let kubeconfig = env.plane.kubeconfig_path().to_path_buf();
    env.plane
        .install_crds(&support::managed_crds(support::CAPG, "gcp"))
        .await
        .unwrap();
    test_support::create_namespace(&client, NS).await;

    // What CAPG makes in Google Cloud: the regional cluster on the network, with the pool of
    // its MachinePool (one node per zone), the pool labelled as CAPG labels it.
    let api = env.gke().unwrap().api();
    let net = create_network(&api, GCP_PROJECT, GCP_REGION, "g1", 50)
        .await
        .unwrap();
    api.ok(
        Method::POST,
        &format!("/v1/projects/{GCP_PROJECT}/locations/{GCP_REGION}/clusters"),
        Some(&json!({"cluster": {
            "name": GKE_NAME, "network": net.network, "subnetwork": net.subnetwork,
            "initialClusterVersion": "1.32",
            "ipAllocationPolicy": {"useIpAliases": true, "clusterSecondaryRangeName": "pods",
                                   "servicesSecondaryRangeName": "services"},
            "nodePools": [{"name": "g1-mp-0", "initialNodeCount": 1,
                "config": {"machineType": "e2-medium",
                           "resourceLabels": {format!("capg-cluster-{GKE_NAME}"): "owned"}}}],
        }})),
    )
    .await
    .unwrap();
    let made = eventually(
        "CAPG's cluster running",
        Duration::from_secs(120),
        || async {
            let c = get(&api, &cluster_path()).await?;
            let pool = get(&api, &format!("{}/nodePools/g1-mp-0", cluster_path())).await?;
            (c["status"] == "RUNNING" && pool["status"] == "RUNNING").then_some((c, pool))
        },
    )
    .await;
    let version = made.0["currentMasterVersion"].as_str().unwrap().to_string();

    // CAPG's objects, as its template renders them.
    let create = |obj: Value| support::create(&client, NS, obj);
    create(json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "GCPManagedCluster",
        "metadata": {"name": "g1", "namespace": NS},
        "spec": {"project": GCP_PROJECT, "region": GCP_REGION, "network": {"name": "g1", "subnets": [
            {"name": net.subnetwork, "cidrBlock": "10.50.0.0/20", "region": GCP_REGION,
             "secondaryCidrBlocks": {"pods": "10.51.0.0/16", "services": "10.52.0.0/20"}}]}}})).await;
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "GCPManagedControlPlane",
        "metadata": {"name": "g1-control-plane", "namespace": NS},
        "spec": {"project": GCP_PROJECT, "location": GCP_REGION, "clusterName": GKE_NAME,
                 "version": format!("v{version}")}}),
    )
    .await;
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "GCPManagedMachinePool",
        "metadata": {"name": "g1-mp-0", "namespace": NS}, "spec": {}}),
    )
    .await;
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "g1", "namespace": NS},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                 "infrastructureRef": {"apiGroup": INFRA, "kind": "GCPManagedCluster", "name": "g1"},
                 "controlPlaneRef": {"apiGroup": INFRA, "kind": "GCPManagedControlPlane", "name": "g1-control-plane"}}})).await;
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
        "metadata": {"name": "g1-mp-0", "namespace": NS},
        "spec": {"clusterName": "g1", "replicas": 3, "template": {"spec": {
            "clusterName": "g1", "bootstrap": {"dataSecretName": ""},
            "infrastructureRef": {"apiGroup": INFRA, "kind": "GCPManagedMachinePool", "name": "g1-mp-0"}}}}})).await;
    let capg_cp = support::api(&client, NS, INFRA, "v1beta1", "GCPManagedControlPlane")
        .get("g1-control-plane")
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let owner = support::controller_of(&format!("{INFRA}/v1beta1"), &capg_cp);
    for name in ["g1-kubeconfig", "g1-user-kubeconfig"] {
        support::peer_secret(&client, NS, name, "g1", json!([owner])).await;
    }

    let calls_before = lifecycle_calls(&env);
    let planned = support::run(&kubeconfig, NS, &["g1"]).await;
    assert!(planned.status.success(), "{}", text(&planned));
    let said = text(&planned);
    assert!(
        said.contains("GKEControlPlane g1-control-plane: Planned"),
        "{said}"
    );
    assert!(said.contains("GKEMachinePool g1-mp-0: Planned"), "{said}");
    let accepted = support::run(&kubeconfig, NS, &["g1", "--accept"]).await;
    assert!(accepted.status.success(), "{}", text(&accepted));

    // The same cluster and pool, ours now; nothing made or deleted.
    assert_eq!(
        lifecycle_calls(&env),
        calls_before,
        "no create or delete call"
    );
    let (key, value) = contract::naming::ownership_tag("gke", NS, "g1");
    let cluster = get(&api, &cluster_path()).await.unwrap();
    assert_eq!(cluster["selfLink"], made.0["selfLink"]);
    assert_eq!(cluster["createTime"], made.0["createTime"]);
    assert_eq!(cluster["resourceLabels"][&key], json!(value), "{cluster}");
    let pool = get(&api, &format!("{}/nodePools/g1-mp-0", cluster_path()))
        .await
        .unwrap();
    assert_eq!(pool["selfLink"], made.1["selfLink"]);
    assert_eq!(
        pool["config"]["resourceLabels"][format!("capg-cluster-{GKE_NAME}")],
        "owned",
        "CAPG's label stays beside ours: {pool}"
    );
    for kind in [
        "GCPManagedCluster",
        "GCPManagedControlPlane",
        "GCPManagedMachinePool",
    ] {
        let left = support::api(&client, NS, INFRA, "v1beta1", kind)
            .list(&Default::default())
            .await
            .unwrap();
        assert!(left.items.is_empty(), "{kind} left");
    }
    let owners = secrets
        .get("g1-kubeconfig")
        .await
        .unwrap()
        .metadata
        .owner_references
        .unwrap_or_default();
    assert!(
        owners
            .iter()
            .any(|o| o.kind == "GKEControlPlane" && o.controller == Some(true)),
        "{owners:?}"
    );

    // Ours manages it: six nodes (two per zone), then the Cluster deleted.
    support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "MachinePool")
        .patch(
            "g1-mp-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 6}})),
        )
        .await
        .unwrap();
    let ours = support::api(&client, NS, INFRA, "v1alpha1", "GKEMachinePool");
    eventually(
        "the pool at six nodes and Ready",
        Duration::from_secs(180),
        || async {
            let p = ours.get("g1-mp-0").await.ok()?;
            let ready = condition(&p, "Ready")?["status"] == "True";
            (ready && p.data["spec"]["providerIDList"].as_array()?.len() == 6).then_some(())
        },
    )
    .await;
    support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("g1", &Default::default())
        .await
        .unwrap();
    eventually(
        "the cluster deleted by ours",
        Duration::from_secs(300),
        || async { get(&api, &cluster_path()).await.is_none().then_some(()) },
    )
    .await;
    env.stop().await;
}
