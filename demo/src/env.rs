//! Starting and stopping the whole local default: one management plane, and per cloud asked for
//! its emulator (with real workload API servers) and its provider binary.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use emulators::aks::{AksConfig, AksServer, Principal, serve_aks};
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::gke::{GkeConfig, GkeServer, ServiceAccountKey, serve_gke};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use emulators::moto::Moto;
use emulators::oke::{OkeConfig, OkeServer, serve_oke};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use testbed::{ManagementPlane, Options};
use tokio::process::Child;

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
}

impl EksProvider {
    /// Its process's name (and log file's stem).
    pub fn binary(self) -> &'static str {
        match self {
            EksProvider::Ours => Cloud::Eks.binary(),
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
    /// EKS clusters on a network the user brings (a VPC and two subnets made in moto, IAM
    /// roles made beforehand) instead of one the provider makes; always so for CAPA.
    pub byo_network: bool,
    /// EKS clusters the emulated account may hold in its region: EKS's default of 100
    /// ([`emulators::eks::CLUSTER_QUOTA`]) unless raised, as Service Quotas raises it for an
    /// account that asks (benchmarks beyond 100 clusters).
    pub eks_cluster_quota: usize,
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
            eks_cluster_quota: emulators::eks::CLUSTER_QUOTA,
        }
    }
}

/// The emulated EKS.
pub struct EksCloud {
    /// moto (EC2, IAM, STS).
    pub moto: Moto,
    /// The EKS emulator.
    pub server: ServerHandle,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The network and roles brought by the user, when the clusters use them.
    pub brought: Option<crate::peer::Aws>,
    /// Which provider manages the clusters.
    pub provider: EksProvider,
}

/// The emulated GKE.
pub struct GkeCloud {
    /// The GKE emulator.
    pub server: GkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The service-account key file the provider uses.
    pub key_file: PathBuf,
}

/// The emulated AKS.
pub struct AksCloud {
    /// The AKS emulator (ARM and Entra ID).
    pub server: AksServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
}

/// The emulated OKE.
pub struct OkeCloud {
    /// The OKE emulator.
    pub server: OkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The API key file the provider signs with.
    pub key_file: PathBuf,
}

