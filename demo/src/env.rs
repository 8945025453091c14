//! Starting and stopping the whole local default.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::kit::workload::WorkloadServers;
use emulators::kit::{Delays, Timing};
use emulators::moto::Moto;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use testbed::{ManagementPlane, Options};
use tokio::process::Child;

/// The AWS region the local cloud serves.
pub const REGION: &str = "us-west-2";
/// The credentials the emulators accept and the provider uses (local only, never real).
pub const ACCESS_KEY_ID: &str = "AKIDLOCALDEMO";
/// See [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "local-demo-secret";

/// How the local cloud behaves.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// Seconds EKS takes to create, update or delete a cluster.
    pub cluster_delay: f64,
    /// Seconds EKS takes for a node group.
    pub pool_delay: f64,
    /// How often the provider looks again while EKS is busy.
    pub poll_interval: &'static str,
}

impl Default for EnvOptions {
    fn default() -> Self {
        Self {
            cluster_delay: 1.0,
            pool_delay: 1.0,
            poll_interval: "1s",
        }
    }
}

/// Everything running. Dropping it stops every process.
pub struct Environment {
    /// The management plane.
    pub plane: ManagementPlane,
    /// moto (EC2, IAM, STS).
    pub moto: Moto,
    /// The EKS emulator.
    pub eks: ServerHandle,
    /// The workload API servers behind the emulated clusters.
    pub workload: Arc<WorkloadServers>,
    provider: Child,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

/// The `provider-aws` binary next to the running executable (`target/<profile>/`), or
/// `PROVIDER_AWS_BIN`.
pub fn provider_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("PROVIDER_AWS_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    for dir in exe.ancestors().skip(1).take(2) {
        let candidate = dir.join("provider-aws");
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "provider-aws binary not found next to {}; build it with `cargo build -p provider-aws`",
        exe.display()
    )
}

impl Environment {
    /// Starts the management plane, moto, the EKS emulator (workload API servers on), installs the
    /// provider's CRDs and starts `provider-aws` against all of it.
    pub async fn start(options: EnvOptions) -> Result<Self> {
        let dir = tempfile::Builder::new().prefix("local-eks-").tempdir()?;
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs)?;
        let plane = ManagementPlane::start(Options::default())
            .await
            .context("starting the management plane")?;
        let moto = Moto::start(&logs).await.context("starting moto")?;

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let workload = Arc::new(WorkloadServers::new(
            plane.assets().clone(),
            dir.path().join("workload"),
            format!("http://127.0.0.1:{port}/_emulator/tokenreview"),
        )?);
        let mut config = EksConfig::new(REGION, "123456789012");
        config.credentials = vec![(ACCESS_KEY_ID.into(), SECRET_ACCESS_KEY.into())];
        config.workload = Some(workload.clone());
        config.ec2_endpoint = Some(moto.url().to_string());
        let timing = Timing {
            cluster: Delays::uniform(options.cluster_delay),
            pool: Delays::uniform(options.pool_delay),
            addon: Delays::uniform(options.pool_delay / 2.0),
            instance_shutdown: options.pool_delay,
        };
        let eks = serve_eks(config, timing, listener)
            .await
            .context("starting the EKS emulator")?;

        plane
            .install_crds(&provider_aws::api::crds())
            .await
            .context("installing the EKS provider's CRDs")?;
        let provider = start_provider(&plane, &moto, &eks, &logs, options.poll_interval)?;
        Ok(Self {
            plane,
            moto,
            eks,
            workload,
            provider,
            dir,
        })
    }

    /// The run's directory (logs in `logs/`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The provider's log file.
    pub fn provider_log(&self) -> PathBuf {
        self.dir.path().join("logs").join("provider-aws.log")
    }

    /// The provider's process id, while it runs.
    pub fn provider_pid(&self) -> Option<u32> {
        self.provider.id()
    }

    /// Fails if the provider process has exited.
    pub fn ensure_provider_running(&mut self) -> Result<()> {
        if let Some(status) = self.provider.try_wait()? {
            bail!(
                "provider-aws exited ({status}); last lines:\n{}",
                testbed::process::tail(&self.provider_log(), 40)
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

    /// Renders the provider's cluster template with the real `clusterctl generate cluster`.
    pub async fn generate_cluster(
        &self,
        name: &str,
        namespace: &str,
        version: &str,
        workers: u32,
    ) -> Result<String> {
        let template = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../provider-aws/templates/cluster-template.yaml"
        );
        let config_home = self.dir.path().join("clusterctl");
        std::fs::create_dir_all(&config_home)?;
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

    /// Stops the provider, then everything else.
    pub async fn stop(mut self) {
        let _ = self.provider.kill().await;
        self.eks.shutdown().await;
        self.workload.shutdown().await;
        self.moto.stop().await;
        self.plane.stop().await;
    }
}

fn start_provider(
    plane: &ManagementPlane,
    moto: &Moto,
    eks: &ServerHandle,
    logs: &Path,
    poll: &str,
) -> Result<Child> {
    let binary = provider_binary()?;
    let log = std::fs::File::create(logs.join("provider-aws.log"))?;
    let child = testbed::process::command(&binary)
        .args([
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
            "--poll-interval",
            poll,
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KUBECONFIG", plane.kubeconfig_path())
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
        .env("AWS_REGION", REGION)
        .env("AWS_ENDPOINT_URL", moto.url())
        .env("AWS_ENDPOINT_URL_EKS", eks.url())
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        )
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    Ok(child)
}
