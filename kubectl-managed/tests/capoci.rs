//! A CAPOCI Cluster moved to ours on the OKE emulator. CAPOCI does not run here (it needs its
//! webhooks' defaults and a network-management path the emulator lacks): its CRDs come from its
//! released module (v0.24.0), its objects are written as its managed template renders them with
//! what CAPOCI records once it has made the cluster, and the cluster and node pool are made in
//! the emulator through the OCI API as CAPOCI makes them (its names and freeform tags). The move
//! is proven from the cloud's side: the same OCIDs, no create or delete call, our tag on both;
//! then ours scales the node pool and deletes the cluster.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use demo::env::{Cloud, EnvOptions, Environment};
use emulators::oke::outside::{OciApi, create_network};
use emulators::oke::{COMPARTMENT, REGION};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use support::{condition, eventually, text};

const NS: &str = "from-capoci";
const VERSION: &str = "v1.32.1";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";

/// CAPOCI's freeform tags on everything it makes.
fn capoci_tags() -> Value {
    json!({"CreatedBy": "OCIClusterAPIProvider", "ClusterResourceIdentifier": "3f0c8f8e-5d0a-4f55-9d2e-0c1d2e3f4a5b"})
}

async fn made(api: &OciApi, path: &str, body: Value) -> String {
    let (_, wr) = api.ok("POST", path, Some(&body)).await.unwrap();
    let wr = wr.expect("a work request");
    let (w, _) = api
        .ok("GET", &format!("/20180222/workRequests/{wr}"), None)
        .await
        .unwrap();
    let id = w["resources"][0]["identifier"]
        .as_str()
        .unwrap()
        .to_string();
    api.wait(&wr, Duration::from_secs(60)).await.unwrap();
    id
}

async fn get(api: &OciApi, path: &str) -> Value {
    api.ok("GET", path, None).await.unwrap().0
}

/// Create and delete calls the OKE emulator answered, by operation (`CreateKubeconfig`, which
/// only returns a kubeconfig, aside).
fn lifecycle_calls(env: &Environment) -> BTreeMap<String, u64> {
    env.oke()
        .unwrap()
        .server
        .service()
        .kit()
        .calls
        .snapshot()
        .into_iter()
        .filter(|(op, _)| op.starts_with("Create") || op.starts_with("Delete"))
        .filter(|(op, _)| op != "CreateKubeconfig")
        .map(|(op, outcomes)| (op, outcomes.values().sum()))
        .collect()
}

