//! The performance benchmark of a provider on its cloud ([`Subject`]: ours on EKS, GKE or OKE,
//! or the Go peer a user would otherwise pick there), figures P1–P12 each beside its target: one
//! run against the real management plane and the cloud's emulator (EKS: with moto; zero
//! provisioning delay; workload API servers off unless asked for: ours never reaches into a
//! workload cluster), writing one JSON file and an SVG plot per scaling figure. Figures are
//! reported, never asserted.
//!
//! What one run measures, in order:
//! - **P1** the provider's resident memory with no cluster;
//! - **P11** apply → Cluster `Provisioned` for one cluster, and **P12** the cloud calls until that
//!   cluster and its pool are ready (EKS: EC2 and EKS, from the provider's own counter; GKE and
//!   OKE: as the emulator counted them, for ours as for a peer, since neither peer counts its
//!   own and one yardstick keeps the two comparable);
//! - for each size N (cumulative): N clusters in all, the new ones applied at once, timed to all
//!   ready (**P4** at the largest size); resident memory after each (**P2**: the slope of a
//!   least-squares line through them, the idle point left out: the first cluster also pays for
//!   what is loaded once). A batch is rendered by `clusterctl` first, then applied eight
//!   clusters at a time; readiness is listed every second, or every `N / 100` s past 100
//!   clusters, so the bench's own lists do not load the API server it measures against;
//! - at rest, over `rest`: cloud reads and writes per cluster per hour (**P7**), the provider's
//!   writes to kube-apiserver (**P8**, from its audit log: the provider runs as its own user;
//!   kubeconfig Secret refreshes counted apart), its CPU (**P10**, from `/proc/<pid>/stat`); a
//!   `rest` of zero leaves these three out;
//! - **P3**: kube-apiserver restarted (every watch drops and relists), resident memory sampled
//!   every 100 ms for 30 s: its peak against the steady value before;
//! - **P9**: the first size's count again, applied at once while the next two and then 10 % of
//!   the emulator's answers are 429 + `Retry-After: 2`: time to all ready against the fault-free time of the
//!   first size, and the calls the emulator saw before their `Retry-After` had passed.
//!
//! - **P5**: `active_clusters` created at once while the emulator keeps each CREATING for
//!   `active_delay`: per cluster, the emulator's ACTIVE (its ticker's milestone) to the control
//!   plane seen initialized (ours: `status.initialization.controlPlaneInitialized`; CAPA's
//!   v1beta1 contract: `status.initialized`; the bench polls every 200 ms); p50 and p99. Then
//!   the same again (`again`): the first batch meets a provider that has never seen a create
//!   take that long, the second one that has (ours paces its looks by it: `contract::pace`);
//! - **P6**: `delayed_clusters` created at once while the emulator keeps each CREATING for
//!   `delayed_for` (the target's scale: 200 for 14 minutes): the time to all ready, and the
//!   provider's own reconcile-duration histogram over it (ours
//!   `capi_provider_reconcile_duration_seconds`, CAPA's `controller_runtime_reconcile_time_seconds`):
//!   a worker held through a cloud wait shows as a reconcile as long as the wait.
//!
//! **Several runs** (`run_many`, `bench --runs N`): each in a fresh environment (management
//! plane, emulators, provider), each run's files kept under `run-<k>/`; the report beside them
//! holds every figure's median over the runs and its range (`figuresRange`), see [`medians`].
//!
//! The emulated account's cluster quota (EKS 100, GKE 50 per location, OKE 15 per region, each
//! cloud's default) is raised to what the run creates when that is more, as the cloud's quota or
//! limit increase raises it for an account that asks; the JSON says so
//! (`settings.clusterQuota`).
//!
//! `--provider capa` measures the Go peer the same way (module docs of [`crate::peer`]): the same
//! figures from the same management plane, emulator and moto, its cloud calls from its own
//! counter (`aws_api_requests_total`), its pools ready by their `status.ready`. It needs real
//! workload API servers (it reaches into every workload cluster) and a network brought by the
//! user; `--byo-network --workload-servers` runs ours in that same scenario. `--provider capg`
//! and `--provider capoci` do the same on GKE and OKE ([`crate::peer::capg`],
//! [`crate::peer::capoci`]), against ours with `--cloud gke` or `--cloud oke`.
//!
//! The parts: `scenario` runs the steps above, `probes` reads what each measures, `statistics`
//! turns readings into figures (rounding, slope, percentiles, medians over runs) and `report`
//! writes the JSON and the plots.

mod probes;
mod report;
mod scenario;
mod statistics;
mod subject;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};

use crate::env::{Cloud, EksProvider, EnvOptions, Environment};
pub use report::svg_plot;
pub use statistics::medians;
pub use subject::Subject;

