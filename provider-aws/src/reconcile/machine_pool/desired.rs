//! What the spec asks EKS for, in EKS's terms: [`PoolSpec`], which the create, the diff and the
//! updates all read, made once per pass by [`validate`] before any cloud call; and the pieces of
//! it EKS names its own way (capacity type, taint effects, `updateConfig`, `scalingConfig`).
//! Pure: no client, no clock.

use std::collections::BTreeMap;

use contract::api::{TaintEffect, UpdateStrategy};
use contract::conditions::Reason;
use contract::scaling::ScalingIntent;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use provider_runtime::ProviderError;
use serde::Serialize;
use serde_json::Value;

use crate::api::{EKSMachinePool, EKSMachinePoolSpec};

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

/// A fixed pool's scaling: `replicas` nodes, a minimum of 0 and a maximum of at least 1.
pub fn fixed_scaling(replicas: i32) -> Scaling {
    Scaling {
        min_size: 0,
        max_size: replicas.max(1),
        desired_size: replicas,
    }
}

/// What only the spec decides about a node group: checked once per pass, before any cloud call.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSpec {
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
    /// `spec.eks.nodeRoleARN` (only a create needs it: an adopted node group keeps its role).
    pub node_role: Option<String>,
    /// `spec.subnetIDs`: the node group's own subnets (empty: the cluster's).
    pub subnet_ids: Vec<String>,
    /// `spec.eks.requestOverrides`, as the user wrote it (the create's token is derived from
    /// it as written; [`contract::overrides::effective`] says whether it patches anything).
    pub request_overrides: Option<Value>,
}

/// A spec EKS cannot honour; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSpec(pub String);

/// A terminal `InvalidSpec`.
pub fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::InvalidSpec, message)
}

/// The spec in EKS's terms, or a terminal `InvalidSpec` naming the field.
///
/// # Errors
/// As [`pool_spec`].
pub fn validate(obj: &EKSMachinePool) -> Result<PoolSpec, ProviderError> {
    pool_spec(&obj.spec).map_err(|e| invalid(e.0))
}

/// Checks the spec and turns it into EKS's terms.
///
/// # Errors
/// [`InvalidSpec`] naming the field: an AMI type EKS does not know, a `maxUnavailable` EKS
/// refuses, a `maxSurge` (EKS has no surge; the CRD rejects it too).
pub fn pool_spec(spec: &EKSMachinePoolSpec) -> Result<PoolSpec, InvalidSpec> {
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
    Ok(PoolSpec {
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
        subnet_ids: common.subnet_ids.clone(),
        request_overrides: spec.eks.request_overrides.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use contract::api::{MachinePoolSpecCommon, NodeScaling, Taint};

    fn spec() -> EKSMachinePoolSpec {
        EKSMachinePoolSpec {
            common: MachinePoolSpecCommon {
                machine_type: "m5.large".into(),
                ..MachinePoolSpecCommon::default()
            },
            eks: crate::api::EKSMachinePoolOptions {
                node_role_arn: Some("arn:aws:iam::123456789012:role/nodes".into()),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_machine_type_comes_first_and_additional_types_follow_without_repeats() {
        let mut s = spec();
        s.eks.additional_instance_types =
            vec!["m5a.large".into(), "m5.large".into(), "m6i.large".into()];
        assert_eq!(
            pool_spec(&s).unwrap().instance_types,
            ["m5.large", "m5a.large", "m6i.large"]
        );
    }

    #[test]
    fn disk_size_spot_and_node_role_map_to_their_eks_fields() {
        let mut s = spec();
        s.common.disk_size_gb = Some(80);
        s.common.spot = true;
        let shape = pool_spec(&s).unwrap();
        assert_eq!(shape.disk_size, Some(80));
        assert_eq!(shape.capacity_type, CapacityType::Spot);
        assert_eq!(
            shape.node_role.as_deref(),
            Some("arn:aws:iam::123456789012:role/nodes")
        );
        assert_eq!(
            pool_spec(&spec()).unwrap().capacity_type,
            CapacityType::OnDemand
        );
    }

    #[test]
    fn a_known_ami_type_is_accepted_and_an_unknown_one_is_invalid_naming_the_field() {
        let mut s = spec();
        s.common.image = Some("AL2023_x86_64_STANDARD".into());
        assert_eq!(
            pool_spec(&s).unwrap().ami_type.as_deref(),
            Some("AL2023_x86_64_STANDARD")
        );
        s.common.image = Some("ubuntu-22.04".into());
        let err = pool_spec(&s).unwrap_err().to_string();
        assert!(
            err.contains("spec.image") && err.contains("BOTTLEROCKET_x86_64"),
            "{err}"
        );
        assert_eq!(
            pool_spec(&spec()).unwrap().ami_type,
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
        let taints = pool_spec(&s).unwrap().taints;
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
}
