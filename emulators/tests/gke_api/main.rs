//! The GKE emulator through Google's own Rust clients (`google-cloud-container-v1`,
//! `google-cloud-compute-v1`, `google-cloud-auth`), which no one here wrote: what they send must
//! be understood and what the emulator answers must decode, errors included.
//!
//! One module per area; [`support`] holds the bed, the clients' set-up and the waits they share.

// `initialNodeCount` and `currentNodeVersion` are deprecated in the API and still sent and
// answered by GKE; the tests use them on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

mod clusters;
mod grpc;
mod network;
mod refusals;
mod support;
