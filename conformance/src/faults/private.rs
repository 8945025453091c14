//! `conformance private`: a private-only cluster, one the management cluster has no network
//! reach to (Cluster API issue #6520).
//!
//! The emulator is started with the profile's `faults.privateVars`, under which it publishes
//! every cluster's endpoint as an address that accepts connections and never answers. The
//! provider must still create, upgrade, scale and delete from the cloud API alone, and say in
//! its pools' `NodesVisible` condition what Cluster API core cannot see. The run proves the
//! endpoint really was out of reach: core's `RemoteConnectionProbe` on the Cluster is `False`
//! and no MachinePool gets a nodeRef; a run where core reached the cluster proves nothing and
//! fails.
//!
//! In order: the plane, `clusterctl init`, the emulator, the provider (admin kubeconfig, like
//! `conformance run`); the default flavor applied; provisioned (the Cluster `Provisioned` with
//! its control plane initialized, the control plane `Available`, every pool's providerIDList
//! and `status.replicas` at the MachinePool's count, its `Ready` `True` and `NodesVisible`
//! `False`/`WorkloadUnreachable`); upgraded to `faults.upgradeTo`; every pool scaled up by one;
//! the Cluster deleted; nothing of the cluster's left in the cloud's inventory a minute later and
//! nothing that was there before gone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;
use serde_json::{Value, json};

use super::Finding;
use super::cloud::{after_deletion, read_inventory};
use super::oracle::{self, Item};
use super::phases::{all_gone, ask_upgrade, minor, upgraded};
use crate::objects;
use crate::procs::Running;
use crate::run::lifecycle::{self, CLUSTER, NS, Names, State};
use crate::run::setup::{self, Installed};
use crate::run::{Bed, Ctx, Prepared, prepare};

/// How long core must stay out of reach once the cluster is provisioned: longer than its
/// ClusterCache's connection retry interval (30 s in Cluster API v1.14), so a cluster core could
/// reach is seen reached.
const HOLD: Duration = Duration::from_secs(40);

/// What `conformance private` is asked to do.
#[derive(Debug, Clone)]
pub struct PrivateOptions {
    /// The provider's profile.
    pub profile: PathBuf,
    /// Keep the run directory even when everything holds.
    pub keep: bool,
    /// Never keep it.
    pub discard: bool,
    /// `--set` variables.
    pub vars: Vec<(String, String)>,
}

/// One step of the run and how long it took.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// `create`, `upgrade`, `scale`, `delete`.
    pub name: String,
    /// Seconds from the change to the state the step waits for (or to its timeout).
    pub seconds: f64,
    /// Whether that state was reached.
    pub reached: bool,
}

/// What a private run found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrivateReport {
    /// The profile's provider name.
    pub provider: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// What core showed of the cluster once provisioned: its `RemoteConnectionProbe` status and
    /// the nodeRefs of every MachinePool (the proof that the endpoint was out of reach).
    pub core_view: Value,
    /// The pools' `NodesVisible` conditions once provisioned.
    pub nodes_visible: Vec<Value>,
    /// Every oracle that failed.
    pub findings: Vec<Finding>,
    /// What could not be judged, and why.
    pub not_run: Vec<String>,
    /// Seconds the run took.
    pub elapsed_secs: f64,
    /// The run directory.
    pub dir: PathBuf,
    /// Why the run stopped before its end, if it did.
    pub stopped: Option<String>,
}

/// Runs a private-only cluster through its life.
///
/// # Errors
/// When the profile or release cannot be read; everything after that is reported.
pub async fn run(options: PrivateOptions) -> Result<PrivateReport> {
    let started = Instant::now();
    let Prepared {
        profile,
        dir,
        vars,
        release,
    } = prepare(&options.profile, "private", |p| {
        let mut layers: Vec<(String, String)> = p.faults.private_vars.clone().into_iter().collect();
        layers.extend(options.vars.iter().cloned());
        layers
    })?;
    let mut report = PrivateReport {
        provider: profile.name.clone(),
        steps: Vec::new(),
        core_view: Value::Null,
        nodes_visible: Vec::new(),
        findings: Vec::new(),
        not_run: Vec::new(),
        elapsed_secs: 0.0,
        dir: dir.path().to_path_buf(),
        stopped: None,
    };
    if profile.faults.private_vars.is_empty() {
        report.stopped = Some(
            "the profile has no faults.privateVars (the variables under which its emulator \
             publishes endpoints the management cluster cannot reach)"
                .into(),
        );
        return Ok(report);
    }
    let installed = setup::install(
        profile,
        release,
        vars,
        dir.path().to_path_buf(),
        None,
        options.discard,
        None,
    )
    .await;
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
    let mut run = match PrivateRun::new(installed) {
        Ok(r) => r,
        Err(e) => {
            report.stopped = Some(format!("{e:#}"));
            return Ok(report);
        }
    };
    let outcome = run.all(&mut report).await;
    if let Err(e) = &outcome {
        report.findings.push(Finding {
            oracle: "run".into(),
            detail: format!("the run stopped early: {e:#}"),
        });
        report.stopped = Some(format!("{e:#}"));
    }
    let failed = !report.findings.is_empty();
    run.stop(failed && !options.discard).await;
    report.elapsed_secs = started.elapsed().as_secs_f64();
    if options.keep || (failed && !options.discard) {
        let _ = dir.keep();
    }
    Ok(report)
}

