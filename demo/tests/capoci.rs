//! The incumbent OKE provider, CAPOCI v0.24.0, built from its released module and run unpatched
//! on our bed against the OKE emulator: it creates a cluster with a node pool, scales the pool,
//! upgrades the control plane and then the pool, and deletes it all, every step checked from the
//! emulator's side as OKE would show it. An independent client of the emulator's wire: where
//! CAPOCI trips on something OKE does differently, the emulator is what is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use demo::env::{Cloud, EnvOptions, Environment};
use demo::peer::capoci;
use emulators::oke::COMPARTMENT;
use emulators::oke::outside::{OciApi, create_network};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};
use test_support::eventually_logged;

const NS: &str = "capoci";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";

fn api(client: &kube::Client, group: &str, version: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        NS,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
    )
}

/// The first resource `list` answers that is not DELETED, read again by its id under `get`.
async fn live(oci: &OciApi, list: &str, get: &str) -> Option<Value> {
    let (items, _) = oci.ok("GET", list, None).await.ok()?;
    let id = items
        .as_array()?
        .iter()
        .find(|c| c["lifecycleState"] != "DELETED")?["id"]
        .as_str()?
        .to_string();
    oci.ok("GET", &format!("{get}/{id}"), None)
        .await
        .ok()
        .map(|(v, _)| v)
}

/// The OKE cluster named `name`, as ListClusters and GetCluster answer it, unless deleted.
async fn cluster(oci: &OciApi, name: &str) -> Option<Value> {
    let list = format!("/20180222/clusters?compartmentId={COMPARTMENT}&name={name}");
    live(oci, &list, "/20180222/clusters").await
}

/// The cluster's one node pool.
async fn pool(oci: &OciApi, cluster: &str) -> Option<Value> {
    let list = format!("/20180222/nodePools?compartmentId={COMPARTMENT}&clusterId={cluster}");
    live(oci, &list, "/20180222/nodePools").await
}

fn active_nodes(pool: &Value) -> usize {
    pool["nodes"].as_array().map_or(0, |n| {
        n.iter().filter(|n| n["lifecycleState"] == "ACTIVE").count()
    })
}

#[tokio::test]
async fn capoci_unpatched_creates_scales_upgrades_and_deletes_an_oke_cluster_on_the_emulator() {
    let mut env = Environment::start(EnvOptions {
        clouds: vec![Cloud::Oke],
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    env.start_capoci().await.unwrap();
    let client = env.plane.client().await.unwrap();
    test_support::create_namespace(&client, NS).await;
    let oke = env.oke().unwrap();
    let oci = oke.api().unwrap();
    let network = create_network(&oci, COMPARTMENT, "capoci", 70)
        .await
        .unwrap();
    let yaml = capoci::cluster_yaml(
        "o1",
        NS,
        "v1.32.10",
        1,
        COMPARTMENT,
        &network,
        oke.server.url(),
    );
    env.apply_yaml(&yaml, NS).await.unwrap();

    // Created: the cluster and its pool ACTIVE in OKE, the MachinePool's node Ready in the
    // workload cluster (Cluster API core reads it with CAPOCI's kubeconfig).
    let limit = Duration::from_secs(420);
    let made = eventually_logged("the cluster ACTIVE", limit, || async {
        let c = cluster(&oci, "o1").await?;
        (c["lifecycleState"] == "ACTIVE").then_some(c)
    })
    .await;
    let id = made["id"].as_str().unwrap().to_string();
    let machine_pools = api(&client, "cluster.x-k8s.io", "v1beta2", "MachinePool");
    let mut looks = 0;
    eventually_logged("the pool's node ready", limit, || {
        looks += 1;
        let shown = looks % 300 == 0;
        let (oci, machine_pools, id) = (&oci, &machine_pools, &id);
        async move {
            let p = pool(oci, id).await?;
            let mp = machine_pools.get("o1-pool-0").await.ok()?;
            if shown {
                eprintln!("capoci: MachinePool status {}", mp.data["status"]);
            }
            (p["lifecycleState"] == "ACTIVE"
                && active_nodes(&p) == 1
                && mp.data["status"]["phase"] == "Running")
                .then_some(())
        }
    })
    .await;

    // Scaled through the MachinePool.
    machine_pools
        .patch(
            "o1-pool-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    eventually_logged("the pool at two nodes", limit, || async {
        let p = pool(&oci, &id).await?;
        (p["nodeConfigDetails"]["size"] == 2 && active_nodes(&p) == 2).then_some(())
    })
    .await;

    // Upgraded: the control plane, then the pool.
    api(&client, INFRA, "v1beta2", "OCIManagedControlPlane")
        .patch(
            "o1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"version": "v1.33.1"}})),
        )
        .await
        .unwrap();
    eventually_logged("the control plane at v1.33.1", limit, || async {
        let c = cluster(&oci, "o1").await?;
        (c["kubernetesVersion"] == "v1.33.1" && c["lifecycleState"] == "ACTIVE").then_some(())
    })
    .await;
    api(&client, INFRA, "v1beta2", "OCIManagedMachinePool")
        .patch(
            "o1-pool-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"version": "v1.33.1"}})),
        )
        .await
        .unwrap();
    eventually_logged("the pool at v1.33.1", limit, || async {
        let p = pool(&oci, &id).await?;
        (p["kubernetesVersion"] == "v1.33.1" && p["lifecycleState"] == "ACTIVE").then_some(())
    })
    .await;

    // One update per change asked for: CAPOCI found the emulator's answers equal to its spec
    // (it compares them and sends an update on any difference, every reconcile).
    let calls = env.oke().unwrap().server.service().kit().calls.snapshot();
    let count = |op: &str| calls.get(op).map_or(0, |o| o.values().sum::<u64>());
    assert_eq!(count("UpdateCluster"), 1, "{calls:?}");
    assert_eq!(count("UpdateNodePool"), 2, "{calls:?}");

    // Deleted: nothing left in OKE, the Cluster gone.
    api(&client, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("o1", &Default::default())
        .await
        .unwrap();
    let clusters = api(&client, "cluster.x-k8s.io", "v1beta2", "Cluster");
    eventually_logged("the cluster deleted", limit, || async {
        let gone = cluster(&oci, "o1").await.is_none();
        let object_gone = clusters.get_opt("o1").await.ok()?.is_none();
        (gone && object_gone).then_some(())
    })
    .await;
    env.stop().await;
}
