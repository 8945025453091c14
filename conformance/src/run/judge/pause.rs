//! Pausing: while paused through `Cluster.spec.paused` (C35) or the annotation alone (C36), a
//! replica edit changes no status and costs no cloud call; unpausing sets Paused False and
//! applies the pending edit (C37), which is a replica change converging (C49).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::Verdicts;
use crate::checks::{CheckId, Outcome, verdict};
use crate::procs::Calls;

/// How the cluster was paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PausedBy {
    /// `Cluster.spec.paused: true` (C35).
    Spec,
    /// The `cluster.x-k8s.io/paused` annotation on each provider object (C36).
    Annotation,
}

impl PausedBy {
    /// The check this way of pausing is judged by.
    pub(crate) fn check(self) -> CheckId {
        match self {
            PausedBy::Spec => CheckId::C35,
            PausedBy::Annotation => CheckId::C36,
        }
    }

    /// How reports name it.
    pub(crate) fn how(self) -> &'static str {
        match self {
            PausedBy::Spec => "Cluster.spec.paused",
            PausedBy::Annotation => "cluster.x-k8s.io/paused annotation",
        }
    }
}

/// One pause window.
#[derive(Debug, Clone)]
pub(crate) struct PauseWindow {
    /// How the cluster was paused.
    pub(crate) by: PausedBy,
    /// What the window showed; or, when the provider objects never all showed Paused True
    /// with reason Paused, which did not (nothing else was watched then).
    pub(crate) seen: Result<QuietWhilePaused, String>,
}

/// A replica edit made while paused, and what followed it.
#[derive(Debug, Clone)]
pub(crate) struct QuietWhilePaused {
    /// MachinePool name → the replicas it was set to.
    pub(crate) edits: BTreeMap<String, i64>,
    /// The provider objects' statuses before the edit.
    pub(crate) statuses_before: Value,
    /// Their statuses a quiet period after it.
    pub(crate) statuses_after: Value,
    /// The cloud calls made meanwhile; `None` when not counted.
    pub(crate) calls: Option<Calls>,
    /// The quiet period.
    pub(crate) quiet: Duration,
}

/// C35 or C36: Paused True, and the edit changed nothing while paused.
pub(crate) fn paused_window(window: &PauseWindow) -> Verdicts {
    let how = window.by.how();
    let outcome = match &window.seen {
        Err(wrong) => Outcome::Fail(format!(
            "{how}: Paused not True with reason Paused: {wrong}"
        )),
        Ok(q) => {
            let mut problems = Vec::new();
            if q.statuses_before != q.statuses_after {
                problems.push(format!(
                    "status changed while paused: before {} after {}",
                    q.statuses_before, q.statuses_after
                ));
            }
            let calls = match &q.calls {
                Some(d) => {
                    if d.total() > 0 {
                        problems.push(format!("cloud calls while paused: {}", d.describe()));
                    }
                    "no cloud call"
                }
                None => "cloud calls not counted",
            };
            verdict(
                problems.is_empty(),
                if problems.is_empty() {
                    format!(
                        "{how}: Paused True; MachinePool replicas set to {:?}; {}s later no status change, {calls}",
                        q.edits,
                        q.quiet.as_secs()
                    )
                } else {
                    format!("{how}: {}", problems.join("; "))
                },
            )
        }
    };
    vec![(window.by.check(), outcome)]
}

/// What unpausing showed.
#[derive(Debug, Clone)]
pub(crate) struct Unpause {
    /// Paused False with reason NotPaused on every provider object, or which did not show it.
    pub(crate) unpaused: Result<(), String>,
    /// How long the pending scale-up took to settle, or why it did not.
    pub(crate) settled: Result<Duration, String>,
}

/// C37, C49.
pub(crate) fn unpause(seen: &Unpause) -> Verdicts {
    let c37 = match (&seen.unpaused, &seen.settled) {
        (Ok(()), Ok(t)) => Outcome::Pass(format!(
            "Paused False (NotPaused); the pending scale-up applied in {:.1}s",
            t.as_secs_f64()
        )),
        (Err(w), _) => Outcome::Fail(format!("after unpausing: {w}")),
        (_, Err(w)) => Outcome::Fail(format!("the pending change was not applied: {w}")),
    };
    let c49 = match &seen.settled {
        Ok(t) => Outcome::Pass(format!(
            "scale-up by one converged in {:.1}s",
            t.as_secs_f64()
        )),
        Err(w) => Outcome::Fail(w.clone()),
    };
    vec![(CheckId::C37, c37), (CheckId::C49, c49)]
}
