//! The three reconcilers, one per kind. Each observes AKS, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use contract::version::KubeVersion;

/// A version as AKS takes it: the minor, `1.33` (AKS picks the newest patch; the kernel asks
/// for minors only).
pub fn aks_version(v: &KubeVersion) -> String {
    v.without_patch()
        .to_string()
        .trim_start_matches('v')
        .to_string()
}

/// The last segment of an ARM id (`…/subnets/nodes` → `nodes`).
pub fn last_segment(id: &str) -> &str {
    id.trim_end_matches('/').rsplit('/').next().unwrap_or(id)
}
