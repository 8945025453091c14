//! Our API ↔ EKS managed node groups, as pure functions.
//!
//! One direction builds what we ask EKS for (instance types, AMI type, capacity type, scaling,
//! labels, taints, update config, subnets, version, idempotency token); the other reads what EKS
//! reports (a [`NodegroupView`]) and the EC2 instances the node group runs (provider IDs).

use std::collections::BTreeMap;

use contract::api::{TaintEffect, UpdateStrategy};
use contract::idempotency::{self, EKS_REQUEST_TOKEN};
use contract::scaling::InstanceLife;
pub use contract::scaling::ScalingIntent;
use contract::version::KubeVersion;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;
use serde_json::Value;

use crate::api::EKSMachinePoolSpec;

/// EKS's largest `maxUnavailable` node count.
pub const MAX_UNAVAILABLE_LIMIT: i32 = 100;

/// The capacity a node group runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CapacityType {
    /// `ON_DEMAND`.
    #[serde(rename = "ON_DEMAND")]
    OnDemand,
    /// `SPOT`.
    #[serde(rename = "SPOT")]
    Spot,
}

impl CapacityType {
    /// The EKS value.
    pub const fn as_str(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "ON_DEMAND",
            CapacityType::Spot => "SPOT",
        }
    }
}

/// A taint as EKS spells it (`NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct EksTaint {
    /// The key.
    pub key: String,
    /// The value, absent when empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The EKS effect name.
    pub effect: String,
}

/// The EKS effect of a Kubernetes taint effect.
pub const fn eks_taint_effect(effect: TaintEffect) -> &'static str {
    match effect {
        TaintEffect::NoSchedule => "NO_SCHEDULE",
        TaintEffect::PreferNoSchedule => "PREFER_NO_SCHEDULE",
        TaintEffect::NoExecute => "NO_EXECUTE",
    }
}

/// How many nodes an EKS node group update may take down at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UpdateConfig {
    /// `maxUnavailable`.
    #[serde(rename = "maxUnavailable")]
    Count(i32),
    /// `maxUnavailablePercentage`.
    #[serde(rename = "maxUnavailablePercentage")]
    Percent(i32),
}

/// A node group's `scalingConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scaling {
    /// `minSize`.
    pub min_size: i32,
    /// `maxSize`.
    pub max_size: i32,
    /// `desiredSize`.
    pub desired_size: i32,
}

/// The scaling to create the node group with.
///
/// Fixed: `desiredSize` = replicas, `minSize` = 0 and `maxSize` = max(replicas, 1): EKS needs
/// `min ≤ desired ≤ max` and `max ≥ 1`, and a minimum of 0 lets the count go down to 0 and
/// back without touching the minimum. Autoscaled: the bounds, and the MachinePool's count
/// clamped into them.
pub fn creation_scaling(intent: ScalingIntent) -> Scaling {
    match intent {
        ScalingIntent::Fixed { replicas } => fixed_scaling(replicas),
        ScalingIntent::Autoscaled { min, max, .. } => Scaling {
            min_size: min,
            max_size: max,
            desired_size: intent.initial_count(),
        },
    }
}

/// The scaling to ask for when the node group reports `observed`, or `None` when it already
/// matches. An autoscaled pool's desired size is the autoscaler's: it changes only when the
/// bounds moved past it.
pub fn scaling_change(intent: ScalingIntent, observed: Option<Scaling>) -> Option<Scaling> {
    let want = match (intent, observed) {
        (ScalingIntent::Fixed { replicas }, _) => fixed_scaling(replicas),
        (ScalingIntent::Autoscaled { .. }, None) => creation_scaling(intent),
        (ScalingIntent::Autoscaled { min, max, .. }, Some(o)) => Scaling {
            min_size: min,
            max_size: max,
            desired_size: o.desired_size.clamp(min, max.max(min)),
        },
    };
    (observed != Some(want)).then_some(want)
}

fn fixed_scaling(replicas: i32) -> Scaling {
    Scaling {
        min_size: 0,
        max_size: replicas.max(1),
        desired_size: replicas,
    }
}

/// What only the spec decides about a node group: checked once per pass, before any cloud call.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolShape {
    /// `spec.machineType` then `spec.eks.additionalInstanceTypes`, without repeats.
    pub instance_types: Vec<String>,
    /// `spec.diskSizeGB`.
    pub disk_size: Option<i32>,
    /// `spec.image`, a valid EKS AMI type.
    pub ami_type: Option<String>,
    /// `spec.spot`.
    pub capacity_type: CapacityType,
    /// `spec.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.taints`, sorted.
    pub taints: Vec<EksTaint>,
    /// `spec.update.maxUnavailable`; `None` leaves EKS's default (one node).
    pub update_config: Option<UpdateConfig>,
    /// `spec.eks.nodeRoleARN`.
    pub node_role: String,
}

