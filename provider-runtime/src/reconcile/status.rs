//! Pure status maths: which conditions a pass ends with, the status object to apply, whether it
//! differs from what the object already has, and which condition changes deserve an event.

use contract::conditions::{
    ConditionStatus, ConditionType, DesiredCondition, Reason, compute_conditions, paused_condition,
    ready_summary,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Map, Value};

use crate::error::ProviderError;

/// Status keys the engine owns; the provider's values for them are dropped.
const ENGINE_KEYS: [&str; 2] = ["conditions", "observedGeneration"];

/// The status an object should have after a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredStatus {
    /// The provider's fields (everything but `conditions` and `observedGeneration`).
    pub fields: Map<String, Value>,
    /// The complete condition set, sorted by type.
    pub conditions: Vec<Condition>,
    /// `status.observedGeneration`; `None` leaves the key out.
    pub observed_generation: Option<i64>,
}

impl DesiredStatus {
    /// The status object to apply.
    pub fn to_value(&self) -> Value {
        let mut status = self.fields.clone();
        status.insert(
            "conditions".to_owned(),
            serde_json::to_value(&self.conditions).unwrap_or_else(|_| Value::Array(Vec::new())),
        );
        if let Some(g) = self.observed_generation {
            status.insert("observedGeneration".to_owned(), Value::from(g));
        }
        Value::Object(status)
    }

    /// Whether the object already has exactly this status, so the write can be skipped.
    ///
    /// `current_status` is the object's `status` (as serialised by its own type) and
    /// `current_conditions` its typed conditions. Conditions compare as sets keyed by type; a
    /// JSON `null` counts as absent on both sides.
    pub fn is_unchanged(
        &self,
        current_status: Option<&Value>,
        current_conditions: &[Condition],
    ) -> bool {
        let current_fields = fields_of(current_status);
        if current_fields != self.fields {
            return false;
        }
        let current_generation = current_status
            .and_then(|s| s.get("observedGeneration"))
            .and_then(Value::as_i64);
        if current_generation != self.observed_generation {
            return false;
        }
        let mut current: Vec<&Condition> = current_conditions.iter().collect();
        current.sort_by(|a, b| a.type_.cmp(&b.type_));
        let mut desired: Vec<&Condition> = self.conditions.iter().collect();
        desired.sort_by(|a, b| a.type_.cmp(&b.type_));
        current == desired
    }
}

/// The provider-owned fields of a status object: engine keys and nulls removed.
pub fn fields_of(status: Option<&Value>) -> Map<String, Value> {
    match status {
        Some(Value::Object(map)) => {
            let mut map = map.clone();
            for key in ENGINE_KEYS {
                map.remove(key);
            }
            strip_nulls_in(&mut map);
            map
        }
        _ => Map::new(),
    }
}

fn strip_nulls_in(map: &mut Map<String, Value>) {
    map.retain(|_, v| !v.is_null());
    for v in map.values_mut() {
        strip_nulls(v);
    }
}

fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => strip_nulls_in(map),
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// A stored condition as a desired one (to carry it over unchanged).
pub fn as_desired(c: &Condition) -> DesiredCondition {
    DesiredCondition::new(
        c.type_.clone(),
        ConditionStatus::parse(&c.status).unwrap_or(ConditionStatus::Unknown),
        c.reason.clone(),
        c.message.clone(),
    )
}

fn is_engine_type(type_: &str) -> bool {
    type_ == ConditionType::Ready.as_str() || type_ == ConditionType::Paused.as_str()
}

/// `Ready=False` from an error, or `None` for management-API errors (not the user's concern).
pub fn ready_from_error(error: &ProviderError) -> Option<DesiredCondition> {
    match error {
        ProviderError::Transient {
            reason, message, ..
        }
        | ProviderError::Terminal { reason, message } => Some(
            DesiredCondition::false_(ConditionType::Ready, *reason, message.clone()).in_sentences(),
        ),
        ProviderError::Kube(_) => None,
    }
}

