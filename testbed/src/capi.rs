//! Installing Cluster API core's CRDs and webhooks so the real manager serves them on loopback,
//! as CAPI's own envtest does: every webhook and CRD conversion is pointed at
//! `https://127.0.0.1:<webhook port>` with the bed's CA.

use anyhow::{Context, Result};
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, WebhookClientConfig as CrdClientConfig,
    WebhookConversion,
};
use kube::api::{Api, DeleteParams, Patch, PatchParams};

use crate::{Assets, FIELD_MANAGER, install_crds};

/// Names the bed gives the two webhook configurations (as the release's `capi-` prefix does).
pub const MUTATING: &str = "capi-mutating-webhook-configuration";
/// See [`MUTATING`].
pub const VALIDATING: &str = "capi-validating-webhook-configuration";

pub async fn install(
    client: &kube::Client,
    assets: &Assets,
    webhook_port: u16,
    ca_pem: &str,
) -> Result<()> {
    let base = format!("https://127.0.0.1:{webhook_port}");
    let ca = ByteString(ca_pem.as_bytes().to_vec());

    let mut crds = Vec::new();
    let mut entries: Vec<_> =
        std::fs::read_dir(assets.capi_crd_dir())?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let text = std::fs::read_to_string(entry.path())?;
        let mut crd: CustomResourceDefinition = serde_saphyr::from_str(&text)
            .with_context(|| format!("parsing {}", entry.path().display()))?;
        crd.spec.conversion = Some(CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(WebhookConversion {
                client_config: Some(CrdClientConfig {
                    url: Some(format!("{base}/convert")),
                    ca_bundle: Some(ca.clone()),
                    service: None,
                }),
                conversion_review_versions: vec!["v1".into(), "v1beta1".into()],
            }),
        });
        crds.push(crd);
    }
    install_crds(client, &crds).await?;

    let text = std::fs::read_to_string(assets.capi_webhooks())?;
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text)?;
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for mut doc in docs {
        let kind = doc["kind"].as_str().unwrap_or_default().to_string();
        let name = if kind == "MutatingWebhookConfiguration" {
            MUTATING
        } else {
            VALIDATING
        };
        doc["metadata"] = serde_json::json!({ "name": name });
        if let Some(hooks) = doc["webhooks"].as_array_mut() {
            for hook in hooks {
                let path = hook["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap_or("/")
                    .to_string();
                let config = WebhookClientConfig {
                    url: Some(format!("{base}{path}")),
                    ca_bundle: Some(ca.clone()),
                    service: None,
                };
                hook["clientConfig"] = serde_json::to_value(config)?;
            }
        }
        match kind.as_str() {
            "MutatingWebhookConfiguration" => {
                let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
                api.patch(name, &params, &Patch::Apply(&doc)).await?;
            }
            "ValidatingWebhookConfiguration" => {
                let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
                api.patch(name, &params, &Patch::Apply(&doc)).await?;
            }
            other => {
                anyhow::bail!("unexpected kind {other:?} in the Cluster API webhook manifests")
            }
        }
    }
    Ok(())
}

/// Removes the webhook configurations (best effort) so deletions do not hang on a stopped manager.
pub async fn remove_webhooks(client: &kube::Client) {
    let dp = DeleteParams::default();
    let _ = Api::<MutatingWebhookConfiguration>::all(client.clone())
        .delete(MUTATING, &dp)
        .await;
    let _ = Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .delete(VALIDATING, &dp)
        .await;
}
