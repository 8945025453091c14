//! Cluster API provider for Azure Kubernetes Service.

pub mod api;
pub mod client;
pub mod network;
pub mod reconcile;
pub mod scope;
