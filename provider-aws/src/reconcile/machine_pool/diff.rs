//! EKS's own difference between a node group and the spec (scaling, labels, taints, update
//! config), once the kernel's steps of the pool's plan ([`contract::plan::pool`]: ownership,
//! tracked update, state, tags) are done; the version step comes after it. [`diff`], pure, and
//! the one [`PoolChange`] it finds (one UpdateNodegroupConfig), said for the conditions by its
//! [`DescribePoolChange`]. The table tests at the bottom are the specification.

use std::collections::BTreeMap;

use contract::api::{NodeScaling, Taint};
use contract::plan::CloudStep;
use contract::scaling::ScalingIntent;
use provider_runtime::machine_pool::{DescribePoolChange, ManagedPool};
use serde_json::{Value, json};

use super::desired::{
    EksTaint, PoolSpec, Scaling, UpdateConfig, creation_scaling, eks_taint_effect, fixed_scaling,
};
use super::observe::ObservedPool;

/// The change an UpdateNodegroupConfig makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolChange {
    /// New scaling, when it differs.
    pub scaling: Option<Scaling>,
    /// Label and taint changes.
    pub labels_and_taints: LabelsAndTaints,
    /// New update config, when it differs.
    pub update_config: Option<UpdateConfig>,
}

impl PoolChange {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.scaling.is_none() && self.labels_and_taints.is_empty() && self.update_config.is_none()
    }
}

impl DescribePoolChange<ObservedPool> for PoolChange {
    /// What changes, in the user's words.
    fn describe(&self, pool: Option<&ManagedPool<ObservedPool>>) -> String {
        let observed = pool.and_then(|p| p.detail.scaling);
        let mut parts = Vec::new();
        if let Some(s) = self.scaling {
            match observed {
                Some(o) if o.desired_size != s.desired_size => {
                    parts.push(format!(
                        "scaling from {} to {} nodes",
                        o.desired_size, s.desired_size
                    ));
                }
                _ => parts.push(format!(
                    "setting the size bounds to {}..{}",
                    s.min_size, s.max_size
                )),
            }
        }
        let lt = &self.labels_and_taints;
        if !lt.labels_add.is_empty() || !lt.labels_remove.is_empty() {
            parts.push("updating labels".into());
        }
        if !lt.taints_add.is_empty() || !lt.taints_remove.is_empty() {
            parts.push("updating taints".into());
        }
        if self.update_config.is_some() {
            parts.push("updating maxUnavailable".into());
        }
        parts.join(", ")
    }
}

/// What UpdateNodegroupConfig must change on the node group EKS reports, or nothing.
pub fn diff(ng: &ObservedPool, spec: &PoolSpec, scaling: ScalingIntent) -> CloudStep<PoolChange> {
    let change = PoolChange {
        scaling: scaling_change(scaling, ng.scaling),
        labels_and_taints: labels_and_taints(&ng.labels, &spec.labels, &ng.taints, &spec.taints),
        update_config: spec.update_config.filter(|u| ng.update_config != Some(*u)),
    };
    if change.is_empty() {
        CloudStep::Nothing
    } else {
        CloudStep::Change(change)
    }
}

