//! `conformance faults`: one provider driven through a cluster's create, upgrade, scale and
//! delete while faults are injected, each judged by its oracle from
//! `shared/design/reliability.md`; and the security checks of the same run.
//!
//! Like `conformance run`, it knows a provider only through its profile (`PROFILE.md`, the
//! `faults:` block), so it judges a third party's provider as well as ours. The run, in order:
//!
//! 1. plane a with the release installed by `clusterctl init`, the emulator started, the
//!    default flavor rendered; the cloud's inventory read (what was there before us);
//! 2. the provider started **as its own ServiceAccount** (a token for the release's
//!    Deployment's account, so the generated RBAC is what it runs under), with its most verbose
//!    logging (`faults.verboseEnv`) and a seeded secret in its cloud credentials, reaching
//!    kube-apiserver through a [`proxy`] that counts its writes and, from create to the end of
//!    delete, answers a fifth of its updates 409 Conflict;
//! 3. create (SIGKILLs; 10 % of cloud calls answered 429 + `Retry-After`), then the cluster's
//!    resourceVersions watched for stillness, and the provider's writes counted (none allowed);
//! 4. etcd compacted and kube-apiserver restarted; right after, a pool scaled up, which the
//!    provider must see after its watches' 410 Gone and relist;
//! 5. two replicas with leader election, each through its own proxy: a pool scaled down while
//!    both run (only the Lease's holder may write), then the holder SIGKILLed, the other takes
//!    the Lease over within its duration and scales a pool up;
//! 6. upgrade (SIGKILLs; 10 % 503);
//! 7. scale down (SIGKILLs; 10 % dropped connections, 10 % of answers held 20 s);
//! 8. a pool's cloud resource deleted behind the provider's back;
//! 9. delete (SIGKILLs);
//! 10. the oracles: no duplicate (the inventory sampled every five seconds throughout), no leak, no
//!     foreign resource deleted, no call before `Retry-After`, convergence times, secrets in
//!     logs, events, objects and metrics, the user kubeconfig's credential.
//!
//! Kills follow a seeded plan ([`plan`]); the oracles that judge data alone are in [`oracle`].

pub mod oracle;
pub mod plan;
pub mod private;
pub mod proxy;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde::Serialize;
use serde_json::{Value, json};

use self::oracle::Item;
use self::plan::{Phase, Plan};
use self::proxy::ApiProxy;
use crate::objects::{self, Recorder};
use crate::procs::{Running, http_get, http_send};
use crate::run::lifecycle::{self, CLUSTER, NS, Names, State};
use crate::run::setup::{self, Installed};
use crate::run::{Bed, Ctx, Prepared, WATCH_FILTER, prepare};

/// How long the provider must have sent no write before a settled cluster's stillness is watched.
const QUIET: Duration = Duration::from_secs(5);
/// How long it has to get there.
const QUIET_WITHIN: Duration = Duration::from_secs(60);

/// What to run.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// The profile file.
    pub profile: PathBuf,
    /// The plan's seed.
    pub seed: u64,
    /// SIGKILLs in all, spread over the four phases.
    pub kills: u32,
    /// How long a settled cluster's resourceVersions must stay still.
    pub still: Duration,
    /// Keep the run directory.
    pub keep: bool,
    /// Never keep the run directory or the plane.
    pub discard: bool,
    /// Extra variables for the profile's expansion.
    pub vars: Vec<(String, String)>,
    /// Run the provider with the admin kubeconfig instead of its ServiceAccount.
    pub as_admin: bool,
}

/// The figures of a run (the JSON a run writes, and the closing note's numbers).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// The plan's seed.
    pub seed: u64,
    /// SIGKILLs of the provider.
    pub kills: usize,
    /// Of those, how many fell before their phase had settled (mid-reconcile).
    pub kills_mid_phase: usize,
    /// Times the provider exited without being killed (a crash).
    pub crashes: usize,
    /// Injected cloud faults answered, by kind (counted by the emulator).
    pub cloud_faults: BTreeMap<String, u64>,
    /// kube-apiserver restarts.
    pub api_server_restarts: usize,
    /// etcd compactions.
    pub etcd_compactions: usize,
    /// Cloud resources deleted behind the provider's back.
    pub outside_deletions: usize,
    /// Owned cloud resources seen twice at once.
    pub duplicates: usize,
    /// Owned cloud resources left after the Cluster was gone.
    pub leaks: usize,
    /// Resources that were there before the provider ran and are gone.
    pub wrong_deletions: usize,
    /// Calls sent before the `Retry-After` of a 429 by the process that had been answered it.
    pub early_calls: usize,
    /// Calls sent before a 429's `Retry-After` by a provider process started after the 429
    /// (its predecessor was killed): not judged, the new process never saw the answer.
    pub early_calls_after_restart: usize,
    /// Secret strings found in what the provider emitted.
    pub secrets_found: usize,
    /// Objects whose resourceVersion moved while the settled cluster was watched.
    pub unstill_objects: usize,
    /// Writes the provider sent while the settled cluster was watched (refused ones included:
    /// a provider retrying a refused write in a loop moves no resourceVersion).
    pub writes_while_still: u64,
    /// The provider's updates answered 409 Conflict by the proxy in front of kube-apiserver.
    pub conflicts_injected: u64,
    /// Writes (Leases left out) by the leader while two replicas ran.
    pub leader_writes: u64,
    /// Writes (Leases left out) by the standby while two replicas ran: 0 when one acts.
    pub standby_writes: u64,
    /// Longest time to converge after each fault kind cleared, seconds.
    pub convergence_secs: BTreeMap<String, f64>,
    /// Each phase's duration, seconds.
    pub phase_secs: BTreeMap<String, f64>,
    /// Bytes of provider log searched.
    pub log_bytes: u64,
    /// Events, object versions and metrics pages searched.
    pub texts_searched: usize,
}

/// A broken oracle.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The oracle.
    pub oracle: String,
    /// What was seen.
    pub detail: String,
}