/// The conditions a reconcile pass ends with.
///
/// `provided` are the provider's conditions; with `carry_previous` (the provider returned an
/// error and no pass) the previous conditions stand in for them. `Ready` comes from the error
/// when there is one, else from the provider, else it summarises the others. `Paused` is
/// always `False/NotPaused`. Every message is written as a sentence
/// ([`contract::conditions::sentence`]), whichever cloud wrote it.
pub fn pass_conditions(
    provided: &[DesiredCondition],
    previous: &[Condition],
    carry_previous: bool,
    error: Option<&ProviderError>,
) -> Vec<DesiredCondition> {
    let base: Vec<DesiredCondition> = if carry_previous {
        previous
            .iter()
            .filter(|c| !is_engine_type(&c.type_))
            .map(as_desired)
            .collect()
    } else {
        provided
            .iter()
            .filter(|c| !c.is_type(ConditionType::Paused))
            .cloned()
            .map(DesiredCondition::in_sentences)
            .collect()
    };
    let (ready, mut others): (Vec<_>, Vec<_>) = base
        .into_iter()
        .partition(|c| c.is_type(ConditionType::Ready));
    let ready = error
        .and_then(ready_from_error)
        .or_else(|| ready.into_iter().last())
        .unwrap_or_else(|| ready_summary(&others));
    others.push(ready);
    others.push(paused_condition(false));
    others
}

/// The conditions of a cleanup pass still in progress (or failing): the previous ones carried
/// over, `Ready=False` with reason `Deleting` (or the error's reason), `Paused=False`.
pub fn deleting_conditions(
    previous: &[Condition],
    message: &str,
    error: Option<&ProviderError>,
) -> Vec<DesiredCondition> {
    let mut out: Vec<DesiredCondition> = previous
        .iter()
        .filter(|c| !is_engine_type(&c.type_))
        .map(as_desired)
        .collect();
    let ready = error.and_then(ready_from_error).unwrap_or_else(|| {
        DesiredCondition::false_(ConditionType::Ready, Reason::Deleting, message).in_sentences()
    });
    out.push(ready);
    out.push(paused_condition(false));
    out
}

/// The status of a paused object: its fields and conditions as they are, `Paused=True`, and
/// `observedGeneration` untouched (a paused object has not observed its new spec).
pub fn paused_status(
    current_status: Option<&Value>,
    previous: &[Condition],
    generation: Option<i64>,
    now: jiff::Timestamp,
) -> DesiredStatus {
    // Already paused: leave the condition exactly as it is, so spec edits made while paused
    // change nothing in status (observedGeneration included).
    let already = previous.iter().find(|c| {
        c.type_ == ConditionType::Paused.as_str() && c.status == ConditionStatus::True.as_str()
    });
    let paused = match already {
        Some(c) => vec![c.clone()],
        None => compute_conditions(previous, &[paused_condition(true)], generation, now),
    };
    let mut conditions: Vec<Condition> = previous
        .iter()
        .filter(|c| c.type_ != ConditionType::Paused.as_str())
        .cloned()
        .chain(paused)
        .collect();
    conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
    DesiredStatus {
        fields: fields_of(current_status),
        conditions,
        observed_generation: current_status
            .and_then(|s| s.get("observedGeneration"))
            .and_then(Value::as_i64),
    }
}

/// The status after an active pass: `fields` from the provider (or the current ones when it
/// gave none), conditions computed against the previous set, `observedGeneration` = generation.
pub fn active_status(
    provider_status: Option<&Value>,
    current_status: Option<&Value>,
    previous: &[Condition],
    desired: &[DesiredCondition],
    generation: Option<i64>,
    now: jiff::Timestamp,
) -> DesiredStatus {
    DesiredStatus {
        fields: fields_of(provider_status.or(current_status)),
        conditions: compute_conditions(previous, desired, generation, now),
        observed_generation: generation,
    }
}

/// A condition change worth a Kubernetes event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// `Normal` (true) or `Warning` (false).
    pub normal: bool,
    /// The event reason (the condition's reason).
    pub reason: String,
    /// The event note (the condition's message, or a short default).
    pub note: String,
}

/// Reasons that describe work under way; nothing is wrong.
fn is_work_reason(reason: &str) -> bool {
    matches!(
        Reason::parse(reason),
        Some(
            Reason::Creating
                | Reason::Updating
                | Reason::Upgrading
                | Reason::Deleting
                | Reason::WaitingForInfrastructure
                | Reason::WaitingForCloud
                | Reason::WaitingForControlPlane
        )
    )
}

