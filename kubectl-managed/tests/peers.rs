//! The CAPG, CAPOCI and CAPZ mappings against those providers' own released CRDs (from their Go
//! modules: CAPG v1.13.1, CAPOCI v0.24.0, CAPZ v1.26.0) and ours, on a real management plane
//! with Cluster API core: each peer's Cluster, written as its own cluster template renders it, is
//! read by `kubectl managed migrate --dry-run`, whose objects the API server admits (a
//! server-side dry run against our CRDs and their rules) and nothing is changed. CAPZ's template
//! (no Entra ID) is refused, naming what stops it, and admitted once Entra ID is on.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::process::Output;

use serde_json::{Value, json};
use support::{CAPG, CAPOCI, CAPZ, managed_crds, text};
use testbed::{ManagementPlane, Options};

const NS: &str = "peers";

async fn create(client: &kube::Client, obj: Value) {
    support::create(client, NS, obj).await;
}

/// A Cluster naming `infra` and `control_plane` (kind, group), and a MachinePool per pool.
async fn cluster(
    client: &kube::Client,
    name: &str,
    infra: (&str, &str),
    control_plane: (&str, &str),
    pools: &[(&str, &str, &str)],
) {
    create(
        client,
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "infrastructureRef": {"apiGroup": infra.1, "kind": infra.0, "name": name},
                "controlPlaneRef": {"apiGroup": control_plane.1, "kind": control_plane.0, "name": format!("{name}{}", if control_plane.0 == "GCPManagedControlPlane" { "-control-plane" } else { "" })}}}),
    )
    .await;
    for (pool, kind, group) in pools {
        create(
            client,
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
                "metadata": {"name": pool, "namespace": NS},
                "spec": {"clusterName": name, "replicas": 2, "template": {"spec": {
                    "clusterName": name, "version": "v1.31.0", "bootstrap": {"dataSecretName": ""},
                    "infrastructureRef": {"apiGroup": group, "kind": kind, "name": pool}}}}}),
        )
        .await;
    }
}

async fn dry_run(plane: &ManagementPlane, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.push("--dry-run");
    support::run(plane.kubeconfig_path(), NS, &all).await
}

