//! The real management plane the tests and the demo run against, started on loopback.
//!
//! [`ManagementPlane::start`] runs etcd, kube-apiserver, kube-controller-manager (garbage
//! collection and namespace deletion) and the Cluster API core manager with its CRDs and webhooks,
//! all real programs built from their published Go modules (see `build-assets.sh`). Nothing here
//! imitates Kubernetes or Cluster API: the bed only starts, wires and stops them.
//!
//! Every process is killed when the plane is dropped. When a test panics, the run's directory
//! (logs, certificates, kubeconfig) is kept and its path printed; set `TESTBED_KEEP=1` to keep it
//! always.

#![doc(html_no_source)]

pub mod assets;
mod capi;
mod kubeconfig;
pub mod pki;
pub mod process;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};

pub use assets::Assets;
pub use kubeconfig::{KubeconfigAuth, write_kubeconfig, write_kubeconfig_in};
use pki::Authority;
use process::{Process, free_port, wait_until};

/// The field manager the bed uses for what it installs.
pub const FIELD_MANAGER: &str = "testbed";

/// What to start.
#[derive(Debug, Clone)]
pub struct Options {
    /// Start kube-controller-manager (garbage collector and namespace controller).
    pub controller_manager: bool,
    /// Install Cluster API core's CRDs and webhooks and run its manager.
    pub capi: bool,
    /// `--feature-gates` for the Cluster API manager.
    pub capi_feature_gates: String,
    /// Prebuilt assets; `None` finds or builds them (see [`Assets::locate`]).
    pub assets: Option<Assets>,
    /// Write kube-apiserver's audit log of every write (verbs other than get, list and watch,
    /// at the Metadata level: who, user agent, verb, URI with its `fieldManager`, response
    /// code) to [`ManagementPlane::audit_log`], for benchmarks that count writes by client.
    pub audit_writes: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            controller_manager: true,
            capi: true,
            capi_feature_gates: "MachinePool=true,ClusterTopology=true".to_string(),
            assets: None,
            audit_writes: false,
        }
    }
}

/// The audit policy of [`Options::audit_writes`]: every write at the Metadata level, nothing
/// else (reads would drown the log).
const AUDIT_WRITES_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
";

/// Addresses of a running kube-apiserver with its own etcd.
#[derive(Debug)]
pub struct ControlPlaneEndpoints {
    /// `https://127.0.0.1:<port>`.
    pub server: String,
    /// `http://127.0.0.1:<port>` of its etcd.
    pub etcd: String,
}

/// A running management plane. Dropping it kills every process it started.
pub struct ManagementPlane {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    processes: Vec<Process>,
    kubeconfig: PathBuf,
    endpoints: ControlPlaneEndpoints,
    ca: Authority,
    assets: Assets,
    webhook_port: Option<u16>,
    /// kube-apiserver's arguments, to start it again ([`ManagementPlane::restart_apiserver`]).
    apiserver_args: Vec<String>,
    /// How many times kube-apiserver was started.
    apiserver_starts: u32,
}

impl std::fmt::Debug for ManagementPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagementPlane")
            .field("dir", &self.path)
            .field("server", &self.endpoints.server)
            .finish_non_exhaustive()
    }
}

impl ManagementPlane {
    /// Starts the plane and waits until every component is ready (the Cluster API manager's
    /// `/readyz`, which includes its webhook server).
    ///
    /// # Errors
    /// When an asset is missing and cannot be built, a port cannot be bound, or a component
    /// exits or is not ready in time; the error carries the tail of that component's log.
    pub async fn start(options: Options) -> Result<Self> {
        let assets = match options.assets.clone() {
            Some(a) => a,
            None => tokio::task::spawn_blocking(Assets::locate).await??,
        };
        let dir = tempfile::Builder::new().prefix("testbed-").tempdir()?;
        let path = dir.path().to_path_buf();
        let logs = path.join("logs");
        std::fs::create_dir_all(&logs)?;
        let ca = Authority::new("testbed-ca")?;
        let mut plane = Self {
            dir: Some(dir),
            kubeconfig: path.join("admin.kubeconfig"),
            path,
            processes: Vec::new(),
            endpoints: ControlPlaneEndpoints {
                server: String::new(),
                etcd: String::new(),
            },
            ca,
            assets,
            webhook_port: None,
            apiserver_args: Vec::new(),
            apiserver_starts: 0,
        };
        plane.start_etcd_and_apiserver(options.audit_writes).await?;
        if options.controller_manager {
            plane.start_controller_manager().await?;
        }
        if options.capi {
            plane.start_capi(&options.capi_feature_gates).await?;
        }
        Ok(plane)
    }

