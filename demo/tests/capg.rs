//! The incumbent GKE provider, CAPG v1.13.1 (its GKE controllers), built from its released
//! module and run unpatched on our bed against the GKE emulator, which it reaches as it reaches
//! Google: gRPC to Kubernetes Engine and IAM Credentials, REST to Compute, TLS to Google's host
//! names through a proxy. It creates a regional cluster with a node pool, scales the pool,
//! upgrades the control plane and then the pool, and deletes it all, every step checked from
//! the emulator's side as GKE would show it, and core reaching the workload cluster with the
//! token CAPG minted. An independent client of the emulator's wire: where CAPG trips on
//! something GKE does differently, the emulator is what is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use demo::env::{Cloud, EnvOptions, Environment, GCP_PROJECT, GCP_REGION};
use demo::peer::capg;
use emulators::gke::outside::{GoogleApi, create_network};
use emulators::kit::InstanceState;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};
use test_support::eventually_logged;

const NS: &str = "capg";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";

fn api(client: &kube::Client, group: &str, version: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        NS,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
    )
}

const CLUSTER: &str = "capg-g1";

fn cluster_path() -> String {
    format!("/v1/projects/{GCP_PROJECT}/locations/{GCP_REGION}/clusters/{CLUSTER}")
}

/// The GKE cluster, as GetCluster answers it, unless it is gone.
async fn cluster(google: &GoogleApi) -> Option<Value> {
    google
        .ok(reqwest::Method::GET, &cluster_path(), None)
        .await
        .ok()
}

/// The cluster's node pool.
async fn pool(google: &GoogleApi) -> Option<Value> {
    let path = format!("{}/nodePools/pool-0", cluster_path());
    google.ok(reqwest::Method::GET, &path, None).await.ok()
}

#[tokio::test]
async fn capg_unpatched_creates_scales_upgrades_and_deletes_a_gke_cluster_on_the_emulator() {
    let mut env = Environment::start(EnvOptions {
        clouds: vec![Cloud::Gke],
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    env.start_capg().await.unwrap();
    let client = env.plane.client().await.unwrap();
    test_support::create_namespace(&client, NS).await;
    let google = env.gke().unwrap().api();
    create_network(&google, GCP_PROJECT, GCP_REGION, "capg-net", 70)
        .await
        .unwrap();
    let yaml = capg::cluster_yaml("g1", NS, "v1.33.5", 1, GCP_PROJECT, GCP_REGION, "capg-net");
    env.apply_yaml(&yaml, NS).await.unwrap();

    // Created: the cluster and its pool RUNNING in GKE, the MachinePool's node Ready in the
    // workload cluster (Cluster API core reads it with the token CAPG minted through IAM
    // Credentials).
    let limit = Duration::from_secs(480);
    eventually_logged("the cluster RUNNING", limit, || async {
        let c = cluster(&google).await?;
        (c["status"] == "RUNNING").then_some(c)
    })
    .await;
    let machine_pools = api(&client, "cluster.x-k8s.io", "v1beta2", "MachinePool");
    let mut looks = 0;
    eventually_logged("the pool's node ready", limit, || {
        looks += 1;
        let shown = looks % 300 == 0;
        let (google, machine_pools) = (&google, &machine_pools);
        async move {
            let p = pool(google).await?;
            let mp = machine_pools.get("g1-pool-0").await.ok()?;
            if shown {
                eprintln!("capg: MachinePool status {}", mp.data["status"]);
            }
            (p["status"] == "RUNNING" && mp.data["status"]["phase"] == "Running").then_some(())
        }
    })
    .await;

    // Scaled through the MachinePool.
    machine_pools
        .patch(
            "g1-pool-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    let gke = env.gke().unwrap().server.gke().clone();
    eventually_logged("the pool at two nodes", limit, || async {
        let mp = machine_pools.get("g1-pool-0").await.ok()?;
        let running = gke
            .instances()
            .iter()
            .filter(|i| i.pool.ends_with("/pool-0") && i.state == InstanceState::Running)
            .count();
        (running == 2 && mp.data["status"]["replicas"] == 2).then_some(())
    })
    .await;

    // Upgraded: the control plane, then the pool.
    api(&client, INFRA, "v1beta1", "GCPManagedControlPlane")
        .patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"version": "1.34.1"}})),
        )
        .await
        .unwrap();
    eventually_logged("the control plane at 1.34.1", limit, || async {
        let c = cluster(&google).await?;
        (c["currentMasterVersion"].as_str()?.starts_with("1.34.1-") && c["status"] == "RUNNING")
            .then_some(())
    })
    .await;
    machine_pools
        .patch(
            "g1-pool-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"version": "v1.34.1"}}}})),
        )
        .await
        .unwrap();
    eventually_logged("the pool at 1.34.1", limit, || async {
        let p = pool(&google).await?;
        (p["version"].as_str()?.starts_with("1.34.1-") && p["status"] == "RUNNING").then_some(())
    })
    .await;

    // One update per change asked for: CAPG found the emulator's answers equal to its spec (it
    // compares them and sends an update on any difference, every reconcile). Plus one
    // UpdateNodePool it sends real GKE too: it wants an empty `linuxNodeConfig` present, which
    // GKE does not show for a pool created without one (kubernetes-sigs/cluster-api-provider-gcp
    // #1656); once sent, GKE shows it and CAPG is content.
    let calls = env.gke().unwrap().server.kit().calls.snapshot();
    let count = |op: &str| calls.get(op).map_or(0, |o| o.values().sum::<u64>());
    eprintln!("capg: calls {calls:?}");
    assert_eq!(count("UpdateCluster"), 1, "{calls:?}");
    assert_eq!(count("UpdateNodePool"), 2, "{calls:?}");
    assert_eq!(count("SetNodePoolSize"), 1, "{calls:?}");
    assert!(count("GenerateAccessToken") >= 1, "{calls:?}");

    // Deleted: nothing left in GKE, the Cluster gone.
    api(&client, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("g1", &Default::default())
        .await
        .unwrap();
    let clusters = api(&client, "cluster.x-k8s.io", "v1beta2", "Cluster");
    eventually_logged("the cluster deleted", limit, || async {
        let gone = cluster(&google).await.is_none();
        let object_gone = clusters.get_opt("g1").await.ok()?.is_none();
        (gone && object_gone).then_some(())
    })
    .await;
    env.stop().await;
}
