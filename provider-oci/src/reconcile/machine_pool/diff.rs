//! The difference between what the spec asks and the node pool: [`diff`], pure, the first
//! difference as one [`PoolChange`] (one UpdateNodePool each), said for the conditions by its
//! [`DescribePoolChange`]. OKE's cluster autoscaler is an add-on in the cluster, not a pool
//! setting: an autoscaled pool's size is only kept within the bounds.

use std::collections::BTreeMap;

use contract::plan::CloudStep;
use contract::scaling::ScalingIntent;
use provider_runtime::machine_pool::{DescribePoolChange, ManagedPool};
use serde_json::{Value, json};

use super::desired::PoolSpec;
use super::observe::ObservedPool;

/// One difference, one UpdateNodePool.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolChange {
    /// The size.
    Size(i32),
    /// Labels, shape and node cycling: the fields that differ.
    Settings {
        /// New labels.
        labels: Option<BTreeMap<String, String>>,
        /// New shape and its flexible configuration.
        shape: Option<(String, Option<(i32, i32)>)>,
        /// New node cycling.
        cycling: Option<(String, String)>,
    },
}

/// The node pool as an OKEMachinePool's spec would ask for it, for an adoption's plan: its
/// initial node labels (OKE has no taints, and its autoscaler is not a pool setting).
pub fn as_spec(pool: &ObservedPool) -> Value {
    json!({"labels": pool.labels})
}

/// The first difference (pure): the size first, then the settings.
pub fn diff(o: &ObservedPool, spec: &PoolSpec, scaling: ScalingIntent) -> CloudStep<PoolChange> {
    let size = o.size.unwrap_or(0);
    match scaling {
        ScalingIntent::Fixed { replicas } if size != replicas => {
            return CloudStep::Change(PoolChange::Size(replicas));
        }
        // The autoscaler owns the size; it is only kept within the bounds.
        ScalingIntent::Autoscaled { min, max, .. } if size < min || size > max => {
            return CloudStep::Change(PoolChange::Size(size.clamp(min, max)));
        }
        _ => {}
    }
    let labels = (o.labels != spec.labels).then(|| spec.labels.clone());
    let shape =
        (o.shape != spec.shape || o.flex != spec.flex).then(|| (spec.shape.clone(), spec.flex));
    let cycling = (o.cycling.as_ref() != Some(&spec.cycling)).then(|| spec.cycling.clone());
    if labels.is_none() && shape.is_none() && cycling.is_none() {
        return CloudStep::Nothing;
    }
    CloudStep::Change(PoolChange::Settings {
        labels,
        shape,
        cycling,
    })
}

impl DescribePoolChange<ObservedPool> for PoolChange {
    fn describe(&self, _pool: Option<&ManagedPool<ObservedPool>>) -> String {
        match self {
            PoolChange::Size(n) => format!("scaling to {n} nodes"),
            PoolChange::Settings { .. } => "updating labels, shape or node cycling".into(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn spec() -> PoolSpec {
        PoolSpec {
            shape: "VM.Standard.E4.Flex".into(),
            flex: Some((1, 16)),
            boot_volume_gb: None,
            image: None,
            labels: BTreeMap::new(),
            spot: false,
            cycling: ("1".into(), "0".into()),
            subnet: None,
            max_pods: None,
            ssh_key: None,
            request_overrides: None,
        }
    }

    fn at(size: i32) -> ObservedPool {
        ObservedPool {
            size: Some(size),
            shape: "VM.Standard.E4.Flex".into(),
            flex: Some((1, 16)),
            cycling: Some(("1".into(), "0".into())),
            ..ObservedPool::default()
        }
    }

    #[test]
    fn the_size_comes_first_and_an_autoscaled_size_is_only_kept_within_bounds() {
        let fixed = |replicas| ScalingIntent::Fixed { replicas };
        assert_eq!(
            diff(&at(1), &spec(), fixed(3)),
            CloudStep::Change(PoolChange::Size(3))
        );
        assert_eq!(diff(&at(3), &spec(), fixed(3)), CloudStep::Nothing);
        let auto = ScalingIntent::Autoscaled {
            min: 2,
            max: 4,
            initial: 2,
        };
        assert_eq!(diff(&at(3), &spec(), auto), CloudStep::Nothing);
        assert_eq!(
            diff(&at(6), &spec(), auto),
            CloudStep::Change(PoolChange::Size(4))
        );
        assert_eq!(
            diff(&at(1), &spec(), auto),
            CloudStep::Change(PoolChange::Size(2))
        );
        let mut labelled = spec();
        labelled.labels.insert("team".into(), "a".into());
        assert!(matches!(
            diff(&at(3), &labelled, fixed(3)),
            CloudStep::Change(PoolChange::Settings {
                labels: Some(_),
                shape: None,
                cycling: None
            })
        ));
    }
}
