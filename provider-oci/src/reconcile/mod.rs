//! The three reconcilers, one per kind. Each observes OKE, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use contract::conditions::Reason;
use contract::version::KubeVersion;
use provider_runtime::{ProviderError, Role};

use crate::api::{OKECluster, OKEControlPlane, OKEMachinePool};

provider_runtime::provider_object!(OKECluster, Role::InfraCluster);

provider_runtime::provider_object!(OKEControlPlane, Role::ControlPlane);

provider_runtime::provider_object!(OKEMachinePool, Role::InfraMachinePool);

/// The version OKE offers for `want` (pure): the exact patch when `want` names one OKE offers,
/// else the newest patch OKE offers of `want`'s minor.
pub fn offered_version(offered: &[String], want: &KubeVersion) -> Option<String> {
    let parsed: Vec<(KubeVersion, &String)> = offered
        .iter()
        .filter_map(|v| KubeVersion::parse(v).ok().map(|k| (k, v)))
        .collect();
    if want.patch.is_some()
        && let Some((_, v)) = parsed.iter().find(|(k, _)| k == want)
    {
        return Some((*v).clone());
    }
    parsed
        .iter()
        .filter(|(k, _)| k.same_minor(want))
        .max_by_key(|(k, _)| *k)
        .map(|(_, v)| (*v).clone())
}

/// `body` with the user's `requestOverrides` laid under the provider's fields (the shared merge
/// rule of [`contract::overrides`]).
///
/// # Errors
/// Terminal `InvalidSpec` when the merge leaves no JSON object.
pub fn overridden(
    body: &serde_json::Value,
    patch: &serde_json::Value,
) -> Result<serde_json::Value, ProviderError> {
    let merged = contract::overrides::apply(body, patch);
    if !merged.is_object() {
        return Err(ProviderError::terminal(
            Reason::InvalidSpec,
            "spec.oke.requestOverrides does not make a valid OKE request: the body is no longer a JSON object",
        ));
    }
    Ok(merged)
}

/// The freeform tags of a resource's JSON, as a map.
pub fn tags_of(resource: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    resource["freeformTags"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_means_the_newest_offered_patch_and_an_offered_patch_itself() {
        let offered: Vec<String> = ["v1.31.1", "v1.31.10", "v1.32.1"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        let v = |s: &str| KubeVersion::parse(s).unwrap();
        assert_eq!(
            offered_version(&offered, &v("v1.31")).as_deref(),
            Some("v1.31.10")
        );
        assert_eq!(
            offered_version(&offered, &v("v1.31.1")).as_deref(),
            Some("v1.31.1")
        );
        assert_eq!(
            offered_version(&offered, &v("v1.31.0")).as_deref(),
            Some("v1.31.10")
        );
        assert_eq!(offered_version(&offered, &v("v1.30")), None);
    }
}
