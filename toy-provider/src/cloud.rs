//! The toy cloud: managed clusters and node pools in memory, served as JSON over HTTP.
//!
//! Every cluster's "API server" is the Kubernetes API server of the workload kubeconfig given at
//! start (in tests, the management bed itself), and every running instance registers a Node
//! there, as a kubelet would, with `spec.providerID = toy://<ns>/<cluster>/<pool>/<id>`.
//! Lifecycles take about a second (scale-down instances linger three seconds in `TERMINATING`),
//! so a provider has to wait and come back.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::api;

/// Label on every Node the cloud registers (and the selector of the Nodes it manages).
pub const NODE_LABEL: &str = "toy.cluster.x-k8s.io/node";
/// Field manager of the cloud's writes to the workload cluster.
const MANAGER: &str = "toy-cloud";

const CLUSTER_DELAY: Duration = Duration::from_secs(1);
const INSTANCE_START: Duration = Duration::from_secs(1);
const INSTANCE_STOP: Duration = Duration::from_secs(3);
const HEARTBEAT: Duration = Duration::from_secs(10);
const NODE_GIVE_UP: Duration = Duration::from_secs(30);

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

    tokio::spawn(lifecycle_loop(cloud.clone()));
    tokio::spawn(node_loop(cloud.clone(), client));

    let mut out = std::io::stdout().lock();
    writeln!(out, "TOY_CLOUD=http://127.0.0.1:{port}")?;
    writeln!(out, "ready")?;
    out.flush()?;
    drop(out);
    tracing::info!(port, "toy cloud serving");
    axum::serve(listener, router(cloud)).await?;
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

fn router(cloud: Arc<Cloud>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/clusters", get(list_clusters).post(create_cluster))
        .route(
            "/clusters/{name}",
            get(describe_cluster)
                .patch(update_cluster)
                .delete(delete_cluster),
        )
        .route("/clusters/{name}/credentials", get(credentials))
        .route("/clusters/{name}/pools", get(list_pools).post(create_pool))
        .route(
            "/clusters/{name}/pools/{pool}",
            get(describe_pool).patch(update_pool).delete(delete_pool),
        )
        .route("/pools/{namespace}/{cluster}/{pool}", post(outside_scale))
        .route("/instances", get(list_instances))
        .layer(axum::middleware::from_fn_with_state(
            cloud.clone(),
            count_calls,
        ))
        .with_state(cloud)
}

/// The operation a request is (None for `/metrics` and unknown routes).
fn operation(method: &Method, path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let m = method.as_str();
    Some(match (segments.as_slice(), m) {
        (["clusters"], "GET") => "ListClusters",
        (["clusters"], "POST") => "CreateCluster",
        (["clusters", _], "GET") => "DescribeCluster",
        (["clusters", _], "PATCH") => "UpdateCluster",
        (["clusters", _], "DELETE") => "DeleteCluster",
        (["clusters", _, "credentials"], "GET") => "GetCredentials",
        (["clusters", _, "pools"], "GET") => "ListPools",
        (["clusters", _, "pools"], "POST") => "CreatePool",
        (["clusters", _, "pools", _], "GET") => "DescribePool",
        (["clusters", _, "pools", _], "PATCH") => "UpdatePool",
        (["clusters", _, "pools", _], "DELETE") => "DeletePool",
        (["pools", _, _, _], "POST") => "OutsideScale",
        _ => return None,
    })
}

/// `ok` for a 2xx answer, else `error` (a not-found is an `error`: what the suite reads as the
/// cloud confirming a deletion).
fn outcome(status: StatusCode) -> &'static str {
    if status.is_success() { "ok" } else { "error" }
}

/// Counts every call in `emulator_calls_total{operation, outcome}`.
async fn count_calls(Shared(cloud): Shared<Arc<Cloud>>, request: Request, next: Next) -> Response {
    let op = operation(request.method(), request.uri().path());
    let response = next.run(request).await;
    if let Some(op) = op {
        cloud.count(op, outcome(response.status()));
    }
    response
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(api::ErrorBody {
            error: message.into(),
        }),
    )
        .into_response()
}

