//! The GKE kinds: `GKECluster`, `GKEControlPlane`, `GKEMachinePool` and their templates.
//!
//! Every field shared with the other clouds comes from `contract::api` (flattened), so a team
//! running GKE beside EKS sees the same names; only the `gke:` block is about GKE alone. A
//! shared value GKE cannot honour is refused at admission by a CEL rule naming GKE and the field.

mod cluster;
mod control_plane;
mod machine_pool;

pub use cluster::*;
pub use control_plane::*;
pub use machine_pool::*;

/// The API version of every kind.
pub const VERSION: &str = "v1alpha1";

// The Template kinds ClusterClass and `clusterctl generate` use, `crds()`, and the kernel's
// glue to the three kinds.
provider_runtime::kinds!(GKE, pool_block);
