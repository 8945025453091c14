//! The read view of core's `MachinePool` (`cluster.x-k8s.io/v1beta2`): the fields a provider
//! reads (desired count, version, bootstrap, references, observed nodes) and the questions asked
//! of them.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::rules::has_annotation;
use super::{ContractVersionedObjectReference, REPLICAS_MANAGED_BY_ANNOTATION};

/// The spec of core's `MachinePool` (`cluster.x-k8s.io/v1beta2`), read view.
///
/// See the [module documentation](super): never use [`MachinePool`] to replace an object. To
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
