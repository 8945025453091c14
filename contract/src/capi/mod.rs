//! Typed views of the Cluster API v1beta2 objects a provider reads, the well-known labels and
//! annotations, and the pure rules built on them (pause, ownership, watch filter, external
//! management).
//!
//! # Read views, never replacements
//! [`Cluster`] and [`MachinePool`] hold **only the fields a provider reads**. Unknown fields are
//! ignored when deserializing, so serializing one of these values back drops everything else
//! the object had. Use them to read, and to build patches (merge or server-side apply of the
//! few fields shown here); **never use them to replace (PUT/update) an object**.
//!
//! Field names follow the v1beta2 API (`cluster.x-k8s.io/v1beta2`) exactly; every field is
//! optional on read so a partially filled object still parses.
//!
//! The [`accessors`] module reads the contract fields of *provider* objects (InfraCluster,
//! ControlPlane, InfraMachinePool) from untyped JSON, naming every path core reads.

pub mod accessors;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference};
use kube::CustomResource;
use serde::{Deserialize, Serialize};

pub use crate::api::FailureDomain;

/// The well-known names of the contract: labels, annotations, groups, kinds and versions.
/// Every constant is also re-exported at [`crate::capi`] level.
pub mod constants {
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
}

pub use constants::*;

/// The spec of core's `Cluster` (`cluster.x-k8s.io/v1beta2`), read view.
///
/// See the [module documentation](self): never use [`Cluster`] to replace an object.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "Cluster",
    namespaced,
    status = "ClusterStatus",
    schema = "disabled",
    derive = "Default",
    derive = "PartialEq",
    doc = "Core's Cluster (cluster.x-k8s.io/v1beta2), read view: only the fields a provider \
           reads. Never use it to replace an object; read it and build patches."
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// `spec.paused`: pauses reconciliation of the Cluster and every object of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// `spec.clusterNetwork`: pod and service ranges and the service domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_network: Option<ClusterNetwork>,
    /// `spec.controlPlaneEndpoint`: copied by core from the first valid source; a user-set value
    /// wins and is never overwritten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ControlPlaneEndpoint>,
    /// `spec.controlPlaneRef`: the ControlPlane object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_ref: Option<ContractVersionedObjectReference>,
    /// `spec.infrastructureRef`: the InfraCluster object; optional for managed clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<ContractVersionedObjectReference>,
}

/// `Cluster.status`, read view.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// `status.initialization`: the contract's provisioning milestones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<ClusterInitialization>,
    /// `status.conditions` (v1beta2 `metav1.Condition`s).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `status.phase`: `Pending`, `Provisioning`, `Provisioned`, `Deleting`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `status.failureDomains`, copied by core from the InfraCluster (v1beta2: a list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<FailureDomain>,
    /// `status.observedGeneration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// `Cluster.status.initialization`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInitialization {
    /// True once the infrastructure is provisioned (or when the Cluster has no infrastructureRef).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// True once the control plane accepts requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

/// `spec.clusterNetwork` of a Cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    /// `apiServerPort`: the port the API server binds to (self-hosted control planes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_port: Option<i32>,
    /// `pods`: ranges pod networks are allocated from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<NetworkRanges>,
    /// `services`: ranges service VIPs are allocated from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<NetworkRanges>,
    /// `serviceDomain`: the DNS domain of services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_domain: Option<String>,
}

/// A list of CIDR blocks (`{cidrBlocks: [...]}`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRanges {
    /// `cidrBlocks`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cidr_blocks: Vec<String>,
}

/// CAPI's `APIEndpoint` as found in `Cluster.spec.controlPlaneEndpoint`: `{host, port}`, both
/// possibly empty on read.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneEndpoint {
    /// The host name or IP address the API server serves on; empty when unset.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// The port the API server serves on; 0 when unset.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub port: i32,
}

fn is_zero(port: &i32) -> bool {
    *port == 0
}

impl ControlPlaneEndpoint {
    /// Valid as CAPI defines it: host non-empty and port non-zero.
    pub fn is_valid(&self) -> bool {
        !self.host.is_empty() && self.port != 0
    }

