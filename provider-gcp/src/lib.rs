//! Cluster API provider for Google Kubernetes Engine.

pub mod api;
pub mod cloud;
pub mod reconcile;
pub mod scope;
