//! Conditions, computed rather than poked.
//!
//! Every reconcile pass derives the *complete* set of conditions it wants to report as a list
//! of [`DesiredCondition`]s, and [`compute_conditions`] turns that list, together with the
//! conditions currently stored on the object, into the `status.conditions` to write. The
//! function owns the two fiddly rules of `metav1.Condition` so that no reconciler repeats them:
//!
//! - `lastTransitionTime` moves only when a condition's `status` flips (or when the condition
//!   first appears); a new `reason` or `message` alone keeps the old timestamp;
//! - `observedGeneration` is the `metadata.generation` the pass worked from.
//!
//! The clock is always an argument; nothing in this module reads it.
//!
//! The condition types and reasons are the same on every cloud. Providers may add their own
//! types and reasons as plain strings, but should prefer the shared ones.
//!
//! # Layout
//! Every item is re-exported here, so `contract::conditions::X` is the path to use:
//! - [`vocabulary`]: the shared condition types, reasons and statuses;
//! - [`desired`]: what a pass wants reported, and the sets every provider builds the same way
//!   (`Paused`, the waiting set, the `Ready` summary);
//! - [`compute`]: the stored `status.conditions` from the desired set, and reading them back.

pub mod compute;
pub mod desired;
pub mod vocabulary;

pub use compute::{compute_conditions, find_condition, is_true};
pub use desired::{
    ConditionRole, DesiredCondition, paused_condition, ready_summary, sentence, waiting_set,
};
pub use vocabulary::{ConditionStatus, ConditionType, Reason};
