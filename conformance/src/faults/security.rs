//! The security half of a fault run: the provider runs under the RBAC its release generates (a
//! token for its Deployment's ServiceAccount), and at the end everything it emitted (logs,
//! events, object versions, metrics pages) is searched for secrets, and a user kubeconfig for
//! a static credential.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Event, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde_json::Value;

use super::Finding;
use super::harness::FaultRun;
use super::oracle;

impl FaultRun {
    /// The provider's own credentials: a kubeconfig for the release's Deployment's
    /// ServiceAccount with a day-long token (or the admin's, with `--as-admin`).
    pub(super) async fn write_upstream_kubeconfig(&mut self) -> Result<()> {
        if self.as_admin {
            self.upstream_kubeconfig = self.bed.kubeconfig().to_path_buf();
            self.not_run
                .push("the provider ran as admin (--as-admin), not under its RBAC".into());
            return Ok(());
        }
        let deployment = self
            .ctx
            .release
            .components
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .context("the release's components hold no Deployment")?;
        let ns = deployment["metadata"]["namespace"]
            .as_str()
            .context("the Deployment has no namespace")?
            .to_string();
        let account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or("default")
            .to_string();
        let api: Api<ServiceAccount> = Api::namespaced(self.bed.client.clone(), &ns);
        let request = TokenRequest {
            spec: TokenRequestSpec {
                audiences: Vec::new(),
                expiration_seconds: Some(24 * 3600),
                bound_object_ref: None,
            },
            ..TokenRequest::default()
        };
        let answer = api
            .create_token_request(&account, &PostParams::default(), &request)
            .await
            .with_context(|| format!("a token for ServiceAccount {ns}/{account}"))?;
        let token = answer
            .status
            .map(|s| s.token)
            .filter(|t| !t.is_empty())
            .context("the TokenRequest answered no token")?;
        testbed::write_kubeconfig_in(
            &self.upstream_kubeconfig,
            self.bed.plane.server(),
            self.bed.plane.ca().cert_pem(),
            &testbed::KubeconfigAuth::Token(token.clone()),
            Some(&ns),
        )?;
        eprintln!("faults: the provider runs as ServiceAccount {ns}/{account}");
        self.provider_token = Some(token);
        Ok(())
    }

    pub(super) async fn security(&mut self) {
        self.keep_metrics().await;
        let mut secrets: Vec<(String, String)> =
            vec![("SEEDED_SECRET".into(), self.seeded_secret.clone())];
        for s in &self.ctx.profile.faults.secrets {
            if let Ok(v) = self.ctx.vars.expand(s) {
                secrets.push((format!("faults.secrets {s}"), v));
            }
        }
        if let Some(t) = &self.provider_token {
            secrets.push(("the provider's ServiceAccount token".into(), t.clone()));
        }
        let mut texts: Vec<(String, String)> = Vec::new();
        if let Some(recorder) = &self.recorder {
            for seen in recorder.all_of("Secret") {
                let Some(data) = seen.obj["data"].as_object() else {
                    continue;
                };
                let decoded = |v: &Value| {
                    v.as_str()
                        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                };
                let Some(text) = data.get("value").and_then(decoded) else {
                    continue;
                };
                if seen.name.ends_with("-user-kubeconfig") {
                    for why in oracle::static_credentials(&text) {
                        self.findings.push(Finding {
                            oracle: "user kubeconfig without a static credential".into(),
                            detail: format!("Secret {}: {why}", seen.name),
                        });
                    }
                } else if seen.name.ends_with("-kubeconfig") {
                    for (label, value) in oracle::kubeconfig_credentials(&text) {
                        if !secrets.iter().any(|(_, v)| *v == value) {
                            secrets.push((format!("{label} in Secret {}", seen.name), value));
                        }
                    }
                }
            }
            for (kind, _) in self.names.provider_objects() {
                for seen in recorder.all_of(&kind) {
                    texts.push((
                        format!("{kind}/{} (a version)", seen.name),
                        seen.obj.to_string(),
                    ));
                }
            }
            for kind in ["Cluster", "MachinePool"] {
                for seen in recorder.all_of(kind) {
                    texts.push((
                        format!("{kind}/{} (a version)", seen.name),
                        seen.obj.to_string(),
                    ));
                }
            }
        }
        let events: Api<Event> = Api::all(self.bed.client.clone());
        match events.list(&ListParams::default()).await {
            Ok(list) => {
                for e in list {
                    let name = e.metadata.name.clone().unwrap_or_default();
                    texts.push((
                        format!("Event {name}"),
                        serde_json::to_string(&e).unwrap_or_default(),
                    ));
                }
            }
            Err(e) => self.finding("secrets", format!("listing events: {e}")),
        }
        texts.extend(self.metrics_pages.iter().cloned());
        if self.metrics_pages.is_empty() {
            self.not_run.push(
                "metrics page: none was read (no faults.metricsUrl, or the provider never served it)"
                    .into(),
            );
        }
        self.figures.texts_searched = texts.len();
        let mut leaks = Vec::new();
        for (source, text) in &texts {
            leaks.extend(oracle::find_secrets(source, text, &secrets));
        }
        let logs = self.ctx.dir.join("logs");
        let mut log_bytes = 0;
        if let Ok(entries) = std::fs::read_dir(&logs) {
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("provider-"))
                })
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read(&path)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                log_bytes += text.len() as u64;
                leaks.extend(oracle::find_secrets(&file_name(&path), &text, &secrets));
            }
        }
        self.figures.log_bytes = log_bytes;
        self.figures.secrets_found = leaks.len();
        eprintln!(
            "faults: searched {log_bytes} log bytes and {} texts for {} secrets",
            texts.len(),
            secrets.len()
        );
        for leak in leaks.iter().take(20) {
            self.findings.push(Finding {
                oracle: "no secret in what the provider emits".into(),
                detail: format!("{} found in {}", leak.secret, leak.source),
            });
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
