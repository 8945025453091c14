//! One management plane of a run, with the provider's controller running against it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use testbed::{ManagementPlane, Options};

use crate::procs::Running;
use crate::profile::Vars;

/// A management plane (real etcd, kube-apiserver, kube-controller-manager and Cluster API core)
/// and, once started, the provider's controller against it.
pub struct Bed {
    /// `a` or `b`.
    pub name: String,
    /// The plane.
    pub plane: ManagementPlane,
    /// Admin client.
    pub client: kube::Client,
    /// The provider's controller.
    pub provider: Option<Running>,
}

impl std::fmt::Debug for Bed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bed")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Bed {
    /// Starts a plane with cert-manager's CRDs (clusterctl looks for them).
    pub async fn start(name: &str) -> Result<Self> {
        let plane = ManagementPlane::start(Options::default())
            .await
            .with_context(|| format!("starting management plane {name}"))?;
        plane
            .install_crds(&crate::clusterctl::cert_manager_crds()?)
            .await?;
        let client = plane.client().await?;
        Ok(Self {
            name: name.to_string(),
            plane,
            client,
            provider: None,
        })
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        self.plane.kubeconfig_path()
    }

    /// Starts the provider's controller as the profile says, with `--watch-filter` and this bed's
    /// `KUBECONFIG`.
    pub fn start_provider(&mut self, ctx: &super::Ctx) -> Result<PathBuf> {
        let mut vars: Vars = ctx.vars.clone();
        vars.set("KUBECONFIG", self.kubeconfig().display().to_string());
        vars.set("METRICS_PORT", testbed::process::free_port()?.to_string());
        vars.set("HEALTH_PORT", testbed::process::free_port()?.to_string());
        let mut argv = vars.expand_all(&ctx.profile.provider.command)?;
        argv.push(format!("--watch-filter={}", super::WATCH_FILTER));
        let mut env = std::collections::BTreeMap::new();
        for (k, v) in &ctx.profile.provider.env {
            env.insert(k.clone(), vars.expand(v)?);
        }
        env.insert(
            "KUBECONFIG".to_string(),
            self.kubeconfig().display().to_string(),
        );
        let logs = ctx.dir.join("logs");
        std::fs::create_dir_all(&logs)?;
        let running = Running::spawn(
            &format!("provider-{}", self.name),
            &argv,
            &env,
            &ctx.profile.workdir(),
            &logs,
        )?;
        let log = running.log().to_path_buf();
        self.provider = Some(running);
        Ok(log)
    }

    /// Fails if the provider's controller has exited.
    pub fn ensure_provider(&mut self) -> Result<()> {
        match &mut self.provider {
            Some(p) => p.ensure_running(),
            None => Ok(()),
        }
    }

    /// Stops the controller, then the plane.
    pub async fn stop(mut self, keep: bool) {
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(5)).await;
        }
        if keep {
            let path = self.plane.keep();
            eprintln!(
                "conformance: plane {} kept at {}",
                self.name,
                path.display()
            );
        }
        self.plane.stop().await;
    }
}
