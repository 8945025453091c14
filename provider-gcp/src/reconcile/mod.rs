//! The three reconcilers, one per kind. Each observes GKE, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use contract::conditions::Reason;
use contract::version::KubeVersion;
use provider_runtime::ProviderError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A version as GKE takes it: the minor, `1.33` (GKE picks the patch and build; the kernel asks
/// for minors only).
pub fn gke_version(v: &KubeVersion) -> String {
    v.without_patch()
        .to_string()
        .trim_start_matches('v')
        .to_string()
}

/// `body` with the user's `requestOverrides` laid under the provider's fields (the shared merge
/// rule of [`contract::overrides`]), through the request's JSON.
///
/// # Errors
/// Terminal `InvalidSpec` when the merged body is not a valid request body.
pub fn overridden<T: Serialize + DeserializeOwned>(
    body: &T,
    patch: &serde_json::Value,
) -> Result<T, ProviderError> {
    let ours =
        serde_json::to_value(body).map_err(|e| ProviderError::cloud("overrides", e.to_string()))?;
    serde_json::from_value(contract::overrides::apply(&ours, patch)).map_err(|e| {
        ProviderError::terminal(
            Reason::InvalidSpec,
            format!("spec.gke.requestOverrides does not make a valid GKE request: {e}"),
        )
    })
}
