//! The toy cloud's HTTP API: its routes, the handlers that read and change the model, and the
//! count of every call by operation and outcome served on `/metrics`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use tokio::time::Instant;

use super::lifecycle::{new_instances, pool_status, resize};
use super::{Cloud, ClusterRec, ClusterState, InstanceState, PoolRec, provider_id};
use crate::api;

pub(super) fn router(cloud: Arc<Cloud>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/clusters", get(list_clusters).post(create_cluster))
        .route(
            "/clusters/{name}",
            get(describe_cluster)
                .patch(update_cluster)
                .delete(delete_cluster),
        )
        .route("/clusters/{name}/tags", put(tag_cluster))
        .route("/clusters/{name}/credentials", get(credentials))
        .route("/clusters/{name}/pools", get(list_pools).post(create_pool))
        .route(
            "/clusters/{name}/pools/{pool}",
            get(describe_pool).patch(update_pool).delete(delete_pool),
        )
        .route("/pools/{namespace}/{cluster}/{pool}", post(outside_scale))
        .route("/instances", get(list_instances))
        .route("/networks", post(create_network))
        .route(
            "/networks/{name}",
            get(describe_network).delete(delete_network),
        )
        .route("/inventory", get(inventory))
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
        (["clusters", _, "tags"], "PUT") => "TagCluster",
        (["clusters", _, "credentials"], "GET") => "GetCredentials",
        (["clusters", _, "pools"], "GET") => "ListPools",
        (["clusters", _, "pools"], "POST") => "CreatePool",
        (["clusters", _, "pools", _], "GET") => "DescribePool",
        (["clusters", _, "pools", _], "PATCH") => "UpdatePool",
        (["clusters", _, "pools", _], "DELETE") => "DeletePool",
        (["pools", _, _, _], "POST") => "OutsideScale",
        (["networks"], "POST") => "CreateNetwork",
        (["networks", _], "GET") => "DescribeNetwork",
        (["networks", _], "DELETE") => "DeleteNetwork",
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

async fn tag_cluster(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
    Json(tags): Json<api::Tags>,
) -> Response {
    let mut state = cloud.state();
    let Some(c) = state.clusters.get_mut(&name) else {
        return not_found(&format!("cluster {name}"));
    };
    c.tags = tags;
    Json(cluster_view(&name, c, &cloud.endpoint)).into_response()
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

async fn create_network(
    Shared(cloud): Shared<Arc<Cloud>>,
    Json(req): Json<api::CreateNetwork>,
) -> Response {
    let mut state = cloud.state();
    if state.networks.contains_key(&req.name) {
        return error(
            StatusCode::CONFLICT,
            format!("network {} already exists", req.name),
        );
    }
    state.networks.insert(req.name.clone(), req.tags.clone());
    let network = api::Network {
        name: req.name,
        tags: req.tags,
    };
    (StatusCode::CREATED, Json(network)).into_response()
}

async fn describe_network(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    match cloud.state().networks.get(&name) {
        Some(tags) => Json(api::Network {
            name,
            tags: tags.clone(),
        })
        .into_response(),
        None => not_found(&format!("network {name}")),
    }
}

async fn delete_network(
    Shared(cloud): Shared<Arc<Cloud>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    match cloud.state().networks.remove(&name) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => not_found(&format!("network {name}")),
    }
}

/// Every cluster, pool and network, for the conformance suite's leak check.
async fn inventory(Shared(cloud): Shared<Arc<Cloud>>) -> Response {
    let state = cloud.state();
    // A pool's id is `<cluster>/<pool>`; a cluster's and a network's, their name.
    let item =
        |kind: &str, parent: &str, name: &str, tags: &api::Tags, state: &str| api::InventoryItem {
            kind: kind.into(),
            id: match parent {
                "" => name.to_string(),
                _ => format!("{parent}/{name}"),
            },
            name: name.into(),
            parent: parent.into(),
            owner: (!tags.is_none()).then(|| format!("{}/{}", tags.namespace, tags.cluster)),
            state: state.into(),
        };
    let mut resources = Vec::new();
    for (name, c) in &state.clusters {
        resources.push(item("toy:cluster", "", name, &c.tags, c.state.as_str()));
        for (pool, p) in &c.pools {
            resources.push(item("toy:pool", name, pool, &c.tags, pool_status(p)));
        }
    }
    for (name, tags) in &state.networks {
        resources.push(item("toy:network", "", name, tags, "AVAILABLE"));
    }
    Json(api::Inventory { resources }).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            operation(&Method::DELETE, "/networks/n"),
            Some("DeleteNetwork")
        );
        assert_eq!(operation(&Method::GET, "/metrics"), None);
        assert_eq!(operation(&Method::GET, "/inventory"), None);
    }
}
