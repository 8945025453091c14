//! The EKS provider's release (clusterctl name `eks`): the shared [`Release`] shape with EKS's
//! CRDs and templates, the controller's own AWS credentials from the optional Secret
//! `capi-eks-credentials`.

use serde_json::Value;

use crate::release::{Release, secret_env};

pub use crate::release::VERSION;

/// The EKS release.
pub const RELEASE: Release = Release {
    name: "eks",
    crate_dir: "provider-aws",
    crds: provider_aws::api::crds,
    env,
    volumes: Vec::new,
    volume_mounts: Vec::new,
};

/// Where the controller runs.
pub const NAMESPACE: &str = "capi-eks-system";
/// The Deployment.
pub const DEPLOYMENT: &str = "capi-eks-controller-manager";

fn env() -> Vec<Value> {
    [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ]
    .iter()
    .map(|name| secret_env(&RELEASE.credentials_secret(), name))
    .collect()
}

/// The clusterctl templates in `dir` ([`crate::release::templates`]).
pub use crate::release::templates;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_release_s() {
        assert_eq!(RELEASE.namespace(), NAMESPACE);
        assert_eq!(RELEASE.deployment(), DEPLOYMENT);
    }
}
