//! Cluster API provider for Oracle Container Engine for Kubernetes (OKE).
//!
//! No usable Rust SDK of OCI exists, so the provider speaks OCI's REST APIs itself ([`client`]):
//! Container Engine (20180222), Core Services networking (20160918) and Identity's availability
//! domains, every request signed by `oci-signer` (checked byte for byte against Oracle's own
//! SDK). [`api`] holds the kinds, [`network`] the cluster's network (created or brought),
//! [`reconcile`] OKE's side of each role on the shared kernel.

pub mod api;
pub mod client;
pub mod network;
pub mod reconcile;
pub mod scope;