/// A spec EKS cannot honour; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSpec(pub String);

/// Checks the spec and turns it into EKS's terms.
///
/// # Errors
/// [`InvalidSpec`] naming the field: an AMI type EKS does not know, a `maxUnavailable` EKS
/// refuses, a `maxSurge` (EKS has no surge; the CRD rejects it too).
pub fn pool_shape(spec: &EKSMachinePoolSpec) -> Result<PoolShape, InvalidSpec> {
    let common = &spec.common;
    let mut instance_types = vec![common.machine_type.clone()];
    for t in &spec.eks.additional_instance_types {
        if !instance_types.contains(t) {
            instance_types.push(t.clone());
        }
    }
    let ami_type = common.image.as_deref().map(ami_type).transpose()?;
    let mut taints: Vec<EksTaint> = common
        .taints
        .iter()
        .map(|t| EksTaint {
            key: t.key.clone(),
            value: t.value.clone().filter(|v| !v.is_empty()),
            effect: eks_taint_effect(t.effect).to_string(),
        })
        .collect();
    taints.sort();
    Ok(PoolShape {
        instance_types,
        disk_size: common.disk_size_gb,
        ami_type,
        capacity_type: if common.spot {
            CapacityType::Spot
        } else {
            CapacityType::OnDemand
        },
        labels: common.labels.clone(),
        taints,
        update_config: update_config(common.update.as_ref())?,
        node_role: spec.eks.node_role_arn.clone(),
    })
}

/// `spec.image` as an EKS AMI type, checked against the SDK's list.
///
/// # Errors
/// [`InvalidSpec`] listing the accepted values.
pub fn ami_type(image: &str) -> Result<String, InvalidSpec> {
    let known = aws_sdk_eks::types::AmiTypes::values();
    if known.contains(&image) {
        Ok(image.to_string())
    } else {
        Err(InvalidSpec(format!(
            "spec.image {image:?} is not an EKS AMI type; use one of {}",
            known.join(", ")
        )))
    }
}

/// `spec.update` as EKS's update config.
///
/// # Errors
/// [`InvalidSpec`] for `maxSurge` (EKS has none), a zero, or a count over EKS's limit.
pub fn update_config(update: Option<&UpdateStrategy>) -> Result<Option<UpdateConfig>, InvalidSpec> {
    let Some(update) = update else {
        return Ok(None);
    };
    if update.max_surge.is_some() {
        return Err(InvalidSpec(
            "spec.update.maxSurge is not supported on EKS: a managed node group replaces nodes by spec.update.maxUnavailable only"
                .into(),
        ));
    }
    let out = match &update.max_unavailable {
        None => None,
        Some(IntOrString::Int(n)) if (1..=MAX_UNAVAILABLE_LIMIT).contains(n) => {
            Some(UpdateConfig::Count(*n))
        }
        Some(IntOrString::Int(n)) => {
            return Err(InvalidSpec(format!(
                "spec.update.maxUnavailable {n} is out of EKS's range: use 1 to {MAX_UNAVAILABLE_LIMIT} nodes or a percentage"
            )));
        }
        Some(IntOrString::String(s)) => {
            let percent = s.strip_suffix('%').and_then(|p| p.parse::<i32>().ok());
            match percent {
                Some(p) if (1..=100).contains(&p) => Some(UpdateConfig::Percent(p)),
                _ => {
                    return Err(InvalidSpec(format!(
                        "spec.update.maxUnavailable {s:?} must be a number of nodes (1 to {MAX_UNAVAILABLE_LIMIT}) or a percentage from 1% to 100% on EKS"
                    )));
                }
            }
        }
    };
    Ok(out)
}

/// A subnet the node group may use, with what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubnetCandidate {
    /// The subnet ID.
    pub id: String,
    /// Its availability zone, when known.
    pub zone: Option<String>,
    /// Whether it is public, when known.
    pub public: Option<bool>,
}

