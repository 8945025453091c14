//! The well-known names of the contract: labels, annotations, groups, kinds and versions.
//! Every constant is also re-exported at [`crate::capi`] level.

/// Label core puts on every object of a cluster: `cluster.x-k8s.io/cluster-name=<cluster>`.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Core's Cluster condition that says whether it reaches the workload API server.
pub const REMOTE_CONNECTION_PROBE: &str = "RemoteConnectionProbe";
/// Annotation that pauses reconciliation of the object carrying it.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// Label matched against the controller's `--watch-filter` value.
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// Annotation marking an InfraCluster as managed by something else; the provider must not touch it.
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";
/// Annotation on a MachinePool telling core that something else (the cloud's autoscaler, via the
/// provider) owns `spec.replicas`.
pub const REPLICAS_MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/replicas-managed-by";
/// Label on every object of a provider's components: `cluster.x-k8s.io/provider=infrastructure-<name>`.
pub const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";
/// The `type` of the kubeconfig Secrets core reads.
pub const CLUSTER_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";
/// The API group of core's kinds (`Cluster`, `MachinePool`, …).
pub const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// The API group of InfraCluster and InfraMachinePool kinds.
pub const INFRASTRUCTURE_GROUP: &str = "infrastructure.cluster.x-k8s.io";
/// The API group of ControlPlane kinds.
pub const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";
/// The contract version this library implements.
pub const CONTRACT_VERSION: &str = "v1beta2";
/// The API version of core's objects read here.
pub const CAPI_VERSION: &str = "v1beta2";
/// `apiVersion` of the core objects read here: `cluster.x-k8s.io/v1beta2`.
pub const CAPI_API_VERSION: &str = "cluster.x-k8s.io/v1beta2";
/// Kind of core's Cluster.
pub const CLUSTER_KIND: &str = "Cluster";
/// Kind of core's MachinePool.
pub const MACHINE_POOL_KIND: &str = "MachinePool";