/// Prints the report as a table.
pub fn table(report: &PrivateReport) -> String {
    let mut out = format!(
        "Private-only cluster of provider {} ({:.0}s)\n",
        report.provider, report.elapsed_secs
    );
    for s in &report.steps {
        out.push_str(&format!(
            "  {:<8} {:>7.1}s  {}\n",
            s.name,
            s.seconds,
            if s.reached { "reached" } else { "NOT reached" }
        ));
    }
    out.push_str(&format!("  core's view: {}\n", report.core_view));
    for c in &report.nodes_visible {
        out.push_str(&format!(
            "  NodesVisible {} {}: {}\n",
            c["status"].as_str().unwrap_or("?"),
            c["reason"].as_str().unwrap_or("?"),
            c["message"].as_str().unwrap_or("")
        ));
    }
    for n in &report.not_run {
        out.push_str(&format!("  not run: {n}\n"));
    }
    if report.findings.is_empty() && report.stopped.is_none() {
        out.push_str("  every oracle held\n");
    }
    for f in &report.findings {
        out.push_str(&format!("  FAIL {}: {}\n", f.oracle, f.detail));
    }
    out
}

struct PrivateRun {
    ctx: Ctx,
    bed: Bed,
    emulator: Option<Running>,
    docs: Vec<Value>,
    names: Names,
}

impl PrivateRun {
    fn new(installed: Installed) -> Result<Self> {
        let names = Names::from_docs(&installed.default_docs)?;
        Ok(Self {
            ctx: installed.ctx,
            bed: installed.bed,
            emulator: installed.emulator,
            docs: installed.default_docs,
            names,
        })
    }

    async fn all(&mut self, report: &mut PrivateReport) -> Result<()> {
        objects::ensure_namespace(&self.bed.client, NS).await?;
        let inventory = self.ctx.inventory_url();
        let before = match &inventory {
            Some(url) => read_inventory(url).await?,
            None => {
                report
                    .not_run
                    .push("leaks: the profile has no emulator.inventoryUrl".into());
                Vec::new()
            }
        };
        self.bed.start_provider(&self.ctx)?;

        // Create.
        let mut docs = self.docs.clone();
        setup::label_for_provider(&mut docs);
        eprintln!("private: applying Cluster {NS}/{CLUSTER}");
        for d in &docs {
            objects::apply(&self.ctx.kinds, &self.bed.client, NS, d).await?;
        }
        let timeout = self.ctx.profile.timeouts.provision * 2;
        let state = self
            .step(report, "create", timeout, |s| provisioned(s).is_empty())
            .await?;
        self.judge_unreachable(&state, report);
        // Core retries a failed connection every 30 s: one it could make shows within HOLD.
        eprintln!("private: watching core stay out of reach for {HOLD:?}");
        let until = Instant::now() + HOLD;
        while Instant::now() < until && report.findings.is_empty() {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let state = lifecycle::read(&self.ctx, &self.bed.client, &self.names).await?;
            self.judge_unreachable(&state, report);
        }
        if !report.findings.is_empty() {
            anyhow::bail!("the cluster was not out of reach");
        }
        let owners: BTreeSet<String> = match &inventory {
            Some(url) => read_inventory(url)
                .await?
                .into_iter()
                .filter_map(|i| i.owner)
                .collect(),
            None => BTreeSet::new(),
        };

        // Upgrade.
        match self.ctx.profile.faults.upgrade_to.clone() {
            Some(to) => self.upgrade(report, &to).await?,
            None => report
                .not_run
                .push("upgrade: the profile has no faults.upgradeTo".into()),
        }

        // Scale every pool up by one.
        let mut wanted = BTreeMap::new();
        let state = lifecycle::read(&self.ctx, &self.bed.client, &self.names).await?;
        for (mp, (pool, _)) in &state.pools {
            let to = pool["spec"]["replicas"].as_i64().unwrap_or(0) + 1;
            wanted.insert(mp.clone(), to);
            objects::merge(
                &self.ctx.kinds,
                &self.bed.client,
                "MachinePool",
                NS,
                mp,
                &json!({"spec": {"replicas": to}}),
            )
            .await?;
        }
        eprintln!("private: scaling pools to {wanted:?}");
        let timeout = self.ctx.profile.timeouts.provision * 2;
        self.step(report, "scale", timeout, move |s| {
            provisioned(s).is_empty()
                && s.pools.iter().all(|(mp, (pool, _))| {
                    pool["spec"]["replicas"].as_i64() == wanted.get(mp).copied()
                })
        })
        .await?;

        // Delete.
        eprintln!("private: deleting Cluster {NS}/{CLUSTER}");
        objects::delete(&self.ctx.kinds, &self.bed.client, "Cluster", NS, CLUSTER).await?;
        let timeout = self.ctx.profile.timeouts.delete * 2;
        self.step(report, "delete", timeout, all_gone).await?;
        if let Some(url) = &inventory {
            self.judge_inventory(url, &before, &owners, report).await?;
        }
        Ok(())
    }