/// The subnets to create the node group in.
///
/// `explicit` (`spec.subnetIDs`) wins; otherwise the cluster's, keeping only the private ones
/// when the cluster marks some as private. With `zones` (`MachinePool.spec.failureDomains`),
/// only subnets in those zones are kept.
///
/// # Errors
/// [`InvalidSpec`] when nothing is left: no subnets at all, or none in the asked zones.
pub fn select_subnets(
    explicit: &[SubnetCandidate],
    cluster: &[SubnetCandidate],
    zones: &[String],
) -> Result<Vec<String>, InvalidSpec> {
    let pool: Vec<&SubnetCandidate> = if explicit.is_empty() {
        let private: Vec<&SubnetCandidate> =
            cluster.iter().filter(|s| s.public == Some(false)).collect();
        let any_public = cluster.iter().any(|s| s.public == Some(true));
        if any_public && !private.is_empty() {
            private
        } else {
            cluster.iter().collect()
        }
    } else {
        explicit.iter().collect()
    };
    if pool.is_empty() {
        return Err(InvalidSpec(
            "no subnets for the node group: set spec.subnetIDs, or give the cluster subnets (EKSCluster network, or the EKSControlPlane's spec.infrastructure.network.subnetIDs)".into(),
        ));
    }
    let mut chosen: Vec<String> = pool
        .iter()
        .filter(|s| zones.is_empty() || s.zone.as_ref().is_some_and(|z| zones.contains(z)))
        .map(|s| s.id.clone())
        .collect();
    chosen.dedup();
    if chosen.is_empty() {
        let known: Vec<String> = pool
            .iter()
            .map(|s| format!("{} ({})", s.id, s.zone.as_deref().unwrap_or("zone unknown")))
            .collect();
        return Err(InvalidSpec(format!(
            "MachinePool.spec.failureDomains {zones:?} match none of the node group's subnets: {}",
            known.join(", ")
        )));
    }
    Ok(chosen)
}

/// Whether the subnets' zones must be looked up before [`select_subnets`] can filter by zone.
pub fn zones_needed(candidates: &[SubnetCandidate], zones: &[String]) -> bool {
    !zones.is_empty() && candidates.iter().any(|s| s.zone.is_none())
}

/// The version EKS takes (`1.31`) for a Kubernetes version.
pub fn eks_version(v: &KubeVersion) -> String {
    format!("{}.{}", v.major, v.minor)
}

/// `aws:///<zone>/<instance-id>`: what EKS's kubelet writes into `Node.spec.providerID`.
pub fn provider_id(zone: &str, instance_id: &str) -> String {
    format!("aws:///{zone}/{instance_id}")
}

/// The provider ID list by the shared rule ([`contract::scaling::provider_id_list`]): an ID
/// stays while EC2 reports its instance in any state but `terminated`.
pub fn provider_id_list(instances: &[Instance]) -> Vec<String> {
    let ids: Vec<(String, InstanceLife)> = instances
        .iter()
        .map(|i| (provider_id(&i.zone, &i.id), instance_life(&i.state)))
        .collect();
    contract::scaling::provider_id_list(ids.iter().map(|(id, life)| (id.as_str(), *life)))
}

/// EC2's instance state in the shared terms.
pub fn instance_life(state: &str) -> InstanceLife {
    if LIVE_INSTANCE_STATES.contains(&state) {
        InstanceLife::Present
    } else {
        InstanceLife::Gone
    }
}

/// One EC2 instance of the node group that is not terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `i-…`.
    pub id: String,
    /// Its availability zone.
    pub zone: String,
    /// EC2's state name (`pending`, `running`, `shutting-down`, `stopping`, `stopped`).
    pub state: String,
}

/// The EC2 instance states whose instances keep their provider ID in the list: everything but
/// `terminated`, so an ID leaves only once its instance is gone (core deletes the Node then).
pub const LIVE_INSTANCE_STATES: [&str; 5] =
    ["pending", "running", "shutting-down", "stopping", "stopped"];

/// A node group's lifecycle state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodegroupState {
    /// `CREATING`.
    Creating,
    /// `ACTIVE`.
    Active,
    /// `UPDATING`.
    Updating,
    /// `DELETING`.
    Deleting,
    /// `CREATE_FAILED`.
    CreateFailed,
    /// `DELETE_FAILED`.
    DeleteFailed,
    /// `DEGRADED`: it runs, with health issues.
    Degraded,
    /// A state this provider does not know.
    Other(String),
}

impl NodegroupState {
    /// From EKS's status string.
    pub fn parse(status: &str) -> Self {
        match status {
            "CREATING" => NodegroupState::Creating,
            "ACTIVE" => NodegroupState::Active,
            "UPDATING" => NodegroupState::Updating,
            "DELETING" => NodegroupState::Deleting,
            "CREATE_FAILED" => NodegroupState::CreateFailed,
            "DELETE_FAILED" => NodegroupState::DeleteFailed,
            "DEGRADED" => NodegroupState::Degraded,
            other => NodegroupState::Other(other.to_string()),
        }
    }

    /// EKS's status string.
    pub fn as_str(&self) -> &str {
        match self {
            NodegroupState::Creating => "CREATING",
            NodegroupState::Active => "ACTIVE",
            NodegroupState::Updating => "UPDATING",
            NodegroupState::Deleting => "DELETING",
            NodegroupState::CreateFailed => "CREATE_FAILED",
            NodegroupState::DeleteFailed => "DELETE_FAILED",
            NodegroupState::Degraded => "DEGRADED",
            NodegroupState::Other(s) => s,
        }
    }

