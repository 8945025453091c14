//! Clusters: CreateCluster, DescribeCluster, ListClusters, DeleteCluster, UpdateClusterVersion,
//! UpdateClusterConfig, DescribeUpdate and ListUpdates.
//!
//! This module holds the requests' wire types, the checks and lookups the calls share, and the
//! reads and the delete; [`create`] holds CreateCluster, [`updates`] the cluster updates.

mod create;
mod updates;

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::Eks;
use super::api::{Call, paginate};
use super::error::EksError;
use super::state::{Cluster, State, Status, Tags, Update};
use crate::kit::Delays;
use crate::kit::idempotency::{Replay, fingerprint};

/// The log types EKS knows.
pub const LOG_TYPES: [&str; 5] = [
    "api",
    "audit",
    "authenticator",
    "controllerManager",
    "scheduler",
];

const AUTH_MODES: [&str; 3] = ["CONFIG_MAP", "API_AND_CONFIG_MAP", "API"];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateClusterRequest {
    name: Option<String>,
    version: Option<String>,
    role_arn: Option<String>,
    resources_vpc_config: Option<VpcRequest>,
    kubernetes_network_config: Option<NetworkRequest>,
    logging: Option<LoggingRequest>,
    client_request_token: Option<String>,
    tags: Option<Tags>,
    access_config: Option<AccessConfigRequest>,
    upgrade_policy: Option<UpgradePolicyRequest>,
    encryption_config: Option<Value>,
    zonal_shift_config: Option<Value>,
    deletion_protection: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VpcRequest {
    subnet_ids: Option<Vec<String>>,
    security_group_ids: Option<Vec<String>>,
    endpoint_public_access: Option<bool>,
    endpoint_private_access: Option<bool>,
    public_access_cidrs: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NetworkRequest {
    service_ipv4_cidr: Option<String>,
    ip_family: Option<String>,
    elastic_load_balancing: Option<Value>,
}

/// `logging` of a request.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingRequest {
    cluster_logging: Option<Vec<LogSetup>>,
}

#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct LogSetup {
    types: Option<Vec<String>>,
    enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccessConfigRequest {
    bootstrap_cluster_creator_admin_permissions: Option<bool>,
    authentication_mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpgradePolicyRequest {
    support_type: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateVersionRequest {
    version: Option<String>,
    client_request_token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateConfigRequest {
    resources_vpc_config: Option<VpcRequest>,
    logging: Option<LoggingRequest>,
    access_config: Option<AccessConfigRequest>,
    upgrade_policy: Option<UpgradePolicyRequest>,
    client_request_token: Option<String>,
}

/// `No cluster found for name: <name>.`
pub fn cluster_not_found(name: &str) -> EksError {
    EksError::not_found(format!("No cluster found for name: {name}.")).cluster(name)
}

impl State {
    /// The cluster named `name`.
    ///
    /// # Errors
    /// `ResourceNotFoundException`.
    pub fn cluster(&self, name: &str) -> Result<&Cluster, EksError> {
        self.clusters
            .get(name)
            .ok_or_else(|| cluster_not_found(name))
    }

    /// The cluster named `name`, mutable.
    ///
    /// # Errors
    /// `ResourceNotFoundException`.
    pub fn cluster_mut(&mut self, name: &str) -> Result<&mut Cluster, EksError> {
        self.clusters
            .get_mut(name)
            .ok_or_else(|| cluster_not_found(name))
    }
}

/// Applies `logging` to the set of enabled log types.
fn apply_logging(
    current: &BTreeSet<String>,
    logging: &LoggingRequest,
) -> Result<BTreeSet<String>, EksError> {
    let mut out = current.clone();
    for setup in logging.cluster_logging.iter().flatten() {
        for t in setup.types.iter().flatten() {
            if !LOG_TYPES.contains(&t.as_str()) {
                return Err(EksError::invalid_parameter(format!(
                    "Invalid log type {t}; valid types are api, audit, authenticator, controllerManager, scheduler"
                )));
            }
            if setup.enabled.unwrap_or(false) {
                out.insert(t.clone());
            } else {
                out.remove(t);
            }
        }
    }
    Ok(out)
}

fn check_cidrs(cidrs: &[String]) -> Result<(), EksError> {
    for c in cidrs {
        let ok = c.split_once('/').is_some_and(|(ip, len)| {
            ip.parse::<std::net::Ipv4Addr>().is_ok() && len.parse::<u8>().is_ok_and(|l| l <= 32)
        });
        if !ok {
            return Err(EksError::invalid_parameter(format!(
                "The following CIDRs are invalid in publicAccessCidrs: [{c}]"
            )));
        }
    }
    Ok(())
}

fn check_tags(tags: &Tags) -> Result<(), EksError> {
    if tags.len() > 50 {
        return Err(EksError::invalid_parameter(
            "A resource can have at most 50 tags",
        ));
    }
    if let Some(k) = tags
        .keys()
        .find(|k| k.to_ascii_lowercase().starts_with("aws:"))
    {
        return Err(EksError::invalid_parameter(format!(
            "Tag keys starting with 'aws:' are reserved: {k}"
        )));
    }
    Ok(())
}

impl Eks {
    /// Looks a token up; `Ok(Some(id))` when the same request was seen.
    ///
    /// # Errors
    /// `InvalidParameterException` when the token was used with other parameters.
    pub(super) fn replay(
        &self,
        scope: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Result<Option<String>, EksError> {
        let Some(token) = token else { return Ok(None) };
        match self
            .tokens
            .check(scope, token, &fingerprint(body, "clientRequestToken"))
        {
            Replay::New => Ok(None),
            Replay::Same(id) => Ok(Some(id)),
            Replay::Mismatch => Err(EksError::invalid_parameter(format!(
                "The clientRequestToken {token} was already used for a request with different parameters"
            ))),
        }
    }

    pub(super) fn remember(&self, scope: &str, token: Option<&str>, body: &Value, id: &str) {
        if let Some(token) = token {
            self.tokens
                .remember(scope, token, &fingerprint(body, "clientRequestToken"), id);
        }
    }

    pub(super) fn describe_cluster(&self, name: &str) -> Result<Value, EksError> {
        let st = self.lock();
        Ok(json!({"cluster": st.cluster(name)?.json(&self.config.region)}))
    }

    pub(super) fn list_clusters(&self, call: &Call) -> Result<Value, EksError> {
        let names: Vec<String> = self.lock().clusters.keys().cloned().collect();
        let (page, next) = paginate(names, call)?;
        Ok(with_next(json!({"clusters": page}), next))
    }

    pub(super) fn delete_cluster(&self, name: &str) -> Result<Value, EksError> {
        let mut st = self.lock();
        let cluster = st.cluster_mut(name)?;
        if !cluster.nodegroups.is_empty() {
            return Err(EksError::in_use("Cluster has nodegroups attached").cluster(name));
        }
        if *cluster.life.state() != Status::Deleting {
            let delay = Delays::duration(self.timing().cluster.delete);
            cluster
                .life
                .begin(Status::Deleting, Status::Gone, Instant::now(), delay);
            let addon_delay = Delays::duration(self.timing().addon.delete);
            for addon in cluster.addons.values_mut() {
                addon
                    .life
                    .begin(Status::Deleting, Status::Gone, Instant::now(), addon_delay);
            }
            tracing::info!(cluster = %name, "cluster deleting");
        }
        Ok(json!({"cluster": cluster.json(&self.config.region)}))
    }
}

/// Refuses an update while another runs or the cluster is not ACTIVE.
pub fn ensure_idle(cluster: &Cluster, kind: &str) -> Result<(), EksError> {
    if let Some(u) = cluster.pending_update() {
        return Err(EksError::in_use(format!(
            "Cannot {kind} because cluster {} currently has update {} in progress",
            cluster.name, u.id
        ))
        .cluster(&cluster.name));
    }
    let status = *cluster.life.state();
    if status != Status::Active {
        return Err(EksError::in_use(format!(
            "Cannot {kind} because cluster {} is in {} status",
            cluster.name,
            status.as_str()
        ))
        .cluster(&cluster.name));
    }
    Ok(())
}

/// The JSON of the update with `id`.
pub fn find_update(updates: &[Update], id: &str) -> Option<Value> {
    updates.iter().find(|u| u.id == id).map(Update::json)
}

fn replayed(st: &State, name: &str, workload_id: &str) -> Option<Value> {
    let c = st
        .clusters
        .get(name)
        .filter(|c| c.workload_id == workload_id)?;
    Some(json!({"cluster": c.json(region_of(&c.arn))}))
}

/// The region named in an EKS ARN.
pub fn region_of(arn: &str) -> &str {
    arn.split(':').nth(3).unwrap_or_default()
}

/// Adds `nextToken` when there is one.
pub fn with_next(mut body: Value, next: Option<String>) -> Value {
    if let Some(n) = next {
        body["nextToken"] = json!(n);
    }
    body
}
