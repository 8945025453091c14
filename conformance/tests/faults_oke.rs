//! The OKE provider holds every oracle of the fault suite, run as for EKS
//! (`tests/faults_eks.rs`): `conformance faults --profile provider-oci/conformance.yaml`, 20
//! seeded SIGKILLs over create, upgrade, scale and delete, a kube-apiserver restart after an
//! etcd compaction, cloud 429s, 503s, dropped connections and 20-second answers, a fifth of its
//! updates answered 409, two replicas, a node pool and then the whole OKE cluster deleted behind
//! its back, under its generated RBAC with trace logs searched for a line of its API key.

mod support;

#[test]
fn the_oke_provider_holds_every_fault_oracle() {
    support::holds_every_fault_oracle(
        "oke",
        "provider-oci/conformance.yaml",
        &["provider-oci", "emulator"],
        "-p provider-oci -p emulators",
    );
}
