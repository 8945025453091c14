//! Cluster API provider for Amazon EKS.

pub mod api;
pub mod cloud;
pub mod network;
pub mod reconcile;
pub mod scope;
