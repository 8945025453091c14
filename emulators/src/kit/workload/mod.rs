//! Real workload API servers behind emulated managed clusters.
//!
//! Every emulated cluster can be backed by a real kube-apiserver on loopback, so that a provider's
//! kubeconfig can be checked against a server that really authenticates it, and so that Cluster API
//! finds `Node` objects whose `spec.providerID` matches its Machines. All servers share one etcd
//! (each under its own `--etcd-prefix=/workload/<cluster id>`) and one certificate authority, which
//! signs every serving certificate: its PEM is what the cloud API returns as the cluster's
//! certificate authority.
//!
//! Bearer tokens are authenticated by the emulator itself: each server's token webhook points at
//! `<token_review_base>/<cluster id>`, where the cloud emulator answers an
//! `authentication.k8s.io/v1` `TokenReview` (plain HTTP on loopback, which the API server's webhook
//! client accepts). Results are cached by the API server for [`TOKEN_CACHE_TTL`] only, so a revoked
//! or expired token stops working quickly. Authorization is RBAC.
//!
//! The emulator keeps an admin client certificate (group `system:masters`) per server to write
//! Nodes; that credential never leaves the emulator.
//!
//! Every process is killed when the [`WorkloadServers`] is dropped (the processes are killed on
//! drop); [`WorkloadServers::shutdown`] stops them gracefully.
//!
//! With [`WorkloadServers::private_endpoints`], the servers run as before (the emulator still
//! writes their Nodes) but the endpoint the cloud API publishes is a private one the management
//! cluster cannot reach: a loopback port that accepts connections and never answers, as a
//! private address behind a firewall looks from outside (Cluster API issue #6520).
//!
//! This module starts and stops the servers (and their etcd); [`nodes`] writes their Nodes.

mod nodes;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use testbed::pki::{self, Authority};
use testbed::process::{self, Process, free_port, wait_until};
use testbed::{Assets, KubeconfigAuth, write_kubeconfig};
use tokio::sync::OnceCell;

/// How long an API server caches a token review's answer (`--authentication-token-webhook-cache-ttl`).
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);

/// The field manager the emulator writes Nodes with.
pub const FIELD_MANAGER: &str = "cloud-emulator";

/// The service CIDR of every workload cluster (EKS's default).
const SERVICE_CIDR: &str = "10.100.0.0/16";

/// The first address of [`SERVICE_CIDR`], the `kubernetes` Service's IP.
const KUBERNETES_SERVICE_IP: &str = "10.100.0.1";

/// How long one API server may take to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a workload API server listens and what it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadEndpoint {
    /// `https://127.0.0.1:<port>`.
    pub server: String,
    /// `127.0.0.1`.
    pub host: String,
    /// The secure port.
    pub port: u16,
    /// The PEM of the CA that signed the serving certificate.
    pub ca_pem: String,
}

/// A Node the cloud has created for one instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSpec {
    /// The Node's name, e.g. `ip-10-0-1-23.us-west-2.compute.internal`.
    pub name: String,
    /// `spec.providerID`, e.g. `aws:///us-west-2a/i-0abc…`.
    pub provider_id: String,
    /// Labels; `kubernetes.io/hostname`, `kubernetes.io/os` and `kubernetes.io/arch` are added as a
    /// kubelet would unless given here.
    pub labels: BTreeMap<String, String>,
    /// Taints as `(key, value, effect)`; an empty value is omitted.
    pub taints: Vec<(String, String, String)>,
    /// `status.nodeInfo.kubeletVersion`; the API server's version if `None`.
    pub kubelet_version: Option<String>,
}

/// The shared etcd.
struct Etcd {
    url: String,
    process: Mutex<Option<Process>>,
}

/// A running workload API server.
struct Running {
    endpoint: WorkloadEndpoint,
    client: kube::Client,
    version: String,
    process: Process,
}

enum Slot {
    Starting,
    Running(Box<Running>),
}

/// The workload API servers of one emulator.
pub struct WorkloadServers {
    assets: Assets,
    dir: PathBuf,
    token_review_base: String,
    ca: Authority,
    etcd: OnceCell<Etcd>,
    clusters: Mutex<HashMap<String, Slot>>,
    closed: Mutex<bool>,
    /// The port of the silent listener every published endpoint names, when endpoints are
    /// private.
    private: Option<u16>,
}

impl std::fmt::Debug for WorkloadServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadServers")
            .field("dir", &self.dir)
            .field("token_review_base", &self.token_review_base)
            .finish_non_exhaustive()
    }
}

