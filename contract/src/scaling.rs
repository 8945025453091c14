//! Who owns a pool's node count, what to write back into the MachinePool, and the exact
//! `spec.providerIDList` rule. The same on every cloud.
//!
//! - Without `spec.scaling` the count is `MachinePool.spec.replicas` and the provider pushes it
//!   to the cloud ([`ScalingIntent::Fixed`]).
//! - With `spec.scaling` the cloud's autoscaler moves the count between the bounds; the provider
//!   annotates the MachinePool `cluster.x-k8s.io/replicas-managed-by: <provider>` and writes the
//!   count the cloud reports back into `MachinePool.spec.replicas` ([`write_back`]).
//! - Core deletes the Node of every provider ID that leaves the list, so an ID leaves only once
//!   the cloud says its instance is gone; an instance still shutting down keeps it
//!   ([`provider_id_list`]).

use serde_json::{Value, json};

use crate::api::NodeScaling;
use crate::capi::{MachinePool, REPLICAS_MANAGED_BY_ANNOTATION};

/// Who owns the node count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalingIntent {
    /// `MachinePool.spec.replicas` does: the provider pushes it to the cloud.
    Fixed {
        /// The wanted count.
        replicas: i32,
    },
    /// `spec.scaling` is set: the cloud's autoscaler moves the count between these bounds and
    /// the provider writes it back into `MachinePool.spec.replicas`.
    Autoscaled {
        /// `spec.scaling.minReplicas`.
        min: i32,
        /// `spec.scaling.maxReplicas`.
        max: i32,
        /// `MachinePool.spec.replicas`, used only to size the pool at creation.
        initial: i32,
    },
}

impl ScalingIntent {
    /// From `spec.scaling` and `MachinePool.spec.replicas` (core defaults it to 1).
    pub fn new(scaling: Option<&NodeScaling>, replicas: Option<i32>) -> Self {
        let replicas = replicas.unwrap_or(1).max(0);
        match scaling {
            None => ScalingIntent::Fixed { replicas },
            Some(s) => ScalingIntent::Autoscaled {
                min: s.min_replicas,
                max: s.max_replicas,
                initial: replicas,
            },
        }
    }

    /// Whether the cloud's autoscaler owns the count.
    pub fn is_autoscaled(self) -> bool {
        matches!(self, ScalingIntent::Autoscaled { .. })
    }

    /// The count to create the pool with: the replicas, clamped into the bounds when autoscaled.
    pub fn initial_count(self) -> i32 {
        match self {
            ScalingIntent::Fixed { replicas } => replicas,
            ScalingIntent::Autoscaled { min, max, initial } => initial.clamp(min, max.max(min)),
        }
    }
}

/// The merge patch for the owning MachinePool, if it needs one.
///
/// While the autoscaler owns the count: the `replicas-managed-by` annotation (set to `manager`
/// unless someone already claims the count), and `spec.replicas` set to `observed_count`, the
/// count the cloud reports, when it differs. When `spec.scaling` goes away, the annotation is
/// removed again, but only if it is `manager`'s. `observed_count` is `None` when the cloud's
/// count is not known (or the pool is not ours): then only the annotation is decided.
pub fn write_back(
    intent: ScalingIntent,
    pool: &MachinePool,
    manager: &str,
    observed_count: Option<i32>,
) -> Option<Value> {
    let current = pool
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REPLICAS_MANAGED_BY_ANNOTATION))
        .map(String::as_str);
    let mut patch = serde_json::Map::new();
    match (intent.is_autoscaled(), current) {
        (true, None | Some("")) => {
            patch.insert(
                "metadata".into(),
                json!({"annotations": {REPLICAS_MANAGED_BY_ANNOTATION: manager}}),
            );
        }
        (false, Some(value)) if value == manager => {
            patch.insert(
                "metadata".into(),
                json!({"annotations": {REPLICAS_MANAGED_BY_ANNOTATION: null}}),
            );
        }
        _ => {}
    }
    if intent.is_autoscaled()
        && let Some(count) = observed_count
        && pool.spec.replicas != Some(count)
    {
        patch.insert("spec".into(), json!({"replicas": count}));
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

/// Where a pool instance is in its life, as far as its provider ID is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceLife {
    /// Being created, running, stopping or shutting down: its Node may still exist.
    Present,
    /// The cloud reports it terminated or deleted: its Node may go.
    Gone,
}

