//! Typed views of the Cluster API v1beta2 objects a provider reads, the well-known labels and
//! annotations, and the pure rules built on them (pause, ownership, watch filter, external
//! management).
//!
//! # Read views, never replacements
//! [`Cluster`] and [`MachinePool`] hold **only the fields a provider reads**. Unknown fields are
//! ignored when deserializing, so serializing one of these values back drops everything else
//! the object had. Use them to read, and to build patches (merge or server-side apply of the
//! few fields shown here); **never use them to replace (PUT/update) an object**.
//!
//! Field names follow the v1beta2 API (`cluster.x-k8s.io/v1beta2`) exactly; every field is
//! optional on read so a partially filled object still parses.
//!
//! # Layout
//! Every item is re-exported here, so `contract::capi::X` is the path to use:
//! - [`constants`]: the well-known labels, annotations, groups, kinds and versions;
//! - [`cluster`]: the read view of core's `Cluster`;
//! - [`machine_pool`]: the read view of core's `MachinePool`;
//! - [`rules`]: pause, cluster name, owner references, watch filter, external management;
//! - [`accessors`]: the contract fields of *provider* objects (InfraCluster, ControlPlane,
//!   InfraMachinePool) read from untyped JSON, naming every path core reads.

pub mod accessors;
pub mod cluster;
pub mod constants;
pub mod machine_pool;
pub mod rules;

pub use cluster::{
    Cluster, ClusterInitialization, ClusterNetwork, ClusterSpec, ClusterStatus,
    ContractVersionedObjectReference, ControlPlaneEndpoint, NetworkRanges,
};
pub use constants::*;
pub use machine_pool::{
    Bootstrap, MachinePool, MachinePoolCoreInitialization, MachinePoolSpec, MachinePoolStatus,
    MachineSpec, MachineTemplate,
};
pub use rules::{
    api_group_of, cluster_name_of, is_externally_managed, is_paused, matches_watch_filter,
    owner_cluster, owner_machine_pool,
};

pub use crate::api::FailureDomain;
