//! Cluster API provider for Google Kubernetes Engine.

pub mod api;
pub mod client;
pub mod network;
pub mod reconcile;
pub mod scope;
