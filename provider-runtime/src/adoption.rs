//! An adoption's plan for any kind, from the object and what its cloud resource is in the
//! spec's terms ([`contract::adoption`] compares them), and `status.adoption`.

use contract::adoption::{self, AdoptionPlan, SetFields};
use contract::api::{AdoptionPhase, AdoptionStatus, MAX_ADOPTION_ROWS, PlannedChange};
use contract::plan::Plan;
use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::ProviderError;

/// What adopting the resource described by `cloud` (spec-shaped) would change for `obj`, with
/// the rows the kernel adds itself (`first`: the version, the size) in front.
///
/// # Errors
/// The object does not serialise (a bug).
pub(crate) fn plan_of<K: Resource + Serialize>(
    obj: &K,
    cloud: &Value,
    first: impl IntoIterator<Item = PlannedChange>,
) -> Result<AdoptionPlan, ProviderError> {
    let spec = serde_json::to_value(obj)
        .map_err(|e| ProviderError::cloud("internal", format!("the spec does not serialise: {e}")))?
        .get("spec")
        .cloned()
        .unwrap_or_default();
    let set = SetFields::from_managed(obj.meta().managed_fields.as_deref().unwrap_or_default());
    let mut plan = adoption::plan(&spec, &set, cloud);
    plan.changes.splice(0..0, first);
    Ok(plan)
}

/// The spec fields an accepted adoption writes before it tags anything: `Some` only when the
/// plan is accepted and keeps fields nobody set.
pub(crate) fn keep<C>(plan: &Plan<C>, planned: Option<&AdoptionPlan>) -> Option<Value> {
    planned
        .filter(|_| matches!(plan, Plan::Adopt { .. }))
        .and_then(AdoptionPlan::keep_patch)
}

/// What the condition says of a planned adoption: its rows in one line.
pub(crate) fn summary<C>(plan: &Plan<C>, planned: Option<&AdoptionPlan>) -> Option<String> {
    match (plan, planned) {
        (Plan::AdoptionPlanned { .. }, Some(p)) => Some(adoption::summary(&p.changes)),
        _ => None,
    }
}

/// `status.adoption` for a pass whose plan is `plan`, on the resource `cloud_id`: the plan while
/// it waits, that nothing can be adopted, or that the resource is ours.
pub(crate) fn status<C>(
    plan: &Plan<C>,
    planned: Option<&AdoptionPlan>,
    cloud_id: Option<&str>,
) -> AdoptionStatus {
    let (phase, planned) = match plan {
        Plan::AdoptionPlanned { .. } | Plan::Adopt { .. } => (AdoptionPhase::Planned, planned),
        Plan::AdoptionRefused(_) | Plan::NameConflict { .. } => (AdoptionPhase::Refused, None),
        _ => (AdoptionPhase::Adopted, None),
    };
    let mut changes = planned.map(|p| p.changes.clone()).unwrap_or_default();
    if changes.len() > MAX_ADOPTION_ROWS {
        let more = changes.len() - (MAX_ADOPTION_ROWS - 1);
        changes.truncate(MAX_ADOPTION_ROWS - 1);
        changes.push(PlannedChange {
            field: format!("(and {more} more fields)"),
            cloud: String::new(),
            spec: String::new(),
        });
    }
    let mut kept = planned.map(AdoptionPlan::kept_fields).unwrap_or_default();
    if kept.len() > MAX_ADOPTION_ROWS {
        let more = kept.len() - (MAX_ADOPTION_ROWS - 1);
        kept.truncate(MAX_ADOPTION_ROWS - 1);
        kept.push(format!("(and {more} more fields)"));
    }
    AdoptionStatus {
        phase,
        cloud_id: cloud_id.filter(|id| !id.is_empty()).map(str::to_string),
        changes,
        kept,
    }
}

/// Says in an event that `what` (`EKS cluster c1 (arn:…)`) was left running for
/// `spec.deletionPolicy: Orphan`.
pub(crate) async fn orphaned(events: &crate::reconcile::ObjectEvents, what: &str) {
    let note = format!(
        "The {what} was left running without this Cluster's ownership tag (spec.deletionPolicy: Orphan); it can be adopted again"
    );
    events.normal("Orphaned", "Delete", note).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_longer_than_the_schema_allows_ends_in_a_row_that_counts_the_rest() {
        let row = |i: usize| PlannedChange {
            field: format!("spec.labels.k{i}"),
            cloud: "a".into(),
            spec: "b".into(),
        };
        let planned = AdoptionPlan {
            changes: (0..100).map(row).collect(),
            kept: (0..100)
                .map(|i| (vec!["labels".to_string(), format!("k{i}")], Value::Null))
                .collect(),
        };
        let plan: Plan<()> = Plan::AdoptionPlanned { id: "id".into() };
        let long = status(&plan, Some(&planned), Some("id"));
        assert_eq!(long.changes.len(), MAX_ADOPTION_ROWS);
        assert_eq!(long.changes.last().unwrap().field, "(and 37 more fields)");
        assert_eq!(long.kept.len(), MAX_ADOPTION_ROWS);
        assert_eq!(long.kept.last().unwrap(), "(and 37 more fields)");
        let short = AdoptionPlan {
            changes: vec![row(1)],
            kept: Vec::new(),
        };
        assert_eq!(status(&plan, Some(&short), None).changes, [row(1)]);
    }
}
