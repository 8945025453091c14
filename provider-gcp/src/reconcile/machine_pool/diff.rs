//! The difference between what the spec asks and the node pool: [`diff`], pure, the first
//! difference as one [`PoolChange`] (one GKE call each), said for the conditions by its
//! [`DescribePoolChange`]. The count's owner comes first, then the count (per zone), then the
//! settings.

use std::collections::BTreeMap;

use contract::api::NodeScaling;
use contract::plan::CloudStep;
use contract::scaling::ScalingIntent;
use provider_runtime::machine_pool::{DescribePoolChange, ManagedPool};
use serde_json::{Value, json};

use super::desired::{PoolSpec, Taint, effect, per_zone};
use super::observe::ObservedPool;

/// One difference, one GKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// Autoscaling on with per-zone bounds, or off (`None`).
    Autoscaling(Option<(i32, i32)>),
    /// `setSize` to nodes per zone.
    Size(i32),
    /// Labels, taints and upgrade settings in one `UpdateNodePool`.
    Settings {
        /// New labels, when they differ.
        labels: Option<BTreeMap<String, String>>,
        /// New taints, when they differ.
        taints: Option<Vec<Taint>>,
        /// New upgrade settings, when they differ.
        upgrade: Option<(i32, i32)>,
    },
}

/// The node pool as a GKEMachinePool's spec would ask for it, for an adoption's plan: its
/// labels, its taints, and the autoscaler's range over all its zones when it is on.
pub fn as_spec(pool: &ObservedPool) -> Value {
    let taints: Vec<contract::api::Taint> = pool
        .taints
        .iter()
        .filter_map(|(key, value, written)| {
            contract::api::Taint::from_cloud(key, value, |e| effect(e) == *written)
        })
        .collect();
    let zones = i32::try_from(pool.zones.len().max(1)).unwrap_or(1);
    let scaling = pool.autoscaling.map(|(min, max)| NodeScaling {
        min_replicas: min.saturating_mul(zones),
        max_replicas: max.saturating_mul(zones),
    });
    json!({"labels": pool.labels, "taints": taints, "scaling": scaling})
}

/// The first difference between `spec` (with `scaling`) and the pool GKE has, or what makes
/// the ask impossible (a count that does not divide over the pool's zones).
pub fn diff(
    observed: &ObservedPool,
    spec: &PoolSpec,
    scaling: ScalingIntent,
) -> CloudStep<PoolChange> {
    match pool_change(observed, spec, scaling) {
        Ok(Some(change)) => CloudStep::Change(change),
        Ok(None) => CloudStep::Nothing,
        Err(message) => CloudStep::Invalid(message),
    }
}

/// The first difference: the count's owner first, then the count, then the settings.
fn pool_change(
    observed: &ObservedPool,
    spec: &PoolSpec,
    scaling: ScalingIntent,
) -> Result<Option<PoolChange>, String> {
    let zones = observed.zones.len();
    match scaling {
        ScalingIntent::Autoscaled { min, max, .. } => {
            let want = (
                per_zone(min, zones, "spec.scaling.minReplicas")?,
                per_zone(max, zones, "spec.scaling.maxReplicas")?,
            );
            if observed.autoscaling != Some(want) {
                return Ok(Some(PoolChange::Autoscaling(Some(want))));
            }
        }
        ScalingIntent::Fixed { replicas } => {
            if observed.autoscaling.is_some() {
                return Ok(Some(PoolChange::Autoscaling(None)));
            }
            let want = per_zone(replicas, zones, "MachinePool.spec.replicas")?;
            if observed.per_zone != Some(want) {
                return Ok(Some(PoolChange::Size(want)));
            }
        }
    }
    let labels = (observed.labels != spec.labels).then(|| spec.labels.clone());
    let taints = (observed.taints != spec.taints).then(|| spec.taints.clone());
    let upgrade = spec.upgrade.filter(|u| *u != observed.upgrade);
    if labels.is_none() && taints.is_none() && upgrade.is_none() {
        return Ok(None);
    }
    Ok(Some(PoolChange::Settings {
        labels,
        taints,
        upgrade,
    }))
}

impl DescribePoolChange<ObservedPool> for PoolChange {
    fn describe(&self, _pool: Option<&ManagedPool<ObservedPool>>) -> String {
        match self {
            PoolChange::Autoscaling(Some((min, max))) => {
                format!("turning autoscaling on between {min} and {max} nodes per zone")
            }
            PoolChange::Autoscaling(None) => "turning autoscaling off".into(),
            PoolChange::Size(n) => format!("resizing to {n} nodes per zone"),
            PoolChange::Settings { .. } => "updating labels, taints or upgrade settings".into(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn view_at(per_zone: i32, zones: usize) -> ObservedPool {
        ObservedPool {
            zones: (0..zones).map(|z| format!("z{z}")).collect(),
            per_zone: Some(per_zone),
            upgrade: (1, 0),
            ..ObservedPool::default()
        }
    }

    fn shape() -> PoolSpec {
        PoolSpec {
            machine_type: "e2-standard-2".into(),
            disk_size_gb: None,
            image_type: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            spot: false,
            upgrade: None,
            service_account: None,
            request_overrides: None,
        }
    }

    #[test]
    fn replicas_are_divided_over_the_zones_and_must_divide() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            pool_change(&view_at(1, 2), &shape(), fixed(4)),
            Ok(Some(PoolChange::Size(2)))
        );
        assert_eq!(pool_change(&view_at(2, 2), &shape(), fixed(4)), Ok(None));
        let e = pool_change(&view_at(1, 2), &shape(), fixed(3)).unwrap_err();
        assert!(
            e.contains("MachinePool.spec.replicas 3") && e.contains("multiple of 2"),
            "{e}"
        );
    }

    #[test]
    fn autoscaling_owns_the_count_and_settings_follow() {
        let auto = ScalingIntent::Autoscaled {
            min: 1,
            max: 3,
            initial: 2,
        };
        assert_eq!(
            pool_change(&view_at(2, 1), &shape(), auto),
            Ok(Some(PoolChange::Autoscaling(Some((1, 3)))))
        );
        let mut on = view_at(2, 1);
        on.autoscaling = Some((1, 3));
        assert_eq!(pool_change(&on, &shape(), auto), Ok(None));
        assert_eq!(
            pool_change(&on, &shape(), ScalingIntent::Fixed { replicas: 2 }),
            Ok(Some(PoolChange::Autoscaling(None)))
        );
        let mut labelled = shape();
        labelled.labels.insert("role".into(), "web".into());
        assert!(matches!(
            pool_change(
                &view_at(2, 1),
                &labelled,
                ScalingIntent::Fixed { replicas: 2 }
            ),
            Ok(Some(PoolChange::Settings {
                labels: Some(_),
                taints: None,
                upgrade: None
            }))
        ));
    }

    #[test]
    fn a_node_pool_reads_back_as_the_spec_would_ask_for_it() {
        let pool = ObservedPool {
            autoscaling: Some((1, 3)),
            labels: BTreeMap::from([("team".to_string(), "a".to_string())]),
            taints: vec![(
                "dedicated".into(),
                "gpu".into(),
                google_cloud_container_v1::model::node_taint::Effect::NoExecute,
            )],
            ..view_at(1, 3)
        };
        assert_eq!(
            as_spec(&pool),
            serde_json::json!({
                "labels": {"team": "a"},
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoExecute"}],
                // GKE's bounds are per zone; the spec's are the pool's.
                "scaling": {"minReplicas": 3, "maxReplicas": 9},
            })
        );
    }
}
