//! Starting and stopping the whole local default: one management plane, and per cloud asked for
//! its emulator (with real workload API servers) and its provider binary.
//!
//! This module holds what the environment is (its options, the clouds it may run, the running
//! whole and what can be asked of it); `clouds` starts each cloud's emulator and provider,
//! `manifests` renders and applies cluster manifests, and `process` finds and spawns the
//! provider binaries.

mod clouds;
mod manifests;
mod process;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use emulators::kit::{Delays, Timing};
use testbed::{ManagementPlane, Options};
use tokio::process::Child;

pub use clouds::{AksCloud, EksCloud, GkeCloud, OkeCloud};
pub use process::provider_binary;
pub(crate) use process::{own_kubeconfig, spawn_logged};

/// The AWS region the local cloud serves.
pub const REGION: &str = "us-west-2";
/// The credentials the emulators accept and the provider uses (local only, never real).
pub const ACCESS_KEY_ID: &str = "AKIDLOCALDEMO";
/// See [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "local-demo-secret";
/// The Google Cloud project the local GKE serves.
pub const GCP_PROJECT: &str = "capi-local-demo";
/// The Google Cloud region of the demo's GKE clusters.
pub const GCP_REGION: &str = "us-central1";
/// The Azure location of the demo's AKS clusters.
pub const AZURE_LOCATION: &str = "eastus";
/// The service principal the local Entra knows and the AKS provider signs in as (local only).
pub const AZURE_CLIENT_ID: &str = "00000000-0000-4000-8000-00000000de30";
/// See [`AZURE_CLIENT_ID`].
pub const AZURE_CLIENT_SECRET: &str = "local-demo-secret";
/// The OCI region of the demo's OKE clusters.
pub const OCI_REGION: &str = emulators::oke::REGION;

/// A cloud of the local default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// Amazon EKS: moto, the EKS emulator, `provider-aws`.
    Eks,
    /// Google GKE: the GKE emulator, `provider-gcp`.
    Gke,
    /// Azure AKS: the AKS emulator (ARM and Entra ID), `provider-azure`.
    Aks,
    /// Oracle OKE: the OKE emulator (Container Engine, Core Services, Identity; signed
    /// requests), `provider-oci`.
    Oke,
}

impl Cloud {
    /// The provider binary.
    pub fn binary(self) -> &'static str {
        match self {
            Cloud::Eks => "provider-aws",
            Cloud::Gke => "provider-gcp",
            Cloud::Aks => "provider-azure",
            Cloud::Oke => "provider-oci",
        }
    }

    /// The prefix of its kinds (`EKS`, `GKE`).
    pub fn kind_prefix(self) -> &'static str {
        match self {
            Cloud::Eks => "EKS",
            Cloud::Gke => "GKE",
            Cloud::Aks => "AKS",
            Cloud::Oke => "OKE",
        }
    }

    /// Its default cluster template.
    pub fn template(self) -> &'static str {
        match self {
            Cloud::Eks => concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider-aws/templates/cluster-template.yaml"
            ),
            Cloud::Gke => concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider-gcp/templates/cluster-template.yaml"
            ),
            Cloud::Aks => concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider-azure/templates/cluster-template.yaml"
            ),
            Cloud::Oke => concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider-oci/templates/cluster-template.yaml"
            ),
        }
    }
}

/// Which provider manages the EKS clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EksProvider {
    /// Ours, `provider-aws`.
    #[default]
    Ours,
    /// The Go peer, Cluster API Provider AWS ([`crate::peer`]), on a network brought by the
    /// user with roles made beforehand.
    Capa,
    /// Both: CAPA makes the clusters and ours takes them over (the migration test).
    CapaThenOurs,
}

impl EksProvider {
    /// Its process's name (and log file's stem).
    pub fn binary(self) -> &'static str {
        match self {
            EksProvider::Ours | EksProvider::CapaThenOurs => Cloud::Eks.binary(),
            EksProvider::Capa => "cluster-api-provider-aws",
        }
    }
}

