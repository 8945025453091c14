//! Bad input is rejected at admission by the real kube-apiserver, with a message that names the
//! field: the shared corpus of `contract::corpus` and Kubernetes' own label cases replayed
//! against the AKS CRDs (the runner is `test_support::admission`), plus what only AKS refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::Role;
use serde_json::{Value, json};
use test_support::admission::{Kinds, every_bad_object_is_rejected_and_good_ones_are_admitted};
use testbed::{ManagementPlane, Options};

/// The smallest valid spec of each kind; corpus specs are merged over it.
fn base(role: Role) -> Value {
    match role {
        Role::InfraCluster => json!({
            "region": "eastus",
            "aks": {"subscriptionID": "00000000-0000-4000-8000-000000000001", "resourceGroup": "rg-1"}
        }),
        Role::ControlPlane => json!({"version": "v1.31"}),
        Role::MachinePool => json!({"machineType": "Standard_D2s_v5"}),
    }
}

/// What only AKS refuses, with the message each must produce.
const AKS_BAD: &[(Role, &str, &str)] = &[
    (
        Role::InfraCluster,
        r#"{"aks":{"subscriptionID":"not-a-guid-not-a-guid-not-a-guid-xx"}}"#,
        "spec.aks.subscriptionID must be an Azure subscription id",
    ),
    (
        Role::InfraCluster,
        r#"{"aks":{"resourceGroup":"ends-with-a-dot."}}"#,
        "spec.aks.resourceGroup must be 1 to 90",
    ),
    (
        Role::InfraCluster,
        r#"{"aks":{"subscriptionID":"00000000-0000-4000-8000-000000000001","resourceGroup":null}}"#,
        "spec.aks.resourceGroup is required on AKS unless spec.network.subnetIDs",
    ),
    (
        Role::InfraCluster,
        r#"{"aks":{"zones":["4"]}}"#,
        "spec.aks.zones are Azure availability zones",
    ),
    (
        Role::InfraCluster,
        r#"{"additionalTags":{"a/b":"x"}}"#,
        "spec.additionalTags become Azure tags on AKS",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"subnetIDs":["nodes"]}}"#,
        "spec.network.subnetIDs must hold a subnet's ARM id on AKS",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"vnet-1","subnetIDs":["/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v/subnets/n"]}}"#,
        "spec.network.id must be a virtual network's ARM id on AKS",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"cidrBlock":"10.0.0.0/26"}}"#,
        "spec.network.cidrBlock must be an IPv4 block from /8 to /24 on AKS",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"-starts-with-a-dash"}"#,
        "spec.cloudName must be a valid AKS cluster name",
    ),
    (
        Role::ControlPlane,
        r#"{"logging":{"apiServer":true}}"#,
        "spec.logging is not supported on AKS yet",
    ),
    (
        Role::ControlPlane,
        r#"{"addons":[{"name":"azurepolicy"}]}"#,
        "spec.addons is not supported on AKS yet",
    ),
    (
        Role::ControlPlane,
        r#"{"encryption":{"kmsKeyID":"projects/p/locations/l/keyRings/r/cryptoKeys/k"}}"#,
        "spec.encryption.kmsKeyID must be an Azure Key Vault key",
    ),
    (
        Role::ControlPlane,
        r#"{"endpointAccess":{"public":true,"private":true}}"#,
        "spec.endpointAccess on AKS is either public or private",
    ),
    (
        Role::ControlPlane,
        r#"{"endpointAccess":{"public":false,"private":true,"publicCIDRs":["203.0.113.0/24"]}}"#,
        "spec.endpointAccess.publicCIDRs needs the public endpoint on AKS",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"sku":"Gold"}}"#,
        "spec.aks.sku",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"networkPlugin":"flannel"}}"#,
        "spec.aks.networkPlugin",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"networkPlugin":"kubenet","networkPolicy":"azure"}}"#,
        "spec.aks.networkPolicy azure is not supported with spec.aks.networkPlugin kubenet on AKS",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"networkPlugin":"kubenet","networkPolicy":"cilium"}}"#,
        "spec.aks.networkPolicy cilium needs spec.aks.networkPlugin azure on AKS",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"dnsPrefix":"bad_prefix"}}"#,
        "spec.aks.dnsPrefix must be 1 to 54",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"systemPool":{"count":0}}}"#,
        "spec.aks.systemPool.count",
    ),
    (
        Role::ControlPlane,
        r#"{"aks":{"systemPool":{"name":"System-1"}}}"#,
        "spec.aks.systemPool.name",
    ),
    (
        Role::MachinePool,
        r#"{"subnetIDs":["a","b"]}"#,
        "spec.subnetIDs takes one subnet on AKS",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxSurge":"fifty"}}"#,
        "spec.update.maxSurge must be a number of nodes or a percentage",
    ),
    (
        Role::MachinePool,
        r#"{"diskSizeGB":10}"#,
        "spec.diskSizeGB must be from 30 to 2048 on AKS",
    ),
    (
        Role::MachinePool,
        r#"{"image":"COS_CONTAINERD"}"#,
        "spec.image is the AKS node OS SKU on AKS",
    ),
    (
        Role::MachinePool,
        r#"{"cloudName":"pool-1"}"#,
        "spec.cloudName must be a valid AKS node pool name",
    ),
    (
        Role::MachinePool,
        r#"{"aks":{"mode":"Infra"}}"#,
        "spec.aks.mode",
    ),
    // spec.adoption.id of another form, or of another resource than spec.cloudName.
    (
        Role::ControlPlane,
        r#"{"adoption":{"id":"prod"}}"#,
        "spec.adoption.id must be an AKS resource ID on AKS",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"prod","adoption":{"id":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/other"}}"#,
        "spec.adoption.id must be the resource ID of the cluster spec.cloudName names",
    ),
    (
        Role::MachinePool,
        r#"{"adoption":{"id":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"}}"#,
        "spec.adoption.id must be an AKS agent pool resource ID on AKS",
    ),
];

#[tokio::test]
async fn every_bad_object_is_rejected_with_its_message_and_good_ones_are_admitted() {
    let plane = ManagementPlane::start(Options {
        capi: false,
        controller_manager: false,
        ..Options::default()
    })
    .await
    .unwrap();
    plane
        .install_crds(&provider_azure::api::crds())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();
    let kinds = Kinds {
        cloud: "AKS",
        infra_cluster: "AKSCluster",
        control_plane: "AKSControlPlane",
        machine_pool: "AKSMachinePool",
        base,
        own: AKS_BAD,
        own_updates: &[(
            Role::ControlPlane,
            r#"{"aks":{"systemPool":{"name":"pool0"}}}"#,
            r#"{"aks":{"systemPool":{"name":"pool1"}}}"#,
            "spec.aks.systemPool.name is immutable",
        )],
        // Azure takes Kubernetes' own label and taint keys as they are.
        long_keys: None,
        no_taints: None,
    };
    every_bad_object_is_rejected_and_good_ones_are_admitted(&client, &kinds).await;
    // Identities of the right form (and, where the spec names the resource, of that resource).
    kinds
        .admits(&client, Role::ControlPlane, "adopting-0", &json!({"cloudName":"prod","adoption":{"id":"/subscriptions/s/resourcegroups/rg/providers/Microsoft.ContainerService/managedClusters/Prod"}}), "an AKS resource ID (ARM IDs are case-insensitive)")
        .await;
    kinds
        .admits(&client, Role::MachinePool, "adopting-1", &json!({"cloudName":"pool1","adoption":{"id":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod/agentPools/pool1"}}), "an AKS agent pool ID")
        .await;

    plane.stop().await;
}
