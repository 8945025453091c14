//! The AKS provider's release (clusterctl name `aks`): the shared [`Release`] shape with AKS's
//! CRDs and templates. The controller's own identity is a service principal in the optional
//! Secret `capi-aks-credentials` (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`),
//! or workload identity (`AZURE_FEDERATED_TOKEN_FILE`, which the Azure workload identity webhook
//! injects with the tenant and client ids when the ServiceAccount is annotated).

use serde_json::Value;

use crate::release::{Release, secret_env};

pub use crate::release::VERSION;

/// The AKS release.
pub const RELEASE: Release = Release {
    name: "aks",
    crate_dir: "provider-azure",
    crds: provider_azure::api::crds,
    env,
    volumes: Vec::new,
    volume_mounts: Vec::new,
};

fn env() -> Vec<Value> {
    ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"]
        .iter()
        .map(|name| secret_env(&RELEASE.credentials_secret(), name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_release_s() {
        assert_eq!(RELEASE.namespace(), "capi-aks-system");
        assert_eq!(RELEASE.deployment(), "capi-aks-controller-manager");
    }
}
