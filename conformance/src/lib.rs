//! The conformance suite for Cluster API managed-Kubernetes providers, and the management-plane
//! test bed it runs on.
//!
//! Today it holds the bed's own self-checks ([`bed_check`]); the contract checks C01… of
//! `shared/design/contract.md` arrive with the clusterctl packaging. Nothing in this crate
//! depends on one of our provider crates, so it can judge anyone's provider.

pub mod bed_check;
