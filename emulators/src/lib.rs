//! Local clouds for the managed-Kubernetes providers.
//!
//! [`kit`] holds what every cloud's emulator shares: lifecycles with delays, idempotency tokens,
//! fault injection and call counters behind a control endpoint, and real workload API servers
//! backing emulated clusters. Each cloud module speaks that cloud's real wire protocol on top.

pub mod aks;
pub mod eks;
pub mod gke;
pub mod kit;
pub mod moto;
pub mod oke;
