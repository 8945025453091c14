//! Bad input is rejected at admission by the real kube-apiserver, with a message that names the
//! field: the shared corpus of `contract::corpus` and Kubernetes' own label cases replayed
//! against the OKE CRDs (the runner is `test_support::admission`), plus what only OKE refuses:
//! every taint among them, since OKE's managed node pools have no taints API, and the updates of
//! what OKE sets only when it creates.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::Role;
use serde_json::{Value, json};
use test_support::admission::{Kinds, every_bad_object_is_rejected_and_good_ones_are_admitted};
use testbed::{ManagementPlane, Options};

/// The smallest valid spec of each kind; corpus specs are merged over it.
fn base(role: Role) -> Value {
    match role {
        Role::InfraCluster => json!({
            "region": "us-ashburn-1",
            "oke": {"compartmentID": "ocid1.compartment.oc1..aaaaaaaaexample"}
        }),
        Role::ControlPlane => json!({"version": "v1.31"}),
        Role::MachinePool => json!({"machineType": "VM.Standard2.1"}),
    }
}

/// What OKE refuses with every taint.
const NO_TAINTS: &str = "spec.taints is not supported on OKE";

/// What only OKE refuses, with the message each must produce.
const OKE_BAD: &[(Role, &str, &str)] = &[
    (
        Role::InfraCluster,
        r#"{"oke":{"compartmentID":"compartment-1"}}"#,
        "spec.oke.compartmentID must be a compartment OCID",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"cidrBlock":"10.0.0.0/12"}}"#,
        "spec.network.cidrBlock must be an IPv4 block from /16 to /24 on OKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v","subnetIDs":["subnet-1"]}}"#,
        "spec.network.subnetIDs must hold subnet OCIDs on OKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"vcn-1","subnetIDs":["ocid1.subnet.oc1.iad.s"]}}"#,
        "spec.network.id must be a VCN OCID on OKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"subnetIDs":["ocid1.subnet.oc1.iad.s"]}}"#,
        "spec.network.subnetIDs needs spec.network.id on OKE",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v"}}"#,
        "spec.network.id needs spec.network.subnetIDs on OKE",
    ),
    (
        Role::InfraCluster,
        r#"{"oke":{"compartmentID":"ocid1.compartment.oc1..c","endpointSubnetID":"ocid1.subnet.oc1.iad.e"}}"#,
        "spec.oke.endpointSubnetID is for a brought network",
    ),
    (
        Role::InfraCluster,
        r#"{"additionalTags":{"a-key-of-more-than-one-hundred-characters-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":"x"}}"#,
        "spec.additionalTags become OCI freeform tags on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"-starts-with-a-dash"}"#,
        "spec.cloudName must be a valid OKE cluster name",
    ),
    (
        Role::ControlPlane,
        r#"{"logging":{"audit":true}}"#,
        "spec.logging is not supported on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"addons":[{"name":"CertManager"}]}"#,
        "spec.addons is not supported on OKE yet",
    ),
    (
        Role::ControlPlane,
        r#"{"encryption":{"kmsKeyID":"arn:aws:kms:us-west-2:111122223333:key/k"}}"#,
        "spec.encryption.kmsKeyID must be an OCI Vault key OCID on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"endpointAccess":{"public":true,"publicCIDRs":["203.0.113.0/24"]}}"#,
        "spec.endpointAccess.publicCIDRs is not supported on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"endpointAccess":{"public":false,"private":true,"preferred":"Public"}}"#,
        "spec.endpointAccess.preferred Public needs spec.endpointAccess.public on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"oidcIssuer":{"enabled":true}}"#,
        "spec.oidcIssuer needs spec.oke.clusterType enhanced on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"clusterType":"premium"}}"#,
        "spec.oke.clusterType",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"cniType":"calico"}}"#,
        "spec.oke.cniType",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"podsCIDR":"10.244.0.0/16"}}"#,
        "spec.oke.podsCIDR is for the flannel overlay",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"cniType":"flannel","servicesCIDR":"not-a-block"}}"#,
        "spec.oke.servicesCIDR must be a CIDR block",
    ),
    (
        Role::MachinePool,
        r#"{"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}"#,
        NO_TAINTS,
    ),
    (
        Role::MachinePool,
        r#"{"machineType":"VM.Standard.E4.Flex"}"#,
        "spec.oke.ocpus is required for a flexible shape",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"ocpus":2}}"#,
        "spec.oke.ocpus and spec.oke.memoryGB are only for flexible shapes",
    ),
    (
        Role::MachinePool,
        r#"{"machineType":"VM.Standard.E4.Flex","oke":{"ocpus":2,"memoryGB":200}}"#,
        "spec.oke.memoryGB must be from 1 to 64 GB per OCPU on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"machineType":"VM.Standard.E4.Flex","oke":{"ocpus":4,"memoryGB":2}}"#,
        "spec.oke.memoryGB must be from 1 to 64 GB per OCPU on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"sshPublicKey":"my laptop key"}}"#,
        "spec.oke.sshPublicKey must be one OpenSSH public key on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"sshPublicKey":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"}}"#,
        "spec.oke.sshPublicKey must be one OpenSSH public key on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"sshPublicKey":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA a@b\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ c@d"}}"#,
        "spec.oke.sshPublicKey must be one OpenSSH public key on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"diskSizeGB":20}"#,
        "spec.diskSizeGB must be from 50 to 32768 on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"image":"Oracle-Linux-8.10"}"#,
        "spec.image must be an image OCID on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"subnetIDs":["ocid1.subnet.oc1.iad.a","ocid1.subnet.oc1.iad.b"]}"#,
        "spec.subnetIDs takes one subnet on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"subnetIDs":["subnet-a"]}"#,
        "spec.subnetIDs must hold subnet OCIDs on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxUnavailable":"half"}}"#,
        "spec.update.maxUnavailable must be a number of nodes or a percentage on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"cloudName":"pool-"}"#,
        "spec.cloudName must be a valid OKE node pool name",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"maxPodsPerNode":500}}"#,
        "spec.oke.maxPodsPerNode",
    ),
    // spec.adoption.id of another form, or of another resource than spec.cloudName.
    (
        Role::ControlPlane,
        r#"{"adoption":{"id":"arn:aws:eks:us-west-2:123456789012:cluster/prod"}}"#,
        "spec.adoption.id must be an OKE cluster OCID on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"adoption":{"id":"ocid1.cluster.oc1.iad.aaaaaaaa"}}"#,
        "spec.adoption.id must be an OKE node pool OCID on OKE",
    ),
];