    /// Both host and port unset.
    pub fn is_zero(&self) -> bool {
        self.host.is_empty() && self.port == 0
    }
}

impl From<&crate::api::ApiEndpoint> for ControlPlaneEndpoint {
    fn from(value: &crate::api::ApiEndpoint) -> Self {
        ControlPlaneEndpoint {
            host: value.host.clone(),
            port: value.port,
        }
    }
}

/// v1beta2 `ContractVersionedObjectReference`: a reference resolved through the contract label
/// on the referenced kind's CRD (hence no version).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct ContractVersionedObjectReference {
    /// `apiGroup`, e.g. `controlplane.cluster.x-k8s.io`.
    #[serde(default)]
    pub api_group: String,
    /// `kind`, e.g. `EKSControlPlane`.
    #[serde(default)]
    pub kind: String,
    /// `name`, in the Cluster's namespace.
    #[serde(default)]
    pub name: String,
}

impl ContractVersionedObjectReference {
    /// Whether the reference is set (CAPI omits an unset reference or leaves it zero).
    pub fn is_defined(&self) -> bool {
        !self.kind.is_empty() && !self.name.is_empty()
    }
}

impl Cluster {
    /// `spec.paused == true`.
    pub fn spec_paused(&self) -> bool {
        self.spec.paused.unwrap_or(false)
    }

    /// `status.initialization.infrastructureProvisioned == true`.
    pub fn infrastructure_provisioned(&self) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.initialization.as_ref())
            .and_then(|i| i.infrastructure_provisioned)
            .unwrap_or(false)
    }

    /// Core's `RemoteConnectionProbe` condition (`True` while core reaches the workload API
    /// server; `False` from the Cluster's creation until it first does, and after it loses it),
    /// `None` before core has set it.
    pub fn remote_connection_probe(&self) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == REMOTE_CONNECTION_PROBE)
    }

    /// `status.initialization.controlPlaneInitialized == true`.
    pub fn control_plane_initialized(&self) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.initialization.as_ref())
            .and_then(|i| i.control_plane_initialized)
            .unwrap_or(false)
    }

    /// The infrastructure reference, if one is set. A managed Cluster may have none; the
    /// ControlPlane then does not wait for infrastructure.
    pub fn infrastructure_ref(&self) -> Option<&ContractVersionedObjectReference> {
        self.spec
            .infrastructure_ref
            .as_ref()
            .filter(|r| r.is_defined())
    }

    /// The control plane endpoint if it is valid (host and port set).
    pub fn valid_control_plane_endpoint(&self) -> Option<&ControlPlaneEndpoint> {
        self.spec
            .control_plane_endpoint
            .as_ref()
            .filter(|e| e.is_valid())
    }

    /// Pod CIDR blocks from `spec.clusterNetwork.pods.cidrBlocks` (empty when unset).
    pub fn pod_cidr_blocks(&self) -> &[String] {
        self.spec
            .cluster_network
            .as_ref()
            .and_then(|n| n.pods.as_ref())
            .map(|r| r.cidr_blocks.as_slice())
            .unwrap_or_default()
    }

    /// Service CIDR blocks from `spec.clusterNetwork.services.cidrBlocks` (empty when unset).
    pub fn service_cidr_blocks(&self) -> &[String] {
        self.spec
            .cluster_network
            .as_ref()
            .and_then(|n| n.services.as_ref())
            .map(|r| r.cidr_blocks.as_slice())
            .unwrap_or_default()
    }
}

