//! CAPZ Clusters moved to ours on the AKS emulator, from both of CAPZ's kinds. CAPZ does not run
//! here (both its AKS paths go through Azure Service Operator, whose identity library insists on
//! Azure's own hosts): its CRDs come from its released module (v1.26.0), its objects are written
//! as its AKS templates render them (with Entra ID on), and each cluster with its System pool
//! `pool0` and User pool `pool1` is made in the emulator over ARM as CAPZ makes it (its tags).
//! Beside them, the Azure Service Operator objects CAPZ controls: ASO builds its CRDs at release
//! time and none is in its Go module, so these three kinds are declared here with their real
//! groups and versions and an open schema; no ASO controller runs, and the test checks what one
//! would act on: each of CAPZ's ASO objects says `reconcile-policy: skip` before it is deleted.
//!
//! The moves are proven from the cloud's side: the same cluster (its API server's name, which
//! AKS draws at random on create), no delete call, our tag beside CAPZ's; the System pool kept by
//! the control plane by its name, its MachinePool gone and its nodes untouched; then ours resizes
//! both pools of the first and deletes both clusters.

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
/// The Entra group made the clusters' admins.
const ADMINS: &str = "00000000-0000-4000-8000-0000000000a1";

fn cluster_path() -> String {
    path_of(GROUP, AKS_NAME)
}

fn path_of(group: &str, name: &str) -> String {
    format!("/resourceGroups/{group}/providers/Microsoft.ContainerService/managedClusters/{name}")
}

/// What CAPZ makes in Azure for Cluster `name`: the network (10.`octet`.0.0/16, subnet `nodes`)
/// in resource group `group`, then the cluster with Entra ID and its System pool `pool0`, then
/// the User pool `pool1` (two nodes), tagged as CAPZ tags them. The cluster as made, and the
/// subnet's ID.
async fn make_cluster(api: &ArmApi, group: &str, name: &str, octet: u8) -> (Value, String) {
    let net = create_network(api, group, AZURE_LOCATION, name, octet)
        .await
        .unwrap();
    let path = path_of(group, name);
    let tags = json!({format!("sigs.k8s.io_cluster-api-provider-azure_cluster_{name}"): "owned",
                      "sigs.k8s.io_cluster-api-provider-azure_role": "common", "Name": name});
    let body = json!({
        "location": AZURE_LOCATION, "tags": tags, "identity": {"type": "SystemAssigned"},
        "properties": {"kubernetesVersion": "1.32", "dnsPrefix": name,
            "aadProfile": {"managed": true, "enableAzureRBAC": true, "adminGroupObjectIDs": [ADMINS]},
            "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay"},
            "agentPoolProfiles": [{"name": "pool0", "mode": "System", "count": 1,
                "vmSize": "Standard_D2s_v5", "osType": "Linux", "type": "VirtualMachineScaleSets",
                "vnetSubnetID": net.subnet_id}]}});
    api.ok(Method::PUT, &path, CONTAINER, Some(&body))
        .await
        .unwrap();
    let succeeded = |path: String| async move {
        let v = get(api, &path).await?;
        (v["properties"]["provisioningState"] == "Succeeded").then_some(v)
    };
    eventually("CAPZ's cluster", Duration::from_secs(180), || {
        succeeded(path.clone())
    })
    .await;
    let pool = json!({"properties": {"mode": "User", "count": 2, "vmSize": "Standard_D2s_v5",
        "osType": "Linux", "type": "VirtualMachineScaleSets", "vnetSubnetID": net.subnet_id}});
    let pool_path = format!("{path}/agentPools/pool1");
    api.ok(Method::PUT, &pool_path, CONTAINER, Some(&pool))
        .await
        .unwrap();
    eventually("CAPZ's User pool", Duration::from_secs(180), || {
        succeeded(pool_path.clone())
    })
    .await;
    (get(api, &path).await.unwrap(), net.subnet_id)
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
    crds.extend(support::managed_crds(support::CAPZ, "azureaso"));
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

    let api = env.aks().unwrap().api();
    let (made, _) = make_cluster(&api, GROUP, AKS_NAME, 60).await;
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
                 "aadProfile": {"managed": true, "adminGroupObjectIDs": [ADMINS]},
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
    let owner = support::controller_of(&format!("{INFRA}/v1beta1"), &amcp);
    for name in ["z1-kubeconfig", "z1-kubeconfig-user"] {
        support::peer_secret(&client, NS, name, "z1", json!([owner])).await;
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
    aso_kinds(&env, &client, &kubeconfig).await;
    env.stop().await;
}

