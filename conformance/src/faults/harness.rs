//! The harness of a fault run: the plane, the emulator and the provider's processes (started
//! through a proxy in front of kube-apiserver, killed, restarted, counted when they crash),
//! the run's findings, and stopping everything at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::cloud::Sampled;
use super::oracle::Item;
use super::plan::Plan;
use super::proxy::ApiProxy;
use super::{FaultOptions, Figures, Finding};
use crate::objects::Recorder;
use crate::procs::{Running, http_get};
use crate::run::lifecycle::{self, Names, State};
use crate::run::setup::Installed;
use crate::run::{Bed, Ctx, WATCH_FILTER};

/// One fault run in progress.
pub(super) struct FaultRun {
    pub(super) ctx: Ctx,
    pub(super) bed: Bed,
    pub(super) emulator: Option<Running>,
    pub(super) docs: Vec<Value>,
    pub(super) names: Names,
    pub(super) plan: Plan,
    pub(super) still: Duration,
    pub(super) provider: Option<Running>,
    pub(super) incarnation: u32,
    /// What the provider is given: a kubeconfig for `proxy`.
    pub(super) provider_kubeconfig: PathBuf,
    /// The credentials the proxies forward with (its ServiceAccount's, or the admin's).
    pub(super) upstream_kubeconfig: PathBuf,
    pub(super) provider_token: Option<String>,
    /// The proxy in front of kube-apiserver every single replica talks through.
    pub(super) proxy: Option<ApiProxy>,
    /// The share of the provider's updates the proxies answer 409.
    pub(super) conflict_rate: f64,
    pub(super) seeded_secret: String,
    pub(super) metrics_url: Option<String>,
    pub(super) metrics_pages: Vec<(String, String)>,
    pub(super) figures: Figures,
    pub(super) findings: Vec<Finding>,
    pub(super) not_run: Vec<String>,
    pub(super) recorder: Option<Recorder>,
    /// When a provider process was stopped or killed, Unix milliseconds.
    pub(super) stops_at: Vec<u64>,
    pub(super) inventory_before: Vec<Item>,
    pub(super) sampled: Arc<Mutex<Sampled>>,
    pub(super) sampler: Option<tokio::task::JoinHandle<()>>,
    pub(super) as_admin: bool,
}

impl FaultRun {
    pub(super) fn new(
        installed: Installed,
        options: &FaultOptions,
        seeded_secret: String,
    ) -> Result<Self> {
        let names = Names::from_docs(&installed.default_docs)?;
        let provider_kubeconfig = installed.ctx.dir.join("provider.kubeconfig");
        let upstream_kubeconfig = installed.ctx.dir.join("provider-upstream.kubeconfig");
        Ok(Self {
            ctx: installed.ctx,
            bed: installed.bed,
            emulator: installed.emulator,
            docs: installed.default_docs,
            names,
            plan: Plan::new(options.seed, options.kills),
            still: options.still,
            provider: None,
            incarnation: 0,
            upstream_kubeconfig,
            provider_kubeconfig,
            provider_token: None,
            proxy: None,
            conflict_rate: 0.0,
            seeded_secret,
            metrics_url: None,
            metrics_pages: Vec::new(),
            figures: Figures {
                seed: options.seed,
                ..Figures::default()
            },
            findings: Vec::new(),
            not_run: Vec::new(),
            recorder: None,
            stops_at: Vec::new(),
            inventory_before: Vec::new(),
            sampled: Arc::default(),
            sampler: None,
            as_admin: options.as_admin,
        })
    }

    pub(super) fn finding(&mut self, oracle: &str, detail: impl Into<String>) {
        let detail = detail.into();
        eprintln!("faults: FAIL {oracle}: {detail}");
        self.findings.push(Finding {
            oracle: oracle.to_string(),
            detail,
        });
    }

    pub(super) fn url(
        &self,
        pick: impl Fn(&crate::profile::FaultsSpec) -> Option<&String>,
    ) -> Option<String> {
        pick(&self.ctx.profile.faults).and_then(|u| self.ctx.vars.expand(u).ok())
    }

    // ---- the provider process -------------------------------------------------------------

    /// A kubeconfig for the provider's ServiceAccount (the release's Deployment's), with a
    /// day-long token, its namespace as the context's (where its leader Lease lives); and the
    /// proxy the provider reaches kube-apiserver through, with a kubeconfig for it.
    pub(super) async fn write_provider_kubeconfig(&mut self) -> Result<()> {
        self.write_upstream_kubeconfig().await?;
        let (proxy, kubeconfig) = self.proxied("provider").await?;
        self.provider_kubeconfig = kubeconfig;
        self.proxy = Some(proxy);
        Ok(())
    }

