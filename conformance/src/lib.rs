//! The conformance suite for Cluster API managed-Kubernetes providers, and the management-plane
//! test bed it runs on.
//!
//! [`run::run`] judges a provider against every check of the provider contract
//! ([`checks::CATALOGUE`]) on real management planes with real Cluster API core and the real
//! clusterctl; what to start comes from a profile ([`profile`], format in `PROFILE.md`).
//! [`bed_check`] holds the bed's own self-checks. Nothing in this crate depends on one of our
//! provider crates, so it can judge anyone's provider.

pub mod bed_check;
pub mod checks;
pub mod clusterctl;
pub mod faults;
pub mod objects;
pub mod procs;
pub mod profile;
pub mod release;
pub mod report;
pub mod run;
