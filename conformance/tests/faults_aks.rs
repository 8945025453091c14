//! The AKS provider holds every oracle of the fault suite, run as for EKS
//! (`tests/faults_eks.rs`): `conformance faults --profile provider-azure/conformance.yaml`, 20
//! seeded SIGKILLs over create, upgrade, scale and delete, a kube-apiserver restart after an
//! etcd compaction, cloud 429s, 503s, dropped connections and 20-second answers, a fifth of its
//! updates answered 409, two replicas, an agent pool and then the whole managed cluster deleted behind
//! its back, under its generated RBAC with trace logs searched for its service principal's secret.

mod support;

#[test]
fn the_aks_provider_holds_every_fault_oracle() {
    support::holds_every_fault_oracle(
        "aks",
        "provider-azure/conformance.yaml",
        &["provider-azure", "emulator"],
        "-p provider-azure -p emulators",
    );
}
