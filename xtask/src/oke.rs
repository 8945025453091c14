//! The OKE provider's release (clusterctl name `oke`): the shared [`Release`] shape with OKE's
//! CRDs and templates. The controller's own identity is an OCI API signing key in the optional
//! Secret `capi-oke-credentials` (keys `OCI_TENANCY_ID`, `OCI_USER_ID`,
//! `OCI_CREDENTIALS_FINGERPRINT` and `OCI_CREDENTIALS_KEY`, the PEM private key), given to the
//! manager as its environment.

use serde_json::Value;

use crate::release::{Release, secret_env};

pub use crate::release::VERSION;

/// The OKE release.
pub const RELEASE: Release = Release {
    name: "oke",
    crate_dir: "provider-oci",
    crds: provider_oci::api::crds,
    env,
    volumes: Vec::new,
    volume_mounts: Vec::new,
};

fn env() -> Vec<Value> {
    [
        "OCI_TENANCY_ID",
        "OCI_USER_ID",
        "OCI_CREDENTIALS_FINGERPRINT",
        "OCI_CREDENTIALS_KEY",
    ]
    .iter()
    .map(|name| secret_env(&RELEASE.credentials_secret(), name))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_release_s() {
        assert_eq!(RELEASE.namespace(), "capi-oke-system");
        assert_eq!(RELEASE.deployment(), "capi-oke-controller-manager");
    }
}