/// `spec.providerIDList`: the provider ID of every instance that is not gone, sorted, without
/// repeats. An ID leaves the list only when the cloud says its instance is gone.
pub fn provider_id_list<'a>(
    instances: impl IntoIterator<Item = (&'a str, InstanceLife)>,
) -> Vec<String> {
    let mut ids: Vec<String> = instances
        .into_iter()
        .filter(|(_, life)| *life == InstanceLife::Present)
        .map(|(id, _)| id.to_string())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// `spec.providerIDList` as a pass sends it: the list, or nothing when it is empty and already
/// absent (so a pool at zero nodes does not write every pass).
pub fn provider_id_fields(ids: &[String], current: &[String]) -> Value {
    if ids.is_empty() && current.is_empty() {
        json!({})
    } else {
        json!({ "providerIDList": ids })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn pool(annotation: Option<&str>, replicas: Option<i32>) -> MachinePool {
        let mut p: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp", "namespace": "ns"},
            "spec": {"clusterName": "c", "template": {"spec": {"bootstrap": {"dataSecretName": ""}}}},
        }))
        .unwrap();
        p.spec.replicas = replicas;
        if let Some(a) = annotation {
            p.metadata.annotations = Some(BTreeMap::from([(
                REPLICAS_MANAGED_BY_ANNOTATION.to_string(),
                a.to_string(),
            )]));
        }
        p
    }

    const AUTOSCALED: ScalingIntent = ScalingIntent::Autoscaled {
        min: 1,
        max: 5,
        initial: 2,
    };

    #[test]
    fn an_autoscaled_pool_annotates_its_machine_pool_once() {
        let patch = write_back(AUTOSCALED, &pool(None, Some(2)), "eks", None).unwrap();
        assert_eq!(
            patch,
            json!({"metadata": {"annotations": {REPLICAS_MANAGED_BY_ANNOTATION: "eks"}}})
        );
        assert_eq!(
            write_back(AUTOSCALED, &pool(Some("eks"), Some(2)), "eks", Some(2)),
            None
        );
        assert_eq!(
            write_back(
                AUTOSCALED,
                &pool(Some("cluster-autoscaler"), Some(2)),
                "eks",
                Some(2)
            ),
            None,
            "any non-empty value says someone else owns the count"
        );
    }

    #[test]
    fn an_autoscaled_pool_writes_the_cloud_count_back_into_the_machine_pool() {
        let patch = write_back(AUTOSCALED, &pool(Some("gke"), Some(2)), "gke", Some(4)).unwrap();
        assert_eq!(patch, json!({"spec": {"replicas": 4}}));
    }

    #[test]
    fn a_fixed_pool_never_writes_the_count_and_drops_only_its_own_annotation() {
        let fixed = ScalingIntent::Fixed { replicas: 2 };
        assert_eq!(
            write_back(fixed, &pool(None, Some(2)), "eks", Some(5)),
            None
        );
        assert_eq!(
            write_back(fixed, &pool(Some("eks"), Some(2)), "eks", Some(2)),
            Some(json!({"metadata": {"annotations": {REPLICAS_MANAGED_BY_ANNOTATION: null}}}))
        );
        assert_eq!(
            write_back(fixed, &pool(Some("someone-else"), Some(2)), "eks", None),
            None
        );
    }

    #[test]
    fn scaling_bounds_make_the_intent_autoscaled_and_clamp_the_first_count() {
        let bounds = NodeScaling {
            min_replicas: 2,
            max_replicas: 4,
        };
        assert!(ScalingIntent::new(Some(&bounds), Some(3)).is_autoscaled());
        assert!(!ScalingIntent::new(None, Some(2)).is_autoscaled());
        assert_eq!(
            ScalingIntent::new(Some(&bounds), Some(9)).initial_count(),
            4
        );
        assert_eq!(
            ScalingIntent::new(Some(&bounds), Some(0)).initial_count(),
            2
        );
        assert_eq!(
            ScalingIntent::new(None, None),
            ScalingIntent::Fixed { replicas: 1 }
        );
    }

    #[test]
    fn a_provider_id_leaves_the_list_only_when_its_instance_is_gone() {
        use InstanceLife::{Gone, Present};
        let ids = provider_id_list([
            ("aws:///z/i-2", Present),
            ("aws:///z/i-1", Present),
            ("aws:///z/i-3", Gone),
            ("aws:///z/i-1", Present),
        ]);
        assert_eq!(ids, ["aws:///z/i-1", "aws:///z/i-2"]);
    }

    #[test]
    fn an_empty_provider_id_list_is_sent_only_to_clear_a_previous_one() {
        assert_eq!(provider_id_fields(&[], &[]), json!({}));
        assert_eq!(
            provider_id_fields(&[], &["aws:///a/i-1".into()]),
            json!({"providerIDList": []})
        );
        assert_eq!(
            provider_id_fields(&["aws:///a/i-1".into()], &[]),
            json!({"providerIDList": ["aws:///a/i-1"]})
        );
    }
}
