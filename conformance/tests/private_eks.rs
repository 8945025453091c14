//! The EKS provider manages a private-only cluster (its endpoint out of the management
//! cluster's reach, Cluster API issue #6520) from the EKS API alone: create, upgrade, scale and
//! delete, with Cluster API core unable to reach the cluster (its RemoteConnectionProbe False,
//! no nodeRef) and every pool's NodesVisible saying what core cannot see:
//! `conformance private --profile provider-aws/conformance.yaml`.

mod support;

#[test]
fn the_eks_provider_manages_a_private_only_cluster_from_the_cloud_api_alone() {
    support::manages_a_private_only_cluster(
        "eks",
        "provider-aws/conformance.yaml",
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
}
