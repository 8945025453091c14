//! A CAPZ Cluster moved to ours on the AKS emulator. CAPZ does not run here (both its AKS paths
//! go through Azure Service Operator, whose identity library insists on Azure's own hosts): its
//! CRDs come from its released module (v1.26.0), its objects are written as its AKS template
//! renders them (with Entra ID on), and the cluster with its System pool `pool0` and User pool
//! `pool1` is made in the emulator over ARM as CAPZ makes it (its tags). Beside them, the Azure
//! Service Operator objects CAPZ controls: ASO builds its CRDs at release time and none is in
//! its Go module, so these three kinds are declared here with their real groups and versions and
//! an open schema; no ASO controller runs, and the test checks what one would act on: each of
//! CAPZ's ASO objects says `reconcile-policy: skip` before it is deleted.
//!
//! The move is proven from the cloud's side: the same cluster (its API server's name, which AKS
//! draws at random on create), no delete call, our tag beside CAPZ's; the System pool kept by
//! the control plane by its name, its MachinePool gone and its nodes untouched; then ours
//! resizes both pools and deletes the cluster.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use demo::env::{AZURE_LOCATION, Cloud, EnvOptions, Environment};
use emulators::aks::SUBSCRIPTION;
use emulators::aks::outside::{ArmApi, create_network};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use reqwest::Method;
use serde_json::{Value, json};
use support::{condition, eventually, text};

const NS: &str = "from-capz";
const INFRA: &str = "infrastructure.cluster.x-k8s.io";
const GROUP: &str = "rg-z1";
/// The AKS cluster: CAPZ names it after its AzureManagedControlPlane.
const AKS_NAME: &str = "z1";
const CONTAINER: &str = emulators::aks::arm::CONTAINER_API_VERSION;
const HOLD_FINALIZER: &str = "test.managed.cluster.x-k8s.io/observe";

fn cluster_path() -> String {
    format!(
        "/resourceGroups/{GROUP}/providers/Microsoft.ContainerService/managedClusters/{AKS_NAME}"
    )
}

async fn get(api: &ArmApi, path: &str) -> Option<Value> {
    api.ok(Method::GET, path, CONTAINER, None).await.ok()
}

/// Delete calls the AKS emulator answered, by operation.
fn deletes(env: &Environment) -> BTreeMap<String, u64> {
    env.aks()
        .unwrap()
        .server
        .service()
        .kit()
        .calls
        .snapshot()
        .into_iter()
        .filter(|(op, _)| op.ends_with("_Delete"))
        .map(|(op, outcomes)| (op, outcomes.values().sum()))
        .collect()
}

/// A CRD for one of Azure Service Operator's kinds, its schema left open.
fn service_operator_crd(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{"name": version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

/// An ASO object controlled by the CAPZ object `owner` (as CAPZ writes them), if any.
fn service_operator_object(
    api_version: &str,
    kind: &str,
    name: &str,
    owner: Option<&kube::api::DynamicObject>,
    annotations: Value,
) -> Value {
    let mut obj = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": NS, "annotations": annotations,
                     "labels": {"cluster.x-k8s.io/cluster-name": "z1"}},
        "spec": {"azureName": name}});
    if let Some(o) = owner {
        obj["metadata"]["ownerReferences"] = json!([{
            "apiVersion": format!("{INFRA}/v1beta1"),
            "kind": o.types.as_ref().unwrap().kind, "name": o.metadata.name,
            "uid": o.metadata.uid, "controller": true, "blockOwnerDeletion": true}]);
    }
    obj
}

