//! What a fault run reports: its figures (the JSON a run writes), the broken oracles, and the
//! table people read.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

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
