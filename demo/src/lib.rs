//! The local default, wired: a real management plane (etcd, kube-apiserver,
//! kube-controller-manager, Cluster API core), moto and our EKS emulator with real workload API
//! servers, and the `provider-aws` binary pointed at them — for the demo and the end-to-end tests.

pub mod bench;
pub mod env;
pub mod peer;
pub mod progress;
