//! `conformance run`: one provider, judged against every check it can be, on real management
//! planes with real Cluster API core and the real clusterctl.
//!
//! The run, in order:
//! 1. static checks on the release folder (C01–C06, C55, C56);
//! 2. a management plane; `clusterctl init` from a local repository (C57); core's access to the
//!    provider's kinds (C07); templates admitted (C08, C24); `clusterctl generate` (C58);
//! 3. the provider's emulator and controller, started as the profile says;
//! 4. [`quiet`]: objects the provider must leave alone (C11, C38, C39);
//! 5. [`lifecycle`]: a full cluster from the default flavor, judged once settled, then paused,
//!    scaled, moved to a second plane (C59) and deleted; beside it [`control_plane_only`] (C17,
//!    C52); after them [`adoption`] (C61–C65), alone, since the pause checks count every cloud
//!    call. Their steps record what they observe; the pure functions of [`judge`] turn each
//!    record into outcomes;
//! 6. once both are deleted, the cloud's inventory against the one read before the provider
//!    started (C60).
//!
//! Every check that no step judged is reported as skipped with the reason.

mod adoption;
mod bed;
mod control_plane_only;
mod instances;
mod judge;
pub(crate) mod lifecycle;
mod quiet;
pub(crate) mod setup;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::checks::{CATALOGUE, CheckId, Results};
use crate::profile::{Profile, Vars};
use crate::release::{self, Release};

pub use bed::Bed;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The profile file.
    pub profile: PathBuf,
    /// Judge only these checks (and run only the steps they need).
    pub only: Option<Vec<CheckId>>,
    /// Keep the run directory (logs, kubeconfigs) after the run.
    pub keep: bool,
    /// Extra variables for the profile's `${NAME}` expansion (before the environment).
    pub vars: Vec<(String, String)>,
    /// Never keep the run directory or the planes, even when a check fails (for runs that are
    /// expected to fail).
    pub discard: bool,
}

/// What a run found.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The provider's name.
    pub provider: String,
    /// Every check's outcome.
    pub results: Results,
    /// Wall time.
    pub elapsed: Duration,
    /// The run directory (kept only with `keep` or on failure).
    pub dir: PathBuf,
    /// Why the run stopped before judging everything, if it did: a failed run.
    pub stopped: Option<String>,
}

/// The value of `cluster.x-k8s.io/watch-filter` the suite gives the provider.
pub const WATCH_FILTER: &str = "conformance";

/// Everything a step needs.
#[derive(Debug)]
pub struct Ctx {
    /// The profile.
    pub profile: Profile,
    /// The release.
    pub release: Release,
    /// Variables for commands and templates.
    pub vars: Vars,
    /// Template variables (the profile's, expanded, plus the setup command's output).
    pub template_vars: Vec<(String, String)>,
    /// Kinds reachable by name.
    pub kinds: crate::objects::Kinds,
    /// The roles of the provider's kinds.
    pub roles: setup::Roles,
    /// clusterctl with the local repository.
    pub clusterctl: crate::clusterctl::Clusterctl,
    /// The run's directory.
    pub dir: PathBuf,
    /// Checks to judge (`None`: all).
    pub only: Option<Vec<CheckId>>,
    /// See [`RunOptions::discard`].
    pub discard: bool,
}

impl Ctx {
    /// Whether any of `ids` is wanted.
    pub fn wants(&self, ids: &[CheckId]) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| ids.iter().any(|id| o.contains(id)))
    }

    /// The emulator's counters URL, expanded.
    pub fn calls_url(&self) -> Option<String> {
        let url = self.profile.emulator.as_ref()?.calls_url.as_ref()?;
        self.vars.expand(url).ok()
    }

    /// The emulator's node-instance list URL, expanded.
    pub fn instances_url(&self) -> Option<String> {
        let url = self.profile.emulator.as_ref()?.instances_url.as_ref()?;
        self.vars.expand(url).ok()
    }

    /// The emulator's inventory URL, expanded.
    pub fn inventory_url(&self) -> Option<String> {
        let url = self.profile.emulator.as_ref()?.inventory_url.as_ref()?;
        self.vars.expand(url).ok()
    }

    /// Reads the emulator's counters, if it has them.
    pub async fn calls(&self) -> Option<crate::procs::Calls> {
        let url = self.calls_url()?;
        match crate::procs::scrape(&url).await {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "cannot read the emulator's counters");
                None
            }
        }
    }

    /// The profile's create-operation patterns.
    pub fn create_operations(&self) -> Vec<String> {
        self.profile
            .emulator
            .as_ref()
            .map(|e| e.create_operations.clone())
            .unwrap_or_default()
    }
}

