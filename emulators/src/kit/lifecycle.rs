//! Resource lifecycles with configurable delays.
//!
//! A resource sits in a state; an operation moves it into a transitional state (CREATING,
//! UPDATING, DELETING, …) and schedules the state it will reach. The emulator's ticker calls
//! [`Lifecycle::advance`], so a provider that polls too early sees the cloud still busy, exactly
//! as with the real service.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// A state plus, while busy, where it is going and when it gets there.
#[derive(Debug, Clone)]
pub struct Lifecycle<S> {
    state: S,
    pending: Option<(S, Instant)>,
    held: bool,
}

impl<S: Clone + PartialEq> Lifecycle<S> {
    /// A resource at rest in `state`.
    pub fn at(state: S) -> Self {
        Self {
            state,
            pending: None,
            held: false,
        }
    }

    /// A resource in `through` that reaches `to` after `delay`.
    pub fn moving(through: S, to: S, now: Instant, delay: Duration) -> Self {
        Self {
            state: through,
            pending: Some((to, now + delay)),
            held: false,
        }
    }

    /// The current state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// Whether a transition is under way.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Starts a transition: the state becomes `through` now and `to` after `delay`.
    pub fn begin(&mut self, through: S, to: S, now: Instant, delay: Duration) {
        self.state = through;
        self.pending = Some((to, now + delay));
        self.held = false;
    }

    /// Keeps the pending transition from completing until [`Lifecycle::release`] (e.g. while a
    /// workload API server starts).
    pub fn hold(&mut self) {
        self.held = true;
    }

    /// Lets a held transition complete at its time.
    pub fn release(&mut self) {
        self.held = false;
    }

    /// Whether the pending transition is due (time passed), held or not.
    pub fn due(&self, now: Instant) -> bool {
        matches!(&self.pending, Some((_, at)) if *at <= now)
    }

    /// The state a due transition is heading to.
    pub fn target(&self) -> Option<&S> {
        self.pending.as_ref().map(|(to, _)| to)
    }

    /// Completes a due, unheld transition; returns the new state when one completed.
    pub fn advance(&mut self, now: Instant) -> Option<S> {
        if self.held || !self.due(now) {
            return None;
        }
        let (to, _) = self.pending.take()?;
        self.state = to.clone();
        Some(to)
    }

    /// Puts the resource into `state` at once, dropping any pending transition (faults, failures).
    pub fn set(&mut self, state: S) {
        self.state = state;
        self.pending = None;
        self.held = false;
    }
}

/// Transition delays of one resource class, in seconds (fractions allowed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delays {
    /// Creating → ready.
    pub create: f64,
    /// Updating → ready.
    pub update: f64,
    /// Deleting → gone.
    pub delete: f64,
}

impl Delays {
    /// The same delay for everything.
    pub const fn uniform(seconds: f64) -> Self {
        Self {
            create: seconds,
            update: seconds,
            delete: seconds,
        }
    }

    /// `seconds` as a `Duration` (negative or NaN counts as zero).
    pub fn duration(seconds: f64) -> Duration {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
    }
}

/// The delays in force, changeable at run time over the control endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    /// Managed clusters (control planes).
    pub cluster: Delays,
    /// Node pools.
    pub pool: Delays,
    /// Add-ons and other small cluster sub-resources.
    pub addon: Delays,
    /// Seconds a node instance the cloud chose to remove stays shutting down before it is gone
    /// (its Node and provider ID still exist meanwhile, as with a real scale-in).
    #[serde(default = "default_instance_shutdown")]
    pub instance_shutdown: f64,
}

fn default_instance_shutdown() -> f64 {
    2.0
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            cluster: Delays::uniform(2.0),
            pool: Delays::uniform(1.0),
            addon: Delays::uniform(0.5),
            instance_shutdown: default_instance_shutdown(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum S {
        Creating,
        Active,
    }

    #[tokio::test(start_paused = true)]
    async fn a_transition_completes_only_once_its_delay_has_passed() {
        let start = Instant::now();
        let mut l = Lifecycle::moving(S::Creating, S::Active, start, Duration::from_secs(5));
        assert_eq!(l.advance(start + Duration::from_secs(4)), None);
        assert_eq!(l.state(), &S::Creating);
        assert_eq!(l.advance(start + Duration::from_secs(5)), Some(S::Active));
        assert!(!l.busy());
        assert_eq!(l.advance(start + Duration::from_secs(9)), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_transition_waits_for_release_even_when_due() {
        let start = Instant::now();
        let mut l = Lifecycle::moving(S::Creating, S::Active, start, Duration::ZERO);
        l.hold();
        assert!(l.due(start));
        assert_eq!(l.advance(start), None);
        l.release();
        assert_eq!(l.advance(start), Some(S::Active));
    }
}
