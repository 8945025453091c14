//! Kubernetes Engine API v1: clusters, node pools, operations and the server config, under
//! `/v1/projects/{project}/locations/{location}/…`.
//!
//! This module reads a path into its [`Call`] and serves it, with the operations every change
//! starts; [`clusters`] holds the clusters' methods, [`nodepools`] the node pools'.

mod clusters;
mod nodepools;

use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::catalog;
use super::error::GoogleError;
use super::render;
use super::state::{Cluster, Effect, OpStatus, Operation, Scope, State, cluster_key};
use super::validate;
use super::{Gke, hex, now_rfc3339};

/// One Kubernetes Engine method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `GET …/serverConfig`.
    GetServerConfig,
    /// `GET …/clusters`.
    ListClusters,
    /// `POST …/clusters`.
    CreateCluster,
    /// `GET …/clusters/{c}`.
    GetCluster,
    /// `PUT …/clusters/{c}`.
    UpdateCluster,
    /// `DELETE …/clusters/{c}`.
    DeleteCluster,
    /// `POST …/clusters/{c}:setResourceLabels`.
    SetLabels,
    /// `GET …/nodePools`.
    ListNodePools,
    /// `POST …/nodePools`.
    CreateNodePool,
    /// `GET …/nodePools/{np}`.
    GetNodePool,
    /// `PUT …/nodePools/{np}`.
    UpdateNodePool,
    /// `DELETE …/nodePools/{np}`.
    DeleteNodePool,
    /// `POST …/nodePools/{np}:setSize`.
    SetNodePoolSize,
    /// `POST …/nodePools/{np}:setAutoscaling`.
    SetNodePoolAutoscaling,
    /// `GET …/operations`.
    ListOperations,
    /// `GET …/operations/{op}`.
    GetOperation,
    /// A method GKE has that is not emulated.
    Unimplemented,
}

impl Call {
    /// The RPC's name (what the call counters use).
    pub fn rpc(self) -> &'static str {
        match self {
            Self::GetServerConfig => "GetServerConfig",
            Self::ListClusters => "ListClusters",
            Self::CreateCluster => "CreateCluster",
            Self::GetCluster => "GetCluster",
            Self::UpdateCluster => "UpdateCluster",
            Self::DeleteCluster => "DeleteCluster",
            Self::SetLabels => "SetLabels",
            Self::ListNodePools => "ListNodePools",
            Self::CreateNodePool => "CreateNodePool",
            Self::GetNodePool => "GetNodePool",
            Self::UpdateNodePool => "UpdateNodePool",
            Self::DeleteNodePool => "DeleteNodePool",
            Self::SetNodePoolSize => "SetNodePoolSize",
            Self::SetNodePoolAutoscaling => "SetNodePoolAutoscaling",
            Self::ListOperations => "ListOperations",
            Self::GetOperation => "GetOperation",
            Self::Unimplemented => "Unimplemented",
        }
    }

    /// The IAM permission it needs.
    pub fn permission(self) -> &'static str {
        match self {
            Self::GetServerConfig => "container.clusters.list",
            Self::ListClusters | Self::ListNodePools => "container.clusters.list",
            Self::CreateCluster => "container.clusters.create",
            Self::GetCluster | Self::GetNodePool => "container.clusters.get",
            Self::DeleteCluster => "container.clusters.delete",
            Self::ListOperations => "container.operations.list",
            Self::GetOperation => "container.operations.get",
            _ => "container.clusters.update",
        }
    }
}

/// What a path names.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// Project id.
    pub project: String,
    /// Location (`-` for all, in lists).
    pub location: String,
    /// Cluster.
    pub cluster: String,
    /// Node pool.
    pub pool: String,
    /// Operation.
    pub operation: String,
}

