//! The toy cloud: managed clusters and node pools in memory, served as JSON over HTTP.
//!
//! Every cluster's "API server" is the Kubernetes API server of the workload kubeconfig given at
//! start (in tests, the management bed itself), and every running instance registers a Node
//! there, as a kubelet would, with `spec.providerID = toy://<ns>/<cluster>/<pool>/<id>`.
//! Lifecycles take about a second (scale-down instances linger three seconds in `TERMINATING`),
//! so a provider has to wait and come back.
//!
//! This module holds the cloud's model (clusters, pools, instances) and starts it; `lifecycle`
//! moves that model forward in time, `http` serves it, and `nodes` keeps the workload cluster's
//! Nodes in step with the running instances.

mod http;
mod lifecycle;
mod nodes;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::time::Instant;

use crate::api;

/// Label on every Node the cloud registers (and the selector of the Nodes it manages).
pub const NODE_LABEL: &str = "toy.cluster.x-k8s.io/node";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClusterState {
    Creating,
    Active,
    Updating,
    Deleting,
}

impl ClusterState {
    fn as_str(self) -> &'static str {
        match self {
            ClusterState::Creating => "CREATING",
            ClusterState::Active => "ACTIVE",
            ClusterState::Updating => "UPDATING",
            ClusterState::Deleting => "DELETING",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InstanceState {
    Pending,
    Running,
    Terminating,
}

impl InstanceState {
    fn as_str(self) -> &'static str {
        match self {
            InstanceState::Pending => "PENDING",
            InstanceState::Running => "RUNNING",
            InstanceState::Terminating => "TERMINATING",
        }
    }
}

#[derive(Debug)]
struct InstanceRec {
    id: String,
    state: InstanceState,
    since: Instant,
    /// Whether its Node is registered in the workload cluster. A terminated instance leaves the
    /// API only once its Node is gone, so no one sees an instance vanish while its Node stays.
    has_node: bool,
}

#[derive(Debug)]
struct PoolRec {
    desired: u32,
    deleting: bool,
    /// Whether the pool has once reached its size (then it reports UPDATING, not CREATING).
    was_active: bool,
    instances: Vec<InstanceRec>,
}

#[derive(Debug)]
struct ClusterRec {
    tags: api::Tags,
    version: String,
    pending_version: Option<String>,
    state: ClusterState,
    since: Instant,
    pools: BTreeMap<String, PoolRec>,
}

#[derive(Debug, Default)]
struct State {
    clusters: BTreeMap<String, ClusterRec>,
    /// Networks by name, with their owner tags (made and deleted at once).
    networks: BTreeMap<String, api::Tags>,
    next_instance: u64,
}

/// The cloud's shared state.
struct Cloud {
    state: Mutex<State>,
    /// Calls by operation and outcome (`ok`, `error`).
    calls: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    endpoint: api::Endpoint,
    kubeconfig: String,
    instance_prefix: String,
}

impl Cloud {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, op: &'static str, outcome: &'static str) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        *calls.entry((op, outcome)).or_default() += 1;
    }
}

/// Options of `toy-provider cloud`.
#[derive(Debug, Clone)]
pub struct CloudOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Kubeconfig of the API server every cluster stands for.
    pub workload_kubeconfig: PathBuf,
}

/// Runs the cloud until the process is stopped. Prints `TOY_CLOUD=<url>` and `ready` on stdout
/// once it serves.
///
/// # Errors
/// When the kubeconfig cannot be read or the port cannot be bound.
pub async fn serve(options: CloudOptions) -> Result<()> {
    let kubeconfig = std::fs::read_to_string(&options.workload_kubeconfig)
        .with_context(|| format!("reading {}", options.workload_kubeconfig.display()))?;
    let endpoint = kubeconfig_endpoint(&kubeconfig)?;
    let client = client_from(&options.workload_kubeconfig).await?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let cloud = Arc::new(Cloud {
        state: Mutex::new(State::default()),
        calls: Mutex::new(BTreeMap::new()),
        endpoint,
        kubeconfig,
        instance_prefix: format!("{:04x}", nanos & 0xffff),
    });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
    let port = listener.local_addr()?.port();

    tokio::spawn(lifecycle::lifecycle_loop(cloud.clone()));
    tokio::spawn(nodes::node_loop(cloud.clone(), client));

    let mut out = std::io::stdout().lock();
    writeln!(out, "TOY_CLOUD=http://127.0.0.1:{port}")?;
    writeln!(out, "ready")?;
    out.flush()?;
    drop(out);
    tracing::info!(port, "toy cloud serving");
    axum::serve(listener, http::router(cloud)).await?;
    Ok(())
}

async fn client_from(path: &Path) -> Result<kube::Client> {
    let raw = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let config =
        kube::Config::from_custom_kubeconfig(raw, &kube::config::KubeConfigOptions::default())
            .await?;
    Ok(kube::Client::try_from(config)?)
}

/// The host and port of the (current context's) server in a kubeconfig.
///
/// # Errors
/// When the kubeconfig has no parsable `https://host:port` server.
pub fn kubeconfig_endpoint(text: &str) -> Result<api::Endpoint> {
    let doc: Value = serde_saphyr::from_str(text).context("parsing the workload kubeconfig")?;
    let current = doc["current-context"].as_str().unwrap_or_default();
    let cluster_name = doc["contexts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == current)
        .and_then(|c| c["context"]["cluster"].as_str());
    let clusters = doc["clusters"].as_array().cloned().unwrap_or_default();
    let cluster = clusters
        .iter()
        .find(|c| Some(c["name"].as_str().unwrap_or_default()) == cluster_name)
        .or_else(|| clusters.first())
        .context("the workload kubeconfig has no cluster")?;
    let server = cluster["cluster"]["server"]
        .as_str()
        .context("the workload kubeconfig's cluster has no server")?;
    parse_server(server)
}

/// `https://host:port[/...]` → host and port (443 when absent).
///
/// # Errors
/// When the URL is not of that shape.
pub fn parse_server(server: &str) -> Result<api::Endpoint> {
    let rest = server
        .strip_prefix("https://")
        .with_context(|| format!("server {server:?} is not an https URL"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            (h.to_string(), p.parse::<u16>().context("bad port")?)
        }
        _ => (authority.to_string(), 443),
    };
    if host.is_empty() {
        bail!("server {server:?} has no host");
    }
    Ok(api::Endpoint { host, port })
}

fn provider_id(tags: &api::Tags, pool: &str, id: &str) -> String {
    format!("toy://{}/{}/{pool}/{id}", tags.namespace, tags.cluster)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_parse_into_host_and_port() {
        let e = parse_server("https://127.0.0.1:6443").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 6443));
        let e = parse_server("https://example.com/path").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("example.com", 443));
        assert!(parse_server("http://x:1").is_err());
    }
}
