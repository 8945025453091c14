//! Fault injection, changeable at run time over the control endpoint.
//!
//! A rule names an operation (or `*`), a fault, and how often it fires: a share of calls
//! (`rate`, 0–1) or the next `count` calls. The first rule that fires for a call wins.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What an injected fault does to a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum FaultKind {
    /// Answer 429 with `Retry-After` (the cloud's throttling error).
    Throttle {
        /// Seconds in the `Retry-After` header.
        #[serde(default = "one")]
        retry_after_seconds: u64,
    },
    /// Answer with a server error (500, 502, 503, …) in the cloud's error shape.
    ServerError {
        /// The HTTP status.
        #[serde(default = "five_hundred")]
        status: u16,
    },
    /// Delay the call, then serve it normally.
    Latency {
        /// Added delay, milliseconds.
        millis: u64,
    },
    /// Send the status line and headers, then cut the connection without a body.
    Drop,
}

fn one() -> u64 {
    1
}
fn five_hundred() -> u16 {
    500
}

/// How often a rule fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Trigger {
    /// This share of matching calls, 0.0–1.0, chosen at random.
    Rate(f64),
    /// The next N matching calls, then the rule is spent.
    Count(u32),
}

/// One fault rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultRule {
    /// Operation name as the cloud names it (`CreateCluster`), or `*` for every operation.
    pub operation: String,
    /// The fault.
    pub fault: FaultKind,
    /// How often it fires.
    pub trigger: Trigger,
}

/// The fault chosen for one call, if any.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// 429 + `Retry-After`.
    Throttle(Duration),
    /// A server error with this status.
    ServerError(u16),
    /// Delay, then serve.
    Latency(Duration),
    /// Cut the connection.
    Drop,
}

/// The rule set, shared by the handlers and the control endpoint.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Vec<FaultRule>>,
}

impl Faults {
    /// Adds a rule at the end.
    pub fn add(&self, rule: FaultRule) {
        self.lock().push(rule);
    }

    /// Removes every rule.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The rules in force (spent count rules are gone).
    pub fn rules(&self) -> Vec<FaultRule> {
        self.lock().clone()
    }

    /// Picks the fault for a call of `operation`, consuming a count if a count rule fires.
    /// `roll` is a uniform random number in [0, 1) supplied by the caller (tests pass fixed ones).
    pub fn pick(&self, operation: &str, roll: f64) -> Option<Fault> {
        let mut rules = self.lock();
        let index = rules.iter().position(|r| {
            (r.operation == "*" || r.operation == operation)
                && match r.trigger {
                    Trigger::Rate(rate) => roll < rate,
                    Trigger::Count(n) => n > 0,
                }
        })?;
        let rule = &mut rules[index];
        let fault = match &rule.fault {
            FaultKind::Throttle {
                retry_after_seconds,
            } => Fault::Throttle(Duration::from_secs(*retry_after_seconds)),
            FaultKind::ServerError { status } => Fault::ServerError(*status),
            FaultKind::Latency { millis } => Fault::Latency(Duration::from_millis(*millis)),
            FaultKind::Drop => Fault::Drop,
        };
        if let Trigger::Count(n) = &mut rule.trigger {
            *n -= 1;
            if *n == 0 {
                rules.remove(index);
            }
        }
        Some(fault)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<FaultRule>> {
        // A panic while holding this lock cannot leave the rule list inconsistent.
        self.rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(op: &str, trigger: Trigger) -> FaultRule {
        FaultRule {
            operation: op.into(),
            fault: FaultKind::Throttle {
                retry_after_seconds: 3,
            },
            trigger,
        }
    }

    #[test]
    fn a_count_rule_fires_exactly_that_many_times_then_disappears() {
        let faults = Faults::default();
        faults.add(rule("CreateCluster", Trigger::Count(2)));
        assert_eq!(
            faults.pick("CreateCluster", 0.99),
            Some(Fault::Throttle(Duration::from_secs(3)))
        );
        assert_eq!(faults.pick("DescribeCluster", 0.0), None);
        assert!(faults.pick("CreateCluster", 0.5).is_some());
        assert_eq!(faults.pick("CreateCluster", 0.0), None);
        assert!(faults.rules().is_empty());
    }

    #[test]
    fn a_rate_rule_fires_when_the_roll_is_below_the_rate_for_any_operation_with_a_star() {
        let faults = Faults::default();
        faults.add(rule("*", Trigger::Rate(0.25)));
        assert!(faults.pick("ListClusters", 0.1).is_some());
        assert!(faults.pick("ListClusters", 0.3).is_none());
        assert_eq!(faults.rules().len(), 1);
    }

    #[test]
    fn rules_parse_from_the_control_endpoint_json() {
        let parsed: FaultRule = serde_json::from_str(
            r#"{"operation":"CreateNodegroup","fault":{"kind":"serverError","status":503},"trigger":{"count":1}}"#,
        )
        .unwrap();
        assert_eq!(parsed.fault, FaultKind::ServerError { status: 503 });
    }

    #[test]
    fn fault_fields_are_camel_case_as_documented_and_a_misspelt_one_is_refused() {
        // The rule emulators/README.md shows.
        let parsed: FaultRule = serde_json::from_str(
            r#"{"operation":"CreateCluster","fault":{"kind":"throttle","retryAfterSeconds":2},"trigger":{"count":1}}"#,
        )
        .unwrap();
        assert_eq!(
            parsed.fault,
            FaultKind::Throttle {
                retry_after_seconds: 2
            }
        );
        // Taken silently before: the rule then answered Retry-After 1.
        let misspelt = serde_json::from_str::<FaultRule>(
            r#"{"operation":"*","fault":{"kind":"throttle","retry_after_seconds":2},"trigger":{"rate":0.1}}"#,
        );
        assert!(misspelt.is_err(), "{misspelt:?}");
        assert_eq!(parsed.trigger, Trigger::Count(1));
    }
}