/// What a run found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultReport {
    /// The provider's name.
    pub provider: String,
    /// The figures.
    pub figures: Figures,
    /// Every broken oracle (none: the provider passed).
    pub findings: Vec<Finding>,
    /// What could not be injected or judged, and why (the profile lacks it).
    pub not_run: Vec<String>,
    /// Wall time, seconds.
    pub elapsed_secs: f64,
    /// The run directory (kept with `keep` or when something failed).
    pub dir: PathBuf,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
}

/// The longest a settled cluster may take to converge after a fault clears.
pub const CONVERGENCE_LIMIT: Duration = Duration::from_secs(30);

/// The share of the provider's updates answered 409 Conflict from create to delete.
pub const CONFLICT_RATE: f64 = 0.2;

/// Runs the fault suite.
///
/// # Errors
/// When the profile or release cannot be read; everything after that is reported.
pub async fn run(options: FaultOptions) -> Result<FaultReport> {
    let started = Instant::now();
    let seeded_secret = format!(
        "seeded-secret-{:016x}",
        plan::Rng::new(options.seed ^ 0x5EC2_E7ED).next_u64()
    );
    // The profile's fault-run variables, then --set ones, then the seeded secret.
    let Prepared {
        profile,
        dir,
        vars,
        release,
    } = prepare(&options.profile, "faults", |p| {
        let mut layers: Vec<(String, String)> = p.faults.vars.clone().into_iter().collect();
        layers.extend(options.vars.iter().cloned());
        layers.push(("SEEDED_SECRET".into(), seeded_secret.clone()));
        layers
    })?;
    let provider = profile.name.clone();
    let dir_path = dir.path().to_path_buf();

    let installed = setup::install(
        profile,
        release,
        vars,
        dir_path.clone(),
        None,
        options.discard,
        None,
    )
    .await;
    let mut report = FaultReport {
        provider,
        figures: Figures {
            seed: options.seed,
            ..Figures::default()
        },
        findings: Vec::new(),
        not_run: Vec::new(),
        elapsed_secs: 0.0,
        dir: dir_path,
        stopped: None,
    };
    let installed = match installed {
        Ok(i) => i,
        Err(e) => {
            report.stopped = Some(format!("{e:#}"));
            report.elapsed_secs = started.elapsed().as_secs_f64();
            if !options.discard {
                let _ = dir.keep();
            }
            return Ok(report);
        }
    };
    let mut run = FaultRun::new(installed, &options, seeded_secret)?;
    let outcome = run.all().await;
    if let Err(e) = &outcome {
        run.finding("run", format!("the run stopped early: {e:#}"));
    }
    run.security().await;
    let failed = !run.findings.is_empty();
    report.figures = std::mem::take(&mut run.figures);
    report.findings = std::mem::take(&mut run.findings);
    report.not_run = std::mem::take(&mut run.not_run);
    run.stop(failed && !options.discard).await;
    report.stopped = outcome.err().map(|e| format!("{e:#}"));
    report.elapsed_secs = started.elapsed().as_secs_f64();
    if options.keep || (failed && !options.discard) {
        let _ = dir.keep();
    }
    Ok(report)
}

/// Prints the report as a table.
pub fn table(report: &FaultReport) -> String {
    let f = &report.figures;
    let mut out = format!(
        "Faults for provider {} (seed {}, {:.0}s)\n",
        report.provider, f.seed, report.elapsed_secs
    );
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<44} {v}\n"));
    row(
        "SIGKILLs (mid-phase)",
        format!("{} ({})", f.kills, f.kills_mid_phase),
    );
    row(
        "crashes (exits not caused by a kill)",
        f.crashes.to_string(),
    );
    for (kind, n) in &f.cloud_faults {
        row(&format!("cloud faults: {kind}"), n.to_string());
    }
    row(
        "kube-apiserver restarts / etcd compactions",
        format!("{} / {}", f.api_server_restarts, f.etcd_compactions),
    );
    row(
        "resources deleted behind its back",
        f.outside_deletions.to_string(),
    );
    row("duplicates", f.duplicates.to_string());
    row("leaks", f.leaks.to_string());
    row("wrong deletions", f.wrong_deletions.to_string());
    row(
        "calls before Retry-After (after a restart)",
        format!("{} ({})", f.early_calls, f.early_calls_after_restart),
    );
    row(
        "objects not still once settled (writes then)",
        format!("{} ({})", f.unstill_objects, f.writes_while_still),
    );
    row(
        "updates answered 409 Conflict",
        f.conflicts_injected.to_string(),
    );
    row(
        "writes by leader / standby (two replicas)",
        format!("{} / {}", f.leader_writes, f.standby_writes),
    );
    row(
        "secrets found",
        format!(
            "{} (in {} log bytes and {} other texts)",
            f.secrets_found, f.log_bytes, f.texts_searched
        ),
    );
    for (kind, secs) in &f.convergence_secs {
        row(&format!("converged after {kind}"), format!("{secs:.1}s"));
    }
    for (phase, secs) in &f.phase_secs {
        row(&format!("phase {phase}"), format!("{secs:.1}s"));
    }
    for n in &report.not_run {
        out.push_str(&format!("  not run: {n}\n"));
    }
    if report.findings.is_empty() {
        out.push_str("  every oracle held\n");
    }
    for finding in &report.findings {
        out.push_str(&format!("  FAIL {}: {}\n", finding.oracle, finding.detail));
    }
    out
}

/// What the inventory sampler has seen.
#[derive(Debug, Default)]
struct Sampled {
    duplicates: BTreeSet<String>,
    owners: BTreeSet<String>,
    errors: usize,
    samples: usize,
}