/// Removes a `Starting` slot if the start did not complete (error or cancellation).
struct StartGuard<'a> {
    servers: &'a WorkloadServers,
    cluster_id: String,
    armed: bool,
}

impl Drop for StartGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let mut clusters = self.servers.lock_clusters();
            if matches!(clusters.get(&self.cluster_id), Some(Slot::Starting)) {
                clusters.remove(&self.cluster_id);
            }
        }
    }
}

impl WorkloadServers {
    /// Prepares workload servers writing logs and certificates under `dir`, whose token webhooks
    /// call `<token_review_base>/<cluster id>` (e.g.
    /// `http://127.0.0.1:<emulator port>/_emulator/tokenreview`). Nothing is started yet: etcd
    /// starts with the first cluster.
    ///
    /// # Errors
    /// When `dir` cannot be created or the CA cannot be generated.
    pub fn new(assets: Assets, dir: PathBuf, token_review_base: String) -> Result<Self> {
        std::fs::create_dir_all(dir.join("logs"))
            .with_context(|| format!("creating {}", dir.display()))?;
        let ca = Authority::new("emulated-cluster-ca")?;
        std::fs::write(dir.join("ca.crt"), ca.cert_pem())?;
        Ok(Self {
            assets,
            dir,
            token_review_base: token_review_base.trim_end_matches('/').to_string(),
            ca,
            etcd: OnceCell::new(),
            clusters: Mutex::new(HashMap::new()),
            closed: Mutex::new(false),
            private: None,
        })
    }