fn not_found(what: &str) -> Response {
    error(StatusCode::NOT_FOUND, format!("{what} not found"))
}

fn cluster_view(name: &str, c: &ClusterRec, endpoint: &api::Endpoint) -> api::Cluster {
    api::Cluster {
        name: name.to_string(),
        tags: c.tags.clone(),
        version: c.version.clone(),
        status: c.state.as_str().to_string(),
        endpoint: (c.state != ClusterState::Creating).then(|| endpoint.clone()),
    }
}

fn provider_id(tags: &api::Tags, pool: &str, id: &str) -> String {
    format!("toy://{}/{}/{pool}/{id}", tags.namespace, tags.cluster)
}

fn pool_view(cluster: &str, c: &ClusterRec, name: &str, p: &PoolRec) -> api::Pool {
    api::Pool {
        name: name.to_string(),
        cluster: cluster.to_string(),
        desired_size: p.desired,
        status: pool_status(p).to_string(),
        instances: p
            .instances
            .iter()
            .map(|i| api::Instance {
                id: i.id.clone(),
                provider_id: provider_id(&c.tags, name, &i.id),
                state: i.state.as_str().to_string(),
            })
            .collect(),
    }
}

fn pool_settled(p: &PoolRec) -> bool {
    p.instances.len() == p.desired as usize
        && p.instances
            .iter()
            .all(|i| i.state == InstanceState::Running)
}

fn pool_status(p: &PoolRec) -> &'static str {
    if p.deleting {
        "DELETING"
    } else if pool_settled(p) {
        "ACTIVE"
    } else if p.was_active {
        "UPDATING"
    } else {
        "CREATING"
    }
}

async fn metrics(Shared(cloud): Shared<Arc<Cloud>>) -> Response {
    let calls = cloud.calls.lock().unwrap_or_else(|p| p.into_inner());
    let mut text = String::from(
        "# HELP emulator_calls_total Calls to the toy cloud by operation.\n# TYPE emulator_calls_total counter\n",
    );
    for op in api::OPERATIONS {
        let ok = calls.get(&(op, "ok")).copied().unwrap_or_default();
        text.push_str(&format!(
            "emulator_calls_total{{operation=\"{op}\",outcome=\"ok\"}} {ok}\n"
        ));
        if let Some(n) = calls.get(&(op, "error")) {
            text.push_str(&format!(
                "emulator_calls_total{{operation=\"{op}\",outcome=\"error\"}} {n}\n"
            ));
        }
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        text,
    )
        .into_response()
}

async fn list_clusters(Shared(cloud): Shared<Arc<Cloud>>) -> Response {
    let state = cloud.state();
    let list: Vec<api::Cluster> = state
        .clusters
        .iter()
        .map(|(n, c)| cluster_view(n, c, &cloud.endpoint))
        .collect();
    Json(list).into_response()
}

async fn create_cluster(
    Shared(cloud): Shared<Arc<Cloud>>,
    Json(req): Json<api::CreateCluster>,
) -> Response {
    if req.name.is_empty() {
        return error(StatusCode::BAD_REQUEST, "name is required");
    }
    let mut state = cloud.state();
    if state.clusters.contains_key(&req.name) {
        return error(
            StatusCode::CONFLICT,
            format!("cluster {} already exists", req.name),
        );
    }
    let rec = ClusterRec {
        tags: req.tags,
        version: req.version,
        pending_version: None,
        state: ClusterState::Creating,
        since: Instant::now(),
        pools: BTreeMap::new(),
    };
    let view = cluster_view(&req.name, &rec, &cloud.endpoint);
    state.clusters.insert(req.name, rec);
    (StatusCode::CREATED, Json(view)).into_response()
}

async fn describe_cluster(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let state = cloud.state();
    match state.clusters.get(&name) {
        Some(c) => Json(cluster_view(&name, c, &cloud.endpoint)).into_response(),
        None => not_found(&format!("cluster {name}")),
    }
}

