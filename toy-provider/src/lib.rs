//! A toy managed-Kubernetes provider for Cluster API, with its toy cloud: the fixture that shows
//! each conformance check can fail.
//!
//! With no break set it follows the v1beta2 contract for managed Kubernetes (the conformance suite
//! must pass on it); each [`breaks::Break`] violates one rule. It shares no code with the real
//! providers of this workspace, so the suite is shown to judge a provider that is not ours.
//!
//! - [`release`]: the clusterctl release (metadata, components, templates).
//! - [`cloud`]: the toy cloud (clusters, pools, instances; Nodes in a workload API server).
//! - [`controller`]: the provider's controller.

pub mod api;
pub mod breaks;
pub mod cloud;
pub mod cloud_client;
pub mod controller;
pub mod release;

/// API group of ToyCluster and ToyMachinePool (and their templates).
pub const INFRA_GROUP: &str = "infrastructure.cluster.x-k8s.io";
/// API group of ToyControlPlane (and its template).
pub const CP_GROUP: &str = "controlplane.cluster.x-k8s.io";
/// The toy's only API version.
pub const VERSION: &str = "v1alpha1";
