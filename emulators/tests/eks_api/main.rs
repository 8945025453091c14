//! The EKS emulator driven by the AWS SDK for Rust (`aws-sdk-eks`), in-process on a loopback port,
//! without workload servers or moto: every emulated operation round-trips through the SDK's own
//! serializers and parsers, resources move through their lifecycles with short delays, the cloud's
//! rules answer with the exception names the SDK reports, and injected faults look to the SDK like
//! the real service's throttling, server errors, slow answers and dropped connections.
//!
//! One module per API area; [`support`] holds the server, clients and waits they share.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod access;
mod addons;
mod clusters;
mod faults;
mod nodegroups;
mod outside;
mod support;
mod tags;
mod updates;
