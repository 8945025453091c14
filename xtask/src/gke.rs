//! The GKE provider's release (clusterctl name `gke`): the shared [`Release`] shape with GKE's
//! CRDs and templates. The controller's own identity is a service-account key in the optional
//! Secret `capi-gke-credentials` (key `credentials.json`), mounted and named by
//! `GOOGLE_APPLICATION_CREDENTIALS`.

use serde_json::{Value, json};

use crate::release::Release;

pub use crate::release::VERSION;

/// The GKE release.
pub const RELEASE: Release = Release {
    name: "gke",
    crate_dir: "provider-gcp",
    crds: provider_gcp::api::crds,
    env,
    volumes,
    volume_mounts,
};

/// Where the mounted key lives in the container.
const KEY_DIR: &str = "/var/run/secrets/google";

fn env() -> Vec<Value> {
    vec![
        json!({ "name": "GOOGLE_APPLICATION_CREDENTIALS", "value": format!("{KEY_DIR}/credentials.json") }),
    ]
}

fn volumes() -> Vec<Value> {
    vec![json!({
        "name": "google-credentials",
        "secret": { "secretName": RELEASE.credentials_secret(), "optional": true },
    })]
}

fn volume_mounts() -> Vec<Value> {
    vec![json!({ "name": "google-credentials", "mountPath": KEY_DIR, "readOnly": true })]
}
