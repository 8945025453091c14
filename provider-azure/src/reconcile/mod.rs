//! The three reconcilers, one per kind. Each observes AKS, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use contract::conditions::Reason;
use contract::version::KubeVersion;
use provider_runtime::ProviderError;

/// A version as AKS takes it: the minor, `1.33` (AKS picks the newest patch; the kernel asks
/// for minors only).
pub fn aks_version(v: &KubeVersion) -> String {
    v.without_patch()
        .to_string()
        .trim_start_matches('v')
        .to_string()
}

/// `body` with the user's `requestOverrides` laid under the provider's fields (the shared merge
/// rule of [`contract::overrides`]).
pub fn overridden(
    body: &serde_json::Value,
    patch: &serde_json::Value,
) -> Result<serde_json::Value, ProviderError> {
    let merged = contract::overrides::apply(body, patch);
    if !merged.is_object() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "spec.aks.requestOverrides does not make a valid AKS request: the body is no longer a JSON object",
        ));
    }
    Ok(merged)
}

/// The last segment of an ARM id (`…/subnets/nodes` → `nodes`).
pub fn last_segment(id: &str) -> &str {
    id.trim_end_matches('/').rsplit('/').next().unwrap_or(id)
}
