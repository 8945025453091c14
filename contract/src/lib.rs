//! The Cluster API v1beta2 contract for managed Kubernetes providers, and the managed API shared
//! by every provider: pure types and rules, no I/O.
//!
//! - [`capi`]: typed read views of core's `Cluster` and `MachinePool`, the well-known labels and
//!   annotations, pause / ownership / watch-filter rules, and versioned field-path accessors
//!   for each provider role ([`capi::accessors`]).
//! - [`api`]: the spec and status blocks every provider composes into its CRDs, with their CEL
//!   admission rules.
//! - [`cidr`]: IPv4 CIDR blocks of a spec: parsed naming the field, overlap, subnet split.
//! - [`conditions`]: condition maths (`lastTransitionTime`, `observedGeneration`, summaries).
//! - [`kubeconfig`]: the `<cluster>-kubeconfig` and `<cluster>-user-kubeconfig` Secrets.
//! - [`version`]: Kubernetes versions and pure upgrade planning.
//! - [`naming`]: the ownership tag and cloud-name derivation within each cloud's limits.
//! - [`ownership`]: one decision, for every resource of every kind: ours, adopt, or conflict.
//! - [`idempotency`]: deterministic request tokens within each cloud's limits.
//! - [`overrides`]: `requestOverrides`, a JSON merge patch under the provider's own fields.
//! - [`endpoint`]: the preferred endpoint, URL parsing and the user-set rule.
//! - [`plan`]: the shared plan vocabulary; a control plane's next step and its whole condition
//!   set, the same on every cloud.
//! - [`scaling`]: who owns a pool's count, the MachinePool write-back, the `providerIDList` rule.
//! - [`crd`]: contract labels and CRD names.
//! - [`corpus`]: invalid specs with the admission messages they must produce.
//! - [`schema`]: checks on generated CRD schemas (structural, CEL rules present, bounded).
//!
//! Nothing here performs I/O or reads the clock: time is always an argument.
#![warn(missing_docs)]

pub mod adoption;
pub mod api;
pub mod capi;
pub mod cidr;
pub mod conditions;
pub mod corpus;
pub mod crd;
pub mod endpoint;
pub mod idempotency;
pub mod kubeconfig;
pub mod naming;
pub mod overrides;
pub mod ownership;
pub mod plan;
pub mod scaling;
pub mod schema;
pub mod version;
