//! Cluster API provider for Oracle Container Engine for Kubernetes (OKE).
//!
//! No usable Rust SDK of OCI exists, so the provider signs its requests itself: [`signer`]
//! implements OCI's HTTP signature scheme, checked byte for byte against golden vectors made with
//! Oracle's own Python SDK (`testdata/`). The kinds, the emulator and the reconcilers follow
//! (issue 12).