#[tokio::test]
async fn capg_capoci_and_capz_clusters_as_their_templates_render_them_are_read_and_mapped() {
    let plane = ManagementPlane::start(Options::default()).await.unwrap();
    let client = plane.client().await.unwrap();
    let mut ours = provider_gcp::api::crds();
    ours.extend(provider_oci::api::crds());
    ours.extend(provider_azure::api::crds());
    plane.install_crds(&ours).await.unwrap();
    let mut theirs = managed_crds(CAPG, "gcp");
    theirs.extend(managed_crds(CAPOCI, "oci"));
    theirs.extend(managed_crds(CAPZ, "azure"));
    plane.install_crds(&theirs).await.unwrap();
    test_support::create_namespace(&client, NS).await;
    let infra = "infrastructure.cluster.x-k8s.io";

    // CAPG's cluster-template-gke.yaml, with the name CAPG's webhook writes.
    create(
        &client,
        json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "GCPManagedCluster",
        "metadata": {"name": "g1", "namespace": NS},
        "spec": {"project": "team-project-1", "region": "us-central1", "network": {"name": "net-1"}}}),
    )
    .await;
    create(&client, json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "GCPManagedControlPlane",
        "metadata": {"name": "g1-control-plane", "namespace": NS},
        "spec": {"project": "team-project-1", "location": "us-central1", "clusterName": "peers-g1-control-plane",
                 "version": "v1.31.0"}})).await;
    create(
        &client,
        json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "GCPManagedMachinePool",
        "metadata": {"name": "g1-mp-0", "namespace": NS}, "spec": {}}),
    )
    .await;
    cluster(
        &client,
        "g1",
        ("GCPManagedCluster", infra),
        ("GCPManagedControlPlane", infra),
        &[("g1-mp-0", "GCPManagedMachinePool", infra)],
    )
    .await;

    // CAPOCI's cluster-template-managed.yaml, with what CAPOCI records once it made the cluster.
    create(&client, json!({"apiVersion": format!("{infra}/v1beta2"), "kind": "OCIManagedCluster",
        "metadata": {"name": "o1", "namespace": NS},
        "spec": {"compartmentId": "ocid1.compartment.oc1..aaaa", "networkSpec": {"vcn": {
            "id": "ocid1.vcn.oc1.iad.aaaa", "subnets": [
                {"role": "control-plane-endpoint", "id": "ocid1.subnet.oc1.iad.ep", "name": "control-plane-endpoint"},
                {"role": "worker", "id": "ocid1.subnet.oc1.iad.w", "name": "worker"},
                {"role": "service-lb", "id": "ocid1.subnet.oc1.iad.lb", "name": "service-lb"}]}}}})).await;
    create(
        &client,
        json!({"apiVersion": format!("{infra}/v1beta2"), "kind": "OCIManagedControlPlane",
        "metadata": {"name": "o1", "namespace": NS},
        "spec": {"version": "v1.31.1", "id": "ocid1.cluster.oc1.iad.aaaa"}}),
    )
    .await;
    create(&client, json!({"apiVersion": format!("{infra}/v1beta2"), "kind": "OCIManagedMachinePool",
        "metadata": {"name": "o1-mp-0", "namespace": NS},
        "spec": {"version": "v1.31.1", "nodeShape": "VM.Standard.E4.Flex", "sshPublicKey": "",
                 "id": "ocid1.nodepool.oc1.iad.aaaa",
                 "nodeSourceViaImage": {"imageId": "ocid1.image.oc1.iad.aaaa", "bootVolumeSizeInGBs": 50},
                 "nodeShapeConfig": {"ocpus": "1"}}})).await;
    cluster(
        &client,
        "o1",
        ("OCIManagedCluster", infra),
        ("OCIManagedControlPlane", infra),
        &[("o1-mp-0", "OCIManagedMachinePool", infra)],
    )
    .await;

    // CAPZ's cluster-template-aks.yaml.
    create(
        &client,
        json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "AzureManagedCluster",
        "metadata": {"name": "z1", "namespace": NS}, "spec": {}}),
    )
    .await;
    create(&client, json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "AzureManagedControlPlane",
        "metadata": {"name": "z1", "namespace": NS},
        "spec": {"identityRef": {"apiVersion": format!("{infra}/v1beta1"), "kind": "AzureClusterIdentity", "name": "id"},
                 "location": "westeurope", "oidcIssuerProfile": {"enabled": true}, "resourceGroupName": "z1",
                 "sshPublicKey": "", "subscriptionID": "00000000-0000-0000-0000-000000000001", "version": "v1.31.2"}})).await;
    for (pool, mode) in [("z1-pool0", "System"), ("z1-pool1", "User")] {
        create(&client, json!({"apiVersion": format!("{infra}/v1beta1"), "kind": "AzureManagedMachinePool",
            "metadata": {"name": pool, "namespace": NS},
            "spec": {"mode": mode, "name": pool.trim_start_matches("z1-"), "sku": "Standard_D2s_v5"}})).await;
    }
    cluster(
        &client,
        "z1",
        ("AzureManagedCluster", infra),
        ("AzureManagedControlPlane", infra),
        &[
            ("z1-pool0", "AzureManagedMachinePool", infra),
            ("z1-pool1", "AzureManagedMachinePool", infra),
        ],
    )
    .await;

    // CAPG: admitted as GKE kinds on the auto-mode subnetwork.
    let out = dry_run(&plane, &["g1"]).await;
    assert!(out.status.success(), "{}", text(&out));
    for expected in [
        "kind: GKEControlPlane",
        "cloudName: peers-g1-control-plane",
        "kind: GKEMachinePool",
        "machineType: e2-medium",
        "the API server admits each of them",
    ] {
        assert!(text(&out).contains(expected), "{expected}");
    }

    // CAPOCI: refused without a region (its template names none), admitted with one.
    let out = dry_run(&plane, &["o1"]).await;
    assert!(!out.status.success());
    assert!(text(&out).contains("--region"), "{}", text(&out));
    let out = dry_run(&plane, &["o1", "--region", "us-ashburn-1"]).await;
    assert!(out.status.success(), "{}", text(&out));
    for expected in [
        "kind: OKEControlPlane",
        "id: ocid1.cluster.oc1.iad.aaaa",
        "id: ocid1.nodepool.oc1.iad.aaaa",
        "endpointSubnetID: ocid1.subnet.oc1.iad.ep",
    ] {
        assert!(text(&out).contains(expected), "{expected}");
    }

    // CAPZ: its template (no Entra ID) refused, saying why; with Entra ID, admitted as AKS
    // kinds, the System pool kept by the control plane.
    let out = dry_run(&plane, &["z1"]).await;
    assert!(!out.status.success());
    let said = text(&out);
    assert!(
        said.contains("spec.aadProfile") && said.contains("REFUSED"),
        "{said}"
    );
    assert!(said.contains("nothing was changed"), "{said}");
    support::api(&client, NS, infra, "v1beta1", "AzureManagedControlPlane")
        .patch(
            "z1",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"aadProfile": {"managed": true, "adminGroupObjectIDs": ["00000000-0000-4000-8000-0000000000a1"]}}})),
        )
        .await
        .unwrap();
    let out = dry_run(&plane, &["z1"]).await;
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    for expected in [
        "kind: AKSControlPlane",
        "systemPool:",
        "name: pool0",
        "kind: AKSMachinePool",
        "cloudName: pool1",
        "MachinePool z1-pool0 is removed at the end of the move",
        "the API server admits each of them",
    ] {
        assert!(said.contains(expected), "{expected}: {said}");
    }

    // Nothing changed on any Cluster.
    let clusters = support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "Cluster");
    for name in ["g1", "o1", "z1"] {
        let c = clusters.get(name).await.unwrap();
        assert!(
            c.metadata.annotations.unwrap_or_default().is_empty(),
            "{name}"
        );
        assert_ne!(c.data["spec"]["paused"], true, "{name}");
    }
    plane.stop().await;
}
