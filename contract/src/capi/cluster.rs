//! The read view of core's `Cluster` (`cluster.x-k8s.io/v1beta2`): the fields a provider reads
//! (pause, network ranges, control plane endpoint, references, milestones, conditions) and the
//! questions asked of them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::{FailureDomain, REMOTE_CONNECTION_PROBE};

/// The spec of core's `Cluster` (`cluster.x-k8s.io/v1beta2`), read view.
///
/// See the [module documentation](super): never use [`Cluster`] to replace an object.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::{CAPI_API_VERSION, CONTROL_PLANE_GROUP};
    use serde_json::json;

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
}