    async fn start_etcd_and_apiserver(&mut self, audit_writes: bool) -> Result<()> {
        let logs = self.log_dir().to_path_buf();
        let etcd_port = free_port()?;
        let peer_port = free_port()?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let etcd_args = vec![
            format!("--data-dir={}", self.path.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--unsafe-no-fsync=true".into(),
            "--log-level=warn".into(),
        ];
        self.processes.push(Process::spawn(
            "etcd",
            &self.assets.etcd(),
            &etcd_args,
            &logs,
        )?);
        let port = etcd_port;
        wait_until(
            "etcd /health",
            Duration::from_secs(30),
            Duration::from_millis(200),
            || async move { Ok(process::http_status(port, "/health").await.unwrap_or(0) == 200) },
        )
        .await
        .map_err(|e| self.with_log_tail(e, "etcd"))?;

        let pki_dir = self.path.join("pki");
        std::fs::create_dir_all(&pki_dir)?;
        let serving = self.ca.serving(
            "kube-apiserver",
            &["kubernetes", "kubernetes.default", "kubernetes.default.svc"],
            &["10.0.0.1".parse()?],
        )?;
        std::fs::write(pki_dir.join("apiserver.crt"), &serving.cert_pem)?;
        std::fs::write(pki_dir.join("apiserver.key"), &serving.key_pem)?;
        std::fs::write(pki_dir.join("ca.crt"), self.ca.cert_pem())?;
        let (sa_private, sa_public) = pki::signing_key_pem()?;
        std::fs::write(pki_dir.join("sa.key"), sa_private)?;
        std::fs::write(pki_dir.join("sa.pub"), sa_public)?;
        let admin = self.ca.client("admin", Some("system:masters"))?;

        let port = free_port()?;
        let server = format!("https://127.0.0.1:{port}");
        let mut args = vec![
            format!("--etcd-servers={etcd_url}"),
            "--etcd-prefix=/management".into(),
            format!("--cert-dir={}", pki_dir.display()),
            format!(
                "--tls-cert-file={}",
                pki_dir.join("apiserver.crt").display()
            ),
            format!(
                "--tls-private-key-file={}",
                pki_dir.join("apiserver.key").display()
            ),
            format!("--client-ca-file={}", pki_dir.join("ca.crt").display()),
            format!("--secure-port={port}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--allow-privileged=true".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--authorization-mode=RBAC".into(),
            format!("--service-account-issuer={server}/"),
            format!(
                "--service-account-key-file={}",
                pki_dir.join("sa.pub").display()
            ),
            format!(
                "--service-account-signing-key-file={}",
                pki_dir.join("sa.key").display()
            ),
            "--endpoint-reconciler-type=none".into(),
            "--v=1".into(),
        ];
        if audit_writes {
            let policy = self.path.join("audit-policy.yaml");
            std::fs::write(&policy, AUDIT_WRITES_POLICY)?;
            args.extend([
                format!("--audit-policy-file={}", policy.display()),
                format!("--audit-log-path={}", self.audit_log().display()),
                "--audit-log-format=json".into(),
                "--audit-log-mode=batch".into(),
                "--audit-log-batch-max-wait=1s".into(),
                "--audit-log-maxsize=0".into(),
            ]);
        }
        self.processes.push(Process::spawn(
            "kube-apiserver",
            &self.assets.kube_apiserver(),
            &args,
            &logs,
        )?);
        self.apiserver_args = args;
        self.apiserver_starts = 1;
        write_kubeconfig(
            &self.kubeconfig,
            &server,
            self.ca.cert_pem(),
            &KubeconfigAuth::ClientCertificate(admin),
        )?;
        self.endpoints = ControlPlaneEndpoints {
            server,
            etcd: etcd_url,
        };

        self.wait_apiserver().await
    }

    /// Waits until kube-apiserver listens and serves (the default namespace exists).
    async fn wait_apiserver(&mut self) -> Result<()> {
        let port = self.apiserver_port()?;
        // Wait for the port first, so the client below does not log connection errors.
        wait_until(
            "kube-apiserver to listen",
            Duration::from_secs(60),
            Duration::from_millis(100),
            || async move {
                Ok(tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok())
            },
        )
        .await
        .map_err(|e| self.with_log_tail(e, "kube-apiserver"))?;
        let kubeconfig = self.kubeconfig.clone();
        let waited = wait_until(
            "kube-apiserver to serve and create the default namespace",
            Duration::from_secs(90),
            Duration::from_millis(500),
            || {
                let kubeconfig = kubeconfig.clone();
                async move {
                    let client = client_from(&kubeconfig).await?;
                    let ns: Api<Namespace> = Api::all(client);
                    Ok(ns.get_opt("default").await?.is_some())
                }
            },
        )
        .await;
        self.check_alive("kube-apiserver", waited)
    }

    async fn start_controller_manager(&mut self) -> Result<()> {
        let args = vec![
            format!("--kubeconfig={}", self.kubeconfig.display()),
            "--controllers=garbage-collector-controller,namespace-controller,clusterrole-aggregation-controller".into(),
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
            "--use-service-account-credentials=false".into(),
            "--v=1".into(),
        ];
        let logs = self.log_dir().to_path_buf();
        let log = logs.join("kube-controller-manager.log");
        // It exits when the API server's /healthz is not ok within 10 s of its start, which
        // happens on a loaded machine while the API server's last post-start hooks (RBAC's
        // bootstrap roles) run: started again, up to five times, each earlier log kept beside.
        // It has no readiness endpoint without serving, so it counts as started once its log
        // says the garbage collector and the ClusterRole aggregator started.
        let mut attempt = 1;
        'start: loop {
            let mut process = Process::spawn(
                "kube-controller-manager",
                &self.assets.kube_controller_manager(),
                &args,
                &logs,
            )?;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            loop {
                if let Err(exited) = process.ensure_running() {
                    if attempt == 5 {
                        return Err(exited.context(
                            "kube-controller-manager exited at its start five times (earlier logs: kube-controller-manager.<n>.log beside this one)",
                        ));
                    }
                    let kept = logs.join(format!("kube-controller-manager.{attempt}.log"));
                    std::fs::rename(&log, &kept)
                        .with_context(|| format!("keeping {}", log.display()))?;
                    attempt += 1;
                    continue 'start;
                }
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if CONTROLLER_MANAGER_STARTED
                    .iter()
                    .all(|line| text.contains(line))
                {
                    self.processes.push(process);
                    return Ok(());
                }
                if tokio::time::Instant::now() >= deadline {
                    self.processes.push(process);
                    return Err(self.with_log_tail(
                        anyhow::anyhow!(
                            "kube-controller-manager did not start its controllers within 60s"
                        ),
                        "kube-controller-manager",
                    ));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    async fn start_capi(&mut self, feature_gates: &str) -> Result<()> {
        let webhook_port = free_port()?;
        let health_port = free_port()?;
        let cert_dir = self.path.join("capi-webhook-certs");
        std::fs::create_dir_all(&cert_dir)?;
        let serving = self.ca.serving("capi-webhook", &[], &[])?;
        std::fs::write(cert_dir.join("tls.crt"), &serving.cert_pem)?;
        std::fs::write(cert_dir.join("tls.key"), &serving.key_pem)?;
        let client = self.client().await?;
        capi::install(&client, &self.assets, webhook_port, self.ca.cert_pem()).await?;

        let args = vec![
            format!("--kubeconfig={}", self.kubeconfig.display()),
            "--leader-elect=false".into(),
            format!("--webhook-port={webhook_port}"),
            format!("--webhook-cert-dir={}", cert_dir.display()),
            format!("--health-addr=127.0.0.1:{health_port}"),
            "--diagnostics-address=0".into(),
            format!("--feature-gates={feature_gates}"),
        ];
        let logs = self.log_dir().to_path_buf();
        self.processes.push(Process::spawn(
            "capi-manager",
            &self.assets.capi_manager(),
            &args,
            &logs,
        )?);
        self.webhook_port = Some(webhook_port);
        let waited = wait_until(
            "the Cluster API manager's /readyz",
            Duration::from_secs(120),
            Duration::from_millis(500),
            || async move {
                Ok(process::http_status(health_port, "/readyz")
                    .await
                    .unwrap_or(0)
                    == 200)
            },
        )
        .await;
        self.check_alive("capi-manager", waited)
    }

    fn apiserver_port(&self) -> Result<u16> {
        self.endpoints
            .server
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .with_context(|| format!("no port in {}", self.endpoints.server))
    }

    /// Stops kube-apiserver (SIGTERM; SIGKILL with `kill`), keeps it down for `down`, starts it
    /// again with the same flags and port, and waits until it serves: every client's watches
    /// drop and are made again. The earlier log is kept as `kube-apiserver.<n>.log`. Returns how
    /// long it was unavailable.
    ///
    /// # Errors
    /// When it cannot be started again or does not serve within 90 s.
    pub async fn restart_apiserver(&mut self, down: Duration, kill: bool) -> Result<Duration> {
        let started = tokio::time::Instant::now();
        let index = self
            .processes
            .iter()
            .position(|p| p.name() == "kube-apiserver")
            .context("kube-apiserver is not running")?;
        let mut old = self.processes.remove(index);
        old.stop(if kill {
            Duration::ZERO
        } else {
            Duration::from_secs(10)
        })
        .await;
        let logs = self.log_dir();
        let log = logs.join("kube-apiserver.log");
        let kept = logs.join(format!("kube-apiserver.{}.log", self.apiserver_starts));
        std::fs::rename(&log, &kept).with_context(|| format!("keeping {}", log.display()))?;
        tokio::time::sleep(down).await;
        let process = Process::spawn(
            "kube-apiserver",
            &self.assets.kube_apiserver(),
            &self.apiserver_args,
            &logs,
        )?;
        self.processes.insert(index, process);
        self.apiserver_starts += 1;
        self.wait_apiserver().await?;
        Ok(started.elapsed())
    }

    /// Compacts etcd's history up to its current revision (through etcd's JSON gateway), so a
    /// watch that resumes from an older resourceVersion gets 410 Gone and must list again.
    /// Returns the revision compacted to.
    ///
    /// # Errors
    /// When etcd does not answer or refuses.
    pub async fn compact_etcd(&self) -> Result<i64> {
        let port: u16 = self
            .endpoints
            .etcd
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .with_context(|| format!("no port in {}", self.endpoints.etcd))?;
        // Any range read answers with the store's current revision in its header.
        let range = process::http_post_json(port, "/v3/kv/range", r#"{"key":"AA=="}"#).await?;
        let revision: i64 =
            serde_json::from_str::<serde_json::Value>(&range)?["header"]["revision"]
                .as_str()
                .and_then(|r| r.parse().ok())
                .with_context(|| format!("etcd's range answer has no revision: {range}"))?;
        let body = format!(r#"{{"revision":"{revision}","physical":true}}"#);
        let answer = process::http_post_json(port, "/v3/kv/compaction", &body).await?;
        let parsed: serde_json::Value = serde_json::from_str(&answer)
            .with_context(|| format!("etcd's compaction answer: {answer}"))?;
        if parsed.get("error").is_some() || parsed.get("code").is_some() {
            anyhow::bail!("etcd refused the compaction to {revision}: {answer}");
        }
        Ok(revision)
    }

    /// Installs Cluster API core's CRDs and webhook configurations without running its manager
    /// (the webhooks then point at a port nobody serves). Used to show that checks which need the
    /// manager fail without it.
    pub async fn install_capi_without_manager(&self) -> Result<()> {
        let client = self.client().await?;
        capi::install(&client, &self.assets, free_port()?, self.ca.cert_pem()).await
    }

    fn check_alive(&mut self, name: &str, waited: Result<()>) -> Result<()> {
        for p in &mut self.processes {
            if p.name() == name {
                p.ensure_running()?;
            }
        }
        waited.map_err(|e| self.with_log_tail(e, name))
    }

    fn with_log_tail(&self, e: anyhow::Error, name: &str) -> anyhow::Error {
        let log = self.log_dir().join(format!("{name}.log"));
        e.context(format!(
            "last lines of {}:\n{}",
            log.display(),
            process::tail(&log, 30)
        ))
    }

    /// A client with the admin (system:masters) credential.
    pub async fn client(&self) -> Result<kube::Client> {
        client_from(&self.kubeconfig).await
    }

    /// The admin kubeconfig file.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server URL, `https://127.0.0.1:<port>`.
    pub fn server(&self) -> &str {
        &self.endpoints.server
    }

    /// The etcd client URL (other API servers may share it with their own `--etcd-prefix`).
    pub fn etcd_url(&self) -> &str {
        &self.endpoints.etcd
    }

    /// The CA that signed the API server's serving certificate and the admin credential.
    pub fn ca(&self) -> &Authority {
        &self.ca
    }

    /// The assets the plane runs.
    pub fn assets(&self) -> &Assets {
        &self.assets
    }

    /// The run's directory (certificates, kubeconfig, logs).
    pub fn dir(&self) -> &Path {
        &self.path
    }

    /// kube-apiserver's audit log of writes (JSON lines; written with
    /// [`Options::audit_writes`]).
    pub fn audit_log(&self) -> PathBuf {
        self.log_dir().join("audit.log")
    }

    /// Where each component's log is written (`<name>.log`).
    pub fn log_dir(&self) -> PathBuf {
        self.path.join("logs")
    }

    /// The Cluster API manager's webhook port, if it runs.
    pub fn capi_webhook_port(&self) -> Option<u16> {
        self.webhook_port
    }

    /// The kube-apiserver's `gitVersion` (e.g. `v1.36.3`).
    pub async fn server_version(&self) -> Result<String> {
        Ok(self.client().await?.apiserver_version().await?.git_version)
    }

    /// Creates or updates CRDs by server-side apply and waits until each is Established.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<()> {
        install_crds(&self.client().await?, crds).await
    }

    /// Keeps the run's directory after the plane stops, and returns its path.
    pub fn keep(&mut self) -> PathBuf {
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.path.clone()
    }

    /// Stops every process: the Cluster API webhooks are removed first so that nothing that still
    /// talks to the API server hangs on them; then processes stop in reverse start order.
    pub async fn stop(mut self) {
        if self.webhook_port.is_some()
            && let Ok(client) = self.client().await
        {
            capi::remove_webhooks(&client).await;
        }
        while let Some(mut p) = self.processes.pop() {
            p.stop(Duration::from_secs(5)).await;
        }
    }
}

impl Drop for ManagementPlane {
    fn drop(&mut self) {
        // Processes are killed by their own Drop (kill_on_drop).
        let keep = std::thread::panicking() || std::env::var_os("TESTBED_KEEP").is_some();
        if keep {
            let path = self.keep();
            eprintln!(
                "testbed: run directory kept at {} (logs in logs/)",
                path.display()
            );
        }
    }
}

/// What kube-controller-manager (v1.36) logs once the bed's controllers run.
const CONTROLLER_MANAGER_STARTED: [&str; 2] = [
    "Starting ClusterRoleAggregator controller",
    "\"Starting controller\" controller=\"garbagecollector\"",
];

/// A client from a kubeconfig file (never the user's own `~/.kube/config`).
pub async fn client_from(kubeconfig: &Path) -> Result<kube::Client> {
    let raw = kube::config::Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading {}", kubeconfig.display()))?;
    let config =
        kube::Config::from_custom_kubeconfig(raw, &kube::config::KubeConfigOptions::default())
            .await?;
    Ok(kube::Client::try_from(config)?)
}

/// Server-side applies CRDs and waits until each is Established.
pub async fn install_crds(client: &kube::Client, crds: &[CustomResourceDefinition]) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in crds {
        let name = crd.metadata.name.clone().context("CRD without a name")?;
        let mut body = crd.clone();
        body.metadata.managed_fields = None;
        body.metadata.resource_version = None;
        let mut value = serde_json::to_value(&body)?;
        value["apiVersion"] = "apiextensions.k8s.io/v1".into();
        value["kind"] = "CustomResourceDefinition".into();
        api.patch(&name, &params, &Patch::Apply(&value))
            .await
            .with_context(|| format!("applying CRD {name}"))?;
    }
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let api = api.clone();
        wait_until(
            &format!("CRD {name} Established"),
            Duration::from_secs(30),
            Duration::from_millis(100),
            || {
                let api = api.clone();
                let name = name.clone();
                async move {
                    let crd = api.get(&name).await?;
                    Ok(crd
                        .status
                        .and_then(|s| s.conditions)
                        .unwrap_or_default()
                        .iter()
                        .any(|c| c.type_ == "Established" && c.status == "True"))
                }
            },
        )
        .await?;
    }
    Ok(())
}
