//! Cluster API provider for Azure Kubernetes Service.

pub mod api;
pub mod arm;
pub mod reconcile;
pub mod scope;