/// The spec of core's `MachinePool` (`cluster.x-k8s.io/v1beta2`), read view.
///
/// See the [module documentation](self): never use [`MachinePool`] to replace an object. To
/// write the observed count back under `replicas-managed-by`, patch `spec.replicas` alone.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "MachinePool",
    namespaced,
    status = "MachinePoolStatus",
    schema = "disabled",
    derive = "Default",
    derive = "PartialEq",
    doc = "Core's MachinePool (cluster.x-k8s.io/v1beta2), read view: only the fields a \
           provider reads. Never use it to replace an object; read it and build patches."
)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolSpec {
    /// `spec.clusterName`: the Cluster this pool belongs to.
    #[serde(default)]
    pub cluster_name: String,
    /// `spec.replicas`: the desired node count (core defaults it to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// `spec.template`: the machine template.
    #[serde(default)]
    pub template: MachineTemplate,
    /// `spec.failureDomains`: the zones the pool should use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<String>,
    /// `spec.providerIDList`: the provider IDs of the pool's instances, as core sees them.
    #[serde(
        default,
        rename = "providerIDList",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub provider_id_list: Vec<String>,
}

/// `MachinePool.spec.template`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MachineTemplate {
    /// `spec.template.spec`.
    #[serde(default)]
    pub spec: MachineSpec,
}

/// `MachinePool.spec.template.spec` (a Machine spec), read view.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// `clusterName`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// `version`: the Kubernetes version the pool should run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `bootstrap`: for managed pools `dataSecretName: ""`.
    #[serde(default)]
    pub bootstrap: Bootstrap,
    /// `infrastructureRef`: the InfraMachinePool object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<ContractVersionedObjectReference>,
}

/// `MachinePool.spec.template.spec.bootstrap`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// `dataSecretName`: managed pools set it to the empty string (present, not absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_secret_name: Option<String>,
}

/// `MachinePool.status`, read view.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatus {
    /// `status.replicas`: the most recently observed count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// `status.readyReplicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// `status.phase`: `Pending`, `Provisioning`, `Provisioned`, `Running`, `ScalingUp`, … .
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `status.nodeRefs`: the Nodes core matched to the provider IDs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_refs: Vec<ObjectReference>,
    /// `status.initialization`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<MachinePoolCoreInitialization>,
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `status.observedGeneration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// `MachinePool.status.initialization` (core's object, not the InfraMachinePool's).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolCoreInitialization {
    /// `infrastructureProvisioned`: mirrored by core from the InfraMachinePool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// `bootstrapDataSecretCreated`: true once bootstrap data exists (immediately for `dataSecretName: ""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_data_secret_created: Option<bool>,
}

impl MachinePool {
    /// `spec.replicas`, if set.
    pub fn desired_replicas(&self) -> Option<i32> {
        self.spec.replicas
    }

    /// `spec.template.spec.version`, if set.
    pub fn version(&self) -> Option<&str> {
        self.spec.template.spec.version.as_deref()
    }

    /// `spec.template.spec.bootstrap.dataSecretName`, if present (managed pools: `Some("")`).
    pub fn data_secret_name(&self) -> Option<&str> {
        self.spec
            .template
            .spec
            .bootstrap
            .data_secret_name
            .as_deref()
    }

    /// Names of the Nodes in `status.nodeRefs`.
    pub fn node_names(&self) -> Vec<&str> {
        self.status
            .iter()
            .flat_map(|s| s.node_refs.iter())
            .filter_map(|r| r.name.as_deref())
            .collect()
    }

    /// Whether the pool's replica count is owned by an autoscaler
    /// (annotation [`REPLICAS_MANAGED_BY_ANNOTATION`] present).
    pub fn replicas_managed_externally(&self) -> bool {
        has_annotation(&self.metadata, REPLICAS_MANAGED_BY_ANNOTATION)
    }
}

/// Whether reconciliation of an object of `cluster` is paused: `cluster.spec.paused` is true,
/// or the object's annotations (`object_annotations`) carry [`PAUSED_ANNOTATION`] (any value).
pub fn is_paused(cluster: &Cluster, object_annotations: Option<&BTreeMap<String, String>>) -> bool {
    cluster.spec_paused() || object_annotations.is_some_and(|a| a.contains_key(PAUSED_ANNOTATION))
}

/// The cluster name from the [`CLUSTER_NAME_LABEL`] label, if present and non-empty.
pub fn cluster_name_of(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .map(String::as_str)
        .filter(|n| !n.is_empty())
}