/// Reasons that describe progress or retries; moving between them is not news.
fn is_progress_reason(reason: &str) -> bool {
    is_work_reason(reason)
        || matches!(
            Reason::parse(reason),
            Some(Reason::Throttled | Reason::CloudError)
        )
}

/// The events a change from `previous` to `next` deserves: `Ready` flipping, `Ready` turning
/// to a terminal reason (e.g. `NameConflict`), and `Paused` flipping. Nothing when at rest.
pub fn transitions(previous: &[Condition], next: &[Condition]) -> Vec<Transition> {
    let find =
        |set: &[Condition], t: ConditionType| set.iter().find(|c| c.type_ == t.as_str()).cloned();
    let mut out = Vec::new();
    if let Some(ready) = find(next, ConditionType::Ready) {
        let before = find(previous, ConditionType::Ready);
        let flipped = before.as_ref().is_none_or(|b| b.status != ready.status);
        let reason_changed = before.as_ref().is_none_or(|b| b.reason != ready.reason);
        let is_true = ready.status == ConditionStatus::True.as_str();
        let newsworthy = if is_true {
            flipped
        } else if before.is_none() {
            !is_progress_reason(&ready.reason)
        } else {
            (flipped || reason_changed) && !is_progress_reason(&ready.reason)
                || (flipped
                    && before
                        .as_ref()
                        .is_some_and(|b| b.status == ConditionStatus::True.as_str()))
        };
        if newsworthy {
            out.push(Transition {
                normal: is_true || is_work_reason(&ready.reason),
                reason: ready.reason.clone(),
                note: if ready.message.is_empty() {
                    format!("Ready is {}", ready.status)
                } else {
                    ready.message.clone()
                },
            });
        }
    }
    if let Some(paused) = find(next, ConditionType::Paused) {
        let before = find(previous, ConditionType::Paused);
        let was_paused = before.is_some_and(|b| b.status == ConditionStatus::True.as_str());
        let is_paused = paused.status == ConditionStatus::True.as_str();
        if was_paused != is_paused {
            out.push(Transition {
                normal: true,
                reason: paused.reason.clone(),
                note: if is_paused {
                    "Reconciliation paused".to_owned()
                } else {
                    "Reconciliation resumed".to_owned()
                },
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::Duration;

    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    use super::*;

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn cond(type_: &str, status: &str, reason: &str, at: i64) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            last_transition_time: Time(ts(at)),
            observed_generation: Some(1),
        }
    }

    fn network_ready() -> DesiredCondition {
        DesiredCondition::true_("NetworkReady", Reason::Ready, "")
    }

    #[test]
    fn a_resting_object_needs_no_write() {
        let provider =
            json!({"ready": true, "initialization": {"provisioned": true}, "cloudID": null});
        let first = active_status(
            Some(&provider),
            None,
            &[],
            &pass_conditions(&[network_ready()], &[], false, None),
            Some(1),
            ts(100),
        );
        // What the server would hand back after the apply.
        let stored = first.to_value();
        let again = active_status(
            Some(&provider),
            Some(&stored),
            &first.conditions,
            &pass_conditions(&[network_ready()], &first.conditions, false, None),
            Some(1),
            ts(5000),
        );
        assert!(again.is_unchanged(Some(&stored), &first.conditions));
        assert_eq!(again, first);
    }

    #[test]
    fn any_field_condition_or_generation_change_needs_a_write() {
        let provider = json!({"ready": true});
        let s = active_status(
            Some(&provider),
            None,
            &[],
            &pass_conditions(&[], &[], false, None),
            Some(1),
            ts(1),
        );
        let stored = s.to_value();
        assert!(s.is_unchanged(Some(&stored), &s.conditions));

        let mut other_field = s.clone();
        other_field
            .fields
            .insert("version".into(), json!("v1.31.2"));
        assert!(!other_field.is_unchanged(Some(&stored), &s.conditions));

        let mut dropped_field = s.clone();
        dropped_field.fields.remove("ready");
        assert!(!dropped_field.is_unchanged(Some(&stored), &s.conditions));

        let mut newer = s.clone();
        newer.observed_generation = Some(2);
        assert!(!newer.is_unchanged(Some(&stored), &s.conditions));

        let mut message = s.clone();
        message.conditions[0].message = "different".into();
        assert!(!message.is_unchanged(Some(&stored), &s.conditions));

        assert!(!s.is_unchanged(None, &[]));
    }

    #[test]
    fn condition_order_and_nulls_do_not_count_as_changes() {
        let s = active_status(
            Some(&json!({"a": 1, "b": null, "nested": {"x": null, "y": 2}})),
            None,
            &[],
            &pass_conditions(&[network_ready()], &[], false, None),
            Some(3),
            ts(1),
        );
        let stored = json!({"a": 1, "nested": {"y": 2}, "observedGeneration": 3});
        let mut reversed = s.conditions.clone();
        reversed.reverse();
        assert!(s.is_unchanged(Some(&stored), &reversed));
    }

    #[test]
    fn the_provider_cannot_write_the_engine_keys() {
        let s = active_status(
            Some(&json!({"ready": false, "conditions": [1], "observedGeneration": 99})),
            None,
            &[],
            &[],
            Some(4),
            ts(1),
        );
        assert_eq!(
            s.fields,
            json!({"ready": false}).as_object().unwrap().clone()
        );
        assert_eq!(s.to_value()["observedGeneration"], json!(4));
    }

    #[test]
    fn without_provider_status_the_current_fields_are_kept() {
        let current =
            json!({"ready": true, "cloudID": "arn:x", "conditions": [], "observedGeneration": 1});
        let s = active_status(None, Some(&current), &[], &[], Some(2), ts(1));
        assert_eq!(
            s.fields,
            json!({"ready": true, "cloudID": "arn:x"})
                .as_object()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn ready_summarises_the_provider_conditions_and_paused_is_false() {
        let out = pass_conditions(
            &[
                network_ready(),
                DesiredCondition::false_(
                    "KubeconfigReady",
                    Reason::WaitingForCloud,
                    "no endpoint yet",
                ),
            ],
            &[],
            false,
            None,
        );
        let ready = out
            .iter()
            .find(|c| c.is_type(ConditionType::Ready))
            .unwrap();
        assert_eq!(ready.status, ConditionStatus::False);
        assert_eq!(ready.reason, "WaitingForCloud");
        let paused = out
            .iter()
            .find(|c| c.is_type(ConditionType::Paused))
            .unwrap();
        assert_eq!(
            (paused.status, paused.reason.as_str()),
            (ConditionStatus::False, "NotPaused")
        );
    }

    #[test]
    fn an_explicit_ready_from_the_provider_wins_over_the_summary() {
        let mine = DesiredCondition::false_(ConditionType::Ready, Reason::Creating, "creating");
        let out = pass_conditions(&[network_ready(), mine.clone()], &[], false, None);
        assert!(
            out.contains(&mine.in_sentences()),
            "the message as a sentence: {out:?}"
        );
        assert!(out.iter().any(|c| c.message == "Creating."));
        assert_eq!(
            out.iter()
                .filter(|c| c.is_type(ConditionType::Ready))
                .count(),
            1
        );
    }

    #[test]
    fn the_provider_cannot_unpause_itself() {
        let out = pass_conditions(&[paused_condition(true)], &[], false, None);
        let paused: Vec<_> = out
            .iter()
            .filter(|c| c.is_type(ConditionType::Paused))
            .collect();
        assert_eq!(paused.len(), 1);
        assert_eq!(paused[0].status, ConditionStatus::False);
    }

    #[test]
    fn a_transient_error_sets_ready_false_with_the_clouds_message_and_keeps_the_rest() {
        let previous = vec![
            cond("NetworkReady", "True", "Ready", 10),
            cond("Ready", "True", "Ready", 10),
            cond("Paused", "False", "NotPaused", 10),
        ];
        let err = ProviderError::throttled("Rate exceeded", Some(Duration::from_secs(5)));
        let out = pass_conditions(&[], &previous, true, Some(&err));
        assert!(out.contains(&DesiredCondition::true_("NetworkReady", Reason::Ready, "")));
        assert!(out.contains(&DesiredCondition::false_(
            ConditionType::Ready,
            Reason::Throttled,
            "Rate exceeded."
        )));
        let terminal = ProviderError::terminal(
            Reason::NameConflict,
            "a cluster named x exists and is not ours",
        );
        let out = pass_conditions(&[network_ready()], &previous, false, Some(&terminal));
        let ready = out
            .iter()
            .find(|c| c.is_type(ConditionType::Ready))
            .unwrap();
        assert_eq!(ready.reason, "NameConflict");
    }

    #[test]
    fn pausing_touches_only_the_paused_condition() {
        let previous = vec![
            cond("Ready", "True", "Ready", 10),
            cond("Paused", "False", "NotPaused", 10),
        ];
        let current = json!({"ready": true, "observedGeneration": 1});
        let s = paused_status(Some(&current), &previous, Some(2), ts(500));
        assert_eq!(s.observed_generation, Some(1));
        assert_eq!(
            s.fields,
            json!({"ready": true}).as_object().unwrap().clone()
        );
        assert_eq!(s.conditions[1].type_, "Ready");
        assert_eq!(s.conditions[1], previous[0]);
        assert_eq!(s.conditions[0].type_, "Paused");
        assert_eq!(s.conditions[0].status, "True");
        assert_eq!(s.conditions[0].last_transition_time, Time(ts(500)));
        // Still paused later: nothing moves, nothing to write.
        let stored = s.to_value();
        let later = paused_status(Some(&stored), &s.conditions, Some(3), ts(900));
        assert!(later.is_unchanged(Some(&stored), &s.conditions));
    }

    #[test]
    fn deleting_reports_progress_without_losing_other_conditions() {
        let previous = vec![
            cond("NetworkReady", "True", "Ready", 1),
            cond("Ready", "True", "Ready", 1),
        ];
        let out = deleting_conditions(&previous, "waiting for the cloud to delete c1", None);
        assert!(out.contains(&DesiredCondition::false_(
            ConditionType::Ready,
            Reason::Deleting,
            "Waiting for the cloud to delete c1."
        )));
        assert!(out.iter().any(|c| c.type_ == "NetworkReady"));
    }

    #[test]
    fn events_fire_on_flips_and_terminal_reasons_only() {
        let t = |s, r| vec![cond("Ready", s, r, 1)];
        // Nothing before, progress: quiet. Nothing before, True: news.
        assert!(transitions(&[], &t("False", "Creating")).is_empty());
        assert_eq!(transitions(&[], &t("True", "Ready")).len(), 1);
        // At rest: quiet.
        assert!(transitions(&t("True", "Ready"), &t("True", "Ready")).is_empty());
        // Progress to progress: quiet.
        assert!(transitions(&t("False", "Creating"), &t("False", "WaitingForCloud")).is_empty());
        // False to True: Normal.
        let up = transitions(&t("False", "Creating"), &t("True", "Ready"));
        assert_eq!(up.len(), 1);
        assert!(up[0].normal);
        // True to False, even when throttled: Warning.
        let down = transitions(&t("True", "Ready"), &t("False", "Throttled"));
        assert_eq!(down.len(), 1);
        assert!(!down[0].normal);
        // True to False because of deletion: news, but not a warning.
        let deleting = transitions(&t("True", "Ready"), &t("False", "Deleting"));
        assert_eq!(deleting.len(), 1);
        assert!(deleting[0].normal);
        // A terminal reason appears: Warning; repeated: quiet.
        let terminal = transitions(&t("False", "Creating"), &t("False", "NameConflict"));
        assert_eq!(terminal.len(), 1);
        assert_eq!(terminal[0].reason, "NameConflict");
        assert!(transitions(&t("False", "NameConflict"), &t("False", "NameConflict")).is_empty());
        // Paused flips.
        let paused = vec![cond("Paused", "True", "Paused", 1)];
        let running = vec![cond("Paused", "False", "NotPaused", 1)];
        assert_eq!(transitions(&running, &paused).len(), 1);
        assert_eq!(transitions(&paused, &running).len(), 1);
        assert!(transitions(&[], &running).is_empty());
    }
}
