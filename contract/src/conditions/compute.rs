//! The `status.conditions` to write, computed from a pass's desired set and the stored
//! conditions (`lastTransitionTime` kept unless the status flips, `observedGeneration` set), and
//! reading a stored condition back.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::{ConditionStatus, DesiredCondition};

/// Turns the desired set of a pass into the `status.conditions` to write.
///
/// Guarantees:
/// - **The desired set is complete for the pass.** The result holds exactly one condition per
///   type named in `desired`; a condition in `previous` whose type is not in `desired` is
///   dropped. (The runtime supplies every type the kind reports on every pass. Conditions owned
///   by another field manager are unaffected when status is written with server-side apply.)
/// - If `desired` names a type twice, the later entry wins.
/// - `lastTransitionTime` is kept from `previous` when the type existed there with the same
///   status; otherwise (new type, or the status flipped) it is `now`. A change of reason or
///   message alone does not move it.
/// - `now` is truncated to whole seconds, the precision `metav1.Time` is stored with, so a
///   result that is written and read back compares equal to itself.
/// - `observedGeneration` is `generation` on every condition.
/// - The output is sorted by type (byte order), so it does not depend on the order in which
///   the caller assembled `desired`.
/// - Idempotent: feeding the result back as `previous` with the same `desired` and
///   `generation` returns it unchanged, whatever `now` is.
pub fn compute_conditions(
    previous: &[Condition],
    desired: &[DesiredCondition],
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    let now = truncate_to_seconds(now);
    let mut wanted: Vec<&DesiredCondition> = Vec::with_capacity(desired.len());
    for d in desired {
        match wanted.iter_mut().find(|w| w.type_ == d.type_) {
            Some(slot) => *slot = d,
            None => wanted.push(d),
        }
    }
    let mut out: Vec<Condition> = wanted
        .into_iter()
        .map(|d| {
            let status = d.status.as_str();
            let last_transition_time = previous
                .iter()
                .find(|p| p.type_ == d.type_ && p.status == status)
                .map(|p| p.last_transition_time.clone())
                .unwrap_or_else(|| Time(now));
            Condition {
                type_: d.type_.clone(),
                status: status.to_owned(),
                reason: d.reason.clone(),
                message: d.message.clone(),
                last_transition_time,
                observed_generation: generation,
            }
        })
        .collect();
    out.sort_by(|a, b| a.type_.cmp(&b.type_));
    out
}