/// The group part of an `apiVersion` (`""` for the core group, e.g. `v1`).
pub fn api_group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map(|(group, _)| group)
        .unwrap_or("")
}

fn owner_of_kind<'a>(meta: &'a ObjectMeta, kind: &str) -> Option<&'a OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == kind && api_group_of(&o.api_version) == CAPI_GROUP)
}

/// The owner reference to core's Cluster: kind `Cluster`, group `cluster.x-k8s.io`, any version.
/// Core adds it to InfraCluster and ControlPlane objects; do nothing until it exists.
pub fn owner_cluster(meta: &ObjectMeta) -> Option<&OwnerReference> {
    owner_of_kind(meta, CLUSTER_KIND)
}

/// The owner reference to core's MachinePool: kind `MachinePool`, group `cluster.x-k8s.io`,
/// any version. Core adds it (as controller) to InfraMachinePool objects.
pub fn owner_machine_pool(meta: &ObjectMeta) -> Option<&OwnerReference> {
    owner_of_kind(meta, MACHINE_POOL_KIND)
}

/// Whether an object passes the controller's `--watch-filter`.
///
/// With no filter (`None` or an empty string) every object passes; with a filter, only objects
/// labelled [`WATCH_FILTER_LABEL`] with exactly that value pass.
pub fn matches_watch_filter(meta: &ObjectMeta, filter: Option<&str>) -> bool {
    match filter {
        None | Some("") => true,
        Some(value) => meta
            .labels
            .as_ref()
            .and_then(|l| l.get(WATCH_FILTER_LABEL))
            .is_some_and(|v| v == value),
    }
}

/// Whether the object is annotated [`MANAGED_BY_ANNOTATION`] (any value): something else manages
/// it and the provider must not modify it.
pub fn is_externally_managed(meta: &ObjectMeta) -> bool {
    has_annotation(meta, MANAGED_BY_ANNOTATION)
}

