//! The real clusterctl, offline: a local repository holding Cluster API core (as the bed runs it)
//! and the provider's release, and the commands the suite runs.
//!
//! Core's manager already runs as a process of the bed, so the repository's core components are
//! core's CRDs (from the same module the bed built), its namespace, and the aggregated ClusterRole
//! core's manager is bound to, as core's release ships them. cert-manager is declared externally
//! provisioned; its two CRDs are installed so clusterctl's check finds them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

/// The namespace and ServiceAccount core's manager runs as in a clusterctl install.
pub const CORE_NAMESPACE: &str = "capi-system";
/// See [`CORE_NAMESPACE`].
pub const CORE_SERVICE_ACCOUNT: &str = "capi-manager";
/// The label core's aggregated ClusterRole selects.
pub const AGGREGATE_LABEL: &str = "cluster.x-k8s.io/aggregate-to-manager";

/// A local repository and the clusterctl binary that reads it.
#[derive(Debug, Clone)]
pub struct Clusterctl {
    bin: PathBuf,
    config: PathBuf,
    xdg: PathBuf,
    /// `cluster-api:<version>`.
    pub core: String,
    /// `<name>:<version>`.
    pub infrastructure: String,
}

/// What one clusterctl command printed.
#[derive(Debug, Clone)]
pub struct Output {
    /// Exit success.
    pub success: bool,
    /// stdout.
    pub stdout: String,
    /// stderr.
    pub stderr: String,
}

fn core_components(assets: &testbed::Assets) -> Result<String> {
    let mut docs = vec![
        serde_json::to_string(&json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": CORE_NAMESPACE },
        }))?,
        serde_json::to_string(&json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": { "name": CORE_SERVICE_ACCOUNT, "namespace": CORE_NAMESPACE },
        }))?,
        serde_json::to_string(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": { "name": "capi-aggregated-manager-role" },
            "aggregationRule": { "clusterRoleSelectors": [
                { "matchLabels": { AGGREGATE_LABEL: "true" } },
            ]},
            "rules": [],
        }))?,
        serde_json::to_string(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": { "name": "capi-manager-rolebinding" },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "capi-aggregated-manager-role" },
            "subjects": [{ "kind": "ServiceAccount", "name": CORE_SERVICE_ACCOUNT,
                           "namespace": CORE_NAMESPACE }],
        }))?,
    ];
    let mut crds: Vec<_> = std::fs::read_dir(assets.capi_crd_dir())?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    crds.sort();
    for crd in crds {
        let text = std::fs::read_to_string(&crd)?;
        docs.push(text.trim_start_matches("---\n").to_string());
    }
    Ok(docs.join("\n---\n"))
}

/// cert-manager's Issuer and Certificate CRDs with an open schema: what clusterctl looks for.
pub fn cert_manager_crds() -> Result<Vec<CustomResourceDefinition>> {
    ["Issuer", "Certificate"]
        .iter()
        .map(|kind| {
            let plural = format!("{}s", kind.to_lowercase());
            serde_json::from_value(json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": { "name": format!("{plural}.cert-manager.io") },
                "spec": {
                    "group": "cert-manager.io",
                    "scope": "Namespaced",
                    "names": { "kind": kind, "plural": plural, "listKind": format!("{kind}List") },
                    "versions": [{
                        "name": "v1", "served": true, "storage": true,
                        "schema": { "openAPIV3Schema": {
                            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        }},
                    }],
                },
            }))
            .context("building cert-manager's CRDs")
        })
        .collect()
}

impl Clusterctl {
    /// Lays out `<base>/cluster-api/<core>/` and `<base>/infrastructure-<name>/<version>/` (every
    /// file of `release`), and writes the clusterctl config naming both.
    pub fn repository(
        base: &Path,
        assets: &testbed::Assets,
        core_version: &str,
        name: &str,
        version: &str,
        release: &Path,
    ) -> Result<Self> {
        let core = base.join("cluster-api").join(core_version);
        std::fs::create_dir_all(&core)?;
        std::fs::write(core.join("core-components.yaml"), core_components(assets)?)?;
        std::fs::copy(assets.capi_metadata(), core.join("metadata.yaml"))?;

        let infra = base.join(format!("infrastructure-{name}")).join(version);
        std::fs::create_dir_all(&infra)?;
        for entry in std::fs::read_dir(release)
            .with_context(|| format!("reading the release folder {}", release.display()))?
        {
            let path = entry?.path();
            let file = path.file_name().map(|f| f.to_string_lossy().to_string());
            if let Some(file) = file
                && path.is_file()
                && file.ends_with(".yaml")
            {
                std::fs::copy(&path, infra.join(&file))?;
            }
        }
        if !infra.join("infrastructure-components.yaml").is_file() {
            bail!(
                "{} has no infrastructure-components.yaml",
                release.display()
            );
        }
        let config = base.join("clusterctl.yaml");
        std::fs::write(
            &config,
            format!(
                "providers:\n\
                 - name: cluster-api\n  type: CoreProvider\n  url: file://{}/core-components.yaml\n\
                 - name: {name}\n  type: InfrastructureProvider\n  url: file://{}/infrastructure-components.yaml\n\
                 cert-manager:\n  externallyProvisioned: true\n  timeout: 2m\n",
                core.display(),
                infra.display()
            ),
        )?;
        Ok(Self {
            bin: assets.clusterctl(),
            config,
            xdg: base.join("xdg"),
            core: format!("cluster-api:{core_version}"),
            infrastructure: format!("{name}:{version}"),
        })
    }

    /// Runs clusterctl against `kubeconfig` with extra environment.
    pub async fn run(
        &self,
        kubeconfig: &Path,
        args: &[&str],
        env: &[(String, String)],
    ) -> Result<Output> {
        let mut cmd = testbed::process::command(&self.bin);
        cmd.args(args)
            .arg("--config")
            .arg(&self.config)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .env("XDG_CONFIG_HOME", &self.xdg)
            .env("CLUSTERCTL_DISABLE_VERSIONCHECK", "true")
            .env_remove("KUBERNETES_VERSION");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .await
            .with_context(|| format!("running {}", self.bin.display()))?;
        let output = Output {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        };
        tracing::debug!(?args, success = output.success, stderr = %output.stderr, "clusterctl");
        Ok(output)
    }

    /// `clusterctl init` of core and the infrastructure provider (no bootstrap or control-plane
    /// provider: managed control planes ship in the infrastructure provider).
    pub async fn init(&self, kubeconfig: &Path) -> Result<Output> {
        self.run(
            kubeconfig,
            &[
                "init",
                "--core",
                &self.core,
                "--bootstrap=-",
                "--control-plane=-",
                "--infrastructure",
                &self.infrastructure,
            ],
            &[],
        )
        .await
    }
}