    /// Whether the node group exists and serves nodes (it has been created).
    pub fn is_provisioned(&self) -> bool {
        matches!(
            self,
            NodegroupState::Active | NodegroupState::Updating | NodegroupState::Degraded
        )
    }
}

/// What DescribeNodegroup reports, in our terms.
#[derive(Debug, Clone, PartialEq)]
pub struct NodegroupView {
    /// The name.
    pub name: String,
    /// The ARN.
    pub arn: String,
    /// The lifecycle state.
    pub state: NodegroupState,
    /// `version` (`1.31`).
    pub version: Option<String>,
    /// `scalingConfig`.
    pub scaling: Option<Scaling>,
    /// `labels`.
    pub labels: BTreeMap<String, String>,
    /// `taints`, sorted.
    pub taints: Vec<EksTaint>,
    /// `updateConfig`.
    pub update_config: Option<UpdateConfig>,
    /// `tags`.
    pub tags: BTreeMap<String, String>,
    /// `health.issues`, as `code: message` lines.
    pub issues: Vec<String>,
}

impl NodegroupView {
    /// From the SDK's node group.
    pub fn from_sdk(ng: &aws_sdk_eks::types::Nodegroup) -> Self {
        let scaling = ng.scaling_config().map(|s| Scaling {
            min_size: s.min_size().unwrap_or(0),
            max_size: s.max_size().unwrap_or(0),
            desired_size: s.desired_size().unwrap_or(0),
        });
        let mut taints: Vec<EksTaint> = ng
            .taints()
            .iter()
            .map(|t| EksTaint {
                key: t.key().unwrap_or_default().to_string(),
                value: t.value().filter(|v| !v.is_empty()).map(str::to_string),
                effect: t
                    .effect()
                    .map(|e| e.as_str().to_string())
                    .unwrap_or_default(),
            })
            .collect();
        taints.sort();
        let update_config = ng.update_config().and_then(|u| {
            match (u.max_unavailable(), u.max_unavailable_percentage()) {
                (Some(n), _) => Some(UpdateConfig::Count(n)),
                (None, Some(p)) => Some(UpdateConfig::Percent(p)),
                (None, None) => None,
            }
        });
        let issues = ng
            .health()
            .map(|h| {
                h.issues()
                    .iter()
                    .map(|i| {
                        let code = i
                            .code()
                            .map(|c| c.as_str().to_string())
                            .unwrap_or_else(|| "Unknown".into());
                        format!("{code}: {}", i.message().unwrap_or("no message"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            name: ng.nodegroup_name().unwrap_or_default().to_string(),
            arn: ng.nodegroup_arn().unwrap_or_default().to_string(),
            state: NodegroupState::parse(ng.status().map(|s| s.as_str()).unwrap_or("UNKNOWN")),
            version: ng.version().map(str::to_string),
            scaling,
            labels: ng
                .labels()
                .map(|l| l.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            taints,
            update_config,
            tags: ng
                .tags()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            issues,
        }
    }
}

/// A node group update EKS runs (DescribeUpdate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateView {
    /// The update's ID.
    pub id: String,
    /// Its state.
    pub state: UpdateState,
    /// Its errors, as `code: message` lines.
    pub errors: Vec<String>,
}

/// The state of an EKS update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateState {
    /// `InProgress`.
    InProgress,
    /// `Successful`.
    Successful,
    /// `Failed`.
    Failed,
    /// `Cancelled`.
    Cancelled,
}

impl UpdateView {
    /// From the SDK's update.
    pub fn from_sdk(u: &aws_sdk_eks::types::Update) -> Self {
        let state = match u.status().map(|s| s.as_str()) {
            Some("Successful") => UpdateState::Successful,
            Some("Failed") => UpdateState::Failed,
            Some("Cancelled") => UpdateState::Cancelled,
            _ => UpdateState::InProgress,
        };
        let errors = u
            .errors()
            .iter()
            .map(|e| {
                let code = e
                    .error_code()
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_else(|| "Unknown".into());
                format!("{code}: {}", e.error_message().unwrap_or("no message"))
            })
            .collect();
        Self {
            id: u.id().unwrap_or_default().to_string(),
            state,
            errors,
        }
    }
}

/// The labels and taints changes that turn `observed` into `desired`, as EKS's payloads take
/// them: add-or-update what differs, remove what is no longer wanted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelsAndTaints {
    /// `labels.addOrUpdateLabels`.
    pub labels_add: BTreeMap<String, String>,
    /// `labels.removeLabels`.
    pub labels_remove: Vec<String>,
    /// `taints.addOrUpdateTaints`.
    pub taints_add: Vec<EksTaint>,
    /// `taints.removeTaints` (key and effect).
    pub taints_remove: Vec<EksTaint>,
}

impl LabelsAndTaints {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.labels_add.is_empty()
            && self.labels_remove.is_empty()
            && self.taints_add.is_empty()
            && self.taints_remove.is_empty()
    }
}

/// The label and taint diff. Taints are keyed by (key, effect), as Kubernetes keys them.
pub fn labels_and_taints(
    observed_labels: &BTreeMap<String, String>,
    desired_labels: &BTreeMap<String, String>,
    observed_taints: &[EksTaint],
    desired_taints: &[EksTaint],
) -> LabelsAndTaints {
    let labels_add = desired_labels
        .iter()
        .filter(|(k, v)| observed_labels.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let labels_remove = observed_labels
        .keys()
        .filter(|k| !desired_labels.contains_key(*k))
        .cloned()
        .collect();
    let same_slot = |a: &EksTaint, b: &EksTaint| a.key == b.key && a.effect == b.effect;
    let taints_add = desired_taints
        .iter()
        .filter(|d| !observed_taints.contains(d))
        .cloned()
        .collect();
    let taints_remove = observed_taints
        .iter()
        .filter(|o| !desired_taints.iter().any(|d| same_slot(d, o)))
        .map(|o| EksTaint {
            key: o.key.clone(),
            value: None,
            effect: o.effect.clone(),
        })
        .collect();
    LabelsAndTaints {
        labels_add,
        labels_remove,
        taints_add,
        taints_remove,
    }
}

/// Everything a CreateNodegroup request carries, in EKS's JSON names (it also serves as the
/// idempotency token's fingerprint).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateNodegroup {
    /// The EKS cluster.
    #[serde(skip)]
    pub cluster_name: String,
    /// `nodegroupName`.
    pub nodegroup_name: String,
    /// `scalingConfig`.
    pub scaling_config: Scaling,
    /// `diskSize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_size: Option<i32>,
    /// `subnets`.
    pub subnets: Vec<String>,
    /// `instanceTypes`.
    pub instance_types: Vec<String>,
    /// `amiType`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ami_type: Option<String>,
    /// `nodeRole`.
    pub node_role: String,
    /// `labels`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `taints`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<EksTaint>,
    /// `tags`.
    pub tags: BTreeMap<String, String>,
    /// `updateConfig`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "update_config_object"
    )]
    pub update_config: Option<UpdateConfig>,
    /// `capacityType`.
    pub capacity_type: CapacityType,
    /// `version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `clientRequestToken`, derived from the rest.
    #[serde(skip)]
    pub client_request_token: String,
}