    /// Publishes every cluster's endpoint as a private one: a loopback port that accepts
    /// connections, reads what is sent and never answers (a client's TLS handshake hangs until
    /// its own timeout). The servers still run behind it, reachable by the emulator alone.
    ///
    /// # Errors
    /// When the port cannot be bound; outside a Tokio runtime.
    pub fn private_endpoints(mut self) -> Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    // Out of descriptors, say: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                tokio::spawn(async move {
                    let mut sink = tokio::io::sink();
                    let _ = tokio::time::timeout(
                        Duration::from_secs(600),
                        tokio::io::copy(&mut socket, &mut sink),
                    )
                    .await;
                });
            }
        });
        self.private = Some(port);
        Ok(self)
    }

    /// What the cloud API publishes of `endpoint`: itself, or the private address.
    fn published(&self, mut endpoint: WorkloadEndpoint) -> WorkloadEndpoint {
        if let Some(port) = self.private {
            endpoint.port = port;
            endpoint.server = format!("https://{}:{port}", endpoint.host);
        }
        endpoint
    }

    /// The PEM of the CA that signs every workload server's serving certificate.
    pub fn ca_pem(&self) -> &str {
        self.ca.cert_pem()
    }

    /// Starts a workload API server for `cluster_id` and returns once its `/readyz` answers OK.
    /// Starting a cluster that already runs returns its endpoint. Other clusters may start at the
    /// same time.
    ///
    /// # Errors
    /// When `cluster_id` is not made of letters, digits, `-`, `_` and `.`, when the cluster is
    /// being started by another call, after [`shutdown`](Self::shutdown), or when etcd or the API
    /// server fails to start (with the tail of its log).
    pub async fn start_cluster(&self, cluster_id: &str) -> Result<WorkloadEndpoint> {
        check_cluster_id(cluster_id)?;
        if *self.closed.lock().unwrap_or_else(PoisonError::into_inner) {
            bail!("workload servers are shut down");
        }
        {
            let mut clusters = self.lock_clusters();
            match clusters.get(cluster_id) {
                Some(Slot::Running(r)) => return Ok(self.published(r.endpoint.clone())),
                Some(Slot::Starting) => {
                    bail!("workload server for cluster {cluster_id} is already starting")
                }
                None => {
                    clusters.insert(cluster_id.to_string(), Slot::Starting);
                }
            }
        }
        let mut guard = StartGuard {
            servers: self,
            cluster_id: cluster_id.to_string(),
            armed: true,
        };
        let etcd_url = self.etcd().await?.url.clone();
        let running = self.launch(cluster_id, &etcd_url).await?;
        let endpoint = running.endpoint.clone();
        self.lock_clusters()
            .insert(cluster_id.to_string(), Slot::Running(Box::new(running)));
        guard.armed = false;
        Ok(self.published(endpoint))
    }

    /// Stops the workload API server of `cluster_id` (SIGTERM, then SIGKILL after 5 s). Its data
    /// stays in etcd. Stopping a cluster that does not run does nothing.
    pub async fn stop_cluster(&self, cluster_id: &str) {
        let slot = {
            let mut clusters = self.lock_clusters();
            if matches!(clusters.get(cluster_id), Some(Slot::Running(_))) {
                clusters.remove(cluster_id)
            } else {
                None
            }
        };
        if let Some(Slot::Running(mut running)) = slot {
            running.process.stop(Duration::from_secs(5)).await;
        }
    }

    /// The endpoint the cloud API publishes for a running cluster.
    pub fn endpoint(&self, cluster_id: &str) -> Option<WorkloadEndpoint> {
        let running = match self.lock_clusters().get(cluster_id) {
            Some(Slot::Running(r)) => Some(r.endpoint.clone()),
            _ => None,
        };
        running.map(|e| self.published(e))
    }

    /// The ids of the clusters whose servers run.
    pub fn running(&self) -> Vec<String> {
        let clusters = self.lock_clusters();
        let mut ids: Vec<String> = clusters
            .iter()
            .filter(|(_, s)| matches!(s, Slot::Running(_)))
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// An admin (`system:masters`) client of a running cluster, for the emulator and its tests.
    ///
    /// # Errors
    /// When the cluster does not run.
    pub fn admin_client(&self, cluster_id: &str) -> Result<kube::Client> {
        Ok(self.running_parts(cluster_id)?.0)
    }

    /// The process id of a running cluster's API server.
    pub fn server_pid(&self, cluster_id: &str) -> Option<u32> {
        match self.lock_clusters().get(cluster_id) {
            Some(Slot::Running(r)) => r.process.pid(),
            _ => None,
        }
    }

    /// The process id of the shared etcd, once started.
    pub fn etcd_pid(&self) -> Option<u32> {
        let etcd = self.etcd.get()?;
        let process = etcd.process.lock().unwrap_or_else(PoisonError::into_inner);
        process.as_ref().and_then(Process::pid)
    }

    /// Stops every API server, then etcd. Later starts fail.
    pub async fn shutdown(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = true;
        let running: Vec<Box<Running>> = self
            .lock_clusters()
            .drain()
            .filter_map(|(_, s)| match s {
                Slot::Running(r) => Some(r),
                Slot::Starting => None,
            })
            .collect();
        futures::future::join_all(running.into_iter().map(|mut r| async move {
            r.process.stop(Duration::from_secs(5)).await;
        }))
        .await;
        let etcd = self.etcd.get().and_then(|e| {
            e.process
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        });
        if let Some(mut etcd) = etcd {
            etcd.stop(Duration::from_secs(5)).await;
        }
    }

    fn lock_clusters(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.clusters.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running_parts(&self, cluster_id: &str) -> Result<(kube::Client, String)> {
        match self.lock_clusters().get(cluster_id) {
            Some(Slot::Running(r)) => Ok((r.client.clone(), r.version.clone())),
            _ => bail!("no workload server runs for cluster {cluster_id}"),
        }
    }

    /// The shared etcd, started by the first caller; concurrent callers wait for the same start.
    async fn etcd(&self) -> Result<&Etcd> {
        self.etcd.get_or_try_init(|| self.start_etcd()).await
    }

    async fn start_etcd(&self) -> Result<Etcd> {
        let logs = self.dir.join("logs");
        let port = free_port()?;
        let peer = free_port()?;
        let url = format!("http://127.0.0.1:{port}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let args = vec![
            format!("--data-dir={}", self.dir.join("etcd").display()),
            format!("--listen-client-urls={url}"),
            format!("--advertise-client-urls={url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--unsafe-no-fsync=true".into(),
            "--log-level=warn".into(),
        ];
        let mut etcd = Process::spawn("etcd", &self.assets.etcd(), &args, &logs)?;
        let waited = wait_until(
            "etcd /health",
            Duration::from_secs(30),
            Duration::from_millis(100),
            || async move { Ok(process::http_status(port, "/health").await.unwrap_or(0) == 200) },
        )
        .await;
        if let Err(e) = waited {
            etcd.ensure_running()?;
            return Err(e.context(format!(
                "last lines of {}:\n{}",
                etcd.log_path().display(),
                process::tail(etcd.log_path(), 30)
            )));
        }
        Ok(Etcd {
            url,
            process: Mutex::new(Some(etcd)),
        })
    }

    /// Starts the API server, retrying with another port if the chosen one was taken meanwhile.
    async fn launch(&self, cluster_id: &str, etcd_url: &str) -> Result<Running> {
        let dir = self.dir.join("clusters").join(cluster_id);
        let pki_dir = dir.join("pki");
        std::fs::create_dir_all(&pki_dir)
            .with_context(|| format!("creating {}", pki_dir.display()))?;
        let serving = self.ca.serving(
            &format!("workload-{cluster_id}"),
            &[
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ],
            &[KUBERNETES_SERVICE_IP.parse()?],
        )?;
        std::fs::write(pki_dir.join("apiserver.crt"), &serving.cert_pem)?;
        std::fs::write(pki_dir.join("apiserver.key"), &serving.key_pem)?;
        std::fs::write(pki_dir.join("ca.crt"), self.ca.cert_pem())?;
        let (sa_private, sa_public) = pki::signing_key_pem()?;
        std::fs::write(pki_dir.join("sa.key"), sa_private)?;
        std::fs::write(pki_dir.join("sa.pub"), sa_public)?;
        let webhook = dir.join("token-webhook.kubeconfig");
        std::fs::write(
            &webhook,
            token_webhook_kubeconfig(&format!("{}/{cluster_id}", self.token_review_base)),
        )?;
        let admin = self
            .ca
            .client("cloud-emulator-admin", Some("system:masters"))?;

        let mut last_error = None;
        for _attempt in 0..3 {
            let port = free_port()?;
            let server = format!("https://127.0.0.1:{port}");
            let kubeconfig = dir.join("admin.kubeconfig");
            write_kubeconfig(
                &kubeconfig,
                &server,
                self.ca.cert_pem(),
                &KubeconfigAuth::ClientCertificate(admin.clone()),
            )?;
            let args = apiserver_args(cluster_id, etcd_url, port, &pki_dir, &webhook);
            let process =
                Process::spawn("kube-apiserver", &self.assets.kube_apiserver(), &args, &dir)?;
            match wait_ready(process, &kubeconfig).await {
                Ok((process, client)) => {
                    let version = client
                        .apiserver_version()
                        .await
                        .context("reading the workload API server's version")?
                        .git_version;
                    return Ok(Running {
                        endpoint: WorkloadEndpoint {
                            server,
                            host: "127.0.0.1".to_string(),
                            port,
                            ca_pem: self.ca.cert_pem().to_string(),
                        },
                        client,
                        version,
                        process,
                    });
                }
                Err((e, log)) => {
                    let port_taken = log.contains("address already in use");
                    last_error = Some(e.context(format!(
                        "workload API server of cluster {cluster_id}; last lines of its log:\n{log}"
                    )));
                    if !port_taken {
                        break;
                    }
                }
            }
        }
        Err(last_error.unwrap_or_else(|| anyhow::anyhow!("workload API server did not start")))
    }
}

/// What a cloud emulator tells the kit about its clusters, so that starting their workload API
/// servers and keeping their Nodes equal to the instances is written once ([`start_for`],
/// [`sync_for`]). `key` is the cloud's key of the cluster, `id` its workload server's id.
pub trait WorkloadClusters: Send + Sync {
    /// Records how starting the server of cluster `key` went (a failure fails the cluster as the
    /// cloud fails it); returns whether the cluster still wants the server (it may have been
    /// deleted meanwhile).
    fn started(&self, key: &str, id: &str, result: &Result<WorkloadEndpoint>) -> bool;
    /// The workload server's id and the Nodes the cluster's instances register now; `None` when
    /// the cluster is gone.
    fn nodes(&self, key: &str) -> Option<(String, Vec<NodeSpec>)>;
    /// Marks the cluster's Nodes for another sync after a failed write.
    fn nodes_failed(&self, key: &str);
}

/// Starts the workload API server `id` of cluster `key` and records the outcome; a server the
/// cluster no longer wants is stopped again.
pub async fn start_for(
    servers: &WorkloadServers,
    clusters: &impl WorkloadClusters,
    key: &str,
    id: &str,
) {
    let result = servers.start_cluster(id).await;
    if let Err(e) = &result {
        tracing::error!(cluster = key, error = %format!("{e:#}"), "workload API server failed to start");
    }
    let keep = clusters.started(key, id, &result);
    if !keep && result.is_ok() {
        servers.stop_cluster(id).await;
    }
}

/// Writes the Nodes of cluster `key` from its instances, one sync at a time (`one`); a failed
/// write is retried on a later tick.
pub async fn sync_for(
    servers: &WorkloadServers,
    one: &tokio::sync::Mutex<()>,
    clusters: &impl WorkloadClusters,
    key: &str,
) {
    let _one = one.lock().await;
    let Some((id, nodes)) = clusters.nodes(key) else {
        return;
    };
    if let Err(e) = servers.set_nodes(&id, &nodes).await {
        tracing::warn!(cluster = key, error = %format!("{e:#}"), "writing Nodes failed; retrying");
        clusters.nodes_failed(key);
    }
}

/// Polls `/readyz` through the admin client until it answers `ok`, failing early if the process
/// exits. On failure returns the error and the tail of the log (the process is killed).
async fn wait_ready(
    mut process: Process,
    kubeconfig: &Path,
) -> std::result::Result<(Process, kube::Client), (anyhow::Error, String)> {
    let log = |p: &Process| process::tail(p.log_path(), 30);
    let client = match testbed::client_from(kubeconfig).await {
        Ok(c) => c,
        Err(e) => return Err((e, log(&process))),
    };
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        if let Err(e) = process.ensure_running() {
            return Err((e, log(&process)));
        }
        let last = match readyz(&client).await {
            Ok(()) => return Ok((process, client)),
            Err(e) => format!("{e:#}"),
        };
        if tokio::time::Instant::now() >= deadline {
            let tail = log(&process);
            process.stop(Duration::from_secs(1)).await;
            return Err((
                anyhow::anyhow!("not ready after {READY_TIMEOUT:?}: {last}"),
                tail,
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn readyz(client: &kube::Client) -> Result<()> {
    let request = axum::http::Request::get("/readyz").body(Vec::new())?;
    let body = client.request_text(request).await?;
    if body.trim() == "ok" {
        Ok(())
    } else {
        bail!("/readyz said {body:?}")
    }
}

fn apiserver_args(
    cluster_id: &str,
    etcd_url: &str,
    port: u16,
    pki_dir: &Path,
    webhook: &Path,
) -> Vec<String> {
    let pki = |f: &str| pki_dir.join(f).display().to_string();
    vec![
        format!("--etcd-servers={etcd_url}"),
        format!("--etcd-prefix=/workload/{cluster_id}"),
        format!("--cert-dir={}", pki_dir.display()),
        format!("--tls-cert-file={}", pki("apiserver.crt")),
        format!("--tls-private-key-file={}", pki("apiserver.key")),
        format!("--client-ca-file={}", pki("ca.crt")),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".into(),
        "--advertise-address=127.0.0.1".into(),
        format!("--service-cluster-ip-range={SERVICE_CIDR}"),
        "--allow-privileged=true".into(),
        "--disable-admission-plugins=ServiceAccount".into(),
        "--authorization-mode=RBAC".into(),
        format!(
            "--authentication-token-webhook-config-file={}",
            webhook.display()
        ),
        "--authentication-token-webhook-version=v1".into(),
        format!(
            "--authentication-token-webhook-cache-ttl={}s",
            TOKEN_CACHE_TTL.as_secs()
        ),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={}", pki("sa.pub")),
        format!("--service-account-signing-key-file={}", pki("sa.key")),
        "--endpoint-reconciler-type=none".into(),
        "--v=1".into(),
    ]
}

/// The kubeconfig the API server's token webhook client reads: `clusters` is the remote service,
/// `users` the API server's own credentials towards it (none, on loopback).
fn token_webhook_kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: token-review\n  cluster:\n    server: {server}\nusers:\n- name: kube-apiserver\n  user: {{}}\ncontexts:\n- name: webhook\n  context:\n    cluster: token-review\n    user: kube-apiserver\ncurrent-context: webhook\n"
    )
}

/// Letters, digits, `-`, `_` and `.` (not leading), at most 255: safe in a path, a URL and an
/// etcd prefix.
fn check_cluster_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 255
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        bail!("invalid cluster id {id:?}: use letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_are_restricted_to_path_safe_characters() {
        for ok in ["demo", "my_cluster-1", "ocid1.cluster.oc1..aaaa"] {
            assert!(check_cluster_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "..", ".hidden", "a/b", "a b", "a%2fb", &"x".repeat(256)] {
            assert!(check_cluster_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_webhook_kubeconfig_names_the_review_url() {
        let text = token_webhook_kubeconfig("http://127.0.0.1:1234/_emulator/tokenreview/demo");
        assert!(text.contains("server: http://127.0.0.1:1234/_emulator/tokenreview/demo\n"));
        assert!(text.contains("current-context: webhook"));
    }
}