/// One fault run in progress.
struct FaultRun {
    ctx: Ctx,
    bed: Bed,
    emulator: Option<Running>,
    docs: Vec<Value>,
    names: Names,
    plan: Plan,
    still: Duration,
    provider: Option<Running>,
    incarnation: u32,
    /// What the provider is given: a kubeconfig for `proxy`.
    provider_kubeconfig: PathBuf,
    /// The credentials the proxies forward with (its ServiceAccount's, or the admin's).
    upstream_kubeconfig: PathBuf,
    provider_token: Option<String>,
    /// The proxy in front of kube-apiserver every single replica talks through.
    proxy: Option<ApiProxy>,
    /// The share of the provider's updates the proxies answer 409.
    conflict_rate: f64,
    seeded_secret: String,
    metrics_url: Option<String>,
    metrics_pages: Vec<(String, String)>,
    figures: Figures,
    findings: Vec<Finding>,
    not_run: Vec<String>,
    recorder: Option<Recorder>,
    /// When a provider process was stopped or killed, Unix milliseconds.
    stops_at: Vec<u64>,
    inventory_before: Vec<Item>,
    sampled: Arc<Mutex<Sampled>>,
    sampler: Option<tokio::task::JoinHandle<()>>,
    as_admin: bool,
}

/// A window of injected faults: the counters when it began, and whether its kind is counted as
/// delays (latency) or as fault answers.
#[derive(Debug, Clone, Copy)]
struct Window {
    before: (u64, u64),
    delays: bool,
}

