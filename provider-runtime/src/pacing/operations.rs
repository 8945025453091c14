//! When to look again at a running cloud operation, from what earlier ones of its kind took.
//!
//! Clouds offer no watch on a create or an upgrade, so a provider looks again and again. With
//! nothing to go by it looks soon after the start and then later and later, up to its poll
//! interval ([`Operation::look_again_after`]): a ten-minute create is seen finished up to one
//! poll interval late, and that lateness is most of the time from "the cloud says ACTIVE" to
//! "control plane initialized" (the benchmark's P5).
//!
//! Operations of one kind on one cloud take about as long as each other. [`Pace`] keeps, for the
//! last few that finished, the age at the last look that found each running and at the look that
//! found it done; the next one of that kind is looked at closely only inside that window (from
//! the earliest "still running" to the latest "done"): every [`CLOSE_LOOK`], or less often when
//! the window is wide, so that it costs at most [`LOOKS_IN_WINDOW`] looks more. Before the window
//! and after it the schedule is [`Operation::look_again_after`]'s. Each finish looked at closely
//! narrows the window, so the estimate converges on the cloud's real duration.
//!
//! [`Pace`] is pure (the time is an argument); each role's reconciler keeps one behind a
//! [`Pacer`] (in memory: a restart starts from nothing).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use contract::api::{Operation, OperationKind};

/// Finished operations remembered per kind.
pub const REMEMBERED: usize = 16;
/// Running operations followed at once; past this the looks recorded so far are forgotten
/// (only pacing is lost, never an operation).
pub const FOLLOWED: usize = 10_000;
/// The shortest time between two looks inside the window.
pub const CLOSE_LOOK: Duration = Duration::from_secs(2);
/// The most looks inside the window: a wider window is looked at less often.
pub const LOOKS_IN_WINDOW: u32 = 15;

/// When operations of a kind are expected to finish, as ages since their start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The earliest age at which an earlier one was still running.
    pub from: Duration,
    /// The latest age at which an earlier one was first seen done.
    pub until: Duration,
    /// How often to look inside it.
    pub every: Duration,
}

/// What a provider has seen operations take; see the module docs.
#[derive(Debug, Default)]
pub struct Pace {
    /// Each running operation followed (by its id and kind): its age at the last look that
    /// found it running.
    running: HashMap<(String, OperationKind), Duration>,
    /// For each kind: (age last seen running, age first seen done) of the last finished ones.
    finished: HashMap<OperationKind, VecDeque<(Duration, Duration)>>,
}

impl Pace {
    /// A look at `now` found `op` still running.
    pub fn running(&mut self, op: &Operation, now: jiff::Timestamp) {
        let key = (op.id.clone(), op.kind);
        if self.running.len() >= FOLLOWED && !self.running.contains_key(&key) {
            self.running.clear();
        }
        self.running.insert(key, op.age(now));
    }

    /// A look at `now` found `op` done. Only an operation seen running before counts: without
    /// its last running look the window would be a guess.
    pub fn finished(&mut self, op: &Operation, now: jiff::Timestamp) {
        let Some(last_running) = self.running.remove(&(op.id.clone(), op.kind)) else {
            return;
        };
        let done = op.age(now);
        if done < last_running {
            return;
        }
        let seen = self.finished.entry(op.kind).or_default();
        if seen.len() == REMEMBERED {
            seen.pop_front();
        }
        seen.push_back((last_running, done));
    }

    /// The window in which an operation of `kind` is expected to finish, once one has.
    pub fn window(&self, kind: OperationKind) -> Option<Window> {
        let seen = self.finished.get(&kind)?;
        let from = seen.iter().map(|(running, _)| *running).min()?;
        let until = seen.iter().map(|(_, done)| *done).max()?;
        let every = ((until - from) / LOOKS_IN_WINDOW).max(CLOSE_LOOK);
        Some(Window { from, until, every })
    }

    /// How soon to look again at running `op`: [`Operation::look_again_after`]'s schedule, but
    /// never past the start of its kind's window and every [`Window::every`] inside it.
    pub fn look_again_after(
        &self,
        op: &Operation,
        now: jiff::Timestamp,
        first: Duration,
        poll: Duration,
    ) -> Duration {
        let usual = op.look_again_after(now, first, poll);
        let Some(window) = self.window(op.kind) else {
            return usual;
        };
        let age = op.age(now);
        if age < window.from {
            usual.min(window.from - age).max(CLOSE_LOOK.min(usual))
        } else if age <= window.until {
            window.every.min(usual)
        } else {
            usual
        }
    }

    /// Running operations followed (for tests and metrics).
    pub fn followed(&self) -> usize {
        self.running.len()
    }
}

