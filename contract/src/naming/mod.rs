//! Names and ownership of cloud resources: the tag that says a resource is ours, and the names
//! given to what a provider creates, within each cloud's limits.
//!
//! # Ownership tag
//! Every cloud resource a provider creates carries one tag (a label on GCP) that names the
//! provider and the owning Cluster ([`ownership_tag`]). It survives `clusterctl move` (object UIDs
//! do not), so it is what "ours" means when a provider meets an existing resource.
//!
//! # Cloud names
//! [`derive_cloud_name`] turns a namespace and object name into a name every cloud accepts,
//! within its documented limits ([`NameLimits`] presets), deterministically.
//!
//! # Layout
//! Every item is re-exported here, so `contract::naming::X` is the path to use:
//! - [`tag`]: the ownership tag, its format and the ownership test;
//! - [`limits`]: each cloud's naming rules, checked in Rust and as CEL;
//! - [`cloud_names`]: the cloud name of an object, chosen or derived;
//! - [`hash`]: the one stable hash behind derived names and tag values.

pub mod cloud_names;
pub mod hash;
pub mod limits;
pub mod tag;

pub use cloud_names::{cloud_name, derive_child_name, derive_cloud_name};
pub use hash::fnv1a64;
pub use limits::{
    AKS_AGENT_POOL, AKS_CLUSTER, EKS_CLUSTER, EKS_NODEGROUP, FirstChar, GKE_CLUSTER, GKE_NODE_POOL,
    NameError, NameLimits, OKE_CLUSTER, OKE_NODE_POOL,
};
pub use tag::{
    OWNERSHIP_TAG_MAX_LEN, OWNERSHIP_TAG_PREFIX, is_owned_by, ownership_tag, ownership_tag_key,
    ownership_tag_of,
};