/// The same move from CAPZ's `AzureASOManaged*` kinds, whose specs hold the Azure Service
/// Operator objects as CAPZ's `cluster-template-aks-aso.yaml` renders them (with Entra ID on
/// and the pools on a brought subnet): the subscription is read from the live ManagedCluster
/// object's `status.id`, and the kubeconfig Secret ASO wrote (owned by that object) survives the
/// objects' garbage collection as ours.
async fn aso_kinds(env: &Environment, client: &kube::Client, kubeconfig: &std::path::Path) {
    let api = env.aks().unwrap().api();
    let group = "rg-z2";
    let (made, subnet) = make_cluster(&api, group, "z2", 61).await;
    let version = made["properties"]["currentKubernetesVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let id = made["id"].as_str().unwrap().to_string();
    let create = |obj: Value| support::create(client, NS, obj);
    let container = "containerservice.azure.com/v1api20240901";
    let annotations = json!({"serviceoperator.azure.com/credential-from": "aso-credential"});
    let managed_cluster = json!({"apiVersion": container, "kind": "ManagedCluster",
        "metadata": {"name": "z2", "annotations": annotations},
        "spec": {"dnsPrefix": "z2", "identity": {"type": "SystemAssigned"}, "location": AZURE_LOCATION,
                 "networkProfile": {"networkPlugin": "azure"}, "owner": {"name": group},
                 "servicePrincipalProfile": {"clientId": "msi"},
                 "aadProfile": {"managed": true, "enableAzureRBAC": true, "adminGroupObjectIDs": [ADMINS]}}});
    let resource_group = json!({"apiVersion": "resources.azure.com/v1api20200601", "kind": "ResourceGroup",
        "metadata": {"name": group, "annotations": annotations}, "spec": {"location": AZURE_LOCATION}});
    let agent_pool = |pool: &str, mode: &str| {
        json!({"apiVersion": container, "kind": "ManagedClustersAgentPool",
            "metadata": {"name": format!("z2-{pool}"), "annotations": annotations},
            "spec": {"azureName": pool, "mode": mode, "owner": {"name": "z2"},
                     "type": "VirtualMachineScaleSets", "vmSize": "Standard_D2s_v5",
                     "vnetSubnetReference": {"armId": subnet}}})
    };
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureASOManagedCluster",
        "metadata": {"name": "z2", "namespace": NS}, "spec": {"resources": [resource_group]}}),
    )
    .await;
    create(
        json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureASOManagedControlPlane",
        "metadata": {"name": "z2", "namespace": NS},
        "spec": {"version": format!("v{version}"), "resources": [managed_cluster]}}),
    )
    .await;
    for (pool, mode) in [("pool0", "System"), ("pool1", "User")] {
        create(
            json!({"apiVersion": format!("{INFRA}/v1beta1"), "kind": "AzureASOManagedMachinePool",
            "metadata": {"name": format!("z2-{pool}"), "namespace": NS},
            "spec": {"resources": [agent_pool(pool, mode)]}}),
        )
        .await;
    }
    create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "z2", "namespace": NS},
        "spec": {"infrastructureRef": {"apiGroup": INFRA, "kind": "AzureASOManagedCluster", "name": "z2"},
                 "controlPlaneRef": {"apiGroup": INFRA, "kind": "AzureASOManagedControlPlane", "name": "z2"}}}))
    .await;
    for (pool, replicas) in [("pool0", 1), ("pool1", 2)] {
        create(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": format!("z2-{pool}"), "namespace": NS},
            "spec": {"clusterName": "z2", "replicas": replicas, "template": {"spec": {
                "clusterName": "z2", "version": format!("v{version}"), "bootstrap": {"dataSecretName": ""},
                "infrastructureRef": {"apiGroup": INFRA, "kind": "AzureASOManagedMachinePool", "name": format!("z2-{pool}")}}}}}))
        .await;
    }
    // The live ASO objects CAPZ applied from those, with what ASO found in Azure.
    let capz = |kind: &str| support::api(client, NS, INFRA, "v1beta1", kind);
    let cp = capz("AzureASOManagedControlPlane").get("z2").await.unwrap();
    let infra = capz("AzureASOManagedCluster").get("z2").await.unwrap();
    let live = |mut obj: Value, owner: &kube::api::DynamicObject, status: Value| {
        obj["metadata"]["namespace"] = json!(NS);
        obj["metadata"]["ownerReferences"] = json!([{
            "apiVersion": format!("{INFRA}/v1beta1"), "kind": owner.types.as_ref().unwrap().kind,
            "name": owner.metadata.name, "uid": owner.metadata.uid, "controller": true}]);
        obj["status"] = status;
        obj
    };
    create(live(managed_cluster, &cp, json!({"id": id}))).await;
    create(live(resource_group, &infra, json!({}))).await;
    for pool in ["pool0", "pool1"] {
        let owner = capz("AzureASOManagedMachinePool")
            .get(&format!("z2-{pool}"))
            .await
            .unwrap();
        let status = json!({"id": format!("{id}/agentPools/{pool}"), "vnetSubnetID": subnet});
        create(live(agent_pool(pool, "User"), &owner, status)).await;
    }
    let managed = support::api(
        client,
        NS,
        "containerservice.azure.com",
        "v1api20240901",
        "ManagedCluster",
    )
    .get("z2")
    .await
    .unwrap();
    // ASO wrote the admin kubeconfig CAPZ asked for and owns it; CAPZ controls it.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let owners = json!([
        {"apiVersion": container, "kind": "ManagedCluster", "name": "z2", "uid": managed.metadata.uid},
        support::controller_of(&format!("{INFRA}/v1beta1"), &cp),
    ]);
    support::peer_secret(client, NS, "z2-kubeconfig", "z2", owners).await;

    let deletes_before = deletes(env);
    let moved = support::run(kubeconfig, NS, &["z2", "--accept"]).await;
    let said = text(&moved);
    assert!(moved.status.success(), "{said}");
    for expected in [
        &format!("AKSControlPlane z2: Planned ({})", id.to_ascii_lowercase()),
        "set 4 Azure Service Operator object(s)",
        "removed MachinePool z2-pool0",
    ] {
        assert!(
            said.to_ascii_lowercase()
                .contains(&expected.to_ascii_lowercase()),
            "{expected}: {said}"
        );
    }
    assert_eq!(deletes(env), deletes_before, "no delete call");
    let cluster = get(&api, &path_of(group, "z2")).await.unwrap();
    assert_eq!(cluster["properties"]["fqdn"], made["properties"]["fqdn"]);
    let (key, value) = contract::naming::ownership_tag("aks", NS, "z2");
    assert_eq!(cluster["tags"][&key], json!(value), "{cluster}");
    let ours = support::api(
        client,
        NS,
        "controlplane.cluster.x-k8s.io",
        "v1alpha1",
        "AKSControlPlane",
    )
    .get("z2")
    .await
    .unwrap();
    assert_eq!(ours.data["spec"]["aks"]["systemPool"]["name"], "pool0");
    let infra = support::api(client, NS, INFRA, "v1alpha1", "AKSCluster")
        .get("z2")
        .await
        .unwrap();
    assert_eq!(infra.data["spec"]["network"]["subnetIDs"], json!([subnet]));
    for kind in [
        "AzureASOManagedCluster",
        "AzureASOManagedControlPlane",
        "AzureASOManagedMachinePool",
    ] {
        assert!(
            capz(kind)
                .list(&Default::default())
                .await
                .unwrap()
                .items
                .is_empty(),
            "{kind} left"
        );
    }
    let managed_api = support::api(
        client,
        NS,
        "containerservice.azure.com",
        "v1api20240901",
        "ManagedCluster",
    );
    eventually(
        "CAPZ's ASO objects collected",
        Duration::from_secs(60),
        || async {
            managed_api
                .get_opt("z2")
                .await
                .unwrap()
                .is_none()
                .then_some(())
        },
    )
    .await;
    let owners = secrets
        .get("z2-kubeconfig")
        .await
        .expect("the kubeconfig Secret outlives ASO's object")
        .metadata
        .owner_references
        .unwrap_or_default();
    assert!(
        owners.len() == 1
            && owners[0].kind == "AKSControlPlane"
            && owners[0].controller == Some(true),
        "{owners:?}"
    );
    support::api(client, NS, "cluster.x-k8s.io", "v1beta2", "Cluster")
        .delete("z2", &Default::default())
        .await
        .unwrap();
    eventually(
        "the cluster deleted by ours",
        Duration::from_secs(300),
        || async {
            get(&api, &path_of(group, "z2"))
                .await
                .is_none()
                .then_some(())
        },
    )
    .await;
}
