//! The blocks of an InfraMachinePool (`XMachinePool`): the machine type, disk, image, labels,
//! taints, autoscaling bounds and update strategy of the nodes, and the status core reads.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Adoption, AdoptionStatus, DeletionPolicy, Operation, is_false};

/// Autoscaling bounds; when present the cloud's autoscaler owns the node count.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.minReplicas <= self.maxReplicas")
    .message("spec.scaling.minReplicas must not be greater than spec.scaling.maxReplicas"))]
pub struct NodeScaling {
    /// The fewest nodes the autoscaler may scale to (0 or more).
    #[schemars(range(min = 0, max = 1000))]
    pub min_replicas: i32,
    /// The most nodes the autoscaler may scale to.
    #[schemars(range(min = 1, max = 1000))]
    pub max_replicas: i32,
}

/// The effect of a node taint.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum TaintEffect {
    /// Pods that do not tolerate the taint are not scheduled.
    NoSchedule,
    /// The scheduler avoids the node for pods that do not tolerate the taint.
    PreferNoSchedule,
    /// Pods that do not tolerate the taint are evicted.
    NoExecute,
}

impl TaintEffect {
    /// Every effect.
    pub const ALL: [TaintEffect; 3] = [
        TaintEffect::NoSchedule,
        TaintEffect::PreferNoSchedule,
        TaintEffect::NoExecute,
    ];

    /// The effect whose spelling in a cloud's terms `is` the one the cloud wrote (`is` holds
    /// the cloud's own mapping); `None` for a spelling of none of them.
    pub fn spelled(is: impl Fn(TaintEffect) -> bool) -> Option<Self> {
        Self::ALL.into_iter().find(|e| is(*e))
    }
}

impl Taint {
    /// A taint a cloud reports: its key, value (empty is none) and the effect whose spelling
    /// `is` the cloud's ([`TaintEffect::spelled`]); `None` when it is none of Kubernetes'.
    pub fn from_cloud(key: &str, value: &str, is: impl Fn(TaintEffect) -> bool) -> Option<Self> {
        Some(Taint {
            key: key.to_string(),
            value: (!value.is_empty()).then(|| value.to_string()),
            effect: TaintEffect::spelled(is)?,
        })
    }
}

/// The syntax of a Kubernetes qualified name (label keys, taint keys): an optional DNS
/// subdomain prefix and `/`, then a name of letters, digits, `-`, `_` and `.` that starts and
/// ends with a letter or digit.
/// (Written without backslashes, so it reads the same in a JSON-schema pattern and in a CEL
/// string literal.)
pub const QUALIFIED_NAME_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";

/// The lengths of a Kubernetes qualified name: a prefix of at most 253 characters, a name of at
/// most 63.
pub const QUALIFIED_NAME_LENGTHS: &str = "^([-a-z0-9.]{1,253}/)?[^/]{1,63}$";

/// The syntax of a Kubernetes label value: empty, or at most 63 letters, digits, `-`, `_` and
/// `.`, starting and ending with a letter or digit.
pub const LABEL_VALUE_PATTERN: &str = "^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$";

/// A taint put on every node of the pool.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key, a qualified name such as `example.com/dedicated`.
    #[schemars(length(min = 1, max = 317))]
    #[x_kube(validation = Rule::new(format!("self.matches('{QUALIFIED_NAME_PATTERN}') && self.matches('{QUALIFIED_NAME_LENGTHS}')"))
        .message("spec.taints[].key must be a qualified name such as example.com/dedicated: an optional DNS subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"))]
    pub key: String,
    /// The taint value (may be empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 63),
        pattern(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
    )]
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: TaintEffect,
}

const INT_OR_PERCENT_RULE: &str =
    "type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')";

/// How many nodes an update may add or take away at a time.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.maxSurge) || !has(self.maxUnavailable) || !(string(self.maxSurge) in ['0', '0%'] && string(self.maxUnavailable) in ['0', '0%'])")
    .message("spec.update.maxSurge and spec.update.maxUnavailable must not both be 0"))]
pub struct UpdateStrategy {
    /// Nodes added above the desired count during an update: a number (e.g. 1) or a percentage
    /// of the desired count (e.g. 25%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(INT_OR_PERCENT_RULE)
        .message("spec.update.maxSurge must be a number of 0 or more, or a percentage from 0% to 100%, e.g. 1 or 25%"))]
    pub max_surge: Option<IntOrString>,
    /// Nodes that may be unavailable during an update: a number (e.g. 1) or a percentage of the
    /// desired count (e.g. 25%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(INT_OR_PERCENT_RULE)
        .message("spec.update.maxUnavailable must be a number of 0 or more, or a percentage from 0% to 100%, e.g. 1 or 25%"))]
    pub max_unavailable: Option<IntOrString>,
}

/// The spec fields every `XMachinePool` shares; flatten into the provider's spec.
///
/// Count, version and zones come from the owning `MachinePool`, not from here.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cloudName) || has(self.cloudName)")
    .message("spec.cloudName cannot be removed once set"))]