    async fn upgrade(&mut self, report: &mut PrivateReport, to: &str) -> Result<()> {
        eprintln!("private: upgrading the control plane and pools to {to}");
        ask_upgrade(&self.ctx, &self.bed.client, &self.names, to).await?;
        let target = minor(to);
        let timeout = self.ctx.profile.timeouts.provision * 2;
        self.step(report, "upgrade", timeout, move |s| {
            provisioned(s).is_empty() && upgraded(s, target)
        })
        .await?;
        Ok(())
    }

    /// Waits until `done` holds of the state (a finding when it does not within `timeout`),
    /// failing early if the provider exits; returns the last state read.
    async fn step(
        &mut self,
        report: &mut PrivateReport,
        name: &str,
        timeout: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<State> {
        let start = Instant::now();
        loop {
            self.bed.ensure_provider()?;
            let state = lifecycle::read(&self.ctx, &self.bed.client, &self.names).await?;
            let reached = done(&state);
            if reached || start.elapsed() >= timeout {
                let seconds = start.elapsed().as_secs_f64();
                eprintln!("private: {name} {reached} after {seconds:.1}s");
                report.steps.push(Step {
                    name: name.into(),
                    seconds,
                    reached,
                });
                if !reached {
                    let why = provisioned(&state);
                    report.findings.push(Finding {
                        oracle: format!("{name} from the cloud API alone"),
                        detail: format!(
                            "not reached within {timeout:?}{}",
                            if why.is_empty() {
                                String::new()
                            } else {
                                format!(": {}", why.join("; "))
                            }
                        ),
                    });
                    anyhow::bail!("{name} was not reached");
                }
                return Ok(state);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Core must have been unable to reach the cluster (else the run proves nothing), and the
    /// provider must say so on every pool.
    fn judge_unreachable(&self, state: &State, report: &mut PrivateReport) {
        let probe = condition(&state.cluster, "RemoteConnectionProbe");
        let node_refs: BTreeMap<&String, usize> = state
            .pools
            .iter()
            .map(|(mp, (pool, _))| {
                (
                    mp,
                    pool["status"]["nodeRefs"].as_array().map_or(0, Vec::len),
                )
            })
            .collect();
        report.core_view = json!({
            "remoteConnectionProbe": probe["status"],
            "remoteConnectionProbeMessage": probe["message"],
            "nodeRefs": node_refs,
        });
        if probe["status"] != "False" || node_refs.values().any(|n| *n > 0) {
            report.findings.push(Finding {
                oracle: "out of reach".into(),
                detail: format!(
                    "Cluster API core reached the workload API server ({}), so this run proves \
                     nothing about a private-only cluster: does the emulator honour the \
                     profile's faults.privateVars?",
                    report.core_view
                ),
            });
        }
        report.nodes_visible = state
            .pools
            .values()
            .map(|(_, infra)| condition(infra, "NodesVisible"))
            .collect();
    }

    async fn judge_inventory(
        &self,
        url: &str,
        before: &[Item],
        owners: &BTreeSet<String>,
        report: &mut PrivateReport,
    ) -> Result<()> {
        if owners.is_empty() {
            report.findings.push(Finding {
                oracle: "no leak".into(),
                detail: "no resource in the cloud's inventory carried an ownership tag once \
                         the cluster was provisioned, so leaks cannot be told"
                    .into(),
            });
        }
        let (leaks, after) = after_deletion(url, owners).await?;
        for l in leaks {
            report.findings.push(Finding {
                oracle: "no leak".into(),
                detail: format!("{l} is left after the Cluster was deleted"),
            });
        }
        for w in oracle::deleted_foreign(before, &after) {
            report.findings.push(Finding {
                oracle: "nothing deleted that was not ours".into(),
                detail: format!("{w} existed before the provider ran and is gone"),
            });
        }
        Ok(())
    }

    async fn stop(mut self, keep: bool) {
        if let Some(mut e) = self.emulator.take() {
            e.stop(Duration::from_secs(10)).await;
        }
        self.bed.stop(keep).await;
    }
}

/// Why the cluster is not yet provisioned as the provider must report it without reach:
/// empty when the Cluster is `Provisioned` with its control plane initialized, the control
/// plane `Available`, core has probed the workload API server, and every pool has its
/// MachinePool's count of instances, is `Ready`, and says in `NodesVisible` what core's probe
/// found (`False`/`WorkloadUnreachable` while core cannot reach it; a run where core could is
/// judged apart, so it fails at once rather than at a timeout).
fn provisioned(state: &State) -> Vec<String> {
    let mut why = Vec::new();
    let status = &state.cluster["status"];
    if status["phase"] != "Provisioned" {
        why.push(format!("Cluster phase {}", status["phase"]));
    }
    if status["initialization"]["controlPlaneInitialized"] != true {
        why.push("Cluster controlPlaneInitialized not true".into());
    }
    let available = condition(&state.control_plane, "Available");
    if available["status"] != "True" {
        why.push(format!("control plane Available {}", available["status"]));
    }
    let probe = condition(&state.cluster, "RemoteConnectionProbe")["status"].clone();
    let (want_status, want_reason) = match probe.as_str() {
        Some("False") => ("False", "WorkloadUnreachable"),
        Some("True") => ("True", "Ready"),
        _ => {
            why.push(format!("Cluster RemoteConnectionProbe {probe}"));
            ("False", "WorkloadUnreachable")
        }
    };
    for (name, (mp, infra)) in &state.pools {
        let desired = mp["spec"]["replicas"].as_u64().unwrap_or(0) as usize;
        let ids = lifecycle::provider_ids(infra).len();
        let reported = infra["status"]["replicas"].as_u64().map(|r| r as usize);
        let ready = condition(infra, "Ready");
        let visible = condition(infra, "NodesVisible");
        if ids != desired
            || reported != Some(desired)
            || ready["status"] != "True"
            || visible["status"] != want_status
            || visible["reason"] != want_reason
        {
            why.push(format!(
                "pool {name}: desired {desired}, providerIDList {ids}, status.replicas \
                 {reported:?}, Ready {}, NodesVisible {} {}",
                ready["status"], visible["status"], visible["reason"]
            ));
        }
    }
    why
}

/// The condition of `type_` in `obj`'s `status.conditions` (`null` when absent).
fn condition(obj: &Value, type_: &str) -> Value {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .cloned()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn state(probe_hidden: bool) -> State {
        let visible = if probe_hidden {
            json!({"type": "NodesVisible", "status": "False", "reason": "WorkloadUnreachable"})
        } else {
            json!({"type": "NodesVisible", "status": "True", "reason": "Ready"})
        };
        State {
            cluster: json!({"status": {"phase": "Provisioned",
                "initialization": {"controlPlaneInitialized": true},
                "conditions": [{"type": "RemoteConnectionProbe", "status": "False"}]}}),
            control_plane: json!({"status": {"conditions": [
                {"type": "Available", "status": "True"}]}}),
            pools: [(
                "mp".to_string(),
                (
                    json!({"spec": {"replicas": 2}}),
                    json!({"spec": {"providerIDList": ["aws:///a/i-1", "aws:///a/i-2"]},
                        "status": {"replicas": 2, "conditions": [
                            {"type": "Ready", "status": "True"}, visible]}}),
                ),
            )]
            .into(),
            ..State::default()
        }
    }

    #[test]
    fn provisioned_privately_needs_the_pool_to_say_core_cannot_see_it() {
        assert!(provisioned(&state(true)).is_empty());
        let why = provisioned(&state(false));
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("NodesVisible \"True\""), "{why:?}");
        // Core reached it: provisioned as far as the pool's report goes (judged apart).
        let mut reached = state(false);
        reached.cluster["status"]["conditions"][0]["status"] = json!("True");
        assert!(provisioned(&reached).is_empty());
        let mut unprobed = state(true);
        unprobed.cluster["status"]["conditions"] = json!([]);
        assert!(!provisioned(&unprobed).is_empty());
        let mut short = state(true);
        short.pools.get_mut("mp").unwrap().0["spec"]["replicas"] = json!(3);
        assert!(!provisioned(&short).is_empty());
    }
}
