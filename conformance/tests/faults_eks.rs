//! The EKS provider holds every oracle of the fault suite for a seeded plan of 20 SIGKILLs over
//! create, upgrade, scale and delete, a kube-apiserver restart after an etcd compaction, cloud
//! 429s, 503s, dropped connections and 20-second answers, a fifth of its updates answered 409
//! Conflict, two replicas of which only the Lease's holder may write, and a node group, then the
//! whole EKS cluster, deleted behind its back, running under its generated RBAC with trace logs
//! searched for its secrets: `conformance faults --profile provider-aws/conformance.yaml`, exactly as a provider maintainer
//! runs it. CI watches the settled cluster for 30 s (the full two minutes by hand).

mod support;

#[test]
fn the_eks_provider_holds_every_fault_oracle() {
    support::holds_every_fault_oracle(
        "eks",
        "provider-aws/conformance.yaml",
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
}
