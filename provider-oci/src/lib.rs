//! Cluster API provider for Oracle Container Engine for Kubernetes (OKE).
//!
//! No usable Rust SDK of OCI exists, so the provider speaks OCI's REST APIs itself ([`oci`]):
//! Container Engine (20180222), Core Services networking (20160918) and Identity's availability
//! domains, every request signed by `oci-signer` (checked byte for byte against Oracle's own
//! SDK). [`api`] holds the kinds, [`reconcile`] OKE's side of each role on the shared kernel.

pub mod api;
pub mod oci;
pub mod reconcile;
pub mod scope;
