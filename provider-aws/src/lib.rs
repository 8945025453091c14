//! Cluster API provider for Amazon EKS.

pub mod api;
pub mod client;
pub mod network;
pub mod reconcile;
pub mod scope;
