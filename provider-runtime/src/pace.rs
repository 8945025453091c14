//! A reconciler's memory of how long its cloud's operations take, shared by its passes
//! ([`contract::pace`]: looks close together only where the next is expected to finish).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use contract::api::Operation;
use contract::pace::Pace;

/// One per reconciler, in memory (a restart starts from nothing).
#[derive(Debug, Default)]
pub(crate) struct Pacer(Mutex<Pace>);

impl Pacer {
    /// After a pass that began tracking `before` and ends tracking `after` (both `None` when
    /// no operation): a tracked operation that is no longer tracked while the resource serves
    /// has finished; the one tracked now is running.
    pub(crate) fn passed(
        &self,
        before: Option<&Operation>,
        after: Option<&Operation>,
        serving: bool,
        now: jiff::Timestamp,
    ) {
        let mut pace = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(before) = before
            && serving
            && after.is_none_or(|a| a.id != before.id || a.kind != before.kind)
        {
            pace.finished(before, now);
        }
        if let Some(after) = after {
            pace.running(after, now);
        }
    }

    /// How soon to look again at running `op` ([`Pace::look_again_after`]).
    pub(crate) fn look_again_after(
        &self,
        op: &Operation,
        now: jiff::Timestamp,
        first: Duration,
        poll: Duration,
    ) -> Duration {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .look_again_after(op, now, first, poll)
    }
}