/// How the local clouds behave.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// Seconds a cloud takes to create, update or delete a cluster.
    pub cluster_delay: f64,
    /// Seconds it takes for a node pool.
    pub pool_delay: f64,
    /// How often the providers look again while a cloud is busy.
    pub poll_interval: &'static str,
    /// The clouds to start.
    pub clouds: Vec<Cloud>,
    /// Back EKS clusters with real workload API servers (~260 MiB each; benchmarks at scale
    /// turn them off: the provider never reaches into a workload cluster).
    pub workload_servers: bool,
    /// Keep kube-apiserver's audit log of writes ([`testbed::Options::audit_writes`]).
    pub audit_writes: bool,
    /// Which provider manages the EKS clusters.
    pub eks_provider: EksProvider,
    /// Clusters on a network the user brings instead of one the provider makes: for EKS a VPC
    /// and two subnets made in moto and IAM roles made beforehand, for GKE a VPC network and
    /// subnetwork, for OKE a VCN and its subnets. Always so for a Go peer.
    pub byo_network: bool,
    /// Clouds whose clusters a Go peer manages instead of ours: CAPG for GKE, CAPOCI for OKE
    /// (EKS's is `eks_provider`). Each peer is started with its metrics page.
    pub peers: Vec<Cloud>,
    /// Clusters the emulated account may hold per region or location, when more than the
    /// cloud's default (EKS 100, GKE 50, OKE 15): raised as a quota or limit increase would
    /// raise it for an account that asks (the benchmark's runs).
    pub cluster_quota: Option<usize>,
}

impl Default for EnvOptions {
    fn default() -> Self {
        Self {
            cluster_delay: 1.0,
            pool_delay: 1.0,
            poll_interval: "1s",
            clouds: vec![Cloud::Eks],
            workload_servers: true,
            audit_writes: false,
            eks_provider: EksProvider::Ours,
            byo_network: false,
            peers: Vec::new(),
            cluster_quota: None,
        }
    }
}

/// A cloud's cluster quota: its `default`, or `options.cluster_quota` when that is more.
fn cluster_quota(options: &EnvOptions, default: usize) -> usize {
    options.cluster_quota.map_or(default, |n| n.max(default))
}