async fn update_cluster(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
    Json(req): Json<api::UpdateCluster>,
) -> Response {
    let mut state = cloud.state();
    let Some(c) = state.clusters.get_mut(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    if c.state != ClusterState::Active {
        return error(
            StatusCode::CONFLICT,
            format!("cluster {name} is {}", c.state.as_str()),
        );
    }
    if req.version != c.version {
        c.pending_version = Some(req.version);
        c.state = ClusterState::Updating;
        c.since = Instant::now();
    }
    Json(cluster_view(&name, c, &cloud.endpoint)).into_response()
}

async fn delete_cluster(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let mut state = cloud.state();
    let Some(c) = state.clusters.get_mut(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    if c.state != ClusterState::Deleting {
        c.state = ClusterState::Deleting;
        c.since = Instant::now();
    }
    (
        StatusCode::ACCEPTED,
        Json(cluster_view(&name, c, &cloud.endpoint)),
    )
        .into_response()
}

async fn credentials(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let state = cloud.state();
    match state.clusters.get(&name) {
        Some(c) if c.state == ClusterState::Creating => error(
            StatusCode::CONFLICT,
            format!("cluster {name} is still CREATING"),
        ),
        Some(_) => cloud.kubeconfig.clone().into_response(),
        None => not_found(&format!("cluster {name}")),
    }
}

async fn list_pools(Shared(cloud): Shared<Arc<Cloud>>, UrlPath(name): UrlPath<String>) -> Response {
    let state = cloud.state();
    let Some(c) = state.clusters.get(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    let list: Vec<api::Pool> = c
        .pools
        .iter()
        .map(|(p, rec)| pool_view(&name, c, p, rec))
        .collect();
    Json(list).into_response()
}

/// Every instance that exists, terminating ones included (the suite's `instancesUrl`, C51).
async fn list_instances(Shared(cloud): Shared<Arc<Cloud>>) -> Response {
    let state = cloud.state();
    let instances: Vec<serde_json::Value> = state
        .clusters
        .values()
        .flat_map(|c| {
            c.pools.iter().flat_map(move |(pool, p)| {
                p.instances.iter().map(move |i| {
                    serde_json::json!({
                        "providerID": provider_id(&c.tags, pool, &i.id),
                        "state": match i.state {
                            InstanceState::Pending => "pending",
                            InstanceState::Running => "running",
                            InstanceState::Terminating => "shutting-down",
                        },
                    })
                })
            })
        })
        .collect();
    Json(serde_json::json!({ "instances": instances })).into_response()
}

fn new_instances(state: &mut State, prefix: &str, n: u32) -> Vec<InstanceRec> {
    (0..n)
        .map(|_| {
            state.next_instance += 1;
            InstanceRec {
                id: format!("i-{prefix}{:04}", state.next_instance),
                state: InstanceState::Pending,
                since: Instant::now(),
                has_node: false,
            }
        })
        .collect()
}

/// Sets a pool's desired size: new instances start PENDING, surplus ones (newest first) go
/// TERMINATING at once.
fn resize(state: &mut State, prefix: &str, cluster: &str, pool: &str, desired: u32) {
    let live = state
        .clusters
        .get(cluster)
        .and_then(|c| c.pools.get(pool))
        .map(|p| {
            p.instances
                .iter()
                .filter(|i| i.state != InstanceState::Terminating)
                .count() as u32
        })
        .unwrap_or_default();
    let added = if desired > live {
        new_instances(state, prefix, desired - live)
    } else {
        Vec::new()
    };
    let Some(p) = state
        .clusters
        .get_mut(cluster)
        .and_then(|c| c.pools.get_mut(pool))
    else {
        return;
    };
    p.desired = desired;
    p.instances.extend(added);
    let mut surplus = live.saturating_sub(desired);
    for i in p.instances.iter_mut().rev() {
        if surplus == 0 {
            break;
        }
        if i.state != InstanceState::Terminating {
            i.state = InstanceState::Terminating;
            i.since = Instant::now();
            surplus -= 1;
        }
    }
}

async fn create_pool(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
    Json(req): Json<api::CreatePool>,
) -> Response {
    let mut state = cloud.state();
    match state.clusters.get(&name) {
        None => return not_found(&format!("cluster {name}")),
        Some(c) if c.state == ClusterState::Creating || c.state == ClusterState::Deleting => {
            return error(
                StatusCode::CONFLICT,
                format!("cluster {name} is {}", c.state.as_str()),
            );
        }
        Some(c) if c.pools.contains_key(&req.name) => {
            return error(
                StatusCode::CONFLICT,
                format!("pool {} already exists in cluster {name}", req.name),
            );
        }
        Some(_) => {}
    }
    let instances = new_instances(&mut state, &cloud.instance_prefix, req.desired_size);
    let Some(c) = state.clusters.get_mut(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    let rec = PoolRec {
        desired: req.desired_size,
        deleting: false,
        was_active: false,
        instances,
    };
    let view = pool_view(&name, c, &req.name, &rec);
    c.pools.insert(req.name, rec);
    (StatusCode::CREATED, Json(view)).into_response()
}

async fn describe_pool(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath((name, pool)): UrlPath<(String, String)>,
) -> Response {
    let state = cloud.state();
    let Some(c) = state.clusters.get(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    match c.pools.get(&pool) {
        Some(p) => Json(pool_view(&name, c, &pool, p)).into_response(),
        None => not_found(&format!("pool {pool}")),
    }
}

fn scale(cloud: &Cloud, name: &str, pool: &str, desired: u32) -> Response {
    let mut state = cloud.state();
    match state.clusters.get(name).map(|c| c.pools.get(pool)) {
        None => return not_found(&format!("cluster {name}")),
        Some(None) => return not_found(&format!("pool {pool}")),
        Some(Some(p)) if p.deleting => {
            return error(StatusCode::CONFLICT, format!("pool {pool} is DELETING"));
        }
        Some(Some(_)) => {}
    }
    resize(&mut state, &cloud.instance_prefix, name, pool, desired);
    match state.clusters.get(name) {
        Some(c) => match c.pools.get(pool) {
            Some(p) => Json(pool_view(name, c, pool, p)).into_response(),
            None => not_found(&format!("pool {pool}")),
        },
        None => not_found(&format!("cluster {name}")),
    }
}

async fn update_pool(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath((name, pool)): UrlPath<(String, String)>,
    Json(req): Json<api::ScalePool>,
) -> Response {
    scale(&cloud, &name, &pool, req.desired_size)
}

async fn outside_scale(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath((namespace, cluster, pool)): UrlPath<(String, String, String)>,
    Json(req): Json<api::ScalePool>,
) -> Response {
    let name = {
        let state = cloud.state();
        state
            .clusters
            .iter()
            .find(|(_, c)| {
                c.tags.namespace == namespace
                    && c.tags.cluster == cluster
                    && c.state != ClusterState::Deleting
                    && c.pools.contains_key(&pool)
            })
            .map(|(n, _)| n.clone())
    };
    match name {
        Some(name) => scale(&cloud, &name, &pool, req.desired_size),
        None => not_found(&format!("pool {pool} of cluster {namespace}/{cluster}")),
    }
}

async fn delete_pool(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath((name, pool)): UrlPath<(String, String)>,
) -> Response {
    let mut state = cloud.state();
    let Some(c) = state.clusters.get_mut(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    let Some(p) = c.pools.get_mut(&pool) else {
        return not_found(&format!("pool {pool}"));
    };
    if !p.deleting {
        p.deleting = true;
        for i in &mut p.instances {
            if i.state != InstanceState::Terminating {
                i.state = InstanceState::Terminating;
                i.since = Instant::now();
            }
        }
    }
    let Some(p) = c.pools.get(&pool) else {
        return not_found(&format!("pool {pool}"));
    };
    let view = pool_view(&name, c, &pool, p);
    (StatusCode::ACCEPTED, Json(view)).into_response()
}

/// Whether a terminating instance has stopped (its Node must go).
fn stopped(i: &InstanceRec, now: Instant) -> bool {
    i.state == InstanceState::Terminating && now.duration_since(i.since) >= INSTANCE_STOP
}

/// Whether a stopped instance can leave the API: its Node is gone (or the workload cluster has
/// been unreachable for half a minute).
fn instance_gone(i: &InstanceRec, now: Instant) -> bool {
    stopped(i, now) && (!i.has_node || now.duration_since(i.since) >= INSTANCE_STOP + NODE_GIVE_UP)
}

/// Moves every lifecycle forward: the only place time passes in the cloud.
fn advance(state: &mut State, now: Instant) {
    state.clusters.retain(|_, c| {
        !(c.state == ClusterState::Deleting
            && now.duration_since(c.since) >= CLUSTER_DELAY
            && c.pools.is_empty())
    });
    for c in state.clusters.values_mut() {
        match c.state {
            ClusterState::Creating if now.duration_since(c.since) >= CLUSTER_DELAY => {
                c.state = ClusterState::Active;
            }
            ClusterState::Updating if now.duration_since(c.since) >= CLUSTER_DELAY => {
                if let Some(v) = c.pending_version.take() {
                    c.version = v;
                }
                c.state = ClusterState::Active;
            }
            ClusterState::Deleting => {
                for p in c.pools.values_mut() {
                    p.deleting = true;
                    for i in &mut p.instances {
                        if i.state != InstanceState::Terminating {
                            i.state = InstanceState::Terminating;
                            i.since = now;
                        }
                    }
                }
            }
            _ => {}
        }
        for p in c.pools.values_mut() {
            p.instances.retain(|i| !instance_gone(i, now));
            for i in &mut p.instances {
                if i.state == InstanceState::Pending
                    && now.duration_since(i.since) >= INSTANCE_START
                {
                    i.state = InstanceState::Running;
                }
            }
            if !p.deleting && pool_settled(p) {
                p.was_active = true;
            }
        }
        c.pools
            .retain(|_, p| !(p.deleting && p.instances.is_empty()));
    }
}

async fn lifecycle_loop(cloud: Arc<Cloud>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
        advance(&mut cloud.state(), Instant::now());
    }
}

/// A Node the cloud wants registered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct WantedNode {
    name: String,
    provider_id: String,
    version: String,
    cluster: String,
    pool: String,
    instance: String,
}

/// Node names are DNS subdomains: keep `[a-z0-9.-]`.
fn node_name(namespace: &str, pool: &str, id: &str) -> String {
    format!("toy-{namespace}-{pool}-{id}")
        .to_lowercase()
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '-' || ch == '.' {
                ch
            } else {
                '-'
            }
        })
        .collect()
}

/// Nodes of RUNNING instances and of TERMINATING ones that have not stopped yet.
fn wanted_nodes(state: &State, now: Instant) -> BTreeMap<String, WantedNode> {
    let mut out = BTreeMap::new();
    for (cluster, c) in &state.clusters {
        for (pool, p) in &c.pools {
            for i in &p.instances {
                if i.state == InstanceState::Pending || stopped(i, now) {
                    continue;
                }
                let name = node_name(&c.tags.namespace, pool, &i.id);
                out.insert(
                    name.clone(),
                    WantedNode {
                        name,
                        provider_id: provider_id(&c.tags, pool, &i.id),
                        version: c.version.clone(),
                        cluster: cluster.clone(),
                        pool: pool.clone(),
                        instance: i.id.clone(),
                    },
                );
            }
        }
    }
    out
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn ready_status(version: &str, transition: bool) -> Value {
    let now = now_rfc3339();
    let mut ready = json!({
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "toy instance is running",
        "lastHeartbeatTime": now,
    });
    if transition {
        ready["lastTransitionTime"] = now.into();
        return json!({"status": {
            "conditions": [ready],
            "nodeInfo": {
                "kubeletVersion": version,
                "kubeProxyVersion": "",
                "containerRuntimeVersion": "toy://1.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "osImage": "Toy OS",
                "kernelVersion": "toy",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        }});
    }
    json!({"status": {"conditions": [ready]}})
}

async fn register_node(nodes: &Api<Node>, want: &WantedNode) -> Result<()> {
    let node: Node = serde_json::from_value(json!({
        "metadata": {
            "name": want.name,
            "labels": {
                NODE_LABEL: "true",
                "kubernetes.io/hostname": want.name,
                "toy.cluster.x-k8s.io/pool": want.pool,
            },
        },
        "spec": {"providerID": want.provider_id},
    }))?;
    match nodes.create(&PostParams::default(), &node).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let params = PatchParams {
        field_manager: Some(MANAGER.into()),
        ..PatchParams::default()
    };
    nodes
        .patch_status(
            &want.name,
            &params,
            &Patch::Strategic(ready_status(&want.version, true)),
        )
        .await?;
    Ok(())
}

/// Keeps the workload's Nodes equal to the running instances, and their heartbeats fresh.
/// Node names of stopped instances that still count as having a Node.
fn stopped_nodes(state: &State, now: Instant) -> Vec<String> {
    let mut out = Vec::new();
    for c in state.clusters.values() {
        for (pool, p) in &c.pools {
            for i in &p.instances {
                if i.has_node && stopped(i, now) {
                    out.push(node_name(&c.tags.namespace, pool, &i.id));
                }
            }
        }
    }
    out
}

/// Records whether instances have a Node (by Node name).
fn mark_nodes(cloud: &Cloud, names: &BTreeSet<String>, has_node: bool) {
    if names.is_empty() {
        return;
    }
    let mut state = cloud.state();
    for c in state.clusters.values_mut() {
        let namespace = c.tags.namespace.clone();
        for (pool, p) in &mut c.pools {
            for i in &mut p.instances {
                if names.contains(&node_name(&namespace, pool, &i.id)) {
                    i.has_node = has_node;
                }
            }
        }
    }
}

async fn node_loop(cloud: Arc<Cloud>, client: kube::Client) {
    let nodes: Api<Node> = Api::all(client);
    let mut tick = tokio::time::interval(Duration::from_millis(300));
    let mut last_beat = Instant::now();
    let mut registered: BTreeSet<String> = BTreeSet::new();
    loop {
        tick.tick().await;
        let wanted = wanted_nodes(&cloud.state(), Instant::now());
        let existing = match nodes
            .list(&ListParams::default().labels(&format!("{NODE_LABEL}=true")))
            .await
        {
            Ok(list) => list
                .items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .collect::<BTreeSet<String>>(),
            Err(e) => {
                tracing::warn!(error = %e, "listing workload Nodes");
                continue;
            }
        };
        // Register each instance's Node once (a Node someone else deletes stays deleted).
        let mut added = BTreeSet::new();
        for (name, want) in &wanted {
            if registered.contains(name) {
                continue;
            }
            match register_node(&nodes, want).await {
                Ok(()) => {
                    added.insert(name.clone());
                    tracing::info!(node = %name, provider_id = %want.provider_id, "registered Node");
                }
                Err(e) => tracing::warn!(node = %name, error = %e, "registering Node"),
            }
        }
        mark_nodes(&cloud, &added, true);
        registered.extend(added);
        let mut present = existing.clone();
        for name in existing.difference(&wanted.keys().cloned().collect()) {
            match nodes.delete(name, &DeleteParams::default()).await {
                Ok(_) => {
                    present.remove(name);
                    tracing::info!(node = %name, "removed the Node of a stopped instance");
                }
                Err(kube::Error::Api(e)) if e.code == 404 => {
                    present.remove(name);
                }
                Err(e) => tracing::warn!(node = %name, error = %e, "deleting Node"),
            }
        }
        registered.retain(|n| wanted.contains_key(n));
        // Stopped instances whose Node is gone may now leave the API.
        let gone: BTreeSet<String> = stopped_nodes(&cloud.state(), Instant::now())
            .into_iter()
            .filter(|n| !present.contains(n))
            .collect();
        mark_nodes(&cloud, &gone, false);
        if last_beat.elapsed() >= HEARTBEAT {
            last_beat = Instant::now();
            let params = PatchParams {
                field_manager: Some(MANAGER.into()),
                ..PatchParams::default()
            };
            for want in wanted.values() {
                if let Err(e) = nodes
                    .patch_status(
                        &want.name,
                        &params,
                        &Patch::Strategic(ready_status(&want.version, false)),
                    )
                    .await
                {
                    tracing::debug!(node = %want.name, error = %e, "Node heartbeat");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags() -> api::Tags {
        api::Tags {
            namespace: "ns".into(),
            cluster: "c".into(),
        }
    }

    fn state_with_pool(desired: u32) -> State {
        let mut state = State::default();
        let instances = new_instances(&mut state, "ab", desired);
        let mut pools = BTreeMap::new();
        pools.insert(
            "p".to_string(),
            PoolRec {
                desired,
                deleting: false,
                was_active: false,
                instances,
            },
        );
        state.clusters.insert(
            "ns-c".into(),
            ClusterRec {
                tags: tags(),
                version: "v1.31.0".into(),
                pending_version: None,
                state: ClusterState::Creating,
                since: Instant::now(),
                pools,
            },
        );
        state
    }

    #[test]
    fn servers_parse_into_host_and_port() {
        let e = parse_server("https://127.0.0.1:6443").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 6443));
        let e = parse_server("https://example.com/path").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("example.com", 443));
        assert!(parse_server("http://x:1").is_err());
    }

    #[test]
    fn a_cluster_becomes_active_after_a_second_and_instances_start_running() {
        let mut state = state_with_pool(2);
        let later = Instant::now() + Duration::from_millis(1100);
        advance(&mut state, later);
        let c = &state.clusters["ns-c"];
        assert_eq!(c.state, ClusterState::Active);
        assert_eq!(pool_status(&c.pools["p"]), "ACTIVE");
        assert_eq!(wanted_nodes(&state, later).len(), 2);
    }

    #[test]
    fn a_stopped_instance_leaves_the_api_only_after_its_node_is_gone() {
        let mut state = state_with_pool(2);
        let t0 = Instant::now();
        advance(&mut state, t0 + Duration::from_millis(1100));
        assert_eq!(wanted_nodes(&state, t0).len(), 2);
        for i in &mut state
            .clusters
            .get_mut("ns-c")
            .unwrap()
            .pools
            .get_mut("p")
            .unwrap()
            .instances
        {
            i.has_node = true;
        }
        resize(&mut state, "ab", "ns-c", "p", 1);
        let p = &state.clusters["ns-c"].pools["p"];
        assert_eq!(p.instances.len(), 2);
        assert_eq!(pool_status(p), "UPDATING");
        let now = Instant::now();
        assert_eq!(
            wanted_nodes(&state, now).len(),
            2,
            "the Node stays while terminating"
        );

        let stopped_at = now + INSTANCE_STOP + Duration::from_millis(100);
        advance(&mut state, stopped_at);
        assert_eq!(
            wanted_nodes(&state, stopped_at).len(),
            1,
            "the stopped instance's Node must go"
        );
        assert_eq!(
            state.clusters["ns-c"].pools["p"].instances.len(),
            2,
            "the instance stays until its Node is gone"
        );
        assert_eq!(stopped_nodes(&state, stopped_at).len(), 1);
        for i in &mut state
            .clusters
            .get_mut("ns-c")
            .unwrap()
            .pools
            .get_mut("p")
            .unwrap()
            .instances
        {
            if i.state == InstanceState::Terminating {
                i.has_node = false;
            }
        }
        advance(&mut state, stopped_at);
        assert_eq!(state.clusters["ns-c"].pools["p"].instances.len(), 1);
        assert_eq!(pool_status(&state.clusters["ns-c"].pools["p"]), "ACTIVE");
    }

    #[test]
    fn requests_map_to_operations() {
        assert_eq!(operation(&Method::POST, "/clusters"), Some("CreateCluster"));
        assert_eq!(
            operation(&Method::GET, "/clusters/a/credentials"),
            Some("GetCredentials")
        );
        assert_eq!(
            operation(&Method::PATCH, "/clusters/a/pools/p"),
            Some("UpdatePool")
        );
        assert_eq!(
            operation(&Method::POST, "/pools/n/c/p"),
            Some("OutsideScale")
        );
        assert_eq!(operation(&Method::GET, "/metrics"), None);
    }

    #[test]
    fn node_names_are_dns_subdomains() {
        assert_eq!(node_name("NS", "p_0", "i-1"), "toy-ns-p-0-i-1");
    }
}