fn update_config_object<S: serde::Serializer>(
    value: &Option<UpdateConfig>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    match value {
        Some(UpdateConfig::Count(n)) => map.serialize_entry("maxUnavailable", n)?,
        Some(UpdateConfig::Percent(p)) => map.serialize_entry("maxUnavailablePercentage", p)?,
        None => {}
    }
    map.end()
}

impl CreateNodegroup {
    /// The request for `shape` in `subnets`, with a token derived from the object's UID, the
    /// request itself and the user's overrides: the same request retried after a crash gets the
    /// same token (EKS answers with the node group it created), a changed request a new one.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        uid: &str,
        cluster_name: &str,
        nodegroup_name: &str,
        shape: &PoolShape,
        scaling: Scaling,
        subnets: Vec<String>,
        tags: BTreeMap<String, String>,
        version: Option<&KubeVersion>,
        overrides: Option<&Value>,
    ) -> Self {
        let mut request = Self {
            cluster_name: cluster_name.to_string(),
            nodegroup_name: nodegroup_name.to_string(),
            scaling_config: scaling,
            disk_size: shape.disk_size,
            subnets,
            instance_types: shape.instance_types.clone(),
            ami_type: shape.ami_type.clone(),
            node_role: shape.node_role.clone(),
            labels: shape.labels.clone(),
            taints: shape.taints.clone(),
            tags,
            update_config: shape.update_config,
            capacity_type: shape.capacity_type,
            version: version.map(eks_version),
            client_request_token: String::new(),
        };
        let fingerprint = format!(
            "{cluster_name}|{}|{}",
            serde_json::to_string(&request).unwrap_or_default(),
            overrides.map(Value::to_string).unwrap_or_default()
        );
        request.client_request_token =
            idempotency::token(&EKS_REQUEST_TOKEN, "create", uid, &[&fingerprint]);
        request
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contract::api::{MachinePoolSpecCommon, NodeScaling, Taint};
    use serde_json::json;

    fn spec() -> EKSMachinePoolSpec {
        EKSMachinePoolSpec {
            common: MachinePoolSpecCommon {
                machine_type: "m5.large".into(),
                ..MachinePoolSpecCommon::default()
            },
            eks: crate::api::EKSMachinePoolOptions {
                node_role_arn: "arn:aws:iam::123456789012:role/nodes".into(),
                ..Default::default()
            },
        }
    }

    fn v(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    #[test]
    fn the_machine_type_comes_first_and_additional_types_follow_without_repeats() {
        let mut s = spec();
        s.eks.additional_instance_types =
            vec!["m5a.large".into(), "m5.large".into(), "m6i.large".into()];
        assert_eq!(
            pool_shape(&s).unwrap().instance_types,
            ["m5.large", "m5a.large", "m6i.large"]
        );
    }

    #[test]
    fn disk_size_spot_and_node_role_map_to_their_eks_fields() {
        let mut s = spec();
        s.common.disk_size_gb = Some(80);
        s.common.spot = true;
        let shape = pool_shape(&s).unwrap();
        assert_eq!(shape.disk_size, Some(80));
        assert_eq!(shape.capacity_type, CapacityType::Spot);
        assert_eq!(shape.node_role, "arn:aws:iam::123456789012:role/nodes");
        assert_eq!(
            pool_shape(&spec()).unwrap().capacity_type,
            CapacityType::OnDemand
        );
    }

    #[test]
    fn a_known_ami_type_is_accepted_and_an_unknown_one_is_invalid_naming_the_field() {
        let mut s = spec();
        s.common.image = Some("AL2023_x86_64_STANDARD".into());
        assert_eq!(
            pool_shape(&s).unwrap().ami_type.as_deref(),
            Some("AL2023_x86_64_STANDARD")
        );
        s.common.image = Some("ubuntu-22.04".into());
        let err = pool_shape(&s).unwrap_err().to_string();
        assert!(
            err.contains("spec.image") && err.contains("BOTTLEROCKET_x86_64"),
            "{err}"
        );
        assert_eq!(
            pool_shape(&spec()).unwrap().ami_type,
            None,
            "no image: EKS's default"
        );
    }

    #[test]
    fn taint_effects_map_to_eks_names() {
        let mut s = spec();
        s.common.taints = vec![
            Taint {
                key: "a".into(),
                value: Some("x".into()),
                effect: TaintEffect::NoSchedule,
            },
            Taint {
                key: "b".into(),
                value: None,
                effect: TaintEffect::PreferNoSchedule,
            },
            Taint {
                key: "c".into(),
                value: Some(String::new()),
                effect: TaintEffect::NoExecute,
            },
        ];
        let taints = pool_shape(&s).unwrap().taints;
        let effects: Vec<(&str, Option<&str>, &str)> = taints
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_deref(), t.effect.as_str()))
            .collect();
        assert_eq!(
            effects,
            [
                ("a", Some("x"), "NO_SCHEDULE"),
                ("b", None, "PREFER_NO_SCHEDULE"),
                ("c", None, "NO_EXECUTE")
            ]
        );
    }

    #[test]
    fn max_unavailable_maps_to_a_count_or_a_percentage() {
        let u = |x: IntOrString| UpdateStrategy {
            max_surge: None,
            max_unavailable: Some(x),
        };
        assert_eq!(
            update_config(Some(&u(IntOrString::Int(2)))).unwrap(),
            Some(UpdateConfig::Count(2))
        );
        assert_eq!(
            update_config(Some(&u(IntOrString::String("25%".into())))).unwrap(),
            Some(UpdateConfig::Percent(25))
        );
        assert_eq!(update_config(None).unwrap(), None);
        assert_eq!(
            update_config(Some(&UpdateStrategy::default())).unwrap(),
            None
        );
    }

    #[test]
    fn max_unavailable_outside_eks_range_and_any_max_surge_are_invalid() {
        let u = |x: IntOrString| UpdateStrategy {
            max_surge: None,
            max_unavailable: Some(x),
        };
        for bad in [
            IntOrString::Int(0),
            IntOrString::Int(101),
            IntOrString::String("0%".into()),
            IntOrString::String("3".into()),
        ] {
            let err = update_config(Some(&u(bad.clone())))
                .unwrap_err()
                .to_string();
            assert!(err.contains("spec.update.maxUnavailable"), "{bad:?}: {err}");
        }
        let surge = UpdateStrategy {
            max_surge: Some(IntOrString::Int(1)),
            max_unavailable: None,
        };
        let err = update_config(Some(&surge)).unwrap_err().to_string();
        assert!(
            err.contains("spec.update.maxSurge") && err.contains("EKS"),
            "{err}"
        );
    }

    #[test]
    fn a_fixed_pool_pins_the_desired_size_with_a_minimum_of_zero() {
        assert_eq!(
            creation_scaling(ScalingIntent::new(None, Some(3))),
            Scaling {
                min_size: 0,
                max_size: 3,
                desired_size: 3
            }
        );
        assert_eq!(
            creation_scaling(ScalingIntent::new(None, Some(0))),
            Scaling {
                min_size: 0,
                max_size: 1,
                desired_size: 0
            },
            "EKS needs maxSize >= 1"
        );
        assert_eq!(
            ScalingIntent::new(None, None),
            ScalingIntent::Fixed { replicas: 1 },
            "core's default is 1"
        );
    }

    #[test]
    fn an_autoscaled_pool_is_created_with_the_replicas_clamped_into_its_bounds() {
        let bounds = NodeScaling {
            min_replicas: 2,
            max_replicas: 5,
        };
        for (replicas, desired) in [(1, 2), (3, 3), (9, 5)] {
            let s = creation_scaling(ScalingIntent::new(Some(&bounds), Some(replicas)));
            assert_eq!(
                s,
                Scaling {
                    min_size: 2,
                    max_size: 5,
                    desired_size: desired
                },
                "replicas {replicas}"
            );
        }
    }

    #[test]
    fn a_fixed_pool_changes_scaling_when_the_replicas_change() {
        let observed = Scaling {
            min_size: 0,
            max_size: 2,
            desired_size: 2,
        };
        assert_eq!(
            scaling_change(ScalingIntent::Fixed { replicas: 2 }, Some(observed)),
            None
        );
        assert_eq!(
            scaling_change(ScalingIntent::Fixed { replicas: 3 }, Some(observed)),
            Some(Scaling {
                min_size: 0,
                max_size: 3,
                desired_size: 3
            })
        );
        assert_eq!(
            scaling_change(ScalingIntent::Fixed { replicas: 1 }, Some(observed)),
            Some(Scaling {
                min_size: 0,
                max_size: 1,
                desired_size: 1
            })
        );
    }

    #[test]
    fn an_autoscaled_pool_leaves_the_desired_size_to_the_autoscaler() {
        let intent = ScalingIntent::Autoscaled {
            min: 1,
            max: 5,
            initial: 9,
        };
        let observed = Scaling {
            min_size: 1,
            max_size: 5,
            desired_size: 4,
        };
        assert_eq!(
            scaling_change(intent, Some(observed)),
            None,
            "the MachinePool's count is not pushed"
        );
        let moved = ScalingIntent::Autoscaled {
            min: 1,
            max: 3,
            initial: 4,
        };
        assert_eq!(
            scaling_change(moved, Some(observed)),
            Some(Scaling {
                min_size: 1,
                max_size: 3,
                desired_size: 3
            }),
            "bounds that move past the desired size carry it along"
        );
    }

    fn cand(id: &str, zone: Option<&str>, public: Option<bool>) -> SubnetCandidate {
        SubnetCandidate {
            id: id.into(),
            zone: zone.map(str::to_string),
            public,
        }
    }

    #[test]
    fn explicit_subnets_win_over_the_clusters() {
        let got = select_subnets(
            &[cand("s-x", None, None)],
            &[cand("s-a", Some("a"), None)],
            &[],
        )
        .unwrap();
        assert_eq!(got, ["s-x"]);
    }

    #[test]
    fn the_clusters_private_subnets_are_used_when_it_marks_public_and_private() {
        let cluster = [
            cand("pub-a", Some("a"), Some(true)),
            cand("priv-a", Some("a"), Some(false)),
            cand("priv-b", Some("b"), Some(false)),
        ];
        assert_eq!(
            select_subnets(&[], &cluster, &[]).unwrap(),
            ["priv-a", "priv-b"]
        );
        let all_public = [
            cand("pub-a", Some("a"), Some(true)),
            cand("pub-b", Some("b"), Some(true)),
        ];
        assert_eq!(
            select_subnets(&[], &all_public, &[]).unwrap(),
            ["pub-a", "pub-b"]
        );
        let unknown = [cand("s-1", None, None), cand("s-2", None, None)];
        assert_eq!(select_subnets(&[], &unknown, &[]).unwrap(), ["s-1", "s-2"]);
    }

    #[test]
    fn failure_domains_keep_only_subnets_in_those_zones() {
        let cluster = [
            cand("s-a", Some("us-west-2a"), None),
            cand("s-b", Some("us-west-2b"), None),
        ];
        assert_eq!(
            select_subnets(&[], &cluster, &["us-west-2b".into()]).unwrap(),
            ["s-b"]
        );
        let err = select_subnets(&[], &cluster, &["us-west-2c".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("failureDomains") && err.contains("s-a (us-west-2a)"),
            "{err}"
        );
    }

    #[test]
    fn no_subnets_at_all_is_an_invalid_spec_that_says_where_to_set_them() {
        let err = select_subnets(&[], &[], &[]).unwrap_err().to_string();
        assert!(err.contains("spec.subnetIDs"), "{err}");
    }

    #[test]
    fn zones_are_looked_up_only_when_failure_domains_need_them() {
        assert!(!zones_needed(&[cand("s", None, None)], &[]));
        assert!(zones_needed(&[cand("s", None, None)], &["a".into()]));
        assert!(!zones_needed(&[cand("s", Some("a"), None)], &["a".into()]));
    }

    #[test]
    fn versions_go_to_eks_as_major_dot_minor_and_come_back_at_minor_granularity() {
        assert_eq!(eks_version(&v("v1.31.2")), "1.31");
    }

    #[test]
    fn provider_ids_are_exactly_what_the_kubelet_writes_and_sorted() {
        let instances = [
            Instance {
                id: "i-2".into(),
                zone: "us-west-2b".into(),
                state: "running".into(),
            },
            Instance {
                id: "i-1".into(),
                zone: "us-west-2a".into(),
                state: "shutting-down".into(),
            },
        ];
        assert_eq!(
            provider_id_list(&instances),
            ["aws:///us-west-2a/i-1", "aws:///us-west-2b/i-2"]
        );
        assert!(!LIVE_INSTANCE_STATES.contains(&"terminated"));
        assert!(
            LIVE_INSTANCE_STATES.contains(&"shutting-down"),
            "an ID leaves only once its instance is gone"
        );
    }

    fn taint(key: &str, value: Option<&str>, effect: &str) -> EksTaint {
        EksTaint {
            key: key.into(),
            value: value.map(str::to_string),
            effect: effect.into(),
        }
    }

    #[test]
    fn label_and_taint_diffs_add_what_differs_and_remove_what_is_gone() {
        let observed_labels = BTreeMap::from([
            ("keep".to_string(), "1".to_string()),
            ("change".into(), "old".into()),
            ("drop".into(), "x".into()),
        ]);
        let desired_labels = BTreeMap::from([
            ("keep".to_string(), "1".to_string()),
            ("change".into(), "new".into()),
            ("add".into(), "y".into()),
        ]);
        let observed_taints = [
            taint("k", Some("v1"), "NO_SCHEDULE"),
            taint("gone", None, "NO_EXECUTE"),
        ];
        let desired_taints = [
            taint("k", Some("v2"), "NO_SCHEDULE"),
            taint("new", None, "PREFER_NO_SCHEDULE"),
        ];
        let diff = labels_and_taints(
            &observed_labels,
            &desired_labels,
            &observed_taints,
            &desired_taints,
        );
        assert_eq!(
            diff.labels_add,
            BTreeMap::from([
                ("add".to_string(), "y".to_string()),
                ("change".into(), "new".into())
            ])
        );
        assert_eq!(diff.labels_remove, ["drop"]);
        assert_eq!(
            diff.taints_add,
            [
                taint("k", Some("v2"), "NO_SCHEDULE"),
                taint("new", None, "PREFER_NO_SCHEDULE")
            ]
        );
        assert_eq!(
            diff.taints_remove,
            [taint("gone", None, "NO_EXECUTE")],
            "a changed value is an update, not a removal"
        );
        assert!(
            labels_and_taints(
                &observed_labels,
                &observed_labels,
                &observed_taints,
                &observed_taints
            )
            .is_empty()
        );
    }

    fn request(overrides: Option<&Value>, replicas: i32) -> CreateNodegroup {
        let shape = pool_shape(&spec()).unwrap();
        CreateNodegroup::new(
            "uid-1",
            "eks-c",
            "ns-pool",
            &shape,
            creation_scaling(ScalingIntent::Fixed { replicas }),
            vec!["s-1".into()],
            BTreeMap::from([("capi-managed-eks".to_string(), "ns_c".to_string())]),
            Some(&v("v1.31")),
            overrides,
        )
    }

    #[test]
    fn the_create_request_serialises_with_eks_field_names() {
        let mut r = request(None, 2);
        r.update_config = Some(UpdateConfig::Percent(20));
        let body = serde_json::to_value(&r).unwrap();
        assert_eq!(body["nodegroupName"], "ns-pool");
        assert_eq!(
            body["scalingConfig"],
            json!({"minSize": 0, "maxSize": 2, "desiredSize": 2})
        );
        assert_eq!(body["capacityType"], "ON_DEMAND");
        assert_eq!(body["version"], "1.31");
        assert_eq!(
            body["updateConfig"],
            json!({"maxUnavailablePercentage": 20})
        );
        assert!(body.get("clientRequestToken").is_none() && body.get("clusterName").is_none());
    }

    #[test]
    fn the_idempotency_token_is_stable_for_the_same_request_and_changes_with_it() {
        let a = request(None, 2);
        assert_eq!(
            a.client_request_token,
            request(None, 2).client_request_token
        );
        assert_ne!(
            a.client_request_token,
            request(None, 3).client_request_token
        );
        assert_ne!(
            a.client_request_token,
            request(Some(&json!({"releaseVersion": "x"})), 2).client_request_token
        );
        assert!(
            a.client_request_token.len() <= 64 && a.client_request_token.starts_with("create-")
        );
    }
}