/// The updates OKE refuses: what it sets only when it creates, and the one-way cluster type.
const OKE_BAD_UPDATES: &[(Role, &str, &str, &str)] = &[
    (
        Role::InfraCluster,
        r#"{}"#,
        r#"{"oke":{"compartmentID":"ocid1.compartment.oc1..another"}}"#,
        "spec.oke.compartmentID is immutable",
    ),
    (
        Role::InfraCluster,
        r#"{"oke":{"availabilityDomains":["Uocm:US-ASHBURN-AD-1"]}}"#,
        r#"{"oke":{"availabilityDomains":["Uocm:US-ASHBURN-AD-2"]}}"#,
        "spec.oke.availabilityDomains is immutable",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v","subnetIDs":["ocid1.subnet.oc1.iad.s"]},"oke":{"endpointSubnetID":"ocid1.subnet.oc1.iad.e"}}"#,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v","subnetIDs":["ocid1.subnet.oc1.iad.s"]},"oke":{"endpointSubnetID":"ocid1.subnet.oc1.iad.f"}}"#,
        "spec.oke.endpointSubnetID is immutable",
    ),
    (
        Role::InfraCluster,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v","subnetIDs":["ocid1.subnet.oc1.iad.s"]},"oke":{"serviceLBSubnetIDs":["ocid1.subnet.oc1.iad.l"]}}"#,
        r#"{"network":{"id":"ocid1.vcn.oc1.iad.v","subnetIDs":["ocid1.subnet.oc1.iad.s"]},"oke":{"serviceLBSubnetIDs":["ocid1.subnet.oc1.iad.m"]}}"#,
        "spec.oke.serviceLBSubnetIDs is immutable",
    ),
    (
        Role::ControlPlane,
        r#"{"encryption":{"kmsKeyID":"ocid1.key.oc1.iad.k"}}"#,
        r#"{}"#,
        "spec.encryption is immutable on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"clusterType":"enhanced"}}"#,
        r#"{"oke":{"clusterType":"basic"}}"#,
        "spec.oke.clusterType can go from basic to enhanced only",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"cniType":"flannel"}}"#,
        r#"{"oke":{"cniType":"vcnNative"}}"#,
        "spec.oke.cniType is immutable on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"cniType":"flannel","podsCIDR":"10.244.0.0/16"}}"#,
        r#"{"oke":{"cniType":"flannel","podsCIDR":"10.245.0.0/16"}}"#,
        "spec.oke.podsCIDR is immutable on OKE",
    ),
    (
        Role::ControlPlane,
        r#"{"oke":{"cniType":"flannel","servicesCIDR":"10.96.0.0/16"}}"#,
        r#"{"oke":{"cniType":"flannel","servicesCIDR":"10.97.0.0/16"}}"#,
        "spec.oke.servicesCIDR is immutable on OKE",
    ),
    (
        Role::MachinePool,
        r#"{"spot":true}"#,
        r#"{}"#,
        "spec.spot is immutable on OKE node pools",
    ),
    (
        Role::MachinePool,
        r#"{"oke":{"maxPodsPerNode":31}}"#,
        r#"{"oke":{"maxPodsPerNode":40}}"#,
        "spec.oke.maxPodsPerNode is immutable on OKE",
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
        .install_crds(&provider_oci::api::crds())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();
    let kinds = Kinds {
        cloud: "OKE",
        infra_cluster: "OKECluster",
        control_plane: "OKEControlPlane",
        machine_pool: "OKEMachinePool",
        base,
        own: OKE_BAD,
        own_updates: OKE_BAD_UPDATES,
        // OCI takes Kubernetes' own label keys as they are (initialNodeLabels).
        long_keys: None,
        no_taints: Some(NO_TAINTS),
    };
    every_bad_object_is_rejected_and_good_ones_are_admitted(&client, &kinds).await;
    // Identities of the right form (and, where the spec names the resource, of that resource).
    kinds
        .admits(
            &client,
            Role::ControlPlane,
            "adopting-0",
            &json!({"adoption":{"id":"ocid1.cluster.oc1.iad.aaaaaaaasirhrarnhkud6cp2nkyn"}}),
            "an OKE cluster OCID",
        )
        .await;
    kinds
        .admits(
            &client,
            Role::MachinePool,
            "adopting-1",
            &json!({"adoption":{"id":"ocid1.nodepool.oc1.iad.aaaaaaaa4u2kqv"}}),
            "an OKE node pool OCID",
        )
        .await;

    // A flexible shape's memory within 1 to 64 GB per OCPU, and SSH keys as users paste them
    // (one line, or with the newline a YAML block leaves), are admitted.
    let keys = [
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1c2VyQGV4YW1wbGU user@laptop",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7==\n",
        "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY=",
    ];
    for (i, key) in keys.iter().enumerate() {
        let pool = json!({
            "machineType": "VM.Standard.E4.Flex",
            "oke": {"ocpus": 2, "memoryGB": 2 + 62 * i, "sshPublicKey": key}
        });
        kinds
            .api(&client, Role::MachinePool)
            .create(
                &kube::api::PostParams::default(),
                &kinds.object(Role::MachinePool, &format!("flex-{i}"), &pool),
            )
            .await
            .unwrap_or_else(|e| panic!("{pool} was refused: {e}"));
    }
    plane.stop().await;
}
