//! Bad input is rejected at admission by the real kube-apiserver, with a message that names the
//! field: the shared corpus of `contract::corpus` and Kubernetes' own label cases replayed
//! against the EKS CRDs (the runner is `test_support::admission`), plus what only EKS refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::Role;
use serde_json::{Value, json};
use test_support::admission::{Kinds, every_bad_object_is_rejected_and_good_ones_are_admitted};
use testbed::{ManagementPlane, Options};

/// The smallest valid spec of each kind; corpus specs are merged over it.
fn base(role: Role) -> Value {
    match role {
        Role::InfraCluster => json!({"region": "us-west-2"}),
        Role::ControlPlane => {
            json!({"version": "v1.31", "eks": {"roleARN": "arn:aws:iam::123456789012:role/eks-cluster"}})
        }
        Role::MachinePool => {
            json!({"machineType": "t3.medium", "eks": {"nodeRoleARN": "arn:aws:iam::123456789012:role/eks-nodes"}})
        }
    }
}

/// What only EKS refuses, with the message each must produce.
const EKS_BAD: &[(Role, &str, &str)] = &[
    (
        Role::ControlPlane,
        r#"{"eks":{"roleARN":"eks-cluster-role-without-arn"}}"#,
        "spec.eks.roleARN must be an IAM role ARN",
    ),
    (
        Role::ControlPlane,
        r#"{"eks":{"roleARN":null}}"#,
        "spec.eks.roleARN is required",
    ),
    (
        Role::MachinePool,
        r#"{"eks":{"nodeRoleARN":null}}"#,
        "spec.eks.nodeRoleARN is required",
    ),
    (
        Role::ControlPlane,
        r#"{"eks":{"roleARN":"arn:aws:iam::123456789012:role/x","serviceCIDR":"10.100.0.0"}}"#,
        "spec.eks.serviceCIDR must be a CIDR block",
    ),
    (
        Role::MachinePool,
        r#"{"eks":{"nodeRoleARN":"nodes"}}"#,
        "spec.eks.nodeRoleARN must be an IAM role ARN",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxSurge":1}}"#,
        "maxSurge",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}"#,
        "spec.cloudName must be a valid EKS cluster name: 1 to 100 characters",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"team.prod"}"#,
        "spec.cloudName must be a valid EKS cluster name",
    ),
    (
        Role::MachinePool,
        r#"{"cloudName":"_pool"}"#,
        "spec.cloudName must be a valid EKS node group name",
    ),
    (
        Role::MachinePool,
        r#"{"labels":{"example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk":"x"}}"#,
        "spec.labels keys must be at most 63 characters on EKS",
    ),
    (
        Role::MachinePool,
        r#"{"taints":[{"key":"example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk","effect":"NoSchedule"}]}"#,
        "spec.taints[].key must be at most 63 characters on EKS",
    ),
    // spec.adoption.id of another form, or of another resource than spec.cloudName.
    (
        Role::ControlPlane,
        r#"{"adoption":{"id":"prod"}}"#,
        "spec.adoption.id must be an EKS cluster ARN on EKS",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"prod","adoption":{"id":"arn:aws:eks:us-west-2:123456789012:cluster/other"}}"#,
        "spec.adoption.id must be the ARN of the cluster spec.cloudName names",
    ),
    (
        Role::ControlPlane,
        r#"{"infrastructure":{"region":"us-east-1"},"adoption":{"id":"arn:aws:eks:us-west-2:123456789012:cluster/prod"}}"#,
        "spec.adoption.id names a cluster in another region than spec.infrastructure.region",
    ),
    (
        Role::MachinePool,
        r#"{"adoption":{"id":"arn:aws:eks:us-west-2:123456789012:cluster/prod"}}"#,
        "spec.adoption.id must be an EKS node group ARN on EKS",
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
        .install_crds(&provider_aws::api::crds())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();
    let kinds = Kinds {
        cloud: "EKS",
        infra_cluster: "EKSCluster",
        control_plane: "EKSControlPlane",
        machine_pool: "EKSMachinePool",
        base,
        own: EKS_BAD,
        own_updates: &[],
        long_keys: Some((
            "spec.labels keys must be at most 63 characters on EKS",
            "spec.taints[].key must be at most 63 characters on EKS",
        )),
        no_taints: None,
    };
    every_bad_object_is_rejected_and_good_ones_are_admitted(&client, &kinds).await;
    // Identities of the right form (and, where the spec names the resource, of that resource).
    kinds
        .admits(&client, Role::ControlPlane, "adopting-0", &json!({"cloudName":"prod","adoption":{"id":"arn:aws:eks:us-west-2:123456789012:cluster/prod","accept":true},"deletionPolicy":"Orphan"}), "an EKS cluster ARN")
        .await;
    // What is being adopted keeps its roles: none needs naming.
    kinds
        .admits(
            &client,
            Role::ControlPlane,
            "adopting-2",
            &json!({"cloudName":"prod","eks":{"roleARN":null},"adoption":{}}),
            "an adoption without spec.eks.roleARN",
        )
        .await;
    kinds
        .admits(
            &client,
            Role::MachinePool,
            "adopting-3",
            &json!({"cloudName":"ng","eks":{"nodeRoleARN":null},"adoption":{}}),
            "an adoption without spec.eks.nodeRoleARN",
        )
        .await;
    kinds
        .admits(&client, Role::MachinePool, "adopting-1", &json!({"cloudName":"ng","adoption":{"id":"arn:aws:eks:us-west-2:123456789012:nodegroup/prod/ng/0ac5e1f4-7f2b-4f0e-9c0e-3d1f2e3a4b5c"}}), "an EKS node group ARN")
        .await;

    plane.stop().await;
}