/// Reads a `/v1/…` path (segments after `v1`).
pub fn parse(method: &Method, segs: &[&str]) -> Option<(Call, Target)> {
    let ["projects", project, "locations", location, rest @ ..] = segs else {
        return None;
    };
    let mut t = Target {
        project: (*project).to_string(),
        location: (*location).to_string(),
        ..Target::default()
    };
    let split = |s: &str| match s.split_once(':') {
        Some((name, verb)) => (name.to_string(), Some(verb.to_string())),
        None => (s.to_string(), None),
    };
    let call = match rest {
        ["serverConfig"] if method == Method::GET => Call::GetServerConfig,
        ["clusters"] if method == Method::GET => Call::ListClusters,
        ["clusters"] if method == Method::POST => Call::CreateCluster,
        ["clusters", c] => {
            let (name, verb) = split(c);
            t.cluster = name;
            match (method.clone(), verb.as_deref()) {
                (Method::GET, None) => Call::GetCluster,
                (Method::PUT, None) => Call::UpdateCluster,
                (Method::DELETE, None) => Call::DeleteCluster,
                (Method::POST, Some("setResourceLabels")) => Call::SetLabels,
                (Method::POST, Some(_)) => Call::Unimplemented,
                _ => return None,
            }
        }
        ["clusters", c, "nodePools"] => {
            t.cluster = (*c).to_string();
            match *method {
                Method::GET => Call::ListNodePools,
                Method::POST => Call::CreateNodePool,
                _ => return None,
            }
        }
        ["clusters", c, "nodePools", np] => {
            t.cluster = (*c).to_string();
            let (name, verb) = split(np);
            t.pool = name;
            match (method.clone(), verb.as_deref()) {
                (Method::GET, None) => Call::GetNodePool,
                (Method::PUT, None) => Call::UpdateNodePool,
                (Method::DELETE, None) => Call::DeleteNodePool,
                (Method::POST, Some("setSize")) => Call::SetNodePoolSize,
                (Method::POST, Some("setAutoscaling")) => Call::SetNodePoolAutoscaling,
                (Method::POST, Some(_)) => Call::Unimplemented,
                _ => return None,
            }
        }
        ["operations"] if method == Method::GET => Call::ListOperations,
        ["operations", op] => {
            let (name, verb) = split(op);
            t.operation = name;
            match (method.clone(), verb) {
                (Method::GET, None) => Call::GetOperation,
                (Method::POST, Some(_)) => Call::Unimplemented,
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((call, t))
}

/// `projects/p/locations/l/clusters/c`.
fn cluster_path(t: &Target) -> String {
    format!(
        "projects/{}/locations/{}/clusters/{}",
        t.project, t.location, t.cluster
    )
}

fn cluster_not_found(t: &Target) -> GoogleError {
    GoogleError::not_found(format!("Not found: {}.", cluster_path(t)))
}

fn pool_not_found(t: &Target) -> GoogleError {
    GoogleError::not_found(format!(
        "Not found: {}/nodePools/{}.",
        cluster_path(t),
        t.pool
    ))
}

/// GKE's answer to a change while another operation runs on the cluster.
fn ensure_idle(c: &Cluster) -> Result<(), GoogleError> {
    match &c.busy {
        Some(op) => Err(GoogleError::failed_precondition(format!(
            "Cluster is running incompatible operation {op}."
        ))),
        None => Ok(()),
    }
}

/// Compute Engine's quota error (how GKE reports it).
pub fn cpu_quota_error(limit: u32, region: &str) -> GoogleError {
    GoogleError {
        http: axum::http::StatusCode::FORBIDDEN,
        status: "RESOURCE_EXHAUSTED",
        message: format!(
            "Google Compute Engine: Quota 'CPUS' exceeded. Limit: {limit}.0 in region {region}."
        ),
        reason: Some("quotaExceeded"),
        retry_after: None,
    }
}

impl Gke {
    /// Serves one Kubernetes Engine call.
    pub(super) fn container_call(
        &self,
        call: Call,
        t: &Target,
        body: Value,
    ) -> Result<Value, GoogleError> {
        if t.location != "-" {
            validate::location(&t.location)?;
        }
        match call {
            Call::GetServerConfig => Ok(catalog::server_config()),
            Call::ListClusters => Ok(self.list_clusters(t)),
            Call::CreateCluster => self.create_cluster(t, body),
            Call::GetCluster => self.read_cluster(t, render::cluster),
            Call::UpdateCluster => self.update_cluster(t, body),
            Call::DeleteCluster => self.delete_cluster(t),
            Call::SetLabels => self.set_labels(t, body),
            Call::ListNodePools => self.read_cluster(t, |c| {
                json!({ "nodePools": c.pools.iter().map(|p| render::pool(c, p)).collect::<Vec<_>>() })
            }),
            Call::CreateNodePool => self.create_pool(t, body),
            Call::GetNodePool => {
                let st = self.lock();
                let c = st
                    .clusters
                    .get(&cluster_key(&t.project, &t.location, &t.cluster))
                    .ok_or_else(|| cluster_not_found(t))?;
                let p = c.pool(&t.pool).ok_or_else(|| pool_not_found(t))?;
                Ok(render::pool(c, p))
            }
            Call::UpdateNodePool => self.update_pool(t, body),
            Call::DeleteNodePool => self.delete_pool(t),
            Call::SetNodePoolSize => self.set_size(t, body),
            Call::SetNodePoolAutoscaling => self.set_autoscaling(t, body),
            Call::ListOperations => {
                let st = self.lock();
                let ops: Vec<Value> = st
                    .operations
                    .values()
                    .filter(|o| matches!(o.scope, Scope::Container { .. }))
                    .filter(|o| o.project == t.project && (t.location == "-" || o.location == t.location))
                    .map(render::container_operation)
                    .collect();
                Ok(json!({ "operations": ops }))
            }
            Call::GetOperation => {
                let st = self.lock();
                st.operations
                    .get(&t.operation)
                    .filter(|o| matches!(o.scope, Scope::Container { .. }))
                    .filter(|o| o.project == t.project && (t.location == "-" || o.location == t.location))
                    .map(render::container_operation)
                    .ok_or_else(|| {
                        GoogleError::not_found(format!(
                            "Not found: projects/{}/locations/{}/operations/{}.",
                            t.project, t.location, t.operation
                        ))
                    })
            }
            Call::Unimplemented => Err(GoogleError::unimplemented("This method")),
        }
    }

    fn list_clusters(&self, t: &Target) -> Value {
        let st = self.lock();
        let clusters: Vec<Value> = st
            .clusters
            .values()
            .filter(|c| c.project == t.project && (t.location == "-" || c.location == t.location))
            .map(render::cluster)
            .collect();
        json!({ "clusters": clusters })
    }

    fn read_cluster(
        &self,
        t: &Target,
        f: impl FnOnce(&Cluster) -> Value,
    ) -> Result<Value, GoogleError> {
        let st = self.lock();
        st.clusters
            .get(&cluster_key(&t.project, &t.location, &t.cluster))
            .map(f)
            .ok_or_else(|| cluster_not_found(t))
    }

    /// Starts an operation on a cluster; it blocks the cluster until done.
    fn start(
        &self,
        st: &mut State,
        c_key: &str,
        kind: &'static str,
        target_link: String,
        delay: Duration,
        effect: Effect,
    ) -> Value {
        let now = Instant::now();
        let (project, location) = st
            .clusters
            .get(c_key)
            .map(|c| (c.project.clone(), c.location.clone()))
            .unwrap_or_default();
        let name = format!(
            "operation-{}-{}",
            jiff::Timestamp::now().as_millisecond(),
            hex(8)
        );
        let op = Operation {
            name: name.clone(),
            project,
            location,
            kind,
            target_link,
            scope: Scope::Container {
                cluster: c_key.to_string(),
            },
            status: OpStatus::Pending,
            start_time: now_rfc3339(),
            end_time: None,
            running_at: now + (delay / 4).min(Duration::from_millis(500)),
            done_at: now + delay,
            held: false,
            error: None,
            effect: Some(effect),
        };
        let rendered = render::container_operation(&op);
        st.operations.insert(name.clone(), op);
        if let Some(c) = st.clusters.get_mut(c_key) {
            c.busy = Some(name);
        }
        rendered
    }
}
