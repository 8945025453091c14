//! The three reconcilers, one per kind. Each observes the cloud, plans (pure), acts (at most one
//! cloud call that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;