/// How one of our providers was started: its cloud, environment and poll interval.
type Restart = (Cloud, Vec<(&'static str, String)>, &'static str);

/// Everything running. Dropping it stops every process.
pub struct Environment {
    /// The management plane.
    pub plane: ManagementPlane,
    eks: Option<EksCloud>,
    gke: Option<GkeCloud>,
    aks: Option<AksCloud>,
    oke: Option<OkeCloud>,
    providers: Vec<(Cloud, Child)>,
    /// How each of our providers was started, to start it again.
    restarts: Vec<Restart>,
    /// Each provider's metrics port.
    metrics: Vec<(Cloud, u16)>,
    dir: RunDir,
}

/// The run's directory: removed when dropped, except when a test is failing (its
/// providers' and emulators' logs are what CI shows the ends of) or `TESTBED_KEEP` is set.
struct RunDir(tempfile::TempDir);

impl RunDir {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if std::thread::panicking() || std::env::var_os("TESTBED_KEEP").is_some() {
            self.0.disable_cleanup(true);
            eprintln!(
                "demo: environment directory kept at {} (logs in logs/)",
                self.0.path().display()
            );
        }
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

impl Environment {
    /// Starts the management plane and, for each cloud of `options`, its emulator (workload API
    /// servers on), installs its provider's CRDs and starts the provider against all of it.
    pub async fn start(options: EnvOptions) -> Result<Self> {
        let dir = tempfile::Builder::new().prefix("local-capi-").tempdir()?;
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs)?;
        let plane = ManagementPlane::start(Options {
            audit_writes: options.audit_writes,
            ..Options::default()
        })
        .await
        .context("starting the management plane")?;
        let timing = Timing {
            cluster: Delays::uniform(options.cluster_delay),
            pool: Delays::uniform(options.pool_delay),
            addon: Delays::uniform(options.pool_delay / 2.0),
            instance_shutdown: options.pool_delay,
        };
        let mut env = Self {
            plane,
            eks: None,
            gke: None,
            aks: None,
            oke: None,
            providers: Vec::new(),
            restarts: Vec::new(),
            metrics: Vec::new(),
            dir: RunDir(dir),
        };
        for cloud in &options.clouds {
            match cloud {
                Cloud::Eks => env.start_eks(timing, &logs, &options).await?,
                Cloud::Gke => env.start_gke(timing, &logs, &options).await?,
                Cloud::Aks => env.start_aks(timing, &logs, options.poll_interval).await?,
                Cloud::Oke => env.start_oke(timing, &logs, &options).await?,
            }
        }
        Ok(env)
    }

    /// The emulated EKS, when started.
    pub fn eks(&self) -> Option<&EksCloud> {
        self.eks.as_ref()
    }

    /// The emulated GKE, when started.
    pub fn gke(&self) -> Option<&GkeCloud> {
        self.gke.as_ref()
    }

    /// The emulated AKS, when started.
    pub fn aks(&self) -> Option<&AksCloud> {
        self.aks.as_ref()
    }

    /// The emulated OKE, when started.
    pub fn oke(&self) -> Option<&OkeCloud> {
        self.oke.as_ref()
    }

    /// The clouds running.
    pub fn clouds(&self) -> Vec<Cloud> {
        self.providers.iter().map(|(c, _)| *c).collect()
    }

    /// The workload API servers running, every cloud's.
    pub fn workload_servers_running(&self) -> usize {
        self.eks
            .iter()
            .map(|e| e.workload.running().len())
            .sum::<usize>()
            + self
                .gke
                .iter()
                .map(|g| g.workload.running().len())
                .sum::<usize>()
            + self
                .aks
                .iter()
                .map(|a| a.workload.running().len())
                .sum::<usize>()
            + self
                .oke
                .iter()
                .map(|o| o.workload.running().len())
                .sum::<usize>()
    }

    /// The run's directory (logs in `logs/`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The first provider's log file (`provider-aws.log`, `provider-gcp.log`).
    pub fn provider_log(&self) -> PathBuf {
        let cloud = self.providers.first().map_or(Cloud::Eks, |(c, _)| *c);
        self.log_of(cloud)
    }

    /// A provider's log file.
    pub fn log_of(&self, cloud: Cloud) -> PathBuf {
        let stem = match (&self.eks, cloud) {
            (Some(eks), Cloud::Eks) => eks.provider.binary(),
            _ => cloud.binary(),
        };
        self.dir.path().join("logs").join(format!("{stem}.log"))
    }

    /// The EKS emulator's kit (fault rules, call counts, calls before `Retry-After`), when EKS
    /// is emulated.
    pub fn eks_kit(&self) -> Option<Arc<emulators::kit::Kit>> {
        self.eks.as_ref().map(|e| e.server.kit().clone())
    }

    /// `cloud`'s emulator kit (faults, call counters, milestones, delays), when started.
    pub fn kit(&self, cloud: Cloud) -> Option<Arc<emulators::kit::Kit>> {
        match cloud {
            Cloud::Eks => self.eks_kit(),
            Cloud::Gke => self.gke.as_ref().map(|g| g.server.kit().clone()),
            Cloud::Oke => self.oke.as_ref().map(|o| o.server.kit().clone()),
            Cloud::Aks => self.aks.as_ref().map(|a| a.server.kit().clone()),
        }
    }

    /// The first provider's process id, while it runs.
    pub fn provider_pid(&self) -> Option<u32> {
        self.providers.first().and_then(|(_, p)| p.id())
    }

    /// A provider's metrics page (Prometheus text).
    pub fn metrics_url(&self, cloud: Cloud) -> Option<String> {
        self.metrics
            .iter()
            .find(|(c, _)| *c == cloud)
            .map(|(_, port)| format!("http://127.0.0.1:{port}/metrics"))
    }

    /// Kills our provider for `cloud` at once (no graceful shutdown, as a crash or an evicted
    /// pod) and starts it again as it was started.
    ///
    /// # Errors
    /// It was not started here, or does not start again.
    pub async fn restart_provider(&mut self, cloud: Cloud) -> Result<()> {
        let (_, env, poll) = self
            .restarts
            .iter()
            .find(|(c, _, _)| *c == cloud)
            .cloned()
            .with_context(|| format!("no provider of ours for {cloud:?} was started"))?;
        let at = self
            .providers
            .iter()
            .position(|(c, _)| *c == cloud)
            .with_context(|| format!("no provider for {cloud:?} runs"))?;
        let _ = self.providers[at].1.kill().await;
        let logs = self.dir.path().join("logs");
        let (child, port) = process::start_provider(cloud, &self.plane, &logs, poll, &env)?;
        self.providers[at].1 = child;
        if let Some(m) = self.metrics.iter_mut().find(|(c, _)| *c == cloud) {
            m.1 = port;
        }
        Ok(())
    }

    /// Fails if a provider process has exited.
    pub fn ensure_provider_running(&mut self) -> Result<()> {
        let mut exited = None;
        for (cloud, provider) in &mut self.providers {
            if let Some(status) = provider.try_wait()? {
                exited = Some((*cloud, status));
                break;
            }
        }
        if let Some((cloud, status)) = exited {
            bail!(
                "{} exited ({status}); last lines:\n{}",
                cloud.binary(),
                testbed::process::tail(&self.log_of(cloud), 40)
            );
        }
        Ok(())
    }

    /// Stops the providers, then everything else.
    pub async fn stop(mut self) {
        for (_, provider) in &mut self.providers {
            let _ = provider.kill().await;
        }
        if let Some(eks) = self.eks.take() {
            eks.server.shutdown().await;
            eks.workload.shutdown().await;
            eks.moto.stop().await;
        }
        if let Some(gke) = self.gke.take() {
            gke.server.shutdown().await;
            gke.workload.shutdown().await;
        }
        if let Some(aks) = self.aks.take() {
            aks.server.shutdown().await;
            aks.workload.shutdown().await;
        }
        if let Some(oke) = self.oke.take() {
            oke.server.shutdown().await;
            oke.workload.shutdown().await;
        }
        self.plane.stop().await;
    }
}
