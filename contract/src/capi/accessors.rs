//! The contract as typed, versioned accessors over untyped objects.
//!
//! Core reads provider objects (InfraCluster, ControlPlane, InfraMachinePool) as unstructured
//! JSON, at paths that depend on the contract version the provider's CRD declares. This module
//! names every such path once, per role, with the v1beta1 paths core still reads next to the
//! v1beta2 ones, so the providers (which write them) and the conformance suite (which reads
//! arbitrary providers' objects) agree on one list.
//!
//! Paths are slices of JSON object keys from the object root, e.g. `["status", "ready"]`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::Value;

/// A JSON path from the object root, as object keys.
pub type FieldPath = &'static [&'static str];

/// The contract version whose paths core reads, chosen by the contract label on the CRD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContractVersion {
    /// The previous contract; core up to v1.15 still honours it.
    V1Beta1,
    /// The current contract (since CAPI v1.11).
    V1Beta2,
}

impl ContractVersion {
    /// `v1beta1` or `v1beta2`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ContractVersion::V1Beta1 => "v1beta1",
            ContractVersion::V1Beta2 => "v1beta2",
        }
    }

    /// The CRD label key announcing support for this contract, e.g. `cluster.x-k8s.io/v1beta2`.
    pub const fn label_key(self) -> &'static str {
        match self {
            ContractVersion::V1Beta1 => "cluster.x-k8s.io/v1beta1",
            ContractVersion::V1Beta2 => "cluster.x-k8s.io/v1beta2",
        }
    }
}

/// The value at `path`, if every key on the way exists.
pub fn read<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, key| v.get(key))
}

/// The boolean at `path`; `None` when absent or not a boolean.
pub fn read_bool(obj: &Value, path: &[&str]) -> Option<bool> {
    read(obj, path).and_then(Value::as_bool)
}

/// The string at `path`; `None` when absent or not a string.
pub fn read_str<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a str> {
    read(obj, path).and_then(Value::as_str)
}

/// The integer at `path`; `None` when absent or not an integer.
pub fn read_i64(obj: &Value, path: &[&str]) -> Option<i64> {
    read(obj, path).and_then(Value::as_i64)
}

/// The list of strings at `path`; `None` when absent, not a list, or holding a non-string.
pub fn read_strings<'a>(obj: &'a Value, path: &[&str]) -> Option<Vec<&'a str>> {
    read(obj, path)?
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect()
}