fn has_annotation(meta: &ObjectMeta, key: &str) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta_with(
        labels: &[(&str, &str)],
        annotations: &[(&str, &str)],
        owners: Vec<OwnerReference>,
    ) -> ObjectMeta {
        let map = |kv: &[(&str, &str)]| {
            (!kv.is_empty()).then(|| {
                kv.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>()
            })
        };
        ObjectMeta {
            labels: map(labels),
            annotations: map(annotations),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..Default::default()
        }
    }

    fn owner(api_version: &str, kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: "uid".into(),
            controller: Some(true),
            block_owner_deletion: None,
        }
    }

    fn v1beta2_cluster_json() -> serde_json::Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {
                "paused": true,
                "clusterNetwork": {
                    "pods": {"cidrBlocks": ["192.168.0.0/16"]},
                    "services": {"cidrBlocks": ["10.96.0.0/12"]},
                    "serviceDomain": "cluster.local"
                },
                "controlPlaneEndpoint": {"host": "api.example.com", "port": 443},
                "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "EKSControlPlane", "name": "c1-cp"},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "EKSCluster", "name": "c1"},
                "topology": {"classRef": {"name": "ignored"}, "version": "v1.31.0"}
            },
            "status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": false},
                "conditions": [{"type": "Available", "status": "False", "reason": "NotAvailable", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "phase": "Provisioned",
                "failureDomains": [{"name": "us-east-1a", "controlPlane": true, "attributes": {"zone": "a"}}],
                "somethingNew": {"x": 1}
            }
        })
    }

    #[test]
    fn a_v1beta2_cluster_parses_with_every_read_field_and_ignores_the_rest() {
        let c: Cluster = serde_json::from_value(v1beta2_cluster_json()).unwrap();
        assert!(c.spec_paused());
        assert_eq!(c.pod_cidr_blocks(), ["192.168.0.0/16"]);
        assert_eq!(c.service_cidr_blocks(), ["10.96.0.0/12"]);
        assert_eq!(
            c.spec
                .cluster_network
                .as_ref()
                .unwrap()
                .service_domain
                .as_deref(),
            Some("cluster.local")
        );
        assert_eq!(
            c.valid_control_plane_endpoint().unwrap().host,
            "api.example.com"
        );
        assert_eq!(c.infrastructure_ref().unwrap().kind, "EKSCluster");
        assert_eq!(
            c.spec.control_plane_ref.as_ref().unwrap().api_group,
            CONTROL_PLANE_GROUP
        );
        assert!(c.infrastructure_provisioned());
        assert!(!c.control_plane_initialized());
        let status = c.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Provisioned"));
        assert_eq!(status.conditions[0].type_, "Available");
        assert_eq!(status.failure_domains[0].name, "us-east-1a");
        assert_eq!(status.failure_domains[0].control_plane, Some(true));
    }

    #[test]
    fn a_cluster_with_an_empty_spec_parses_and_is_neither_paused_nor_provisioned() {
        let c: Cluster = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c"}, "spec": {}
        }))
        .unwrap();
        assert!(!c.spec_paused());
        assert!(!c.infrastructure_provisioned());
        assert!(c.infrastructure_ref().is_none());
        assert!(c.valid_control_plane_endpoint().is_none());
        assert!(c.pod_cidr_blocks().is_empty());
    }

    #[test]
    fn a_v1beta2_machine_pool_parses_with_every_read_field() {
        let mp: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp", "namespace": "ns", "annotations": {REPLICAS_MANAGED_BY_ANNOTATION: ""}},
            "spec": {
                "clusterName": "c1", "replicas": 3, "failureDomains": ["a", "b"],
                "providerIDList": ["aws:///us-east-1a/i-1"],
                "template": {"spec": {
                    "clusterName": "c1", "version": "v1.31.2",
                    "bootstrap": {"dataSecretName": ""},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "EKSMachinePool", "name": "mp"}
                }}
            },
            "status": {"replicas": 2, "phase": "Running", "nodeRefs": [{"kind": "Node", "name": "n1"}, {"kind": "Node", "name": "n2"}],
                       "initialization": {"bootstrapDataSecretCreated": true}}
        }))
        .unwrap();
        assert_eq!(mp.spec.cluster_name, "c1");
        assert_eq!(mp.desired_replicas(), Some(3));
        assert_eq!(mp.version(), Some("v1.31.2"));
        assert_eq!(mp.data_secret_name(), Some(""));
        assert_eq!(mp.spec.failure_domains, ["a", "b"]);
        assert_eq!(mp.spec.provider_id_list, ["aws:///us-east-1a/i-1"]);
        assert_eq!(
            mp.spec
                .template
                .spec
                .infrastructure_ref
                .as_ref()
                .unwrap()
                .kind,
            "EKSMachinePool"
        );
        assert_eq!(mp.node_names(), ["n1", "n2"]);
        assert_eq!(mp.status.as_ref().unwrap().replicas, Some(2));
        assert!(mp.replicas_managed_externally());
    }

    #[test]
    fn an_absent_data_secret_name_differs_from_an_empty_one() {
        let mp: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp"}, "spec": {"clusterName": "c", "template": {"spec": {"bootstrap": {}}}}
        }))
        .unwrap();
        assert_eq!(mp.data_secret_name(), None);
    }

    #[test]
    fn serializing_a_read_view_writes_the_v1beta2_api_version_and_field_names() {
        let mut c = Cluster::new("c", ClusterSpec::default());
        c.spec.control_plane_ref = Some(ContractVersionedObjectReference {
            api_group: CONTROL_PLANE_GROUP.into(),
            kind: "X".into(),
            name: "n".into(),
        });
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["apiVersion"], CAPI_API_VERSION);
        assert_eq!(
            v["spec"]["controlPlaneRef"]["apiGroup"],
            CONTROL_PLANE_GROUP
        );
        assert!(v["spec"].get("paused").is_none());
    }

    #[test]
    fn is_paused_follows_the_cluster_spec() {
        let mut c = Cluster::new("c", ClusterSpec::default());
        assert!(!is_paused(&c, None));
        c.spec.paused = Some(true);
        assert!(is_paused(&c, None));
    }

    #[test]
    fn is_paused_follows_the_object_annotation_whatever_its_value() {
        let c = Cluster::new("c", ClusterSpec::default());
        let meta = meta_with(&[], &[(PAUSED_ANNOTATION, "")], vec![]);
        assert!(is_paused(&c, meta.annotations.as_ref()));
        let other = meta_with(&[], &[("something", "true")], vec![]);
        assert!(!is_paused(&c, other.annotations.as_ref()));
    }

    #[test]
    fn cluster_name_comes_from_the_label_and_ignores_an_empty_value() {
        assert_eq!(
            cluster_name_of(&meta_with(&[(CLUSTER_NAME_LABEL, "c1")], &[], vec![])),
            Some("c1")
        );
        assert_eq!(
            cluster_name_of(&meta_with(&[(CLUSTER_NAME_LABEL, "")], &[], vec![])),
            None
        );
        assert_eq!(cluster_name_of(&ObjectMeta::default()), None);
    }

    #[test]
    fn owner_cluster_accepts_any_version_of_the_capi_group_only() {
        let meta = meta_with(
            &[],
            &[],
            vec![
                owner("other.io/v1", "Cluster", "wrong"),
                owner("cluster.x-k8s.io/v1beta1", "Cluster", "right"),
            ],
        );
        assert_eq!(owner_cluster(&meta).unwrap().name, "right");
        let none = meta_with(&[], &[], vec![owner("other.io/v1", "Cluster", "wrong")]);
        assert!(owner_cluster(&none).is_none());
    }

    #[test]
    fn owner_machine_pool_finds_core_machine_pools_not_clusters() {
        let meta = meta_with(
            &[],
            &[],
            vec![
                owner("cluster.x-k8s.io/v1beta2", "Cluster", "c"),
                owner("cluster.x-k8s.io/v1beta2", "MachinePool", "mp"),
            ],
        );
        assert_eq!(owner_machine_pool(&meta).unwrap().name, "mp");
        let none = meta_with(
            &[],
            &[],
            vec![owner("cluster.x-k8s.io/v1beta2", "Cluster", "c")],
        );
        assert!(owner_machine_pool(&none).is_none());
    }

    #[test]
    fn without_a_watch_filter_every_object_matches() {
        let meta = ObjectMeta::default();
        assert!(matches_watch_filter(&meta, None));
        assert!(matches_watch_filter(&meta, Some("")));
    }

    #[test]
    fn with_a_watch_filter_only_objects_labelled_with_that_value_match() {
        let labelled = meta_with(&[(WATCH_FILTER_LABEL, "x")], &[], vec![]);
        let other = meta_with(&[(WATCH_FILTER_LABEL, "y")], &[], vec![]);
        assert!(matches_watch_filter(&labelled, Some("x")));
        assert!(!matches_watch_filter(&other, Some("x")));
        assert!(!matches_watch_filter(&ObjectMeta::default(), Some("x")));
    }

    #[test]
    fn the_managed_by_annotation_marks_an_object_externally_managed() {
        assert!(is_externally_managed(&meta_with(
            &[],
            &[(MANAGED_BY_ANNOTATION, "")],
            vec![]
        )));
        assert!(!is_externally_managed(&ObjectMeta::default()));
    }

    #[test]
    fn an_endpoint_is_valid_only_with_host_and_port() {
        let ep = |host: &str, port| ControlPlaneEndpoint {
            host: host.into(),
            port,
        };
        assert!(ep("h", 443).is_valid());
        assert!(!ep("", 443).is_valid());
        assert!(!ep("h", 0).is_valid());
        assert!(ep("", 0).is_zero());
    }

    #[test]
    fn the_api_group_of_an_api_version_is_the_part_before_the_slash() {
        assert_eq!(api_group_of("cluster.x-k8s.io/v1beta2"), CAPI_GROUP);
        assert_eq!(api_group_of("v1"), "");
    }
}