/// Everything running. Dropping it stops every process.
pub struct Environment {
    /// The management plane.
    pub plane: ManagementPlane,
    eks: Option<EksCloud>,
    gke: Option<GkeCloud>,
    aks: Option<AksCloud>,
    oke: Option<OkeCloud>,
    providers: Vec<(Cloud, Child)>,
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

/// A provider binary next to the running executable (`target/<profile>/`), or the one
/// `PROVIDER_AWS_BIN` / `PROVIDER_GCP_BIN` / `PROVIDER_AZURE_BIN` / `PROVIDER_OCI_BIN` names.
pub fn provider_binary(cloud: Cloud) -> Result<PathBuf> {
    let var = match cloud {
        Cloud::Eks => "PROVIDER_AWS_BIN",
        Cloud::Gke => "PROVIDER_GCP_BIN",
        Cloud::Aks => "PROVIDER_AZURE_BIN",
        Cloud::Oke => "PROVIDER_OCI_BIN",
    };
    if let Some(path) = std::env::var_os(var) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    for dir in exe.ancestors().skip(1).take(2) {
        let candidate = dir.join(cloud.binary());
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "{} binary not found next to {}; build it with `cargo build -p {}`",
        cloud.binary(),
        exe.display(),
        cloud.binary()
    )
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
            metrics: Vec::new(),
            dir: RunDir(dir),
        };
        for cloud in &options.clouds {
            match cloud {
                Cloud::Eks => env.start_eks(timing, &logs, &options).await?,
                Cloud::Gke => env.start_gke(timing, &logs, options.poll_interval).await?,
                Cloud::Aks => env.start_aks(timing, &logs, options.poll_interval).await?,
                Cloud::Oke => env.start_oke(timing, &logs, options.poll_interval).await?,
            }
        }
        Ok(env)
    }

    async fn start_eks(&mut self, timing: Timing, logs: &Path, options: &EnvOptions) -> Result<()> {
        let (poll, workload_servers) = (options.poll_interval, options.workload_servers);
        let moto = Moto::start(logs).await.context("starting moto")?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-eks"),
            format!("http://127.0.0.1:{port}/_emulator/tokenreview"),
        )?);
        let mut config = EksConfig::new(REGION, "123456789012");
        config.credentials = vec![(ACCESS_KEY_ID.into(), SECRET_ACCESS_KEY.into())];
        config.cluster_quota = options.eks_cluster_quota;
        if workload_servers {
            config.workload = Some(workload.clone());
        }
        config.ec2_endpoint = Some(moto.url().to_string());
        config.sts_endpoints = vec![moto.url().to_string()];
        let server = serve_eks(config, timing, listener)
            .await
            .context("starting the EKS emulator")?;
        let provider_kind = options.eks_provider;
        let brought = if options.byo_network || provider_kind == EksProvider::Capa {
            Some(crate::peer::prepare_aws(moto.url(), REGION, ACCESS_KEY_ID).await?)
        } else {
            None
        };
        let aws_env = [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ENDPOINT_URL", moto.url().to_string()),
            ("AWS_ENDPOINT_URL_EKS", server.url().to_string()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
        ];
        let provider = match provider_kind {
            EksProvider::Ours => {
                self.plane
                    .install_crds(&provider_aws::api::crds())
                    .await
                    .context("installing the EKS provider's CRDs")?;
                start_provider(Cloud::Eks, &self.plane, logs, poll, &aws_env)?
            }
            EksProvider::Capa => {
                let assets = crate::peer::assets().await?;
                crate::peer::install_crds(&self.plane, &assets)
                    .await
                    .context("installing CAPA's CRDs")?;
                crate::peer::start(&self.plane, &assets, self.dir.path(), logs, &aws_env)?
            }
        };
        self.metrics.push((Cloud::Eks, provider.1));
        self.providers.push((Cloud::Eks, provider.0));
        self.eks = Some(EksCloud {
            moto,
            server,
            workload,
            brought,
            provider: provider_kind,
        });
        Ok(())
    }

    async fn start_gke(&mut self, timing: Timing, logs: &Path, poll: &str) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-gke"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let key = ServiceAccountKey::generate(
            GCP_PROJECT,
            &format!("capi-provider@{GCP_PROJECT}.iam.gserviceaccount.com"),
            &format!("{base}/token"),
        )?;
        let key_file = self.dir.path().join("gke-key.json");
        std::fs::write(&key_file, serde_json::to_string_pretty(&key.to_json())?)?;
        let config = GkeConfig {
            keys: vec![key],
            workload: Some(workload.clone()),
            ..GkeConfig::default()
        };
        let server = serve_gke(config, timing, listener)
            .await
            .context("starting the GKE emulator")?;
        self.plane
            .install_crds(&provider_gcp::api::crds())
            .await
            .context("installing the GKE provider's CRDs")?;
        let provider = start_provider(
            Cloud::Gke,
            &self.plane,
            logs,
            poll,
            &[
                (
                    "GOOGLE_APPLICATION_CREDENTIALS",
                    key_file.display().to_string(),
                ),
                ("GKE_CONTAINER_ENDPOINT", server.url().to_string()),
                ("GKE_COMPUTE_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Gke, provider.1));
        self.providers.push((Cloud::Gke, provider.0));
        self.gke = Some(GkeCloud {
            server,
            workload,
            key_file,
        });
        Ok(())
    }

    async fn start_aks(&mut self, timing: Timing, logs: &Path, poll: &str) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-aks"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let config = AksConfig {
            principals: vec![Principal {
                client_id: AZURE_CLIENT_ID.into(),
                secret: Some(AZURE_CLIENT_SECRET.into()),
                federated: None,
                object_id: format!("oid-{AZURE_CLIENT_ID}"),
            }],
            workload: Some(workload.clone()),
            ..AksConfig::default()
        };
        let tenant = config.tenant.clone();
        let server = serve_aks(config, timing, listener)
            .await
            .context("starting the AKS emulator")?;
        self.plane
            .install_crds(&provider_azure::api::crds())
            .await
            .context("installing the AKS provider's CRDs")?;
        let provider = start_provider(
            Cloud::Aks,
            &self.plane,
            logs,
            poll,
            &[
                ("AZURE_TENANT_ID", tenant),
                ("AZURE_CLIENT_ID", AZURE_CLIENT_ID.to_string()),
                ("AZURE_CLIENT_SECRET", AZURE_CLIENT_SECRET.to_string()),
                ("AZURE_AUTHORITY_HOST", server.url().to_string()),
                ("AKS_ARM_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Aks, provider.1));
        self.providers.push((Cloud::Aks, provider.0));
        self.aks = Some(AksCloud { server, workload });
        Ok(())
    }

    async fn start_oke(&mut self, timing: Timing, logs: &Path, poll: &str) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-oke"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let user = emulators::oke::global_ocid("user");
        let tenancy = emulators::oke::TENANCY;
        let (pem, key) = emulators::oke::generate_api_key(&format!("{tenancy}/{user}"))?;
        let fingerprint = key.fingerprint();
        let key_file = self.dir.path().join("oci_api_key.pem");
        std::fs::write(&key_file, pem)?;
        let config = OkeConfig {
            keys: vec![key],
            workload: Some(workload.clone()),
            ..OkeConfig::default()
        };
        let server = serve_oke(config, timing, listener)
            .await
            .context("starting the OKE emulator")?;
        self.plane
            .install_crds(&provider_oci::api::crds())
            .await
            .context("installing the OKE provider's CRDs")?;
        let provider = start_provider(
            Cloud::Oke,
            &self.plane,
            logs,
            poll,
            &[
                ("OCI_TENANCY_ID", tenancy.to_string()),
                ("OCI_USER_ID", user),
                ("OCI_CREDENTIALS_FINGERPRINT", fingerprint),
                ("OCI_CREDENTIALS_KEY_PATH", key_file.display().to_string()),
                ("OCI_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Oke, provider.1));
        self.providers.push((Cloud::Oke, provider.0));
        self.oke = Some(OkeCloud {
            server,
            workload,
            key_file,
        });
        Ok(())
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

    /// Server-side applies every object of a multi-document YAML in `namespace`.
    pub async fn apply_yaml(&self, yaml: &str, namespace: &str) -> Result<Vec<DynamicObject>> {
        let client = self.plane.client().await?;
        let mut applied = Vec::new();
        for doc in serde_saphyr::from_multiple::<serde_json::Value>(yaml)? {
            if doc.is_null() {
                continue;
            }
            let obj: DynamicObject = serde_json::from_value(doc.clone())?;
            let types = obj
                .types
                .clone()
                .context("object without apiVersion/kind")?;
            let (group, version) = types
                .api_version
                .rsplit_once('/')
                .unwrap_or(("", types.api_version.as_str()));
            let resource =
                ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, &types.kind));
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            let name = obj.metadata.name.clone().context("object without a name")?;
            let params = PatchParams::apply("demo").force();
            applied.push(
                api.patch(&name, &params, &Patch::Apply(&doc))
                    .await
                    .with_context(|| format!("applying {} {name}", types.kind))?,
            );
        }
        Ok(applied)
    }

    /// Renders the EKS provider's cluster template with the real `clusterctl generate cluster`.
    pub async fn generate_cluster(
        &self,
        name: &str,
        namespace: &str,
        version: &str,
        workers: u32,
    ) -> Result<String> {
        if let Some(eks) = &self.eks
            && eks.provider == EksProvider::Capa
            && let Some(aws) = &eks.brought
        {
            return Ok(crate::peer::cluster_yaml(
                name, namespace, version, workers, REGION, aws,
            ));
        }
        self.generate(Cloud::Eks, name, namespace, version, workers)
            .await
    }

    /// Renders `cloud`'s provider's cluster template with the real `clusterctl generate cluster`.
    pub async fn generate(
        &self,
        cloud: Cloud,
        name: &str,
        namespace: &str,
        version: &str,
        workers: u32,
    ) -> Result<String> {
        let config_home = self.dir.path().join("clusterctl");
        std::fs::create_dir_all(&config_home)?;
        // EKS on a brought network: the byo-network flavor, naming its subnets.
        let brought = match (cloud, &self.eks) {
            (Cloud::Eks, Some(eks)) => eks.brought.as_ref(),
            _ => None,
        };
        let template = match brought {
            Some(_) => concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider-aws/templates/cluster-template-byo-network.yaml"
            ),
            None => cloud.template(),
        };
        let subnet_ids = brought
            .map(|aws| format!("[{}]", aws.subnets.join(", ")))
            .unwrap_or_default();
        let output = testbed::process::command(self.plane.assets().clusterctl())
            .args([
                "generate",
                "cluster",
                name,
                "--from",
                template,
                "--kubernetes-version",
                version,
            ])
            .args([
                "--worker-machine-count",
                &workers.to_string(),
                "--target-namespace",
                namespace,
            ])
            .arg("--kubeconfig")
            .arg(self.plane.kubeconfig_path())
            .env("XDG_CONFIG_HOME", &config_home)
            .env("CLUSTERCTL_DISABLE_VERSIONCHECK", "true")
            .env("GCP_PROJECT", GCP_PROJECT)
            .env("GCP_REGION", GCP_REGION)
            .env("AZURE_SUBSCRIPTION_ID", emulators::aks::SUBSCRIPTION)
            .env("AZURE_LOCATION", AZURE_LOCATION)
            .env("OCI_COMPARTMENT_ID", emulators::oke::COMPARTMENT)
            .env("OCI_REGION", OCI_REGION)
            .env("AWS_SUBNET_IDS", subnet_ids)
            .output()
            .await?;
        if !output.status.success() {
            bail!(
                "clusterctl generate cluster failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8(output.stdout)?)
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

/// Starts a provider; returns it and its metrics port.
fn start_provider(
    cloud: Cloud,
    plane: &ManagementPlane,
    logs: &Path,
    poll: &str,
    env: &[(&str, String)],
) -> Result<(Child, u16)> {
    let binary = provider_binary(cloud)?;
    let metrics_port = testbed::process::free_port()?;
    let kubeconfig = own_kubeconfig(plane, logs.parent().unwrap_or(logs), cloud.binary())?;
    let mut command = testbed::process::command(&binary);
    command
        .args([
            "--metrics-bind-address",
            &format!("127.0.0.1:{metrics_port}"),
            "--health-probe-bind-address",
            "0",
            "--poll-interval",
            poll,
        ])
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        );
    let child = spawn_logged(
        command,
        &kubeconfig,
        env,
        &logs.join(format!("{}.log", cloud.binary())),
    )
    .with_context(|| format!("starting {}", binary.display()))?;
    Ok((child, metrics_port))
}

/// A kubeconfig in `dir` for `user`, its own user (in `system:masters`), so the API server's
/// audit log tells that program's writes apart from core's.
pub(crate) fn own_kubeconfig(plane: &ManagementPlane, dir: &Path, user: &str) -> Result<PathBuf> {
    let kubeconfig = dir.join(format!("{user}.kubeconfig"));
    testbed::write_kubeconfig(
        &kubeconfig,
        plane.server(),
        plane.ca().cert_pem(),
        &testbed::KubeconfigAuth::ClientCertificate(
            plane.ca().client(user, Some("system:masters"))?,
        ),
    )?;
    Ok(kubeconfig)
}

/// Starts `command` with only `PATH`, `KUBECONFIG` and `env` in its environment, its output
/// into `log`.
pub(crate) fn spawn_logged(
    mut command: tokio::process::Command,
    kubeconfig: &Path,
    env: &[(&str, String)],
    log: &Path,
) -> Result<Child> {
    let log = std::fs::File::create(log)?;
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KUBECONFIG", kubeconfig);
    for (k, v) in env {
        command.env(k, v);
    }
    Ok(command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?)
}