/// The conditions at `status.conditions` that parse as `metav1.Condition`; malformed entries are
/// skipped (conformance reports them separately by reading the raw list).
pub fn read_conditions(obj: &Value) -> Vec<Condition> {
    read(obj, CONDITIONS)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|c| serde_json::from_value(c.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The condition of type `type_` in `status.conditions`, if present and well formed.
pub fn read_condition(obj: &Value, type_: &str) -> Option<Condition> {
    read_conditions(obj).into_iter().find(|c| c.type_ == type_)
}

/// `status.conditions`: v1beta2 `metav1.Condition`s on every role.
pub const CONDITIONS: FieldPath = &["status", "conditions"];

/// `metadata.generation`.
pub const GENERATION: FieldPath = &["metadata", "generation"];

/// The InfraCluster role (the `…Cluster` kind).
pub mod infra_cluster {
    use super::{ContractVersion, FieldPath, read_bool};
    use serde_json::Value;

    /// v1beta2: `status.initialization.provisioned`.
    pub const PROVISIONED: FieldPath = &["status", "initialization", "provisioned"];
    /// v1beta1: `status.ready`, still set by our providers for older cores.
    pub const READY_V1BETA1: FieldPath = &["status", "ready"];
    /// `status.failureDomains`: a list of `{name, controlPlane, attributes}` in v1beta2 (a map
    /// keyed by name in v1beta1).
    pub const FAILURE_DOMAINS: FieldPath = &["status", "failureDomains"];
    /// `spec.controlPlaneEndpoint`: a managed InfraCluster never sets it (flexible endpoints).
    pub const CONTROL_PLANE_ENDPOINT: FieldPath = &["spec", "controlPlaneEndpoint"];

    /// Whether the object reports provisioned, as a core speaking `version` reads it.
    pub fn provisioned(obj: &Value, version: ContractVersion) -> Option<bool> {
        match version {
            ContractVersion::V1Beta2 => read_bool(obj, PROVISIONED),
            ContractVersion::V1Beta1 => read_bool(obj, READY_V1BETA1),
        }
    }
}

/// The ControlPlane role (the `…ControlPlane` kind).
pub mod control_plane {
    use super::{ContractVersion, FieldPath, read_bool};
    use serde_json::Value;

    /// v1beta2: `status.initialization.controlPlaneInitialized`.
    pub const INITIALIZED: FieldPath = &["status", "initialization", "controlPlaneInitialized"];
    /// v1beta1: `status.initialized`.
    pub const INITIALIZED_V1BETA1: FieldPath = &["status", "initialized"];
    /// v1beta1: `status.ready`.
    pub const READY_V1BETA1: FieldPath = &["status", "ready"];
    /// `status.externalManagedControlPlane`: true for every managed control plane.
    pub const EXTERNAL_MANAGED_CONTROL_PLANE: FieldPath =
        &["status", "externalManagedControlPlane"];
    /// `spec.controlPlaneEndpoint`: where the managed control plane publishes its endpoint.
    pub const CONTROL_PLANE_ENDPOINT: FieldPath = &["spec", "controlPlaneEndpoint"];
    /// `spec.version`: the desired Kubernetes version (`v` prefix).
    pub const SPEC_VERSION: FieldPath = &["spec", "version"];
    /// `status.version`: the version running.
    pub const STATUS_VERSION: FieldPath = &["status", "version"];
    /// `status.versions`: `[{version, replicas}]`, read by topology since CAPI v1.14.
    pub const STATUS_VERSIONS: FieldPath = &["status", "versions"];

    /// Whether the object reports initialized, as a core speaking `version` reads it.
    pub fn initialized(obj: &Value, version: ContractVersion) -> Option<bool> {
        match version {
            ContractVersion::V1Beta2 => read_bool(obj, INITIALIZED),
            ContractVersion::V1Beta1 => read_bool(obj, INITIALIZED_V1BETA1),
        }
    }

    /// `status.externalManagedControlPlane`, absent as `false`.
    pub fn external_managed(obj: &Value) -> bool {
        read_bool(obj, EXTERNAL_MANAGED_CONTROL_PLANE).unwrap_or(false)
    }
}

/// The InfraMachinePool role (the `…MachinePool` kind).
pub mod infra_machine_pool {
    use super::{FieldPath, read_bool};
    use serde_json::Value;

    /// v1beta2: `status.initialization.provisioned`.
    pub const PROVISIONED: FieldPath = &["status", "initialization", "provisioned"];
    /// v1beta1: `status.ready`; core v1.14 still reads it for pools, so both must be set.
    pub const READY_V1BETA1: FieldPath = &["status", "ready"];
    /// `status.replicas`: the observed node count.
    pub const REPLICAS: FieldPath = &["status", "replicas"];
    /// `spec.providerIDList`: exactly the `Node.spec.providerID` strings of the pool's instances.
    pub const PROVIDER_ID_LIST: FieldPath = &["spec", "providerIDList"];

    /// Whether the pool is provisioned in the sense core v1.14 acts on: **both**
    /// `status.ready` and `status.initialization.provisioned` true. `None` when either is absent.
    pub fn provisioned(obj: &Value) -> Option<bool> {
        Some(read_bool(obj, PROVISIONED)? && read_bool(obj, READY_V1BETA1)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn read_bool_follows_the_path_and_rejects_other_types() {
        let obj = json!({"status": {"ready": true, "initialization": {"provisioned": "yes"}}});
        assert_eq!(read_bool(&obj, &["status", "ready"]), Some(true));
        assert_eq!(read_bool(&obj, infra_cluster::PROVISIONED), None);
        assert_eq!(read_bool(&obj, &["status", "missing"]), None);
    }

    #[test]
    fn infra_cluster_provisioned_reads_the_path_of_the_requested_contract() {
        let obj = json!({"status": {"ready": false, "initialization": {"provisioned": true}}});
        assert_eq!(
            infra_cluster::provisioned(&obj, ContractVersion::V1Beta2),
            Some(true)
        );
        assert_eq!(
            infra_cluster::provisioned(&obj, ContractVersion::V1Beta1),
            Some(false)
        );
    }

    #[test]
    fn control_plane_initialized_reads_the_path_of_the_requested_contract() {
        let obj = json!({"status": {"initialized": true, "initialization": {"controlPlaneInitialized": false},
                                    "externalManagedControlPlane": true, "version": "v1.31.2",
                                    "versions": [{"version": "v1.31.2", "replicas": 1}]},
                         "spec": {"version": "v1.31"}});
        assert_eq!(
            control_plane::initialized(&obj, ContractVersion::V1Beta2),
            Some(false)
        );
        assert_eq!(
            control_plane::initialized(&obj, ContractVersion::V1Beta1),
            Some(true)
        );
        assert!(control_plane::external_managed(&obj));
        assert_eq!(
            read_str(&obj, control_plane::STATUS_VERSION),
            Some("v1.31.2")
        );
        assert_eq!(read_str(&obj, control_plane::SPEC_VERSION), Some("v1.31"));
        assert!(read(&obj, control_plane::STATUS_VERSIONS).is_some_and(Value::is_array));
    }

    #[test]
    fn a_pool_is_provisioned_only_when_both_ready_and_provisioned_are_true() {
        let both = json!({"status": {"ready": true, "initialization": {"provisioned": true}}});
        let only_new = json!({"status": {"initialization": {"provisioned": true}}});
        let one_false =
            json!({"status": {"ready": false, "initialization": {"provisioned": true}}});
        assert_eq!(infra_machine_pool::provisioned(&both), Some(true));
        assert_eq!(infra_machine_pool::provisioned(&only_new), None);
        assert_eq!(infra_machine_pool::provisioned(&one_false), Some(false));
    }

    #[test]
    fn provider_id_lists_and_replicas_read_as_typed_values() {
        let obj = json!({"spec": {"providerIDList": ["a", "b"]}, "status": {"replicas": 2}});
        assert_eq!(
            read_strings(&obj, infra_machine_pool::PROVIDER_ID_LIST),
            Some(vec!["a", "b"])
        );
        assert_eq!(read_i64(&obj, infra_machine_pool::REPLICAS), Some(2));
        let mixed = json!({"spec": {"providerIDList": ["a", 1]}});
        assert_eq!(
            read_strings(&mixed, infra_machine_pool::PROVIDER_ID_LIST),
            None
        );
    }

    #[test]
    fn conditions_are_read_and_malformed_ones_skipped() {
        let obj = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Broken"}
        ]}});
        assert_eq!(read_conditions(&obj).len(), 1);
        assert_eq!(read_condition(&obj, "Ready").unwrap().status, "True");
        assert!(read_condition(&obj, "Broken").is_none());
    }

    #[test]
    fn contract_label_keys_name_the_version() {
        assert_eq!(
            ContractVersion::V1Beta2.label_key(),
            format!("cluster.x-k8s.io/{}", ContractVersion::V1Beta2.as_str())
        );
        assert_eq!(
            ContractVersion::V1Beta1.label_key(),
            "cluster.x-k8s.io/v1beta1"
        );
    }
}
