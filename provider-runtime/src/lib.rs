//! Shared controller plumbing for the managed-Kubernetes providers.
//!
//! A provider crate supplies only what is about its cloud: for each of its three kinds a
//! [`ProviderObject`] impl and a [`Reconciler`] (observe → plan → act). This crate does the rest,
//! the same way for every cloud:
//!
//! - [`flags::CommonArgs`]: the standard flags (`--namespace`, `--watch-filter`, leader election,
//!   metrics and health addresses, logging);
//! - [`reconcile`]: the engine — watch filter, owner and pause gates, finalizer, one
//!   server-side-apply status write per pass (skipped at rest), condition maths, events on
//!   transitions, retries with jittered backoff honouring `Retry-After` (a 429 holds its
//!   service and its cluster until then; a pass held back by another's waits just that, its own
//!   backoff unchanged);
//! - [`control_plane`]: the ControlPlane role written once, over a narrow per-cloud trait; at
//!   rest a look at the cloud serves the passes of its rest interval (the token refresh reads
//!   nothing);
//! - [`machine_pool`]: the InfraMachinePool role written once, over a narrow per-cloud trait;
//!   both look at a running cloud operation close together only where earlier ones of its kind
//!   finished;
//! - [`infra_cluster`]: the InfraCluster role written once, over a narrow per-cloud trait;
//! - [`walker`]: the InfraCluster's ordered-service walker;
//! - [`kubeconfig`]: the two kubeconfig Secrets, over the cloud's token source;
//! - [`identity`]: `spec.identityRef` read the same way on every cloud, a cloud's
//!   [`identity::Credentials`] from it (their secret parts [`identity::Hidden`]), and the
//!   client cache keyed by (location, identity);
//! - [`pacing`]: every timing rule: looks at running operations, retries and backoff, the
//!   `Retry-After` admission of cloud calls, and what is reported from an earlier look; and
//!   [`pacing::Pacing`], the three intervals a provider's flags set;
//! - [`metrics`] (counting only), [`health`], [`telemetry`], [`leader`]: operability;
//! - [`serve`]: the entry point a provider's `main` calls with the constructors of its three
//!   reconcilers ([`Operator`] underneath, for tests and other shapes).
//!
//! ```no_run
//! use clap::Parser;
//! use provider_runtime::{CommonArgs, Operator, ProviderSpec};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     common: CommonArgs,
//! }
//!
//! #[tokio::main]
//! async fn main() -> anyhow::Result<()> {
//!     let cli = Cli::parse();
//!     Operator::new(ProviderSpec::new("eks"), cli.common)
//!         // .controller::<EksCluster, _>(ClusterReconciler::new(..))
//!         .run()
//!         .await
//! }
//! ```
#![warn(missing_docs)]

mod adoption;
pub mod cloud_error;
pub mod cluster_objects;
pub mod control_plane;
pub mod error;
pub mod flags;
pub mod health;
pub mod identity;
pub mod infra_cluster;
pub mod kubeconfig;
pub mod leader;
pub mod machine_pool;
pub mod metrics;
mod operator;
pub mod overrides;
pub mod pacing;
pub mod reconcile;
pub mod rest;
pub mod shutdown;
pub mod telemetry;
pub mod walker;
mod watches;

pub use cloud_error::{CloudError, read_answer};

#[doc(hidden)]
pub use k8s_openapi as __k8s_openapi;

/// Implements [`ProviderObject`] for a kind whose status flattens a shared status block
/// (`status.common.conditions`): `provider_object!(EKSCluster, Role::InfraCluster);`.
#[macro_export]
macro_rules! provider_object {
    ($kind:ty, $role:expr) => {
        impl $crate::ProviderObject for $kind {
            const ROLE: $crate::Role = $role;
            fn conditions(
                &self,
            ) -> &[$crate::__k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
                self.status
                    .as_ref()
                    .map(|s| s.common.conditions.as_slice())
                    .unwrap_or_default()
            }
        }
    };
}
pub use error::ProviderError;
pub use flags::CommonArgs;
pub use metrics::{CallOutcome, Metrics};
pub use operator::{Operator, ProviderSpec, serve, shutdown_signal};
pub use pacing::admission::{Admitted, CloudCalls};
/// A role's kind and a provider's Template kinds, CRD list and kernel glue, written once.
pub use provider_macros::{block, control_plane, infra_cluster, kind, kinds, machine_pool};
pub use reconcile::{
    Cleanup, CleanupContext, ClusterRef, ObjectEvents, Pass, PassContext, ProviderObject,
    Reconciler, Role,
};
