//! `conformance faults`: one provider driven through a cluster's create, upgrade, scale and
//! delete while faults are injected, each judged by its reliability oracle; and the security
//! checks of the same run.
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
//! The run itself is split by concern: [`harness`] (the plane and the provider's processes),
//! [`injection`] (what is injected and when), [`phases`] (create, upgrade, scale, delete and
//! their timing), [`leader`] (two replicas and a takeover), [`cloud`] (the inventory and the
//! `Retry-After` oracle) and [`security`] (RBAC and the secret search).

pub(crate) mod cloud;
mod harness;
mod injection;
mod leader;
pub mod oracle;
mod phases;
pub mod plan;
pub mod private;
pub mod proxy;
mod report;
mod security;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;

use self::harness::FaultRun;
use crate::objects::{self, Recorder};
use crate::run::lifecycle::NS;
use crate::run::{Prepared, prepare, setup};

pub use self::report::{FaultReport, Figures, Finding, table};

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
    let outcome = all(&mut run).await;
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

/// Everything between the install and the security search, in order (the module's list).
async fn all(run: &mut FaultRun) -> Result<()> {
    objects::ensure_namespace(&run.bed.client, NS).await?;
    let mut watched: Vec<String> = vec!["Cluster".into(), "MachinePool".into(), "Secret".into()];
    watched.extend(run.names.provider_objects().into_iter().map(|(k, _)| k));
    watched.sort();
    watched.dedup();
    let refs: Vec<&str> = watched.iter().map(String::as_str).collect();
    run.recorder = Some(Recorder::start(&run.ctx.kinds, &run.bed.client, NS, &refs).await?);
    run.start_inventory().await;
    run.write_provider_kubeconfig().await?;
    run.start_provider()?;

    run.create().await?;
    run.stillness().await?;
    run.restart_api_server().await?;
    run.leader_takeover().await?;
    run.upgrade().await?;
    run.scale_down().await?;
    run.delete_behind_back(false).await?;
    run.delete_behind_back(true).await?;
    run.delete().await?;
    run.set_conflict_rate(0.0);
    if let Some(p) = &run.proxy {
        run.figures.conflicts_injected += p.stats().conflicts();
    }
    run.final_inventory().await;
    run.early_calls().await;
    Ok(())
}