impl FaultRun {
    fn new(installed: Installed, options: &FaultOptions, seeded_secret: String) -> Result<Self> {
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

    fn finding(&mut self, oracle: &str, detail: impl Into<String>) {
        let detail = detail.into();
        eprintln!("faults: FAIL {oracle}: {detail}");
        self.findings.push(Finding {
            oracle: oracle.to_string(),
            detail,
        });
    }

    fn url(&self, pick: impl Fn(&crate::profile::FaultsSpec) -> Option<&String>) -> Option<String> {
        pick(&self.ctx.profile.faults).and_then(|u| self.ctx.vars.expand(u).ok())
    }

    async fn all(&mut self) -> Result<()> {
        objects::ensure_namespace(&self.bed.client, NS).await?;
        let mut watched: Vec<String> =
            vec!["Cluster".into(), "MachinePool".into(), "Secret".into()];
        watched.extend(self.names.provider_objects().into_iter().map(|(k, _)| k));
        watched.sort();
        watched.dedup();
        let refs: Vec<&str> = watched.iter().map(String::as_str).collect();
        self.recorder = Some(Recorder::start(&self.ctx.kinds, &self.bed.client, NS, &refs).await?);
        self.start_inventory().await;
        self.write_provider_kubeconfig().await?;
        self.start_provider()?;

        self.create().await?;
        self.stillness().await?;
        self.restart_api_server().await?;
        self.leader_takeover().await?;
        self.upgrade().await?;
        self.scale_down().await?;
        self.delete_behind_back(false).await?;
        self.delete_behind_back(true).await?;
        self.delete().await?;
        self.set_conflict_rate(0.0);
        if let Some(p) = &self.proxy {
            self.figures.conflicts_injected += p.stats().conflicts();
        }
        self.final_inventory().await;
        self.early_calls().await;
        Ok(())
    }

    // ---- the provider process -------------------------------------------------------------

    /// A kubeconfig for the provider's ServiceAccount (the release's Deployment's), with a
    /// day-long token, its namespace as the context's (where its leader Lease lives); and the
    /// proxy the provider reaches kube-apiserver through, with a kubeconfig for it.
    async fn write_provider_kubeconfig(&mut self) -> Result<()> {
        self.write_upstream_kubeconfig().await?;
        let (proxy, kubeconfig) = self.proxied("provider").await?;
        self.provider_kubeconfig = kubeconfig;
        self.proxy = Some(proxy);
        Ok(())
    }

    /// A proxy in front of kube-apiserver forwarding with the upstream credentials, and a
    /// kubeconfig `<name>.kubeconfig` for it.
    async fn proxied(&mut self, name: &str) -> Result<(ApiProxy, PathBuf)> {
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
    fn set_conflict_rate(&mut self, rate: f64) {
        self.conflict_rate = rate;
        if let Some(p) = &self.proxy {
            p.stats().set_conflict_rate(rate);
        }
    }

    /// The provider's own credentials: a kubeconfig for the release's Deployment's
    /// ServiceAccount with a day-long token (or the admin's, with `--as-admin`).
    async fn write_upstream_kubeconfig(&mut self) -> Result<()> {
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

    fn start_provider(&mut self) -> Result<()> {
        let kubeconfig = self.provider_kubeconfig.clone();
        self.provider = Some(self.spawn_provider(&[], &kubeconfig)?);
        Ok(())
    }

    /// A new provider process (`provider-<n>`), with `extra` arguments, given `kubeconfig`.
    fn spawn_provider(&mut self, extra: &[String], kubeconfig: &Path) -> Result<Running> {
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
    async fn keep_metrics(&mut self) {
        let Some(url) = self.metrics_url.clone() else {
            return;
        };
        if let Ok(Ok(text)) = tokio::time::timeout(Duration::from_secs(2), http_get(&url)).await {
            self.metrics_pages
                .push((format!("metrics of provider-{}", self.incarnation), text));
        }
    }

    async fn kill_and_restart(&mut self, mid_phase: bool) -> Result<()> {
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
    fn ensure_provider(&mut self) -> Result<()> {
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

    // ---- the emulator ----------------------------------------------------------------------

    async fn start_inventory(&mut self) {
        let Some(url) = self.url(|f| f.inventory_url.as_ref()) else {
            self.not_run.push(
                "duplicates, leaks and wrong deletions: the profile has no faults.inventoryUrl"
                    .into(),
            );
            return;
        };
        match read_inventory(&url).await {
            Ok(items) => self.inventory_before = items,
            Err(e) => {
                self.finding(
                    "inventory",
                    format!("the first read of {url} failed: {e:#}"),
                );
                return;
            }
        }
        let sampled = self.sampled.clone();
        self.sampler = Some(tokio::spawn(async move {
            loop {
                let read = read_inventory(&url).await;
                {
                    let mut s = sampled
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    s.samples += 1;
                    match read {
                        Ok(items) => {
                            for d in oracle::duplicates(&items) {
                                s.duplicates.insert(d);
                            }
                            for i in items {
                                if let Some(o) = i.owner {
                                    s.owners.insert(o);
                                }
                            }
                        }
                        Err(_) => s.errors += 1,
                    }
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }));
    }

    /// Adds one fault rule for every operation; `None` when the profile has no fault endpoint.
    async fn inject(&mut self, kind: &str, fault: Value, rate: f64) -> Option<Window> {
        let Some(url) = self.url(|f| f.faults_url.as_ref()) else {
            self.not_run.push(format!(
                "cloud fault {kind}: the profile has no faults.faultsUrl"
            ));
            return None;
        };
        // The next two calls fail for certain (so every kind is answered at least twice, however
        // few calls a phase makes), then a share of the rest.
        let before = self.faults_answered().await;
        for trigger in [json!({"count": 2}), json!({"rate": rate})] {
            let rule = json!({"operation": "*", "fault": fault, "trigger": trigger});
            if let Err(e) = http_send("POST", &url, Some(&rule)).await {
                self.finding("inject", format!("adding fault rule {rule}: {e:#}"));
                return None;
            }
        }
        eprintln!(
            "faults: {kind} on the next 2 cloud calls and {:.0}% of the rest",
            rate * 100.0
        );
        Some(Window {
            before,
            delays: fault["kind"] == "latency",
        })
    }

    /// Clears the rules (all of them) and counts what the window's kind answered since it began.
    async fn clear(&mut self, kind: &str, window: Option<Window>) {
        let Some(window) = window else { return };
        if let Some(url) = self.url(|f| f.faults_url.as_ref())
            && let Err(e) = http_send("DELETE", &url, None).await
        {
            self.finding("inject", format!("clearing fault rules: {e:#}"));
        }
        let (faults, delays) = self.faults_answered().await;
        let n = if window.delays {
            delays.saturating_sub(window.before.1)
        } else {
            faults.saturating_sub(window.before.0)
        };
        *self
            .figures
            .cloud_faults
            .entry(kind.to_string())
            .or_default() += n;
    }

    /// Faults answered so far: calls answered with an injected fault, and calls held back by an
    /// injected latency (`emulator_delayed_calls_total`).
    async fn faults_answered(&self) -> (u64, u64) {
        let Some(url) = self.ctx.calls_url() else {
            return (0, 0);
        };
        let Ok(text) = http_get(&url).await else {
            return (0, 0);
        };
        let faults: u64 = crate::procs::Calls::parse(&text)
            .0
            .iter()
            .filter(|((_, outcome), _)| outcome == "fault")
            .map(|(_, n)| *n)
            .sum();
        let delayed: u64 = text
            .lines()
            .filter(|l| l.starts_with("emulator_delayed_calls_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .map(|n| n as u64)
            .sum();
        (faults, delayed)
    }

    // ---- phases ------------------------------------------------------------------------------

    async fn state(&self) -> Result<State> {
        lifecycle::read(&self.ctx, &self.bed.client, &self.names).await
    }

    /// Drives one phase: kills the provider after each of the plan's gaps, restarting it at
    /// once, until the kills are spent and `done` holds; returns how long the phase took.
    async fn drive(
        &mut self,
        phase: Phase,
        done: impl Fn(&State) -> bool,
        timeout: Duration,
    ) -> Result<Duration> {
        let gaps = self.plan.gaps(phase).to_vec();
        let start = Instant::now();
        let mut gaps = gaps.into_iter();
        let mut kill_at = gaps.next().map(|g| start + g);
        let mut first_done: Option<Duration> = None;
        loop {
            self.ensure_provider()?;
            let now_done = done(&self.state().await?);
            if now_done && first_done.is_none() {
                first_done = Some(start.elapsed());
            }
            if let Some(at) = kill_at
                && Instant::now() >= at
            {
                self.kill_and_restart(!now_done).await?;
                kill_at = gaps.next().map(|g| Instant::now() + g);
                continue;
            }
            if now_done && kill_at.is_none() {
                let took = first_done.unwrap_or_else(|| start.elapsed());
                self.figures
                    .phase_secs
                    .insert(phase.name().to_string(), took.as_secs_f64());
                eprintln!(
                    "faults: {} done in {:.1}s",
                    phase.name(),
                    took.as_secs_f64()
                );
                return Ok(took);
            }
            if start.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false).join("; ");
                anyhow::bail!(
                    "{} did not finish within {timeout:?} under its faults: {why}",
                    phase.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits (no kills) until `done`, recording the time as the convergence after `kind`,
    /// judged against [`CONVERGENCE_LIMIT`].
    async fn converge(
        &mut self,
        kind: &str,
        since: Instant,
        done: impl Fn(&State) -> bool,
        timeout: Duration,
    ) -> Result<()> {
        loop {
            self.ensure_provider()?;
            if done(&self.state().await?) {
                break;
            }
            if since.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false).join("; ");
                self.finding(
                    "convergence",
                    format!("not converged {timeout:?} after {kind}: {why}"),
                );
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let took = since.elapsed();
        eprintln!("faults: converged {:.1}s after {kind}", took.as_secs_f64());
        let slot = self
            .figures
            .convergence_secs
            .entry(kind.to_string())
            .or_default();
        *slot = slot.max(took.as_secs_f64());
        if took > CONVERGENCE_LIMIT {
            self.finding(
                "convergence",
                format!(
                    "{:.1}s after {kind}, more than {CONVERGENCE_LIMIT:?}",
                    took.as_secs_f64()
                ),
            );
        }
        Ok(())
    }

    async fn create(&mut self) -> Result<()> {
        let mut docs = self.docs.clone();
        setup::label_for_provider(&mut docs);
        eprintln!("faults: applying Cluster {NS}/{CLUSTER}");
        let before = self
            .inject(
                "429 + Retry-After (create)",
                json!({"kind": "throttle", "retryAfterSeconds": 2}),
                0.1,
            )
            .await;
        // From here to the end of delete, a share of the provider's updates is refused.
        self.set_conflict_rate(CONFLICT_RATE);
        eprintln!(
            "faults: {:.0}% of the provider's updates answered 409 Conflict from now on",
            CONFLICT_RATE * 100.0
        );
        for d in &docs {
            objects::apply(&self.ctx.kinds, &self.bed.client, NS, d).await?;
        }
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Create,
                |s| lifecycle::unsettled(s, true).is_empty(),
                timeout,
            )
            .await;
        self.clear("429 + Retry-After (create)", before).await;
        outcome.map(|_| ())
    }

    /// resourceVersions of every object of the settled cluster, still for `self.still`.
    async fn stillness(&mut self) -> Result<()> {
        let Some(recorder) = self.recorder.clone() else {
            return Ok(());
        };
        eprintln!(
            "faults: watching the settled cluster for {:?} (resourceVersions must not move)",
            self.still
        );
        // Settled means the provider has nothing left to write: a pass the cloud throttled just
        // before the faults were cleared still retries and writes its recovery. So the watch
        // starts once the provider has written nothing (Leases aside) for QUIET; one that never
        // stops writing is a finding of its own.
        self.quiet().await;
        let from = Instant::now();
        let writes_before = self.proxy.as_ref().map(|p| p.stats().writes());
        tokio::time::sleep(self.still).await;
        if let (Some(before), Some(p)) = (writes_before, &self.proxy) {
            let writes = proxy::writes_since(&before, &p.stats().writes());
            self.figures.writes_while_still = proxy::total(&writes);
            if !writes.is_empty() {
                self.finding(
                    "stillness",
                    format!(
                        "the provider wrote while the settled cluster was watched for {:?}: {}",
                        self.still,
                        proxy::describe(&writes)
                    ),
                );
            }
        }
        let mut moved: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        let mut last: BTreeMap<(String, String), Value> = BTreeMap::new();
        let mut kinds: Vec<String> = vec!["Cluster".into(), "MachinePool".into(), "Secret".into()];
        kinds.extend(self.names.provider_objects().into_iter().map(|(k, _)| k));
        kinds.sort();
        kinds.dedup();
        for kind in &kinds {
            for seen in recorder.all_of(kind) {
                let key = (seen.kind.clone(), seen.name.clone());
                if let Some(prev) = last.get(&key)
                    && seen.at >= from
                    && objects::rv(prev) != objects::rv(&seen.obj)
                {
                    let fields = oracle::changed_fields(prev, &seen.obj);
                    moved.entry(key.clone()).or_default().extend(fields);
                }
                last.insert(key, seen.obj);
            }
        }
        // Every change counts, a kubeconfig Secret's refresh included: the fault run's profile
        // sets a token lifetime long enough that no refresh falls in the window.
        self.figures.unstill_objects = moved.len();
        for ((kind, name), mut fields) in moved {
            fields.sort();
            fields.dedup();
            self.finding(
                "stillness",
                format!(
                    "{kind}/{name} changed while the settled cluster was watched for {:?}: {}",
                    self.still,
                    fields.join(", ")
                ),
            );
        }
        Ok(())
    }

    /// Waits until the provider has sent no write (Leases aside) for [`QUIET`], at most
    /// [`QUIET_WITHIN`]; two seconds without a proxy to count writes.
    async fn quiet(&mut self) {
        let Some(stats) = self.proxy.as_ref().map(|p| p.stats()) else {
            tokio::time::sleep(Duration::from_secs(2)).await;
            return;
        };
        let start = stats.writes();
        let deadline = Instant::now() + QUIET_WITHIN;
        let mut last = start.clone();
        let mut since = Instant::now();
        while since.elapsed() < QUIET {
            if Instant::now() >= deadline {
                self.finding(
                    "stillness",
                    format!(
                        "the provider never stopped writing for {QUIET:?} within {QUIET_WITHIN:?} of \
                         the cluster settling: {}",
                        proxy::describe(&proxy::writes_since(&start, &stats.writes()))
                    ),
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            let now = stats.writes();
            if proxy::total(&proxy::writes_since(&last, &now)) > 0 {
                since = Instant::now();
            }
            last = now;
        }
    }

    async fn restart_api_server(&mut self) -> Result<()> {
        let revision = self.bed.plane.compact_etcd().await?;
        self.figures.etcd_compactions += 1;
        eprintln!("faults: etcd compacted to revision {revision}; restarting kube-apiserver");
        let down = self
            .bed
            .plane
            .restart_apiserver(Duration::from_secs(3), true)
            .await?;
        self.figures.api_server_restarts += 1;
        eprintln!(
            "faults: kube-apiserver back after {:.1}s",
            down.as_secs_f64()
        );
        let back = Instant::now();
        // A change made right after: the provider's watches get 410 Gone and must list again
        // to see it.
        let wanted = self.scale_pools(1).await?;
        let names = self.names.clone();
        self.converge(
            "kube-apiserver restart + etcd compaction (a pool scaled up)",
            back,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await
    }

    /// Two replicas with leader election: the first takes the Lease; the second starts; the
    /// first is SIGKILLed; the second must take the Lease within the Lease's duration (plus the
    /// one renewal period a standby may be behind) and act (a pool scaled down converges).
    async fn leader_takeover(&mut self) -> Result<()> {
        let Some(args) = self.ctx.profile.faults.leader_elect_args.clone() else {
            self.not_run
                .push("leader election: the profile has no faults.leaderElectArgs".into());
            return Ok(());
        };
        let ns = self.provider_namespace()?;
        let leases: Api<Lease> = Api::namespaced(self.bed.client.clone(), &ns);
        // The provider without election stops in order first.
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(10)).await;
            self.stops_at.push(now_millis());
        }
        let before: BTreeMap<String, String> = holders(&leases).await?;
        let leader_before = self
            .proxy
            .as_ref()
            .map(|p| p.stats().writes())
            .unwrap_or_default();
        let kubeconfig = self.provider_kubeconfig.clone();
        let mut first = self.spawn_provider(&args, &kubeconfig)?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let (lease, holder, duration) = loop {
            let now = holders_full(&leases).await?;
            if let Some((name, holder, duration)) = now
                .into_iter()
                .find(|(name, holder, _)| before.get(name) != Some(holder))
            {
                break (name, holder, duration);
            }
            if Instant::now() > deadline {
                first.stop(Duration::from_secs(5)).await;
                self.start_provider()?;
                self.finding(
                    "leader election",
                    format!("no Lease in {ns} got a new holder within 60s of a replica starting with {args:?}"),
                );
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        eprintln!(
            "faults: Lease {ns}/{lease} held by {holder} (duration {duration}s); starting a second replica"
        );
        let (standby_proxy, standby_kubeconfig) = self.proxied("standby").await?;
        let second = self.spawn_provider(&args, &standby_kubeconfig)?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let still_first = holders(&leases).await?.get(&lease) == Some(&holder);
        if !still_first {
            self.finding(
                "leader election",
                "the Lease changed holder when a second replica started",
            );
        }
        // One acts: a pool scaled while both run converges, and only the holder wrote.
        let since = Instant::now();
        let wanted = self.scale_pools(-1).await?;
        let names = self.names.clone();
        self.converge(
            "a pool scaled down with two replicas (the leader acts)",
            since,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await?;
        let leader_writes = proxy::writes_since(
            &leader_before,
            &self
                .proxy
                .as_ref()
                .map(|p| p.stats().writes())
                .unwrap_or_default(),
        );
        let standby_writes = proxy::writes_since(&BTreeMap::new(), &standby_proxy.stats().writes());
        self.figures.leader_writes = proxy::total(&leader_writes);
        self.figures.standby_writes = proxy::total(&standby_writes);
        eprintln!(
            "faults: with two replicas the leader wrote {} times, the standby {}",
            self.figures.leader_writes, self.figures.standby_writes
        );
        if !standby_writes.is_empty() {
            self.finding(
                "leader election",
                format!(
                    "the standby wrote without holding the Lease: {}",
                    proxy::describe(&standby_writes)
                ),
            );
        }
        if leader_writes.is_empty() {
            self.finding(
                "leader election",
                "the proxy saw no write from the Lease's holder while a pool was scaled (the check of the standby proves nothing)",
            );
        }
        first.kill().await;
        self.stops_at.push(now_millis());
        let killed = Instant::now();
        let limit = Duration::from_secs(u64::try_from(duration).unwrap_or(15) + 5);
        let taken = loop {
            if let Some(h) = holders(&leases).await?.get(&lease)
                && *h != holder
            {
                break Some(killed.elapsed());
            }
            if killed.elapsed() > limit * 2 {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        self.provider = Some(second);
        match taken {
            Some(took) => {
                eprintln!(
                    "faults: the second replica took the Lease {:.1}s after the holder was killed",
                    took.as_secs_f64()
                );
                self.figures.convergence_secs.insert(
                    "leader killed (Lease taken over)".into(),
                    took.as_secs_f64(),
                );
                if took > limit {
                    self.finding(
                        "leader election",
                        format!(
                            "the Lease was taken over {:.1}s after its holder died, more than its duration + 5s ({limit:?})",
                            took.as_secs_f64()
                        ),
                    );
                }
            }
            None => self.finding(
                "leader election",
                format!(
                    "nobody took the Lease {:?} after its holder died",
                    limit * 2
                ),
            ),
        }
        // The new leader acts.
        let since = Instant::now();
        let wanted = self.scale_pools(1).await?;
        let names = self.names.clone();
        self.converge(
            "a leader killed (the standby scales a pool up)",
            since,
            move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
            self.ctx.profile.timeouts.provision,
        )
        .await?;
        // Back to one replica without election (a restarted replica would wait out the Lease).
        if let Some(mut p) = self.provider.take() {
            p.stop(Duration::from_secs(10)).await;
            self.stops_at.push(now_millis());
        }
        self.figures.conflicts_injected += standby_proxy.stats().conflicts();
        drop(standby_proxy);
        self.start_provider()
    }

    fn provider_namespace(&self) -> Result<String> {
        self.ctx
            .release
            .components
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .and_then(|d| d["metadata"]["namespace"].as_str())
            .map(str::to_string)
            .context("the release's components hold no Deployment with a namespace")
    }

    async fn scale_pools(&mut self, delta: i64) -> Result<BTreeMap<String, i64>> {
        let mut wanted = BTreeMap::new();
        for (mp, _, _) in self.names.pools.clone() {
            let pool = objects::get(&self.ctx.kinds, &self.bed.client, "MachinePool", NS, &mp)
                .await?
                .unwrap_or(Value::Null);
            let n = pool["spec"]["replicas"].as_i64().unwrap_or(0) + delta;
            objects::merge(
                &self.ctx.kinds,
                &self.bed.client,
                "MachinePool",
                NS,
                &mp,
                &json!({"spec": {"replicas": n}}),
            )
            .await?;
            wanted.insert(mp, n);
        }
        Ok(wanted)
    }

    async fn upgrade(&mut self) -> Result<()> {
        let Some(to) = self.ctx.profile.faults.upgrade_to.clone() else {
            self.not_run
                .push("upgrade: the profile has no faults.upgradeTo".into());
            return Ok(());
        };
        let before = self
            .inject(
                "503 (upgrade)",
                json!({"kind": "serverError", "status": 503}),
                0.1,
            )
            .await;
        eprintln!("faults: upgrading the control plane and pools to {to}");
        ask_upgrade(&self.ctx, &self.bed.client, &self.names, &to).await?;
        let target = minor(&to);
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Upgrade,
                move |s| upgraded(s, target) && lifecycle::unsettled(s, false).is_empty(),
                timeout,
            )
            .await;
        self.clear("503 (upgrade)", before).await;
        outcome.map(|_| ())
    }

    async fn scale_down(&mut self) -> Result<()> {
        let before = self
            .inject("dropped connection (scale)", json!({"kind": "drop"}), 0.1)
            .await;
        let slow = self
            .inject(
                "20 s latency (scale)",
                json!({"kind": "latency", "millis": 20_000}),
                0.1,
            )
            .await;
        let wanted = self.scale_pools(-1).await?;
        eprintln!("faults: scaling pools to {wanted:?}");
        let names = self.names.clone();
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let outcome = self
            .drive(
                Phase::Scale,
                move |s| pools_at(s, &names, &wanted) && lifecycle::unsettled(s, false).is_empty(),
                timeout,
            )
            .await;
        self.clear("dropped connection (scale)", before).await;
        // Both rules were cleared at once; what was answered since the first is split by the
        // emulator's own counters (faults and delays are counted apart).
        self.clear("20 s latency (scale)", slow).await;
        outcome.map(|_| ())
    }

    /// A pool's cloud resource, or the whole cloud cluster, deleted behind the provider's back
    /// (`faults.outsideDelete`, `faults.outsideDeleteCluster`): the provider must create what
    /// is missing again (the kernel's rule: a cloud resource of ours that is gone is created
    /// again) within its resync period and [`CONVERGENCE_LIMIT`].
    async fn delete_behind_back(&mut self, whole_cluster: bool) -> Result<()> {
        let (command, field, kind) = if whole_cluster {
            (
                self.ctx.profile.faults.outside_delete_cluster.clone(),
                "outsideDeleteCluster",
                "the cloud cluster deleted behind its back",
            )
        } else {
            (
                self.ctx.profile.faults.outside_delete.clone(),
                "outsideDelete",
                "a pool deleted behind its back",
            )
        };
        let Some(command) = command else {
            self.not_run
                .push(format!("{kind}: the profile has no faults.{field}"));
            return Ok(());
        };
        let Some((_, _, pool)) = self.names.pools.first().cloned() else {
            self.not_run
                .push("a pool deleted behind the provider's back: the template has no pool".into());
            return Ok(());
        };
        let inventory = self.url(|f| f.inventory_url.as_ref());
        let owned_before = match &inventory {
            Some(url) => owned_names(&read_inventory(url).await?),
            None => BTreeSet::new(),
        };
        let argv = self.ctx.vars.expand_all(&command)?;
        let env: BTreeMap<String, String> = [
            ("CLUSTER_NAMESPACE".to_string(), NS.to_string()),
            ("CLUSTER_NAME".to_string(), CLUSTER.to_string()),
            ("POOL_NAME".to_string(), pool.clone()),
        ]
        .into();
        if whole_cluster {
            eprintln!("faults: deleting the cloud cluster behind the provider's back");
        } else {
            eprintln!("faults: deleting pool {pool}'s cloud resource behind the provider's back");
        }
        let deleted = Instant::now();
        let out = crate::procs::run_to_end(
            &argv,
            &env,
            &self.ctx.profile.workdir(),
            Duration::from_secs(180),
        )
        .await;
        match out {
            Ok(text) => {
                self.figures.outside_deletions += 1;
                eprintln!("faults: {}", text.trim());
            }
            Err(e) => {
                self.finding("outside delete", format!("{e:#}"));
                return Ok(());
            }
        }
        // Converged: every named resource the cloud held for us before is there again (the
        // deleted one recreated) and the cluster is settled (the pool's nodes back). A provider at
        // rest looks at the cloud once per resync period, so that much more is allowed; a whole
        // cluster created again may also take as long as its first creation took.
        let resync = self.ctx.profile.faults.resync.unwrap_or_default();
        let creation = if whole_cluster {
            let secs = self
                .figures
                .phase_secs
                .get("create")
                .copied()
                .unwrap_or(0.0);
            Duration::from_secs_f64(secs)
        } else {
            Duration::ZERO
        };
        let limit = resync + CONVERGENCE_LIMIT + creation;
        let timeout = self.ctx.profile.timeouts.provision.max(limit * 2);
        let mut missing = BTreeSet::new();
        loop {
            self.ensure_provider()?;
            if let Some(url) = &inventory
                && let Ok(items) = read_inventory(url).await
            {
                missing = owned_before
                    .difference(&owned_names(&items))
                    .cloned()
                    .collect();
            }
            if missing.is_empty() && lifecycle::unsettled(&self.state().await?, false).is_empty() {
                let took = deleted.elapsed();
                eprintln!("faults: converged {:.1}s after {kind}", took.as_secs_f64());
                self.figures
                    .convergence_secs
                    .insert(kind.to_string(), took.as_secs_f64());
                if took > limit {
                    self.finding(
                        "convergence",
                        format!(
                            "{:.1}s after {kind}, more than its resync period ({resync:?}) + {CONVERGENCE_LIMIT:?} + the first creation's {:.1}s",
                            took.as_secs_f64(),
                            creation.as_secs_f64()
                        ),
                    );
                }
                break;
            }
            if deleted.elapsed() > timeout {
                let why = lifecycle::unsettled(&self.state().await?, false);
                self.finding(
                    "convergence",
                    format!(
                        "not converged {timeout:?} after {kind}: missing in the cloud {missing:?}; {}",
                        why.join("; ")
                    ),
                );
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok(())
    }

    async fn delete(&mut self) -> Result<()> {
        eprintln!("faults: deleting Cluster {NS}/{CLUSTER}");
        objects::delete(&self.ctx.kinds, &self.bed.client, "Cluster", NS, CLUSTER).await?;
        let timeout = self.ctx.profile.timeouts.delete * 2;
        self.drive(Phase::Delete, all_gone, timeout)
            .await
            .map(|_| ())
    }

    async fn final_inventory(&mut self) {
        let Some(url) = self.url(|f| f.inventory_url.as_ref()) else {
            return;
        };
        if let Some(s) = self.sampler.take() {
            s.abort();
        }
        let (duplicates, owners, errors, samples) = {
            let s = self
                .sampled
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (s.duplicates.clone(), s.owners.clone(), s.errors, s.samples)
        };
        eprintln!(
            "faults: the inventory was read {samples} times ({errors} failed reads); owners seen: {owners:?}"
        );
        self.figures.duplicates = duplicates.len();
        for d in duplicates {
            self.finding("no duplicate", d);
        }
        // The Cluster is gone; what the cloud still deletes gets a minute.
        let (leaks, after) = match after_deletion(&url, &owners).await {
            Ok(found) => found,
            Err(e) => {
                self.finding("inventory", format!("reading {url}: {e:#}"));
                return;
            }
        };
        self.figures.leaks = leaks.len();
        for l in leaks {
            self.finding(
                "no leak",
                format!("{l} is left after the Cluster was deleted"),
            );
        }
        let wrong = oracle::deleted_foreign(&self.inventory_before, &after);
        self.figures.wrong_deletions = wrong.len();
        for w in wrong {
            self.finding(
                "nothing deleted that was not ours",
                format!("{w} existed before the provider ran and is gone"),
            );
        }
    }

    async fn early_calls(&mut self) {
        let Some(url) = self.url(|f| f.early_url.as_ref()) else {
            self.not_run
                .push("calls before Retry-After: the profile has no faults.earlyUrl".into());
            return;
        };
        match http_get(&url).await {
            Ok(text) => {
                let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let all = parsed["early"].as_array().cloned().unwrap_or_default();
                // A call from a process started after the 429 (its predecessor was stopped or
                // killed in between) comes from one that was never told to wait.
                let (early, after_restart): (Vec<Value>, Vec<Value>) =
                    all.into_iter().partition(|e| {
                        let (from, to) = (
                            e["throttledAtMillis"].as_u64().unwrap_or(0),
                            e["atMillis"].as_u64().unwrap_or(u64::MAX),
                        );
                        !self.stops_at.iter().any(|s| (from..=to).contains(s))
                    });
                self.figures.early_calls_after_restart = after_restart.len();
                self.figures.early_calls = early.len();
                for e in early.iter().take(10) {
                    self.finding(
                        "no call before Retry-After",
                        format!(
                            "{} {} came {} ms before its Retry-After was over",
                            e["operation"].as_str().unwrap_or("?"),
                            e["target"].as_str().unwrap_or("?"),
                            e["earlyByMillis"]
                        ),
                    );
                }
                if early.len() > 10 {
                    self.finding(
                        "no call before Retry-After",
                        format!("and {} more", early.len() - 10),
                    );
                }
            }
            Err(e) => self.finding(
                "no call before Retry-After",
                format!("reading {url}: {e:#}"),
            ),
        }
    }

    // ---- security ------------------------------------------------------------------------------

    async fn security(&mut self) {
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

    async fn stop(mut self, keep: bool) {
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

/// The cloud's inventory at `url`.
async fn read_inventory(url: &str) -> Result<Vec<Item>> {
    oracle::parse_inventory(&http_get(url).await?)
}

/// Each Lease's holder in a namespace.
async fn holders(leases: &Api<Lease>) -> Result<BTreeMap<String, String>> {
    Ok(holders_full(leases)
        .await?
        .into_iter()
        .map(|(name, holder, _)| (name, holder))
        .collect())
}

/// Each held Lease: (name, holder, duration seconds).
async fn holders_full(leases: &Api<Lease>) -> Result<Vec<(String, String, i32)>> {
    Ok(leases
        .list(&ListParams::default())
        .await?
        .into_iter()
        .filter_map(|l| {
            let spec = l.spec?;
            let holder = spec.holder_identity.filter(|h| !h.is_empty())?;
            Some((
                l.metadata.name.unwrap_or_default(),
                holder,
                spec.lease_duration_seconds.unwrap_or(15),
            ))
        })
        .collect())
}

/// The owned, named, live resources of an inventory: `kind parent/name`.
fn owned_names(items: &[Item]) -> BTreeSet<String> {
    items
        .iter()
        .filter(|i| i.owner.is_some() && !i.name.is_empty() && !i.leaving())
        .map(|i| format!("{} {}/{}", i.kind, i.parent, i.name))
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `(major, minor)` of `v1.32`, `1.32.0`, …
/// Asks for `to` on the control plane (`spec.version`) and every MachinePool
/// (`spec.template.spec.version`).
async fn ask_upgrade(ctx: &Ctx, client: &kube::Client, names: &Names, to: &str) -> Result<()> {
    let (cp_kind, cp_name) = &names.control_plane;
    objects::merge(
        &ctx.kinds,
        client,
        cp_kind,
        NS,
        cp_name,
        &json!({"spec": {"version": to}}),
    )
    .await?;
    for (mp, _, _) in &names.pools {
        objects::merge(
            &ctx.kinds,
            client,
            "MachinePool",
            NS,
            mp,
            &json!({"spec": {"template": {"spec": {"version": to}}}}),
        )
        .await?;
    }
    Ok(())
}

/// Whether the Cluster and every object of it are gone.
fn all_gone(s: &State) -> bool {
    s.cluster.is_null()
        && s.control_plane.is_null()
        && s.infra.is_null()
        && s.pools
            .values()
            .all(|(mp, infra)| mp.is_null() && infra.is_null())
}

/// The owned resources still in the inventory at `url`, waited for up to a minute (what the
/// cloud still deletes), and the inventory then.
async fn after_deletion(url: &str, owners: &BTreeSet<String>) -> Result<(Vec<String>, Vec<Item>)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let items = read_inventory(url).await?;
        let leaks = oracle::leaks(&items, owners);
        if leaks.is_empty() || Instant::now() > deadline {
            return Ok((leaks, items));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Whether the control plane and every pool report `target`'s minor.
fn upgraded(state: &State, target: Option<(u64, u64)>) -> bool {
    let at = |v: &Value| v.as_str().and_then(minor) == target;
    at(&state.control_plane["status"]["version"])
        && state
            .pools
            .values()
            .all(|(_, infra)| at(&infra["status"]["version"]))
}

/// Whether every pool's MachinePool asks for its `wanted` replicas (and the rest is settled:
/// [`lifecycle::unsettled`] compares what each pool has with what it asks).
fn pools_at(state: &State, names: &Names, wanted: &BTreeMap<String, i64>) -> bool {
    names.pools.iter().all(|(mp, _, _)| {
        state
            .pools
            .get(mp)
            .is_some_and(|(pool, _)| pool["spec"]["replicas"].as_i64() == wanted.get(mp).copied())
    })
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors_are_read_with_or_without_v_and_patch() {
        assert_eq!(minor("v1.32"), Some((1, 32)));
        assert_eq!(minor("1.32.4"), Some((1, 32)));
        assert_eq!(minor("latest"), None);
    }
}