/// IDs judged from the release folder alone (no management plane needed).
pub const STATIC_IDS: &[CheckId] = &[
    CheckId::C01,
    CheckId::C02,
    CheckId::C03,
    CheckId::C04,
    CheckId::C05,
    CheckId::C06,
    CheckId::C55,
    CheckId::C56,
];

/// IDs judged by the cluster lifecycle.
pub const LIFECYCLE_IDS: &[CheckId] = &[
    CheckId::C09,
    CheckId::C12,
    CheckId::C13,
    CheckId::C14,
    CheckId::C15,
    CheckId::C16,
    CheckId::C18,
    CheckId::C19,
    CheckId::C20,
    CheckId::C21,
    CheckId::C22,
    CheckId::C23,
    CheckId::C25,
    CheckId::C26,
    CheckId::C27,
    CheckId::C28,
    CheckId::C29,
    CheckId::C30,
    CheckId::C31,
    CheckId::C32,
    CheckId::C33,
    CheckId::C34,
    CheckId::C35,
    CheckId::C36,
    CheckId::C37,
    CheckId::C40,
    CheckId::C41,
    CheckId::C42,
    CheckId::C44,
    CheckId::C46,
    CheckId::C47,
    CheckId::C48,
    CheckId::C49,
    CheckId::C50,
    CheckId::C51,
    CheckId::C59,
    CheckId::C60,
];

/// What every run of the suite starts from: the profile, a scratch directory, the variables
/// every command sees (`PROFILE_DIR`, `RUN_DIR` and the caller's) and the release it names.
#[derive(Debug)]
pub struct Prepared {
    /// The profile.
    pub profile: Profile,
    /// The run's directory (deleted on drop unless kept).
    pub dir: tempfile::TempDir,
    /// Variables for the profile's `${NAME}` expansion.
    pub vars: Vars,
    /// The release.
    pub release: Release,
}

/// Loads the profile at `path`, makes a directory `<prefix>-<name>-…`, sets the variables
/// `layers` gives for the loaded profile (in order, a later one winning) and reads the release.
///
/// # Errors
/// When the profile or the release cannot be read.
pub fn prepare(
    path: &std::path::Path,
    prefix: &str,
    layers: impl FnOnce(&Profile) -> Vec<(String, String)>,
) -> Result<Prepared> {
    let profile = Profile::load(path)?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{prefix}-{}-", profile.name))
        .tempdir()?;
    let mut vars = Vars::default();
    for (k, v) in layers(&profile) {
        vars.set(&k, v);
    }
    vars.set("PROFILE_DIR", profile.dir.display().to_string());
    vars.set("RUN_DIR", dir.path().display().to_string());
    let release_dir = profile.dir.join(vars.expand(&profile.release)?);
    let release = Release::read(&release_dir)
        .with_context(|| format!("reading the release {}", release_dir.display()))?;
    Ok(Prepared {
        profile,
        dir,
        vars,
        release,
    })
}

/// Runs the suite.
pub async fn run(options: RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let Prepared {
        profile,
        dir,
        vars,
        release,
    } = prepare(&options.profile, "conformance", |_| options.vars.clone())?;
    let provider = profile.name.clone();
    let dir_path = dir.path().to_path_buf();
    let mut results = Results::default();
    release::static_checks(&release, &profile.version, &mut results);

    let static_only = options
        .only
        .as_ref()
        .is_some_and(|ids| ids.iter().all(|id| STATIC_IDS.contains(id)));
    let outcome = if static_only {
        Ok(())
    } else {
        setup::run_all(
            profile,
            release,
            vars,
            dir_path.clone(),
            options.only.clone(),
            options.discard,
            &mut results,
        )
        .await
    };
    if let Err(e) = &outcome {
        eprintln!("conformance: the run stopped early: {e:#}");
    }
    results.skip_unjudged(
        &CATALOGUE.iter().map(|c| c.id).collect::<Vec<_>>(),
        &match &outcome {
            Ok(()) => "not judged: its scenario did not run".to_string(),
            Err(e) => format!("not judged: the run stopped early: {e:#}"),
        },
    );
    let keep =
        options.keep || (!options.discard && (!results.failed().is_empty() || outcome.is_err()));
    if keep {
        let _ = dir.keep();
    }
    Ok(RunReport {
        provider,
        results,
        elapsed: started.elapsed(),
        dir: dir_path,
        stopped: outcome.err().map(|e| format!("{e:#}")),
    })
}