/// One [`Pace`] per reconciler, shared by its passes.
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const FIRST: Duration = Duration::from_secs(5);
    const POLL: Duration = Duration::from_secs(30);

    fn at(start: jiff::Timestamp, secs: u64) -> jiff::Timestamp {
        start + Duration::from_secs(secs)
    }

    /// Follows an operation of `kind` that the cloud finishes after `takes` seconds, looking
    /// when `pace` says; returns the age at which it was seen done and the looks it cost.
    fn follow(pace: &mut Pace, id: &str, kind: OperationKind, takes: u64) -> (u64, u32) {
        let start = jiff::Timestamp::from_second(1_000_000).unwrap();
        let op = Operation::new(id, kind, start);
        let mut age = 0u64;
        let mut looks = 0;
        loop {
            let wait = pace.look_again_after(&op, at(start, age), FIRST, POLL);
            age += wait.as_secs().max(1);
            looks += 1;
            if age >= takes {
                pace.finished(&op, at(start, age));
                return (age, looks);
            }
            pace.running(&op, at(start, age));
        }
    }

    #[test]
    fn with_nothing_seen_the_usual_schedule_is_kept() {
        let mut pace = Pace::default();
        // 5, 10, 20, 40, 70, 100, … : a 600 s create is seen at 610 s.
        let (seen, looks) = follow(&mut pace, "a", OperationKind::Create, 600);
        assert_eq!(seen, 610);
        assert_eq!(looks, 23);
        assert!(pace.window(OperationKind::Update).is_none());
    }

    #[test]
    fn the_next_operation_of_a_kind_is_seen_done_within_a_close_look() {
        let mut pace = Pace::default();
        follow(&mut pace, "a", OperationKind::Create, 600);
        let window = pace.window(OperationKind::Create).unwrap();
        assert_eq!(
            (window.from, window.until),
            (Duration::from_secs(580), Duration::from_secs(610))
        );
        assert_eq!(window.every, CLOSE_LOOK);
        let (seen, looks) = follow(&mut pace, "b", OperationKind::Create, 600);
        assert!(seen <= 600 + CLOSE_LOOK.as_secs(), "seen at {seen}");
        // A few close looks more than the usual schedule, never a poll every 2 s throughout.
        assert!(looks <= 23 + LOOKS_IN_WINDOW, "{looks} looks");
        // The window narrowed to the real duration.
        let narrowed = pace.window(OperationKind::Create).unwrap();
        assert!(narrowed.until <= window.until);
        // Another kind learned nothing.
        assert!(pace.window(OperationKind::Upgrade).is_none());
    }

    #[test]
    fn a_wide_window_costs_a_bounded_number_of_looks() {
        let mut pace = Pace::default();
        follow(&mut pace, "short", OperationKind::Create, 300);
        follow(&mut pace, "long", OperationKind::Create, 900);
        let window = pace.window(OperationKind::Create).unwrap();
        assert!(window.every > CLOSE_LOOK, "{window:?}");
        let (_, looks_short) = follow(&mut pace, "c", OperationKind::Create, 300);
        let (seen, looks) = follow(&mut pace, "d", OperationKind::Create, 1_200);
        // Past the window: the usual poll again.
        assert!(seen <= 1_200 + POLL.as_secs(), "{seen}");
        assert!(looks_short < looks);
        assert!(looks <= 40 + LOOKS_IN_WINDOW + 1, "{looks} looks");
    }

    #[test]
    fn an_operation_never_seen_running_teaches_nothing() {
        let mut pace = Pace::default();
        let start = jiff::Timestamp::from_second(1_000_000).unwrap();
        let op = Operation::new("x", OperationKind::Create, start);
        pace.finished(&op, at(start, 40));
        assert!(pace.window(OperationKind::Create).is_none());
        // Seen running once, then done twice (a later pass still carrying it): counted once.
        pace.running(&op, at(start, 20));
        pace.finished(&op, at(start, 40));
        pace.finished(&op, at(start, 70));
        let window = pace.window(OperationKind::Create).unwrap();
        assert_eq!(
            (window.from, window.until),
            (Duration::from_secs(20), Duration::from_secs(40))
        );
        assert_eq!(pace.followed(), 0);
    }

    #[test]
    fn only_the_last_few_are_remembered_and_followed_operations_are_bounded() {
        let mut pace = Pace::default();
        follow(&mut pace, "slow", OperationKind::Create, 900);
        for i in 0..REMEMBERED {
            follow(&mut pace, &format!("fast{i}"), OperationKind::Create, 60);
        }
        let window = pace.window(OperationKind::Create).unwrap();
        assert!(window.until < Duration::from_secs(120), "{window:?}");
        let start = jiff::Timestamp::from_second(1_000_000).unwrap();
        for i in 0..=FOLLOWED {
            pace.running(
                &Operation::new(format!("r{i}"), OperationKind::Update, start),
                start,
            );
        }
        assert!(pace.followed() <= FOLLOWED);
    }
}