/// What a benchmark run does.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Cumulative cluster counts (each cluster: Cluster, the cloud's cluster and control-plane
    /// objects, one MachinePool of one node and its pool object, their Secrets).
    pub sizes: Vec<usize>,
    /// How long the settled clusters are watched at rest (P7, P8, P10).
    pub rest: Duration,
    /// The provider's `--poll-interval` (its default is 30s).
    pub poll_interval: String,
    /// Restart kube-apiserver and sample the peak (P3).
    pub relist: bool,
    /// Run P9: the first size again with 10 % of the emulator's answers 429 + Retry-After.
    pub throttled: bool,
    /// P5: how many clusters are created at once with the emulator keeping each CREATING for
    /// `active_delay` (0 skips P5).
    pub active_clusters: usize,
    /// P5: how long each stays CREATING.
    pub active_delay: Duration,
    /// P6: how many clusters are created at once with the emulator keeping each CREATING for
    /// `delayed_for` (0 skips P6).
    pub delayed_clusters: usize,
    /// P6: how long each stays CREATING (the target's: 14 minutes, like a real EKS create).
    pub delayed_for: Duration,
    /// How long one size may take to be ready.
    pub timeout: Duration,
    /// Where the JSON and the plots go.
    pub out: PathBuf,
    /// The provider measured, on its cloud: ours, or the Go peer a user would otherwise pick.
    pub subject: Subject,
    /// Clusters on a network the user brings (always so for a peer).
    pub byo_network: bool,
    /// Back every cluster with a real workload API server (~260 MiB each; always so for a
    /// peer): CAPA reaches into every workload cluster (its CNI and `aws-auth` steps), so it
    /// cannot run without them; ours never does.
    pub workload_servers: bool,
}

impl BenchOptions {
    /// Every cluster the run creates (none is deleted before it ends): the emulated account's
    /// quota is raised to this when it exceeds EKS's default of 100, as Service Quotas would.
    pub fn clusters_needed(&self) -> usize {
        let largest = self.sizes.iter().copied().max().unwrap_or(0);
        let throttled = if self.throttled {
            self.sizes.first().copied().unwrap_or(0)
        } else {
            0
        };
        1 + largest + throttled + 2 * self.active_clusters + self.delayed_clusters
    }

    /// The stem of the files a run writes ([`Subject`]: `eks`, `eks-byo` for ours on a brought
    /// network, `capa`, `gke`, `capg`, `oke`, `capoci`).
    pub fn stem(&self) -> &'static str {
        self.subject.stem(self.byo_network)
    }

    /// Whether the clusters are on a network the user brings.
    fn brought_network(&self) -> bool {
        self.byo_network || self.subject.is_peer()
    }

    /// Whether every cluster has a real workload API server.
    fn with_workload_servers(&self) -> bool {
        self.workload_servers || self.subject.is_peer()
    }
}

/// One point of the scaling series.
#[derive(Debug, Clone, Copy)]
struct Point {
    clusters: usize,
    rss_mib: f64,
    seconds_to_ready: f64,
}

/// Runs the benchmark; writes `<out>/eks-bench.json`, `eks-rss.svg`, `eks-time.svg` and
/// returns the JSON.
///
/// # Errors
/// When the environment does not start, the provider exits, or a size is not ready in time.
pub async fn run(options: &BenchOptions) -> Result<Value> {
    let started_at = jiff::Timestamp::now();
    // The environment keeps the interval for the provider's whole life.
    let poll: &'static str = Box::leak(options.poll_interval.clone().into_boxed_str());
    let subject = options.subject;
    let mut env = Environment::start(EnvOptions {
        cluster_delay: 0.0,
        pool_delay: 0.0,
        poll_interval: poll,
        clouds: vec![subject.cloud()],
        workload_servers: options.with_workload_servers(),
        audit_writes: true,
        eks_provider: match subject {
            Subject::Eks(provider) => provider,
            _ => EksProvider::Ours,
        },
        byo_network: options.brought_network(),
        peers: match subject {
            Subject::Capg => vec![Cloud::Gke],
            Subject::Capoci => vec![Cloud::Oke],
            _ => Vec::new(),
        },
        cluster_quota: Some(options.clusters_needed()),
    })
    .await?;
    let outcome = scenario::measure(&mut env, options).await;
    let dir = env.dir().to_path_buf();
    if outcome.is_err() {
        eprintln!(
            "bench: logs in {} (kept with TESTBED_KEEP=1)",
            dir.join("logs").display()
        );
    }
    env.stop().await;
    let (figures, series) = outcome?;
    let report = report::run_report(options, started_at, figures, &series)?;
    report::write_report(options, &report)?;
    Ok(report)
}

/// Runs the benchmark `runs` times, each in a fresh environment, writing each run's files
/// under `<out>/run-<k>/` and, in `<out>`, a report of the medians (module docs: "Several
/// runs"), which it returns.
///
/// # Errors
/// As [`run`], for any of the runs.
pub async fn run_many(options: &BenchOptions, runs: usize) -> Result<Value> {
    let mut reports = Vec::with_capacity(runs);
    for k in 1..=runs {
        eprintln!("bench: run {k} of {runs}");
        let mut one = options.clone();
        one.out = options.out.join(format!("run-{k}"));
        reports.push(run(&one).await?);
    }
    let mut report = medians(&reports);
    report["runs"] = json!(runs);
    report["runFiles"] = json!(
        (1..=runs)
            .map(|k| format!("run-{k}/{}-bench.json", options.stem()))
            .collect::<Vec<_>>()
    );
    report::write_report(options, &report)?;
    Ok(report)
}
