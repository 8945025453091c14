//! The difference between what the spec asks and the agent pool: [`diff`], pure, the first
//! difference as one [`PoolChange`] (one PUT of the pool each), said for the conditions by its
//! [`DescribePoolChange`]. The count's owner comes first, then the count, then the settings.

use std::collections::BTreeMap;

use contract::api::{NodeScaling, Taint};
use contract::plan::CloudStep;
use contract::scaling::ScalingIntent;
use provider_runtime::machine_pool::{DescribePoolChange, ManagedPool};
use serde_json::{Value, json};

use super::desired::{PoolSpec, effect};
use super::observe::ObservedPool;

/// One difference, one PUT of the pool.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// Autoscaling on between these bounds, or off (`None`).
    Autoscaling(Option<(i32, i32)>),
    /// The count.
    Count(i32),
    /// Labels, taints, mode and upgrade settings.
    Settings {
        /// New labels, when they differ.
        labels: Option<BTreeMap<String, String>>,
        /// New taints, when they differ.
        taints: Option<Vec<String>>,
        /// New mode, when it differs.
        mode: Option<&'static str>,
        /// New upgrade settings, when they differ.
        upgrade: Option<(Option<String>, Option<String>)>,
    },
}

/// The agent pool as an AKSMachinePool's spec would ask for it, for an adoption's plan: its
/// labels, its taints (`key=value:Effect`), and the autoscaler's range when it is on.
pub fn as_spec(pool: &ObservedPool) -> Value {
    let taints: Vec<Taint> = pool
        .taints
        .iter()
        .filter_map(|t| {
            let (key_value, written) = t.rsplit_once(':')?;
            let (key, value) = key_value.split_once('=').unwrap_or((key_value, ""));
            Taint::from_cloud(key, value, |e| effect(e) == written)
        })
        .collect();
    let scaling = pool.autoscaling.map(|(min, max)| NodeScaling {
        min_replicas: min,
        max_replicas: max,
    });
    json!({"labels": pool.labels, "taints": taints, "scaling": scaling})
}

/// The first difference (pure): the count's owner first, then the count, then the settings.
pub fn diff(
    observed: &ObservedPool,
    spec: &PoolSpec,
    scaling: ScalingIntent,
) -> CloudStep<PoolChange> {
    match scaling {
        ScalingIntent::Autoscaled { min, max, .. } => {
            if observed.autoscaling != Some((min, max)) {
                return CloudStep::Change(PoolChange::Autoscaling(Some((min, max))));
            }
        }
        ScalingIntent::Fixed { replicas } => {
            if observed.autoscaling.is_some() {
                return CloudStep::Change(PoolChange::Autoscaling(None));
            }
            if observed.count != Some(replicas) {
                return CloudStep::Change(PoolChange::Count(replicas));
            }
        }
    }
    let labels = (observed.labels != spec.labels).then(|| spec.labels.clone());
    let taints = (observed.taints != spec.taints).then(|| spec.taints.clone());
    let mode = (!observed.mode.eq_ignore_ascii_case(spec.mode)).then_some(spec.mode);
    let wanted_upgrade = (
        spec.upgrade
            .0
            .clone()
            .or_else(|| observed.upgrade.0.clone()),
        spec.upgrade
            .1
            .clone()
            .or_else(|| observed.upgrade.1.clone()),
    );
    let upgrade = (wanted_upgrade != observed.upgrade).then_some(wanted_upgrade);
    if labels.is_none() && taints.is_none() && mode.is_none() && upgrade.is_none() {
        return CloudStep::Nothing;
    }
    CloudStep::Change(PoolChange::Settings {
        labels,
        taints,
        mode,
        upgrade,
    })
}

impl DescribePoolChange<ObservedPool> for PoolChange {
    fn describe(&self, _pool: Option<&ManagedPool<ObservedPool>>) -> String {
        match self {
            PoolChange::Autoscaling(Some((min, max))) => {
                format!("turning the cluster autoscaler on between {min} and {max} nodes")
            }
            PoolChange::Autoscaling(None) => "turning the cluster autoscaler off".into(),
            PoolChange::Count(n) => format!("scaling to {n} nodes"),
            PoolChange::Settings { .. } => {
                "updating labels, taints, mode or upgrade settings".into()
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn spec() -> PoolSpec {
        PoolSpec {
            vm_size: "Standard_D2s_v5".into(),
            disk_size_gb: None,
            os_sku: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            spot: false,
            upgrade: (None, None),
            mode: "User",
            max_pods: None,
            subnet: None,
            request_overrides: None,
        }
    }

    fn at(count: i32) -> ObservedPool {
        ObservedPool {
            count: Some(count),
            mode: "User".into(),
            ..ObservedPool::default()
        }
    }

    #[test]
    fn the_count_s_owner_comes_first_then_the_count_then_settings() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            diff(&at(1), &spec(), fixed(3)),
            CloudStep::Change(PoolChange::Count(3))
        );
        assert_eq!(diff(&at(3), &spec(), fixed(3)), CloudStep::Nothing);
        let auto = ScalingIntent::Autoscaled {
            min: 1,
            max: 4,
            initial: 2,
        };
        assert_eq!(
            diff(&at(2), &spec(), auto),
            CloudStep::Change(PoolChange::Autoscaling(Some((1, 4))))
        );
        let mut on = at(2);
        on.autoscaling = Some((1, 4));
        assert_eq!(diff(&on, &spec(), auto), CloudStep::Nothing);
        assert_eq!(
            diff(&on, &spec(), fixed(2)),
            CloudStep::Change(PoolChange::Autoscaling(None))
        );
        let mut tainted = spec();
        tainted.taints = vec!["dedicated=gpu:NoSchedule".into()];
        assert!(matches!(
            diff(&at(2), &tainted, fixed(2)),
            CloudStep::Change(PoolChange::Settings {
                taints: Some(_),
                labels: None,
                ..
            })
        ));
    }

    #[test]
    fn an_agent_pool_reads_back_as_the_spec_would_ask_for_it() {
        let pool = ObservedPool {
            autoscaling: Some((1, 5)),
            labels: BTreeMap::from([("team".to_string(), "a".to_string())]),
            taints: vec![
                "dedicated=gpu:NoSchedule".into(),
                "spot:PreferNoSchedule".into(),
                "odd=x:Sometimes".into(),
            ],
            ..at(2)
        };
        assert_eq!(
            as_spec(&pool),
            serde_json::json!({
                "labels": {"team": "a"},
                "taints": [
                    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                    {"key": "spot", "effect": "PreferNoSchedule"},
                ],
                "scaling": {"minReplicas": 1, "maxReplicas": 5},
            })
        );
        assert_eq!(as_spec(&at(2))["scaling"], Value::Null);
    }
}