pub struct MachinePoolSpecCommon {
    /// The instance type / VM size / machine type / shape of the nodes.
    #[schemars(length(min = 1, max = 128))]
    pub machine_type: String,
    /// Boot disk size in GB; empty uses the cloud's default.
    #[serde(
        default,
        rename = "diskSizeGB",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = 65536))]
    pub disk_size_gb: Option<i32>,
    /// The node image (AMI type, OS SKU, image type, image OCID); empty uses the cloud's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image: Option<String>,
    /// Kubernetes labels put on every node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64, "additionalProperties" = {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE_PATTERN}))]
    #[x_kube(validation = Rule::new(format!("self.all(k, k.matches('{QUALIFIED_NAME_PATTERN}') && k.matches('{QUALIFIED_NAME_LENGTHS}'))"))
        .message("spec.labels keys must be Kubernetes label keys such as example.com/role: an optional DNS subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"))]
    pub labels: BTreeMap<String, String>,
    /// Taints put on every node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["key", "effect"]))]
    pub taints: Vec<Taint>,
    /// Autoscaling bounds. When set, the cloud's autoscaler owns the node count and the provider
    /// writes it back to MachinePool.spec.replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<NodeScaling>,
    /// Run the nodes on spot / preemptible capacity.
    #[serde(default, skip_serializing_if = "is_false")]
    pub spot: bool,
    /// How many nodes an update may add or take away at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateStrategy>,
    /// Subnets for the nodes; empty uses the cluster's.
    #[serde(default, rename = "subnetIDs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 512)))]
    pub subnet_ids: Vec<String>,
    /// The node pool's name in the cloud. Default: derived within the cloud's limits. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.cloudName is immutable"))]
    pub cloud_name: Option<String>,
    /// Adopt an existing node pool that is not tagged as ours, after reviewing the plan in
    /// `status.adoption`, instead of creating one. `id` is the cloud's id of the node pool (the
    /// node group ARN, agent pool resource ID, node pool self link or OCID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<Adoption>,
    /// What deleting this pool does to the cloud node pool: `Delete` (default) or `Orphan`
    /// (leave it running, without our ownership tag).
    #[serde(default, skip_serializing_if = "DeletionPolicy::is_delete")]
    pub deletion_policy: DeletionPolicy,
    /// Written by the provider: the provider IDs of the pool's nodes, exactly as the cloud
    /// writes them into Node.spec.providerID.
    #[serde(
        default,
        rename = "providerIDList",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 10000), inner(length(min = 1, max = 512)))]
    pub provider_id_list: Vec<String>,
}

/// `status.initialization` of an InfraMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolInitialization {
    /// True once the node pool exists in the cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

/// The status fields every `XMachinePool` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatusCommon {
    /// Contract milestones: provisioned once the node pool exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<MachinePoolInitialization>,
    /// v1beta1 contract (still read by Cluster API v1.14 for pools): true once provisioned.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// The observed node count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The Kubernetes version the nodes run, v-prefixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub version: Option<String>,
    /// The pool's identifier in the cloud (EKS node group ARN, AKS agent pool resource ID, GKE
    /// node pool self link, OKE node pool OCID), once the cloud has it.
    #[serde(default, rename = "cloudID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub cloud_id: Option<String>,
    /// The pool's name in the cloud (`spec.cloudName`, or the name derived from the object's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub cloud_name: Option<String>,
    /// The cloud operation in flight, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    /// The adoption plan, while `spec.adoption` asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<AdoptionStatus>,
    /// Conditions: Ready, Upgrading, NodesVisible (whether Cluster API core reaches the workload API
    /// server to see the nodes: False for a private-only cluster, never part of Ready), Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::test_support::expect_rules;
    use crate::schema::crd_schema;
    use serde_json::json;

    #[test]
    fn machine_pool_spec_carries_scaling_update_and_immutability_rules() {
        expect_rules(
            &crd_schema::<MachinePoolSpecCommon>(),
            &[
                (
                    ".scaling",
                    "self.minReplicas <= self.maxReplicas",
                    "spec.scaling.minReplicas must not be greater",
                ),
                (
                    ".update.maxSurge",
                    "type(self) == int",
                    "spec.update.maxSurge must be a number",
                ),
                (
                    ".update.maxUnavailable",
                    "type(self) == int",
                    "spec.update.maxUnavailable must be a number",
                ),
                (".update", "string(self.maxSurge)", "must not both be 0"),
                (
                    ".cloudName",
                    "self == oldSelf",
                    "spec.cloudName is immutable",
                ),
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
            ],
        );
    }

    #[test]
    fn taints_are_a_list_map_keyed_by_key_and_effect() {
        let pool = crd_schema::<MachinePoolSpecCommon>();
        assert_eq!(
            pool["properties"]["taints"]["x-kubernetes-list-map-keys"],
            json!(["key", "effect"])
        );
    }

    #[test]
    fn pool_status_and_spec_names_follow_the_contract() {
        let pool = serde_json::to_value(MachinePoolStatusCommon {
            initialization: Some(MachinePoolInitialization {
                provisioned: Some(true),
            }),
            ready: true,
            replicas: Some(3),
            ..MachinePoolStatusCommon::default()
        })
        .unwrap();
        assert_eq!(
            crate::capi::accessors::infra_machine_pool::provisioned(&json!({"status": pool})),
            Some(true)
        );
        let pool_spec = serde_json::to_value(MachinePoolSpecCommon {
            machine_type: "m5.large".into(),
            disk_size_gb: Some(50),
            subnet_ids: vec!["s".into()],
            provider_id_list: vec!["aws:///a/i-1".into()],
            ..MachinePoolSpecCommon::default()
        })
        .unwrap();
        assert_eq!(pool_spec["diskSizeGB"], 50);
        assert_eq!(pool_spec["subnetIDs"], json!(["s"]));
        assert_eq!(pool_spec["providerIDList"], json!(["aws:///a/i-1"]));
    }
}
