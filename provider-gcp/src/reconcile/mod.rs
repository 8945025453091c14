//! The three reconcilers, one per kind. Each observes GKE, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use contract::version::KubeVersion;

/// A version as GKE takes it: the minor, `1.33` (GKE picks the patch and build; the kernel asks
/// for minors only).
pub fn gke_version(v: &KubeVersion) -> String {
    v.without_patch()
        .to_string()
        .trim_start_matches('v')
        .to_string()
}