    /// A proxy in front of kube-apiserver forwarding with the upstream credentials, and a
    /// kubeconfig `<name>.kubeconfig` for it.
    pub(super) async fn proxied(&mut self, name: &str) -> Result<(ApiProxy, PathBuf)> {
        let seed = self.plan.seed ^ u64::from(self.incarnation) ^ 0x409;
        let proxy = ApiProxy::start(&self.upstream_kubeconfig, seed).await?;
        proxy.stats().set_conflict_rate(self.conflict_rate);
        let path = self.ctx.dir.join(format!("{name}.kubeconfig"));
        // The proxy drops what the provider sends and forwards with its own credentials; the
        // token here is what the provider would have had.
        let token = self
            .provider_token
            .clone()
            .unwrap_or_else(|| "forwarded-with-the-admin-credential".into());
        testbed::write_kubeconfig_in(
            &path,
            proxy.url(),
            self.bed.plane.ca().cert_pem(),
            &testbed::KubeconfigAuth::Token(token),
            Some(&self.provider_namespace()?),
        )?;
        Ok((proxy, path))
    }

    /// Every proxy's share of updates answered 409 from now on.
    pub(super) fn set_conflict_rate(&mut self, rate: f64) {
        self.conflict_rate = rate;
        if let Some(p) = &self.proxy {
            p.stats().set_conflict_rate(rate);
        }
    }

    pub(super) fn start_provider(&mut self) -> Result<()> {
        let kubeconfig = self.provider_kubeconfig.clone();
        self.provider = Some(self.spawn_provider(&[], &kubeconfig)?);
        Ok(())
    }

    /// A new provider process (`provider-<n>`), with `extra` arguments, given `kubeconfig`.
    pub(super) fn spawn_provider(
        &mut self,
        extra: &[String],
        kubeconfig: &Path,
    ) -> Result<Running> {
        self.incarnation += 1;
        let profile = &self.ctx.profile;
        let mut vars = self.ctx.vars.clone();
        vars.set("KUBECONFIG", kubeconfig.display().to_string());
        vars.set("METRICS_PORT", testbed::process::free_port()?.to_string());
        vars.set("HEALTH_PORT", testbed::process::free_port()?.to_string());
        let mut argv = vars.expand_all(&profile.provider.command)?;
        argv.push(format!("--watch-filter={WATCH_FILTER}"));
        argv.extend(vars.expand_all(extra)?);
        let mut env = BTreeMap::new();
        for (k, v) in profile
            .provider
            .env
            .iter()
            .chain(profile.faults.verbose_env.iter())
        {
            env.insert(k.clone(), vars.expand(v)?);
        }
        env.insert("KUBECONFIG".to_string(), kubeconfig.display().to_string());
        self.metrics_url = profile
            .faults
            .metrics_url
            .as_ref()
            .and_then(|u| vars.expand(u).ok());
        let logs = self.ctx.dir.join("logs");
        std::fs::create_dir_all(&logs)?;
        Running::spawn(
            &format!("provider-{}", self.incarnation),
            &argv,
            &env,
            &profile.workdir(),
            &logs,
        )
    }

    /// Keeps the metrics page for the secret search (best effort: a provider just started may
    /// not serve it yet).
    pub(super) async fn keep_metrics(&mut self) {
        let Some(url) = self.metrics_url.clone() else {
            return;
        };
        if let Ok(Ok(text)) = tokio::time::timeout(Duration::from_secs(2), http_get(&url)).await {
            self.metrics_pages
                .push((format!("metrics of provider-{}", self.incarnation), text));
        }
    }

    pub(super) async fn kill_and_restart(&mut self, mid_phase: bool) -> Result<()> {
        self.keep_metrics().await;
        if let Some(mut p) = self.provider.take() {
            p.kill().await;
            self.stops_at.push(now_millis());
        }
        self.figures.kills += 1;
        if mid_phase {
            self.figures.kills_mid_phase += 1;
        }
        self.start_provider()
    }

    /// Restarts the provider if it exited by itself, counting a crash.
    pub(super) fn ensure_provider(&mut self) -> Result<()> {
        let exited = self.provider.as_mut().is_some_and(Running::exited);
        if exited {
            let log = self
                .provider
                .as_ref()
                .map(|p| p.log().display().to_string())
                .unwrap_or_default();
            self.figures.crashes += 1;
            self.finding(
                "no crash",
                format!(
                    "provider-{} exited by itself; its log: {log}",
                    self.incarnation
                ),
            );
            self.start_provider()?;
        }
        Ok(())
    }

    pub(super) fn provider_namespace(&self) -> Result<String> {
        self.ctx
            .release
            .components
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .and_then(|d| d["metadata"]["namespace"].as_str())
            .map(str::to_string)
            .context("the release's components hold no Deployment with a namespace")
    }

    pub(super) async fn state(&self) -> Result<State> {
        lifecycle::read(&self.ctx, &self.bed.client, &self.names).await
    }

    pub(super) async fn stop(mut self, keep: bool) {
        if let Some(s) = self.sampler.take() {
            s.abort();
        }
        if let Some(r) = &self.recorder {
            r.stop();
        }
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(5)).await;
        }
        if let Some(mut e) = self.emulator.take() {
            e.stop(Duration::from_secs(10)).await;
        }
        self.bed.stop(keep).await;
    }
}

pub(super) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