fn truncate_to_seconds(now: Timestamp) -> Timestamp {
    // `from_second` only fails outside jiff's supported range, which a value already held in a
    // `Timestamp` with its sub-second part removed cannot leave.
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// The condition of type `type_` in `conditions`, if any.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether `conditions` holds a condition of type `type_` with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == ConditionStatus::True.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::{ConditionType, Reason, paused_condition};
    use proptest::prelude::*;

    fn ts(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn ready_true() -> DesiredCondition {
        DesiredCondition::true_(ConditionType::Ready, Reason::Ready, "")
    }

    #[test]
    fn a_new_condition_gets_now_as_its_transition_time_and_the_generation() {
        let out = compute_conditions(&[], &[ready_true()], Some(3), ts(100));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].type_, "Ready");
        assert_eq!(out[0].status, "True");
        assert_eq!(out[0].reason, "Ready");
        assert_eq!(out[0].last_transition_time, Time(ts(100)));
        assert_eq!(out[0].observed_generation, Some(3));
    }

    #[test]
    fn the_transition_time_stays_when_only_reason_and_message_change() {
        let first = compute_conditions(
            &[],
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::Creating,
                "creating",
            )],
            Some(1),
            ts(100),
        );
        let second = compute_conditions(
            &first,
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::WaitingForCloud,
                "still creating",
            )],
            Some(2),
            ts(200),
        );
        assert_eq!(second[0].last_transition_time, Time(ts(100)));
        assert_eq!(second[0].reason, "WaitingForCloud");
        assert_eq!(second[0].message, "still creating");
        assert_eq!(second[0].observed_generation, Some(2));
    }

    #[test]
    fn the_transition_time_moves_when_the_status_flips() {
        let first = compute_conditions(
            &[],
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::Creating,
                "",
            )],
            Some(1),
            ts(100),
        );
        let second = compute_conditions(&first, &[ready_true()], Some(1), ts(250));
        assert_eq!(second[0].last_transition_time, Time(ts(250)));
        assert_eq!(second[0].status, "True");
    }

    #[test]
    fn now_is_truncated_to_whole_seconds() {
        let now = Timestamp::from_millisecond(100_999).unwrap();
        let out = compute_conditions(&[], &[ready_true()], None, now);
        assert_eq!(out[0].last_transition_time, Time(ts(100)));
    }

    #[test]
    fn conditions_missing_from_the_desired_set_are_dropped() {
        let first = compute_conditions(
            &[],
            &[ready_true(), paused_condition(false)],
            Some(1),
            ts(1),
        );
        assert_eq!(first.len(), 2);
        let second = compute_conditions(&first, &[ready_true()], Some(1), ts(2));
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].type_, "Ready");
    }

    #[test]
    fn output_is_sorted_by_type_whatever_the_desired_order() {
        let desired = [
            paused_condition(false),
            ready_true(),
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
        ];
        let out = compute_conditions(&[], &desired, None, ts(1));
        let types: Vec<&str> = out.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Available", "Paused", "Ready"]);
    }

    #[test]
    fn a_type_named_twice_keeps_the_later_entry() {
        let desired = [
            DesiredCondition::false_(ConditionType::Ready, Reason::Creating, "a"),
            ready_true(),
        ];
        let out = compute_conditions(&[], &desired, None, ts(1));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].status, "True");
    }

    #[test]
    fn provider_specific_types_and_reasons_pass_through() {
        let desired = [DesiredCondition::false_(
            "NodePoolHealthy",
            "NodesNotReady",
            "2 of 3",
        )];
        let out = compute_conditions(&[], &desired, Some(5), ts(1));
        assert_eq!(out[0].type_, "NodePoolHealthy");
        assert_eq!(out[0].reason, "NodesNotReady");
    }

    #[test]
    fn is_true_finds_a_true_condition_by_type() {
        let out = compute_conditions(&[], &[ready_true(), paused_condition(false)], None, ts(1));
        assert!(is_true(&out, "Ready"));
        assert!(!is_true(&out, "Paused"));
        assert!(!is_true(&out, "Available"));
    }

    fn arb_status() -> impl Strategy<Value = ConditionStatus> {
        prop_oneof![
            Just(ConditionStatus::True),
            Just(ConditionStatus::False),
            Just(ConditionStatus::Unknown)
        ]
    }

    fn arb_desired() -> impl Strategy<Value = DesiredCondition> {
        (
            prop::sample::select(ConditionType::ALL.to_vec()),
            arb_status(),
            prop::sample::select(Reason::ALL.to_vec()),
            "[a-z ]{0,12}",
        )
            .prop_map(|(t, s, r, m)| DesiredCondition::new(t, s, r, m))
    }

    proptest! {
        #[test]
        fn computing_twice_with_the_same_desired_set_at_a_later_time_changes_nothing(
            desired in prop::collection::vec(arb_desired(), 0..8),
            generation in prop::option::of(1i64..1000),
            t0 in 0i64..2_000_000_000,
            later in 0i64..1_000_000,
        ) {
            let first = compute_conditions(&[], &desired, generation, ts(t0));
            let second = compute_conditions(&first, &desired, generation, ts(t0 + later));
            prop_assert_eq!(first, second);
        }

        #[test]
        fn the_transition_time_moves_exactly_when_the_status_flips(
            before in prop::collection::vec(arb_desired(), 1..8),
            after in prop::collection::vec(arb_desired(), 1..8),
        ) {
            let first = compute_conditions(&[], &before, None, ts(10));
            let second = compute_conditions(&first, &after, None, ts(20));
            for c in &second {
                let flipped = find_condition(&first, &c.type_)
                    .is_none_or(|p| p.status != c.status);
                let expected = if flipped { ts(20) } else { ts(10) };
                prop_assert_eq!(&c.last_transition_time, &Time(expected));
            }
        }
    }
}
