//! The kernel's rules for a managed node pool on a made-up cloud (XKS) whose own change is a
//! sentence: [`contract::plan::pool`], [`contract::plan::pool_conditions`] and
//! [`contract::plan::carries_operation`]. A cloud's own difference is tested with that cloud.

mod conditions;
mod steps;
mod xks;
