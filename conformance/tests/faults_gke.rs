//! The GKE provider holds every oracle of the fault suite, run as for EKS
//! (`tests/faults_eks.rs`): `conformance faults --profile provider-gcp/conformance.yaml`, 20
//! seeded SIGKILLs over create, upgrade, scale and delete, a kube-apiserver restart after an
//! etcd compaction, cloud 429s, 503s, dropped connections and 20-second answers, a fifth of its
//! updates answered 409, two replicas, a node pool and then the whole GKE cluster deleted behind
//! its back, under its generated RBAC with trace logs searched for a line of its key.

mod support;

#[test]
fn the_gke_provider_holds_every_fault_oracle() {
    support::holds_every_fault_oracle(
        "gke",
        "provider-gcp/conformance.yaml",
        &["provider-gcp", "emulator"],
        "-p provider-gcp -p emulators",
    );
}