#[tokio::test]
async fn a_capz_cluster_moves_to_ours_by_resource_id_with_its_system_pool_kept_by_the_control_plane()
 {
    let env = Environment::start(EnvOptions {
        clouds: vec![Cloud::Aks],
        ..EnvOptions::default()
    })
    .await
    .unwrap();
    let client = env.plane.client().await.unwrap();
    let kubeconfig = env.plane.kubeconfig_path().to_path_buf();
    let mut crds = support::managed_crds(support::CAPZ, "azure");
    crds.extend([
        service_operator_crd(
            "containerservice.azure.com",
            "v1api20240901",
            "ManagedCluster",
            "managedclusters",
        ),
        service_operator_crd(
            "containerservice.azure.com",
            "v1api20240901",
            "ManagedClustersAgentPool",
            "managedclustersagentpools",
        ),
        service_operator_crd(
            "resources.azure.com",
            "v1api20200601",
            "ResourceGroup",
            "resourcegroups",
        ),
    ]);
    env.plane.install_crds(&crds).await.unwrap();
    test_support::create_namespace(&client, NS).await;

    // What CAPZ makes in Azure: the network, then the cluster with Entra ID and its System
    // pool, then the User pool, tagged as CAPZ tags them.
    let api = env.aks().unwrap().api();
    let net = create_network(&api, GROUP, AZURE_LOCATION, "z1", 60)
        .await
        .unwrap();
    let tags = json!({"sigs.k8s.io_cluster-api-provider-azure_cluster_z1": "owned",
                      "sigs.k8s.io_cluster-api-provider-azure_role": "common", "Name": "z1"});
    api.ok(
        Method::PUT,
        &cluster_path(),
        CONTAINER,
        Some(&json!({
        "location": AZURE_LOCATION, "tags": tags, "identity": {"type": "SystemAssigned"},
        "properties": {"kubernetesVersion": "1.32", "dnsPrefix": "z1",
            "aadProfile": {"managed": true, "enableAzureRBAC": true, "adminGroupObjectIDs": ["00000000-0000-4000-8000-0000000000a1"]},
            "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay"},
            "agentPoolProfiles": [{"name": "pool0", "mode": "System", "count": 1,
                "vmSize": "Standard_D2s_v5", "osType": "Linux", "type": "VirtualMachineScaleSets",
                "vnetSubnetID": net.subnet_id}]}})),
    )
    .await
    .unwrap();
    let running = |path: String| {
        let api = &api;
        async move {
            let v = get(api, &path).await?;
            (v["properties"]["provisioningState"] == "Succeeded").then_some(v)
        }
    };
    eventually("CAPZ's cluster", Duration::from_secs(180), || {
        running(cluster_path())
    })
    .await;
    api.ok(
        Method::PUT,
        &format!("{}/agentPools/pool1", cluster_path()),
        CONTAINER,
        Some(&json!({
        "properties": {"mode": "User", "count": 2, "vmSize": "Standard_D2s_v5", "osType": "Linux",
            "type": "VirtualMachineScaleSets", "vnetSubnetID": net.subnet_id}})),
    )
    .await
    .unwrap();
    eventually("CAPZ's User pool", Duration::from_secs(180), || {
        running(format!("{}/agentPools/pool1", cluster_path()))
    })
    .await;
    let made = get(&api, &cluster_path()).await.unwrap();
    let version = made["properties"]["currentKubernetesVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // CAPZ's objects, as its template renders them with Entra ID on.
    let create = |obj: Value| support::create(&client, NS, obj);
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureManagedCluster",
        "metadata": {"name": "z1", "namespace": NS}, "spec": {}}),
    )
    .await;
    create(json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureManagedControlPlane",
        "metadata": {"name": "z1", "namespace": NS},
        "spec": {"identityRef": {"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureClusterIdentity", "name": "id"},
                 "location": AZURE_LOCATION, "resourceGroupName": GROUP, "subscriptionID": SUBSCRIPTION,
                 "version": format!("v{version}"), "dnsPrefix": "z1", "sshPublicKey": "",
                 "aadProfile": {"managed": true, "adminGroupObjectIDs": ["00000000-0000-4000-8000-0000000000a1"]},
                 "virtualNetwork": {"name": "z1", "cidrBlock": "10.60.0.0/16", "resourceGroup": GROUP,
                                    "subnet": {"name": "nodes", "cidrBlock": "10.60.0.0/20"}}}})).await;
    for (pool, mode) in [("pool0", "System"), ("pool1", "User")] {
        create(
            json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureManagedMachinePool",
            "metadata": {"name": format!("z1-{pool}"), "namespace": NS},
            "spec": {"mode": mode, "name": pool, "sku": "Standard_D2s_v5"}}),
        )
        .await;
    }
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "z1", "namespace": NS},
        "spec": {"clusterNetwork": {"services": {"cidrBlocks": ["192.168.0.0/16"]}},
                 "infrastructureRef": {"apiGroup": INFRA, "kind": "AzureManagedCluster", "name": "z1"},
                 "controlPlaneRef": {"apiGroup": INFRA, "kind": "AzureManagedControlPlane", "name": "z1"}}}))
    .await;
    for (pool, replicas) in [("pool0", 1), ("pool1", 2)] {
        create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": format!("z1-{pool}"), "namespace": NS},
            "spec": {"clusterName": "z1", "replicas": replicas, "template": {"spec": {
                "clusterName": "z1", "version": format!("v{version}"), "bootstrap": {"dataSecretName": ""},
                "infrastructureRef": {"apiGroup": INFRA, "kind": "AzureManagedMachinePool", "name": format!("z1-{pool}")}}}}}))
        .await;
    }
    let capz = |kind: &str| support::api(&client, NS, INFRA, "v1beta1", kind);
    let amcp = capz("AzureManagedControlPlane").get("z1").await.unwrap();
    let pool0 = capz("AzureManagedMachinePool")
        .get("z1-pool0")
        .await
        .unwrap();
    let pool1 = capz("AzureManagedMachinePool")
        .get("z1-pool1")
        .await
        .unwrap();
    // The ASO objects CAPZ controls (one with ASO's default policy written out, one watched
    // through its deletion), and one of the user's it does not.
    let aso = [
        (
            "containerservice.azure.com/v1api20240901",
            "ManagedCluster",
            "z1",
            Some(&amcp),
            json!({"serviceoperator.azure.com/reconcile-policy": "manage"}),
        ),
        (
            "resources.azure.com/v1api20200601",
            "ResourceGroup",
            GROUP,
            Some(&amcp),
            json!({}),
        ),
        (
            "containerservice.azure.com/v1api20240901",
            "ManagedClustersAgentPool",
            "z1-pool0",
            Some(&pool0),
            json!({}),
        ),
        (
            "containerservice.azure.com/v1api20240901",
            "ManagedClustersAgentPool",
            "z1-pool1",
            Some(&pool1),
            json!({}),
        ),
        (
            "resources.azure.com/v1api20200601",
            "ResourceGroup",
            "users-own",
            None,
            json!({}),
        ),
    ];
    for (api_version, kind, name, owner, annotations) in &aso {
        let mut obj = service_operator_object(api_version, kind, name, *owner, annotations.clone());
        if *kind == "ManagedCluster" {
            obj["metadata"]["finalizers"] = json!([HOLD_FINALIZER]);
        }
        create(obj).await;
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    for name in ["z1-kubeconfig", "z1-kubeconfig-user"] {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"cluster.x-k8s.io/cluster-name": "z1"},
                "ownerReferences": [{"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureManagedControlPlane",
                    "name": "z1", "uid": amcp.metadata.uid, "controller": true}]},
            "type": "cluster.x-k8s.io/secret",
            "stringData": {"value": "written by CAPZ"},
        }))
        .unwrap();
        secrets.create(&Default::default(), &secret).await.unwrap();
    }

    let deletes_before = deletes(&env);
    let planned = support::run(&kubeconfig, NS, &["z1"]).await;
    let said = text(&planned);
    assert!(planned.status.success(), "{said}");
    assert!(said.contains("AKSControlPlane z1: Planned"), "{said}");
    assert!(said.contains("AKSMachinePool z1-pool1: Planned"), "{said}");
    assert!(
        said.contains("set 4 Azure Service Operator object(s)"),
        "{said}"
    );
    // Paused: every ASO object CAPZ controls leaves Azure alone from now on, its policy kept
    // where CAPZ restores it from; the user's own is untouched.
    let aso_api = |api_version: &str, kind: &str| {
        let (group, version) = api_version.split_once('/').unwrap();
        support::api(&client, NS, group, version, kind)
    };
    for (api_version, kind, name, owner, annotations) in &aso {
        let now = aso_api(api_version, kind).get(name).await.unwrap();
        let a = now.metadata.annotations.unwrap_or_default();
        if owner.is_some() {
            assert_eq!(
                a["serviceoperator.azure.com/reconcile-policy"], "skip",
                "{kind} {name}"
            );
            assert_eq!(
                a["sigs.k8s.io/cluster-api-provider-azure-pre-pause-reconcile-policy"],
                annotations["serviceoperator.azure.com/reconcile-policy"]
                    .as_str()
                    .unwrap_or(""),
                "{kind} {name}"
            );
        } else {
            assert!(a.is_empty(), "{kind} {name}: {a:?}");
        }
    }

    let accepted = support::run(&kubeconfig, NS, &["z1", "--accept"]).await;
    let said = text(&accepted);
    assert!(accepted.status.success(), "{said}");
    assert!(said.contains("removed MachinePool z1-pool0"), "{said}");

    // The same cluster and pools, ours now; nothing deleted in Azure.
    assert_eq!(deletes(&env), deletes_before, "no delete call");
    let cluster = get(&api, &cluster_path()).await.unwrap();
    assert_eq!(cluster["properties"]["fqdn"], made["properties"]["fqdn"]);
    let (key, value) = contract::naming::ownership_tag("aks", NS, "z1");
    assert_eq!(cluster["tags"][&key], json!(value), "{cluster}");
    assert_eq!(
        cluster["tags"]["sigs.k8s.io_cluster-api-provider-azure_cluster_z1"], "owned",
        "CAPZ's tag stays beside ours"
    );
    let pools: Vec<String> = cluster["properties"]["agentPoolProfiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(pools, ["pool0", "pool1"]);
    let cp = support::api(
        &client,
        NS,
        "controlplane.cluster.x-k8s.io",
        "v1alpha1",
        "AKSControlPlane",
    )
    .get("z1")
    .await
    .unwrap();
    assert_eq!(
        cp.data["spec"]["aks"]["systemPool"],
        json!({"name": "pool0", "vmSize": "Standard_D2s_v5", "count": 1})
    );
    let mps = support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "MachinePool");
    assert!(
        mps.get_opt("z1-pool0").await.unwrap().is_none(),
        "the System pool's MachinePool is gone"
    );
    for kind in [
        "AzureManagedCluster",
        "AzureManagedControlPlane",
        "AzureManagedMachinePool",
    ] {
        let left = capz(kind).list(&Default::default()).await.unwrap();
        assert!(left.items.is_empty(), "{kind} left");
    }
    // CAPZ's ASO objects go with CAPZ's objects, each still saying skip as it goes.
    let managed = aso_api("containerservice.azure.com/v1api20240901", "ManagedCluster");
    let going = eventually(
        "CAPZ's ManagedCluster object deleted",
        Duration::from_secs(60),
        || async {
            let m = managed.get("z1").await.ok()?;
            m.metadata.deletion_timestamp.is_some().then_some(m)
        },
    )
    .await;
    assert_eq!(
        going.metadata.annotations.unwrap()["serviceoperator.azure.com/reconcile-policy"],
        "skip"
    );
    managed
        .patch(
            "z1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    for (api_version, kind, name, owner, _) in &aso {
        let api = aso_api(api_version, kind);
        if owner.is_some() {
            eventually(
                &format!("{kind} {name} collected"),
                Duration::from_secs(60),
                || async { api.get_opt(name).await.unwrap().is_none().then_some(()) },
            )
            .await;
        } else {
            assert!(
                api.get_opt(name).await.unwrap().is_some(),
                "the user's own {kind} stays"
            );
        }
    }
    let owners = secrets
        .get("z1-kubeconfig")
        .await
        .unwrap()
        .metadata
        .owner_references
        .unwrap_or_default();
    assert!(
        owners
            .iter()
            .any(|o| o.kind == "AKSControlPlane" && o.controller == Some(true)),
        "{owners:?}"
    );

    // Ours manages it: the System pool to two nodes through the control plane, the User pool to
    // three through its MachinePool, then the Cluster deleted.
    support::api(
        &client,
        NS,
        "controlplane.cluster.x-k8s.io",
        "v1alpha1",
        "AKSControlPlane",
    )
    .patch(
        "z1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"aks": {"systemPool": {"count": 2}}}})),
    )
    .await
    .unwrap();
    mps.patch(
        "z1-pool1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    let ours = support::api(&client, NS, INFRA, "v1alpha1", "AKSMachinePool");
    eventually(
        "the System pool at two nodes and the User pool at three, Ready",
        Duration::from_secs(240),
        || async {
            let c = get(&api, &cluster_path()).await?;
            let count = |name: &str| {
                c["properties"]["agentPoolProfiles"]
                    .as_array()?
                    .iter()
                    .find(|p| p["name"] == name)?["count"]
                    .as_i64()
            };
            let p = ours.get("z1-pool1").await.ok()?;
            let ready = condition(&p, "Ready")?["status"] == "True";
            (ready && count("pool0")? == 2 && count("pool1")? == 3).then_some(())
        },
    )
    .await;
    support::api(&client, NS, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("z1", &Default::default())
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