/// The node group as an EKSMachinePool's spec would ask for it, for an adoption's plan: its
/// labels, its taints, and the autoscaler's range when its bounds differ.
pub fn as_spec(ng: &ObservedPool) -> Value {
    let taints: Vec<Taint> = ng
        .taints
        .iter()
        .filter_map(|t| {
            let value = t.value.as_deref().unwrap_or_default();
            Taint::from_cloud(&t.key, value, |e| eks_taint_effect(e) == t.effect)
        })
        .collect();
    let scaling = ng
        .scaling
        .filter(|s| s.min_size != s.max_size)
        .map(|s| NodeScaling {
            min_replicas: s.min_size,
            max_replicas: s.max_size,
        });
    json!({"labels": ng.labels, "taints": taints, "scaling": scaling})
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::machine_pool::desired::CapacityType;
    use crate::reconcile::machine_pool::observe::{NodegroupState, managed};

    fn spec() -> PoolSpec {
        PoolSpec {
            instance_types: vec!["m5.large".into()],
            disk_size: None,
            ami_type: None,
            capacity_type: CapacityType::OnDemand,
            labels: BTreeMap::from([("role".to_string(), "worker".to_string())]),
            taints: Vec::new(),
            update_config: None,
            node_role: Some("arn:aws:iam::123456789012:role/nodes".into()),
            subnet_ids: Vec::new(),
            request_overrides: None,
        }
    }

    /// An ACTIVE node group, 2 nodes, matching [`spec`].
    fn active() -> ObservedPool {
        ObservedPool {
            name: "team-a-pool".into(),
            arn: "arn:aws:eks:us-west-2:123456789012:nodegroup/c/team-a-pool/1".into(),
            state: NodegroupState::Active,
            version: Some("1.31".into()),
            scaling: Some(Scaling {
                min_size: 0,
                max_size: 2,
                desired_size: 2,
            }),
            labels: spec().labels,
            taints: Vec::new(),
            update_config: Some(UpdateConfig::Count(1)),
            tags: BTreeMap::new(),
            issues: Vec::new(),
        }
    }

    fn with<F: FnOnce(&mut ObservedPool)>(f: F) -> ObservedPool {
        let mut ng = active();
        f(&mut ng);
        ng
    }

    fn scaling_to(min: i32, max: i32, desired: i32) -> CloudStep<PoolChange> {
        CloudStep::Change(PoolChange {
            scaling: Some(Scaling {
                min_size: min,
                max_size: max,
                desired_size: desired,
            }),
            ..PoolChange::default()
        })
    }

    struct Case {
        name: &'static str,
        nodegroup: ObservedPool,
        spec: PoolSpec,
        scaling: ScalingIntent,
        expect: CloudStep<PoolChange>,
    }

    impl Default for Case {
        fn default() -> Self {
            Case {
                name: "",
                nodegroup: active(),
                spec: spec(),
                scaling: ScalingIntent::Fixed { replicas: 2 },
                expect: CloudStep::Nothing,
            }
        }
    }

    #[test]
    fn the_diff_follows_the_table() {
        let dedicated = EksTaint {
            key: "dedicated".into(),
            value: Some("batch".into()),
            effect: "NO_SCHEDULE".into(),
        };
        let cases = vec![
            Case {
                name: "a node group that matches the spec leaves nothing to do",
                ..Case::default()
            },
            Case {
                name: "more replicas scale the node group up, raising the maximum",
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: scaling_to(0, 3, 3),
                ..Case::default()
            },
            Case {
                name: "fewer replicas scale the node group down",
                scaling: ScalingIntent::Fixed { replicas: 1 },
                expect: scaling_to(0, 1, 1),
                ..Case::default()
            },
            Case {
                name: "zero replicas keep a maximum of one, as EKS requires",
                scaling: ScalingIntent::Fixed { replicas: 0 },
                expect: scaling_to(0, 1, 0),
                ..Case::default()
            },
            Case {
                name: "an autoscaled pool whose count moved within its bounds leaves nothing to do",
                nodegroup: with(|n| {
                    n.scaling = Some(Scaling {
                        min_size: 1,
                        max_size: 5,
                        desired_size: 4,
                    });
                }),
                scaling: ScalingIntent::Autoscaled {
                    min: 1,
                    max: 5,
                    initial: 2,
                },
                ..Case::default()
            },
            Case {
                name: "an autoscaled pool whose bounds changed gets the new bounds, keeping the count inside",
                nodegroup: with(|n| {
                    n.scaling = Some(Scaling {
                        min_size: 1,
                        max_size: 5,
                        desired_size: 4,
                    });
                }),
                scaling: ScalingIntent::Autoscaled {
                    min: 1,
                    max: 3,
                    initial: 2,
                },
                expect: scaling_to(1, 3, 3),
                ..Case::default()
            },
            Case {
                name: "changed labels and taints are updated as add-or-update and remove lists",
                spec: PoolSpec {
                    labels: BTreeMap::from([("role".to_string(), "batch".to_string())]),
                    taints: vec![dedicated.clone()],
                    ..spec()
                },
                expect: CloudStep::Change(PoolChange {
                    labels_and_taints: LabelsAndTaints {
                        labels_add: BTreeMap::from([("role".to_string(), "batch".to_string())]),
                        taints_add: vec![dedicated.clone()],
                        ..LabelsAndTaints::default()
                    },
                    ..PoolChange::default()
                }),
                ..Case::default()
            },
            Case {
                name: "a changed maxUnavailable is updated",
                spec: PoolSpec {
                    update_config: Some(UpdateConfig::Percent(25)),
                    ..spec()
                },
                expect: CloudStep::Change(PoolChange {
                    update_config: Some(UpdateConfig::Percent(25)),
                    ..PoolChange::default()
                }),
                ..Case::default()
            },
            Case {
                name: "no maxUnavailable in the spec leaves EKS's setting alone",
                nodegroup: with(|n| n.update_config = Some(UpdateConfig::Count(3))),
                ..Case::default()
            },
            Case {
                name: "scaling, labels and maxUnavailable go out in one update",
                spec: PoolSpec {
                    labels: BTreeMap::new(),
                    update_config: Some(UpdateConfig::Count(2)),
                    ..spec()
                },
                scaling: ScalingIntent::Fixed { replicas: 3 },
                expect: CloudStep::Change(PoolChange {
                    scaling: Some(Scaling {
                        min_size: 0,
                        max_size: 3,
                        desired_size: 3,
                    }),
                    labels_and_taints: LabelsAndTaints {
                        labels_remove: vec!["role".into()],
                        ..LabelsAndTaints::default()
                    },
                    update_config: Some(UpdateConfig::Count(2)),
                }),
                ..Case::default()
            },
        ];
        for case in &cases {
            assert_eq!(
                diff(&case.nodegroup, &case.spec, case.scaling),
                case.expect,
                "{}",
                case.name
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

    #[test]
    fn config_changes_describe_themselves_in_the_users_terms() {
        let change = PoolChange {
            scaling: Some(Scaling {
                min_size: 0,
                max_size: 3,
                desired_size: 3,
            }),
            labels_and_taints: LabelsAndTaints {
                labels_remove: vec!["x".into()],
                ..LabelsAndTaints::default()
            },
            update_config: None,
        };
        let pool = managed(active());
        assert_eq!(
            change.describe(Some(&pool)),
            "scaling from 2 to 3 nodes, updating labels"
        );
        assert_eq!(
            change.describe(None),
            "setting the size bounds to 0..3, updating labels"
        );
    }
}