#[tokio::test]
async fn a_capoci_cluster_moves_to_ours_by_ocid_and_ours_then_scales_and_deletes_it() {
    let env = Environment::start(EnvOptions {
        clouds: vec![Cloud::Oke],
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    let client = env.plane.client().await.unwrap();
    let kubeconfig = env.plane.kubeconfig_path().to_path_buf();
    env.plane
        .install_crds(&support::managed_crds(support::CAPOCI, "oci"))
        .await
        .unwrap();
    test_support::create_namespace(&client, NS).await;

    // What CAPOCI makes in OCI: its VCN, the cluster named after its control plane, one node
    // pool, all with its tags.
    let api = env.oke().unwrap().api().unwrap();
    let net = create_network(&api, COMPARTMENT, "o1", 40).await.unwrap();
    let cluster_id = made(&api, "/20180222/clusters", json!({
        "name": "o1", "compartmentId": COMPARTMENT, "vcnId": net.vcn, "kubernetesVersion": VERSION,
        "endpointConfig": {"subnetId": net.endpoint_subnet, "isPublicIpEnabled": true},
        "options": {"serviceLbSubnetIds": [net.lb_subnet]},
        "clusterPodNetworkOptions": [{"cniType": "OCI_VCN_IP_NATIVE"}],
        "freeformTags": capoci_tags(),
    })).await;
    let options = get(&api, &format!("/20180222/nodePoolOptions/{cluster_id}")).await;
    let image = options["sources"][0]["imageId"]
        .as_str()
        .unwrap()
        .to_string();
    let ads: Vec<String> = get(
        &api,
        &format!("/20160918/availabilityDomains?compartmentId={COMPARTMENT}"),
    )
    .await
    .as_array()
    .unwrap()
    .iter()
    .map(|a| a["name"].as_str().unwrap().to_string())
    .collect();
    let pool_id = made(&api, "/20180222/nodePools", json!({
        "name": "o1-mp-0", "compartmentId": COMPARTMENT, "clusterId": cluster_id,
        "kubernetesVersion": VERSION, "nodeShape": "VM.Standard.E4.Flex",
        "nodeShapeConfig": {"ocpus": 1, "memoryInGBs": 16},
        "nodeSourceDetails": {"sourceType": "IMAGE", "imageId": image, "bootVolumeSizeInGBs": 50},
        "nodeConfigDetails": {"size": 2, "placementConfigs": [{"availabilityDomain": ads[0], "subnetId": net.node_subnet}]},
        "freeformTags": capoci_tags(),
    })).await;

    // CAPOCI's objects, as its template renders them and with what it records.
    let create = |obj: Value| support::create(&client, NS, obj);
    create(json!({"apiVersion": format!("{INFRA}/v1beta2"), "kind": "OCIManagedCluster",
        "metadata": {"name": "o1", "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": "o1"}},
        "spec": {"compartmentId": COMPARTMENT, "ociResourceIdentifier": "3f0c8f8e-5d0a-4f55-9d2e-0c1d2e3f4a5b",
                 "networkSpec": {"vcn": {"id": net.vcn, "subnets": [
                    {"role": "control-plane-endpoint", "id": net.endpoint_subnet, "name": "control-plane-endpoint"},
                    {"role": "worker", "id": net.node_subnet, "name": "worker"},
                    {"role": "service-lb", "id": net.lb_subnet, "name": "service-lb"}]}}}})).await;
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta2"), "kind": "OCIManagedControlPlane",
        "metadata": {"name": "o1", "namespace": NS},
        "spec": {"version": VERSION, "id": cluster_id,
                 "clusterPodNetworkOptions": [{"cniType": "OCI_VCN_IP_NATIVE"}]}}),
    )
    .await;
    create(json!({"apiVersion": format!("{INFRA}/v1beta2"), "kind": "OCIManagedMachinePool",
        "metadata": {"name": "o1-mp-0", "namespace": NS},
        "spec": {"id": pool_id, "version": VERSION, "nodeShape": "VM.Standard.E4.Flex", "sshPublicKey": "",
                 "nodeShapeConfig": {"ocpus": "1", "memoryInGBs": "16"},
                 "nodeSourceViaImage": {"imageId": image, "bootVolumeSizeInGBs": 50},
                 "nodePoolNodeConfig": {"placementConfigs": [{"availabilityDomain": ads[0], "subnetName": "worker"}]}}})).await;
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "o1", "namespace": NS},
        "spec": {"infrastructureRef": {"apiGroup": INFRA, "kind": "OCIManagedCluster", "name": "o1"},
                 "controlPlaneRef": {"apiGroup": INFRA, "kind": "OCIManagedControlPlane", "name": "o1"}}})).await;
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
        "metadata": {"name": "o1-mp-0", "namespace": NS, "annotations": {"cluster.x-k8s.io/replicas-managed-by": ""}},
        "spec": {"clusterName": "o1", "replicas": 2, "template": {"spec": {
            "clusterName": "o1", "version": VERSION, "bootstrap": {"dataSecretName": ""},
            "infrastructureRef": {"apiGroup": INFRA, "kind": "OCIManagedMachinePool", "name": "o1-mp-0"}}}}})).await;
    // CAPOCI's kubeconfig Secret, owned by its control plane.
    let capoci_cp = support::api(&client, NS, INFRA, "v1beta2", "OCIManagedControlPlane")
        .get("o1")
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let owner = support::controller_of(&format!("{INFRA}/v1beta2"), &capoci_cp);
    support::peer_secret(&client, NS, "o1-kubeconfig", "o1", json!([owner])).await;

    let calls_before = lifecycle_calls(&env);
    let planned = support::run(&kubeconfig, NS, &["o1", "--region", REGION]).await;
    assert!(planned.status.success(), "{}", text(&planned));
    let said = text(&planned);
    assert!(
        said.contains(&format!("OKEControlPlane o1: Planned ({cluster_id})")),
        "{said}"
    );
    assert!(
        said.contains(&format!("OKEMachinePool o1-mp-0: Planned ({pool_id})")),
        "{said}"
    );
    let accepted = support::run(&kubeconfig, NS, &["o1", "--region", REGION, "--accept"]).await;
    assert!(accepted.status.success(), "{}", text(&accepted));

    // The same cluster and node pool, ours now; nothing made or deleted.
    assert_eq!(
        lifecycle_calls(&env),
        calls_before,
        "no create or delete call"
    );
    let (key, value) = contract::naming::ownership_tag("oke", NS, "o1");
    let cluster = get(&api, &format!("/20180222/clusters/{cluster_id}")).await;
    assert_eq!(cluster["lifecycleState"], "ACTIVE");
    assert_eq!(cluster["freeformTags"][&key], json!(value), "{cluster}");
    assert_eq!(
        cluster["freeformTags"]["CreatedBy"], "OCIClusterAPIProvider",
        "CAPOCI's tags stay"
    );
    let pool = get(&api, &format!("/20180222/nodePools/{pool_id}")).await;
    assert_eq!(pool["freeformTags"][&key], json!(value), "{pool}");
    for kind in [
        "OCIManagedCluster",
        "OCIManagedControlPlane",
        "OCIManagedMachinePool",
    ] {
        let left = support::api(&client, NS, INFRA, "v1beta2", kind)
            .list(&Default::default())
            .await
            .unwrap();
        assert!(left.items.is_empty(), "{kind} left");
    }
    let secret = secrets.get("o1-kubeconfig").await.unwrap();
    let owners = secret.metadata.owner_references.unwrap_or_default();
    assert!(
        owners
            .iter()
            .any(|o| o.kind == "OKEControlPlane" && o.controller == Some(true)),
        "{owners:?}"
    );
    assert_ne!(
        secret.data.unwrap()["value"].0,
        b"written by CAPOCI".to_vec(),
        "ours wrote its own kubeconfig"
    );

    // Ours manages it: three nodes, then the Cluster deleted with everything it owns.
    support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "MachinePool")
        .patch(
            "o1-mp-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    eventually(
        "the node pool at three nodes",
        Duration::from_secs(180),
        || async {
            let p = api
                .ok("GET", &format!("/20180222/nodePools/{pool_id}"), None)
                .await
                .ok()?
                .0;
            (p["nodeConfigDetails"]["size"] == 3).then_some(())
        },
    )
    .await;
    let ours = support::api(&client, NS, INFRA, "v1alpha1", "OKEMachinePool");
    eventually("the pool Ready", Duration::from_secs(180), || async {
        let p = ours.get("o1-mp-0").await.ok()?;
        (condition(&p, "Ready")?["status"] == "True").then_some(())
    })
    .await;
    support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("o1", &Default::default())
        .await
        .unwrap();
    eventually(
        "the cluster deleted by ours",
        Duration::from_secs(300),
        || async {
            let c = api
                .ok("GET", &format!("/20180222/clusters/{cluster_id}"), None)
                .await
                .ok()?
                .0;
            (c["lifecycleState"] == "DELETED").then_some(())
        },
    )
    .await;
    env.stop().await;
}
