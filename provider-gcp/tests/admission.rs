//! Bad input is rejected at admission by the real kube-apiserver, with a message that names the
//! field: the shared corpus of `contract::corpus` and Kubernetes' own label cases replayed
//! against the GKE CRDs (the runner is `test_support::admission`), plus what only GKE refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::Role;
use serde_json::{Value, json};
use test_support::admission::{Kinds, every_bad_object_is_rejected_and_good_ones_are_admitted};
use testbed::{ManagementPlane, Options};

/// The smallest valid spec of each kind; corpus specs are merged over it.
fn base(role: Role) -> Value {
    match role {
        Role::InfraCluster => {
            json!({"region": "us-central1", "gke": {"project": "capi-project-1"}})
        }
        Role::ControlPlane => json!({"version": "v1.31"}),
        Role::MachinePool => json!({"machineType": "e2-standard-2"}),
    }
}

/// What only GKE refuses, with the message each must produce.
const GKE_BAD: &[(Role, &str, &str)] = &[
    (
        Role::InfraCluster,
        r#"{"gke":{"project":"Bad_Project"}}"#,
        "spec.gke.project must be a Google Cloud project id",
    ),
    (
        Role::InfraCluster,
        r#"{"additionalTags":{"Team":"x"}}"#,
        "spec.additionalTags become Google Cloud labels on GKE",
    ),
    (
        Role::InfraCluster,
        r#"{"additionalTags":{"team":"Platform Team"}}"#,
        "spec.additionalTags become Google Cloud labels on GKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"vpc","subnetIDs":["a","b"]}}"#,
        "spec.network.subnetIDs takes one subnetwork on GKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"subnetIDs":["a"]}}"#,
        "spec.network.id (the VPC network) must be set with spec.network.subnetIDs on GKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"cidrBlock":"10.0.0.0/26"}}"#,
        "spec.network.cidrBlock must be an IPv4 block from /8 to /24 on GKE",
    ),
    // A zone of another region, and a name that only starts like one of this region's.
    (
        Role::InfraCluster,
        r#"{"gke":{"project":"capi-project-1","zones":["us-central1-a","europe-west1-b"]}}"#,
        "spec.gke.zones must be zones of spec.region on GKE",
    ),
    (
        Role::InfraCluster,
        r#"{"gke":{"project":"capi-project-1","zones":["us-central1-ab"]}}"#,
        "spec.gke.zones must be zones of spec.region on GKE",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"cccccccccccccccccccccccccccccccccccccccccc"}"#,
        "spec.cloudName must be a valid GKE cluster name",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"Team-Prod"}"#,
        "spec.cloudName must be a valid GKE cluster name",
    ),
    (
        Role::ControlPlane,
        r#"{"logging":{"authenticator":true}}"#,
        "spec.logging.authenticator is not supported on GKE",
    ),
    (
        Role::ControlPlane,
        r#"{"addons":[{"name":"coredns"}]}"#,
        "spec.addons is not supported on GKE yet",
    ),
    (
        Role::ControlPlane,
        r#"{"encryption":{"kmsKeyID":"arn:aws:kms:us-west-2:123456789012:key/abc"}}"#,
        "spec.encryption.kmsKeyID must be a Cloud KMS key on GKE",
    ),
    (
        Role::ControlPlane,
        r#"{"endpointAccess":{"public":false,"private":true,"publicCIDRs":["203.0.113.0/24"]}}"#,
        "spec.endpointAccess.publicCIDRs needs spec.endpointAccess.public on GKE",
    ),
    (
        Role::ControlPlane,
        r#"{"gke":{"workloadIdentityPool":"my-pool.example.com"}}"#,
        "spec.gke.workloadIdentityPool must be <project>.svc.id.goog",
    ),
    (
        Role::ControlPlane,
        r#"{"gke":{"authorizedNetworks":[{"cidrBlock":"10.0.0.300/8"}]}}"#,
        "spec.gke.authorizedNetworks[].cidrBlock must be a CIDR block",
    ),
    (
        Role::ControlPlane,
        r#"{"gke":{"releaseChannel":"Nightly"}}"#,
        "spec.gke.releaseChannel",
    ),
    (
        Role::MachinePool,
        r#"{"subnetIDs":["nodes"]}"#,
        "spec.subnetIDs is not supported on GKE",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxSurge":"50%"}}"#,
        "spec.update.maxSurge must be a number of nodes on GKE",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxSurge":0,"maxUnavailable":0}}"#,
        "cannot both be 0 on GKE",
    ),
    (
        Role::MachinePool,
        r#"{"diskSizeGB":5}"#,
        "spec.diskSizeGB must be at least 10 on GKE",
    ),
    (
        Role::MachinePool,
        r#"{"image":"AL2_x86_64"}"#,
        "spec.image is the GKE node image type on GKE",
    ),
    (
        Role::MachinePool,
        r#"{"cloudName":"pool_1"}"#,
        "spec.cloudName must be a valid GKE node pool name",
    ),
    // spec.adoption.id of another form, or of another resource than spec.cloudName.
    (
        Role::ControlPlane,
        r#"{"adoption":{"id":"prod"}}"#,
        "spec.adoption.id must be a GKE cluster on GKE",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"prod","adoption":{"id":"projects/p/locations/us-central1/clusters/other"}}"#,
        "spec.adoption.id must name the cluster spec.cloudName names",
    ),
    (
        Role::MachinePool,
        r#"{"adoption":{"id":"projects/p/locations/us-central1/clusters/prod"}}"#,
        "spec.adoption.id must be a GKE node pool on GKE",
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
        .install_crds(&provider_gcp::api::crds())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();
    let kinds = Kinds {
        cloud: "GKE",
        infra_cluster: "GKECluster",
        control_plane: "GKEControlPlane",
        machine_pool: "GKEMachinePool",
        base,
        own: GKE_BAD,
        own_updates: &[],
        // GKE takes Kubernetes' own label and taint keys as they are.
        long_keys: None,
        no_taints: None,
    };
    every_bad_object_is_rejected_and_good_ones_are_admitted(&client, &kinds).await;
    // Identities of the right form (and, where the spec names the resource, of that resource).
    kinds
        .admits(&client, Role::ControlPlane, "adopting-0", &json!({"cloudName":"prod","adoption":{"id":"https://container.googleapis.com/v1/projects/p/locations/us-central1/clusters/prod"}}), "a GKE self link")
        .await;
    kinds
        .admits(&client, Role::MachinePool, "adopting-1", &json!({"adoption":{"id":"projects/p/locations/us-central1/clusters/prod/nodePools/pool-1"}}), "a GKE node pool name")
        .await;

    // Zones of the cluster's region are admitted.
    let zoned =
        json!({"gke": {"project": "capi-project-1", "zones": ["us-central1-a", "us-central1-f"]}});
    kinds
        .api(&client, Role::InfraCluster)
        .create(
            &kube::api::PostParams::default(),
            &kinds.object(Role::InfraCluster, "zoned", &zoned),
        )
        .await
        .expect("zones of the cluster's region are admitted");
    plane.stop().await;
}
