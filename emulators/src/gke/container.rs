//! Kubernetes Engine API v1: clusters, node pools, operations and the server config, under
//! `/v1/projects/{project}/locations/{location}/…`.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::catalog;
use super::error::GoogleError;
use super::render;
use super::state::{
    Cluster, Effect, NodePool, OpStatus, Operation, Scope, State, Status, cluster_key, region_of,
};
use super::validate::{self, int_of, last_segment, str_of};
use super::{Gke, hex, now_rfc3339};
use crate::kit::Delays;

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

/// The version nodes get for `requested` under a master at `master`, by GKE's rules.
fn node_version(requested: &str, master: &str) -> Result<String, GoogleError> {
    let version = if requested.is_empty() || requested == "-" {
        master
    } else {
        catalog::resolve(requested).ok_or_else(|| {
            GoogleError::invalid(format!("Node version \"{requested}\" is unsupported."))
        })?
    };
    if catalog::compare(version, master).is_gt() {
        return Err(GoogleError::invalid(format!(
            "desired node version \"{version}\" cannot be greater than current master version \"{master}\"."
        )));
    }
    let (Some(n), Some(m)) = (catalog::minor_of(version), catalog::minor_of(master)) else {
        return Err(GoogleError::invalid(format!(
            "Node version \"{requested}\" is unsupported."
        )));
    };
    if n.0 != m.0 || m.1 - n.1 > 2 {
        return Err(GoogleError::invalid(format!(
            "Node version \"{version}\" must be within 2 minor versions of the master version \"{master}\"."
        )));
    }
    Ok(version.to_string())
}

/// Checks a `NodeConfig` (machine type, image type, disk, taints).
fn check_node_config(config: &Value, zone: &str) -> Result<(), GoogleError> {
    let machine = str_of(config, "machineType");
    if !machine.is_empty() && catalog::machine_vcpus(machine).is_none() {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'nodePool.config.machineType': '{machine}'. Machine type \
             with name '{machine}' does not exist in zone '{zone}'."
        )));
    }
    let image = str_of(config, "imageType");
    if !image.is_empty() && !catalog::IMAGE_TYPES.contains(&image.to_ascii_uppercase().as_str()) {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'nodePool.config.imageType': '{image}'. Valid image types \
             are {}.",
            catalog::IMAGE_TYPES.join(", ")
        )));
    }
    let disk = int_of(config, "diskSizeGb");
    if disk != 0 && disk < 10 {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'nodePool.config.diskSizeGb': {disk}. Disk size must be at least 10 GB."
        )));
    }
    check_taints(config.get("taints"))?;
    if let Some(labels) = config.get("labels").and_then(Value::as_object) {
        for key in labels.keys() {
            if key.starts_with("kubernetes.io/") || key.starts_with("cloud.google.com/") {
                return Err(GoogleError::invalid(format!(
                    "Invalid value for field 'nodePool.config.labels': label key {key:?} uses a reserved prefix."
                )));
            }
        }
    }
    Ok(())
}

fn check_taints(taints: Option<&Value>) -> Result<(), GoogleError> {
    for t in taints.and_then(Value::as_array).into_iter().flatten() {
        let effect = str_of(t, "effect");
        if str_of(t, "key").is_empty()
            || !["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"].contains(&effect)
        {
            return Err(GoogleError::invalid(format!(
                "Invalid value for field 'nodePool.config.taints': {t}. A taint needs a key and an \
                 effect of NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE."
            )));
        }
    }
    Ok(())
}

fn check_autoscaling(a: &Value) -> Result<(), GoogleError> {
    if a["enabled"] != true {
        return Ok(());
    }
    let (min, max) = (int_of(a, "minNodeCount"), int_of(a, "maxNodeCount"));
    if min < 0 || max < 1 || min > max || max > 1000 {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'nodePool.autoscaling': minNodeCount {min} and maxNodeCount \
             {max} must satisfy 0 <= min <= max, 1 <= max <= 1000."
        )));
    }
    Ok(())
}

fn check_upgrade_settings(u: &Value) -> Result<(), GoogleError> {
    if u.is_null() {
        return Ok(());
    }
    let (surge, unavailable) = (int_of(u, "maxSurge"), int_of(u, "maxUnavailable"));
    let strategy = str_of(u, "strategy");
    if (strategy.is_empty() || strategy == "SURGE") && surge == 0 && unavailable == 0 {
        return Err(GoogleError::invalid(
            "Invalid value for field 'nodePool.upgradeSettings': maxSurge and maxUnavailable \
             cannot both be 0.",
        ));
    }
    if surge < 0 || unavailable < 0 {
        return Err(GoogleError::invalid(
            "Invalid value for field 'nodePool.upgradeSettings': maxSurge and maxUnavailable \
             must not be negative.",
        ));
    }
    Ok(())
}

/// The zones of a pool (`locations`, within the cluster's region) or the cluster's.
fn zones_of(given: &Value, region: &str, default: &[String]) -> Result<Vec<String>, GoogleError> {
    let Some(list) = given.as_array().filter(|l| !l.is_empty()) else {
        return Ok(default.to_vec());
    };
    list.iter()
        .map(|z| {
            let z = z.as_str().unwrap_or_default();
            if region_of(z) == region && z != region {
                Ok(z.to_string())
            } else {
                Err(GoogleError::invalid(format!(
                    "Invalid value for field 'locations': zone {z:?} is not in region {region}."
                )))
            }
        })
        .collect()
}

/// Server-set fields a client may send back; they are dropped from what is stored.
const POOL_OUTPUT: &[&str] = &[
    "name",
    "version",
    "status",
    "statusMessage",
    "selfLink",
    "instanceGroupUrls",
    "locations",
    "etag",
    "podIpv4CidrSize",
    "conditions",
    "updateInfo",
];

const CLUSTER_OUTPUT: &[&str] = &[
    "nodePools",
    "selfLink",
    "zone",
    "endpoint",
    "initialClusterVersion",
    "currentMasterVersion",
    "currentNodeVersion",
    "createTime",
    "status",
    "statusMessage",
    "instanceGroupUrls",
    "currentNodeCount",
    "expireTime",
    "location",
    "locations",
    "id",
    "labelFingerprint",
    "resourceLabels",
    "conditions",
    "etag",
    "masterAuth",
];

/// A new pool from its JSON, under a master at `master`.
fn build_pool(
    mut spec: Value,
    master: &str,
    region: &str,
    cluster_zones: &[String],
) -> Result<NodePool, GoogleError> {
    validate::pool_enums(&mut spec);
    let name = str_of(&spec, "name").to_string();
    validate::gke_name("nodePool", &name)?;
    let zones = zones_of(&spec["locations"], region, cluster_zones)?;
    check_node_config(&spec["config"], &zones[0])?;
    let count = int_of(&spec, "initialNodeCount");
    if !(0..=1000).contains(&count) {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'nodePool.initialNodeCount': {count}. Must be between 0 and 1000."
        )));
    }
    check_autoscaling(&spec["autoscaling"])?;
    check_upgrade_settings(&spec["upgradeSettings"])?;
    let version = node_version(str_of(&spec, "version"), master)?;
    if let Some(obj) = spec.as_object_mut() {
        for key in POOL_OUTPUT {
            obj.remove(*key);
        }
    }
    Ok(NodePool {
        name,
        spec,
        version,
        status: Status::Provisioning,
        status_message: String::new(),
        per_zone: count as u32,
        zones,
        instances: Vec::new(),
        hash: hex(8),
        create_time: now_rfc3339(),
    })
}

/// The cluster's network settings, checked against the project's Compute resources.
fn check_network(st: &State, project: &str, region: &str, spec: &Value) -> Result<(), GoogleError> {
    let network = last_segment(str_of(spec, "network")).to_string();
    let explicit = !network.is_empty() && network != "default";
    if explicit && !st.networks.contains_key(&format!("{project}/{network}")) {
        return Err(GoogleError::invalid(format!(
            "Network \"{network}\" does not exist."
        )));
    }
    let subnet_name = last_segment(str_of(spec, "subnetwork")).to_string();
    let policy = &spec["ipAllocationPolicy"];
    if !subnet_name.is_empty() && (explicit || subnet_name != "default") {
        let subnet = st
            .subnetworks
            .get(&format!("{project}/{region}/{subnet_name}"))
            .ok_or_else(|| {
                GoogleError::invalid(format!(
                    "Subnetwork \"{subnet_name}\" does not exist in region {region}."
                ))
            })?;
        let owner = last_segment(str_of(subnet, "network"));
        if owner
            != if network.is_empty() {
                "default"
            } else {
                &network
            }
        {
            return Err(GoogleError::invalid(format!(
                "Subnetwork \"{subnet_name}\" does not belong to network \"{network}\"."
            )));
        }
        if policy["useIpAliases"] == true {
            let ranges: Vec<&str> = subnet["secondaryIpRanges"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| str_of(r, "rangeName"))
                .collect();
            for key in ["clusterSecondaryRangeName", "servicesSecondaryRangeName"] {
                let range = str_of(policy, key);
                if !range.is_empty() && !ranges.contains(&range) {
                    return Err(GoogleError::invalid(format!(
                        "Retry budget exhausted: Secondary range \"{range}\" does not exist in \
                         subnetwork \"{subnet_name}\" (ipAllocationPolicy.{key})."
                    )));
                }
            }
        }
    }
    let legacy_nodes = &spec["privateClusterConfig"]["enablePrivateNodes"];
    let modern_nodes = &spec["networkConfig"]["defaultEnablePrivateNodes"];
    if !legacy_nodes.is_null() && !modern_nodes.is_null() {
        return Err(GoogleError::invalid(
            "It is invalid to specify both privateClusterConfig.enablePrivateNodes and \
             networkConfig.defaultEnablePrivateNodes.",
        ));
    }
    let legacy_endpoint = &spec["privateClusterConfig"]["enablePrivateEndpoint"];
    let modern_endpoint =
        &spec["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["enablePublicEndpoint"];
    if !legacy_endpoint.is_null() && !modern_endpoint.is_null() {
        return Err(GoogleError::invalid(
            "It is invalid to specify both privateClusterConfig.enablePrivateEndpoint and \
             controlPlaneEndpointsConfig.ipEndpointsConfig.enablePublicEndpoint.",
        ));
    }
    if (*legacy_nodes == true || *modern_nodes == true) && policy["useIpAliases"] != true {
        return Err(GoogleError::invalid(
            "Private clusters must be VPC-native: set ipAllocationPolicy.useIpAliases to true.",
        ));
    }
    Ok(())
}

fn check_workload_pool(project: &str, config: &Value) -> Result<(), GoogleError> {
    let pool = str_of(config, "workloadPool");
    if !pool.is_empty() && pool != format!("{project}.svc.id.goog") {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'workloadIdentityConfig.workloadPool': \"{pool}\". The \
             workload pool must be \"{project}.svc.id.goog\"."
        )));
    }
    Ok(())
}

fn check_authorized_networks(config: &Value) -> Result<(), GoogleError> {
    for block in config["cidrBlocks"].as_array().into_iter().flatten() {
        let text = str_of(block, "cidrBlock");
        let ok = text.split_once('/').is_some_and(|(ip, p)| {
            ip.parse::<std::net::Ipv4Addr>().is_ok() && p.parse::<u8>().is_ok_and(|p| p <= 32)
        });
        if !ok {
            return Err(GoogleError::invalid(format!(
                "Invalid value for field 'masterAuthorizedNetworksConfig.cidrBlocks': \
                 \"{text}\" is not a CIDR block."
            )));
        }
    }
    Ok(())
}

fn check_encryption(config: &Value) -> Result<(), GoogleError> {
    let key = str_of(config, "keyName");
    let state = str_of(config, "state");
    let well_formed = {
        let parts: Vec<&str> = key.split('/').collect();
        parts.len() == 8
            && parts[0] == "projects"
            && parts[2] == "locations"
            && parts[4] == "keyRings"
            && parts[6] == "cryptoKeys"
    };
    if state == "ENCRYPTED" && !well_formed {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field 'databaseEncryption.keyName': \"{key}\". It must be \
             projects/*/locations/*/keyRings/*/cryptoKeys/*."
        )));
    }
    Ok(())
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

    fn create_cluster(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        if t.location == "-" {
            return Err(GoogleError::invalid(
                "A cluster needs a location, not \"-\".",
            ));
        }
        let mut spec = body
            .get("cluster")
            .filter(|c| c.is_object())
            .cloned()
            .ok_or_else(|| GoogleError::invalid("Required field \"cluster\" is missing."))?;
        validate::cluster_enums(&mut spec);
        let name = str_of(&spec, "name").to_string();
        validate::gke_name("cluster", &name)?;
        validate::labels("cluster.resourceLabels", &spec["resourceLabels"])?;
        let requested = str_of(&spec, "initialClusterVersion").to_string();
        let version = catalog::resolve(&requested).ok_or_else(|| {
            GoogleError::invalid(format!("Master version \"{requested}\" is unsupported."))
        })?;
        if let Some(channel) = spec["releaseChannel"]["channel"]
            .as_str()
            .filter(|c| *c != "UNSPECIFIED")
        {
            let versions = catalog::channel_versions(channel).ok_or_else(|| {
                GoogleError::invalid(format!("Unknown release channel \"{channel}\"."))
            })?;
            if !requested.is_empty() && !versions.contains(&version) {
                return Err(GoogleError::invalid(format!(
                    "Version \"{version}\" is not available in the {channel} release channel; \
                     its versions are {}.",
                    versions.join(", ")
                )));
            }
        }
        check_workload_pool(&t.project, &spec["workloadIdentityConfig"])?;
        check_authorized_networks(&spec["masterAuthorizedNetworksConfig"])?;
        check_encryption(&spec["databaseEncryption"])?;
        let region = region_of(&t.location).to_string();
        let zonal = region != t.location;
        let default_zones: Vec<String> = if zonal {
            vec![t.location.clone()]
        } else {
            ["a", "b", "c"]
                .iter()
                .map(|z| format!("{region}-{z}"))
                .collect()
        };
        let zones = zones_of(&spec["locations"], &region, &default_zones)?;
        let mut pool_specs = spec["nodePools"].as_array().cloned().unwrap_or_default();
        let initial = int_of(&spec, "initialNodeCount");
        if pool_specs.is_empty() {
            if initial <= 0 {
                return Err(GoogleError::invalid(
                    "Cluster.initial_node_count must be greater than zero.",
                ));
            }
            pool_specs.push(json!({
                "name": "default-pool",
                "initialNodeCount": initial,
                "config": spec["nodeConfig"].clone(),
            }));
        } else if initial > 0 {
            return Err(GoogleError::invalid(
                "Cluster.initial_node_count cannot be set together with Cluster.node_pools.",
            ));
        }
        let mut pools: Vec<NodePool> = Vec::new();
        for p in pool_specs {
            let pool = build_pool(p, version, &region, &zones)?;
            if pools.iter().any(|q| q.name == pool.name) {
                return Err(GoogleError::invalid(format!(
                    "Node pool \"{}\" is given twice.",
                    pool.name
                )));
            }
            pools.push(pool);
        }
        let labels: BTreeMap<String, String> = spec["resourceLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        if let Some(obj) = spec.as_object_mut() {
            for key in CLUSTER_OUTPUT {
                obj.remove(*key);
            }
            obj.remove("initialNodeCount");
        }
        let timing = self.kit.timing();
        let mut st = self.lock();
        let key = cluster_key(&t.project, &t.location, &name);
        if st.clusters.contains_key(&key) {
            return Err(GoogleError::already_exists(format!(
                "Already exists: projects/{}/locations/{}/clusters/{name}.",
                t.project, t.location
            )));
        }
        let here = st
            .clusters
            .values()
            .filter(|c| c.project == t.project && c.location == t.location)
            .count();
        if here >= self.config.cluster_quota {
            return Err(GoogleError {
                http: axum::http::StatusCode::FORBIDDEN,
                status: "RESOURCE_EXHAUSTED",
                message: format!(
                    "Insufficient quota to satisfy the request: the project may have at most {} \
                     clusters in {}.",
                    self.config.cluster_quota, t.location
                ),
                reason: Some("quotaExceeded"),
                retry_after: None,
            });
        }
        check_network(&st, &t.project, &region, &spec)?;
        let id = hex(32);
        let cluster = Cluster {
            project: t.project.clone(),
            location: t.location.clone(),
            name: name.clone(),
            workload_id: format!("{name}-{}", &id[..8]),
            id,
            spec,
            status: Status::Provisioning,
            status_message: String::new(),
            version: version.to_string(),
            initial_version: version.to_string(),
            labels,
            pools,
            zones,
            create_time: now_rfc3339(),
            busy: None,
            start_requested: false,
            endpoint: None,
            nodes_dirty: false,
        };
        let link = render::cluster_link(&t.project, &t.location, &name);
        st.clusters.insert(key.clone(), cluster);
        Ok(self.start(
            &mut st,
            &key,
            "CREATE_CLUSTER",
            link,
            Delays::duration(timing.cluster.create),
            Effect::CreateCluster,
        ))
    }

    fn update_cluster(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        let update = body
            .get("update")
            .and_then(Value::as_object)
            .ok_or_else(|| GoogleError::invalid("Required field \"update\" is missing."))?;
        let fields: Vec<(&String, &Value)> = update
            .iter()
            .filter(|(k, v)| !v.is_null() && *k != "etag" && *k != "desiredNodePoolId")
            .collect();
        let [(field, value)] = fields.as_slice() else {
            return Err(GoogleError::invalid(format!(
                "Exactly one update can be applied to a cluster with each request; this one sets \
                 {} fields ({}).",
                fields.len(),
                fields
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let field = (*field).clone();
        let mut value = (*value).clone();
        validate::update_enums(&field, &mut value);
        let timing = self.kit.timing();
        let mut st = self.lock();
        let key = cluster_key(&t.project, &t.location, &t.cluster);
        let c = st
            .clusters
            .get_mut(&key)
            .ok_or_else(|| cluster_not_found(t))?;
        ensure_idle(c)?;
        let link = render::cluster_link(&c.project, &c.location, &c.name);
        let delay = Delays::duration(timing.cluster.update);
        if field == "desiredMasterVersion" {
            let requested = value.as_str().unwrap_or_default();
            let target = catalog::resolve(requested).ok_or_else(|| {
                GoogleError::invalid(format!("Master version \"{requested}\" is unsupported."))
            })?;
            let (Some(from), Some(to)) = (catalog::minor_of(&c.version), catalog::minor_of(target))
            else {
                return Err(GoogleError::invalid(format!(
                    "Master version {} cannot be upgraded to {target}: a version is not of the form MAJOR.MINOR.",
                    c.version
                )));
            };
            if to.1 > from.1 + 1 {
                return Err(GoogleError::invalid(format!(
                    "Master version {} cannot be upgraded to {target}: cannot upgrade the master \
                     more than a minor version at a time.",
                    c.version
                )));
            }
            if to < from {
                return Err(GoogleError::invalid(format!(
                    "Master version {} cannot be downgraded to {target}: the control plane \
                     cannot move to an older minor version.",
                    c.version
                )));
            }
            if let Some(p) = c
                .pools
                .iter()
                .find(|p| catalog::minor_of(&p.version).is_some_and(|m| to.1 > m.1 + 2))
            {
                return Err(GoogleError::invalid(format!(
                    "Master version {} cannot be upgraded to {target}: node pool \"{}\" at {} \
                     would be more than 2 minor versions behind.",
                    c.version, p.name, p.version
                )));
            }
            c.status = Status::Reconciling;
            return Ok(self.start(
                &mut st,
                &key,
                "UPGRADE_MASTER",
                link,
                delay,
                Effect::UpgradeMaster(target.to_string()),
            ));
        }
        match field.as_str() {
            "desiredWorkloadIdentityConfig" => check_workload_pool(&t.project, &value)?,
            "desiredMasterAuthorizedNetworksConfig" => check_authorized_networks(&value)?,
            "desiredDatabaseEncryption" => check_encryption(&value)?,
            "desiredReleaseChannel" => {
                let channel = str_of(&value, "channel");
                if channel != "UNSPECIFIED" && catalog::channel_versions(channel).is_none() {
                    return Err(GoogleError::invalid(format!(
                        "Unknown release channel \"{channel}\"."
                    )));
                }
            }
            "desiredControlPlaneEndpointsConfig" => {
                if let Some(n) = value
                    .get("ipEndpointsConfig")
                    .and_then(|i| i.get("authorizedNetworksConfig"))
                {
                    check_authorized_networks(n)?;
                }
            }
            "desiredLoggingConfig"
            | "desiredLoggingService"
            | "desiredMonitoringConfig"
            | "desiredMonitoringService"
            | "desiredEnablePrivateEndpoint"
            | "desiredDefaultEnablePrivateNodes"
            | "desiredPrivateClusterConfig"
            | "desiredAddonsConfig"
            | "desiredAuthenticatorGroupsConfig" => {}
            other => {
                return Err(GoogleError::unimplemented(&format!(
                    "ClusterUpdate.{other}"
                )));
            }
        }
        c.status = Status::Reconciling;
        Ok(self.start(
            &mut st,
            &key,
            "UPDATE_CLUSTER",
            link,
            delay,
            Effect::UpdateCluster(field, value),
        ))
    }

    fn set_labels(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        validate::labels("resourceLabels", &body["resourceLabels"])?;
        let labels: BTreeMap<String, String> = body["resourceLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        let given = str_of(&body, "labelFingerprint").to_string();
        let timing = self.kit.timing();
        let mut st = self.lock();
        let key = cluster_key(&t.project, &t.location, &t.cluster);
        let c = st.clusters.get(&key).ok_or_else(|| cluster_not_found(t))?;
        ensure_idle(c)?;
        let current = render::label_fingerprint(&c.labels);
        if given != current {
            return Err(GoogleError::failed_precondition(format!(
                "Labels could not be set due to fingerprint mismatch; try again with the proper \
                 fingerprint: incorrect fingerprint supplied was \"{given}\", the expected one \
                 is \"{current}\"."
            )));
        }
        let link = render::cluster_link(&c.project, &c.location, &c.name);
        Ok(self.start(
            &mut st,
            &key,
            "UPDATE_CLUSTER",
            link,
            Delays::duration(timing.addon.update),
            Effect::SetLabels(labels),
        ))
    }

    fn delete_cluster(&self, t: &Target) -> Result<Value, GoogleError> {
        let timing = self.kit.timing();
        let mut st = self.lock();
        let key = cluster_key(&t.project, &t.location, &t.cluster);
        let c = st
            .clusters
            .get_mut(&key)
            .ok_or_else(|| cluster_not_found(t))?;
        ensure_idle(c)?;
        c.status = Status::Stopping;
        for p in &mut c.pools {
            p.status = Status::Stopping;
        }
        let link = render::cluster_link(&c.project, &c.location, &c.name);
        Ok(self.start(
            &mut st,
            &key,
            "DELETE_CLUSTER",
            link,
            Delays::duration(timing.cluster.delete),
            Effect::DeleteCluster,
        ))
    }

    fn create_pool(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        let spec = body
            .get("nodePool")
            .filter(|p| p.is_object())
            .cloned()
            .ok_or_else(|| GoogleError::invalid("Required field \"nodePool\" is missing."))?;
        let timing = self.kit.timing();
        let mut st = self.lock();
        let key = cluster_key(&t.project, &t.location, &t.cluster);
        let c = st
            .clusters
            .get_mut(&key)
            .ok_or_else(|| cluster_not_found(t))?;
        ensure_idle(c)?;
        if c.status == Status::Error {
            return Err(GoogleError::failed_precondition(format!(
                "Cluster \"{}\" is in ERROR state and cannot be changed.",
                c.name
            )));
        }
        let pool = build_pool(spec, &c.version, c.region(), &c.zones)?;
        if c.pool(&pool.name).is_some() {
            return Err(GoogleError::already_exists(format!(
                "Already exists: {}/nodePools/{}.",
                cluster_path(t),
                pool.name
            )));
        }
        let name = pool.name.clone();
        let link = render::pool_link(c, &name);
        c.pools.push(pool);
        Ok(self.start(
            &mut st,
            &key,
            "CREATE_NODE_POOL",
            link,
            Delays::duration(timing.pool.create),
            Effect::CreatePool(name),
        ))
    }

    /// Locks the state and finds the pool of `t` on an idle cluster.
    fn idle_pool<'s>(
        st: &'s mut State,
        t: &Target,
    ) -> Result<(String, &'s mut Cluster), GoogleError> {
        let key = cluster_key(&t.project, &t.location, &t.cluster);
        let c = st
            .clusters
            .get_mut(&key)
            .ok_or_else(|| cluster_not_found(t))?;
        if c.pool(&t.pool).is_none() {
            return Err(pool_not_found(t));
        }
        ensure_idle(c)?;
        Ok((key, c))
    }

    fn update_pool(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        let mut patch = json!({});
        let mut config = json!({});
        let identifiers = [
            "name",
            "projectId",
            "zone",
            "clusterId",
            "nodePoolId",
            "etag",
        ];
        for (k, v) in body.as_object().into_iter().flatten() {
            if v.is_null() || identifiers.contains(&k.as_str()) || v.as_str() == Some("") {
                continue;
            }
            match k.as_str() {
                "nodeVersion" => patch["version"] = v.clone(),
                "imageType" | "machineType" | "diskType" => config[k] = v.clone(),
                "diskSizeGb" if int_of(&body, "diskSizeGb") != 0 => config[k] = v.clone(),
                "diskSizeGb" => {}
                "labels" => config["labels"] = v.get("labels").cloned().unwrap_or(json!({})),
                "taints" => {
                    let mut taints = v.get("taints").cloned().unwrap_or(json!([]));
                    let mut wrapper = json!({ "taints": taints.take() });
                    validate::node_config_enums(&mut wrapper);
                    config["taints"] = wrapper["taints"].take();
                }
                "tags" => config["tags"] = v.get("tags").cloned().unwrap_or(json!([])),
                "resourceLabels" => {
                    config["resourceLabels"] = v.get("labels").cloned().unwrap_or(json!({}));
                }
                "kubeletConfig" | "linuxNodeConfig" | "workloadMetadataConfig" => {
                    config[k] = v.clone();
                }
                "upgradeSettings" => {
                    let mut wrapper = json!({ "upgradeSettings": v.clone() });
                    validate::pool_enums(&mut wrapper);
                    patch["upgradeSettings"] = wrapper["upgradeSettings"].take();
                }
                other => {
                    return Err(GoogleError::unimplemented(&format!(
                        "UpdateNodePoolRequest.{other}"
                    )));
                }
            }
        }
        if config.as_object().is_some_and(|o| !o.is_empty()) {
            patch["config"] = config;
        }
        if patch.as_object().is_none_or(serde_json::Map::is_empty) {
            return Err(GoogleError::invalid(
                "The update request must change at least one node pool setting.",
            ));
        }
        let timing = self.kit.timing();
        let mut st = self.lock();
        let (key, c) = Self::idle_pool(&mut st, t)?;
        let zone = c.zones[0].clone();
        if let Some(cfg) = patch.get("config") {
            check_node_config(cfg, &zone)?;
        }
        check_upgrade_settings(&patch["upgradeSettings"])?;
        if let Some(v) = patch.get("version").and_then(Value::as_str) {
            let version = node_version(v, &c.version)?;
            patch["version"] = json!(version);
        }
        let link = render::pool_link(c, &t.pool);
        if let Some(p) = c.pool_mut(&t.pool) {
            p.status = Status::Reconciling;
        }
        Ok(self.start(
            &mut st,
            &key,
            "UPGRADE_NODES",
            link,
            Delays::duration(timing.pool.update),
            Effect::UpdatePool(t.pool.clone(), patch),
        ))
    }

    fn set_size(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        let count = int_of(&body, "nodeCount");
        if !(0..=1000).contains(&count) {
            return Err(GoogleError::invalid(format!(
                "Invalid value for field 'nodeCount': {count}. Must be between 0 and 1000."
            )));
        }
        let timing = self.kit.timing();
        let mut st = self.lock();
        let (key, c) = Self::idle_pool(&mut st, t)?;
        let link = render::pool_link(c, &t.pool);
        if let Some(p) = c.pool_mut(&t.pool) {
            p.status = Status::Reconciling;
        }
        Ok(self.start(
            &mut st,
            &key,
            "SET_NODE_POOL_SIZE",
            link,
            Delays::duration(timing.pool.update),
            Effect::SetSize(t.pool.clone(), count as u32),
        ))
    }

    fn set_autoscaling(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
        let mut wrapper =
            json!({ "autoscaling": body.get("autoscaling").cloned().unwrap_or(json!({})) });
        validate::pool_enums(&mut wrapper);
        let autoscaling = wrapper["autoscaling"].take();
        check_autoscaling(&autoscaling)?;
        let timing = self.kit.timing();
        let mut st = self.lock();
        let (key, c) = Self::idle_pool(&mut st, t)?;
        let link = render::pool_link(c, &t.pool);
        Ok(self.start(
            &mut st,
            &key,
            "UPDATE_CLUSTER",
            link,
            Delays::duration(timing.addon.update),
            Effect::SetAutoscaling(t.pool.clone(), autoscaling),
        ))
    }

    fn delete_pool(&self, t: &Target) -> Result<Value, GoogleError> {
        let timing = self.kit.timing();
        let mut st = self.lock();
        let (key, c) = Self::idle_pool(&mut st, t)?;
        let link = render::pool_link(c, &t.pool);
        let shutdown = Delays::duration(timing.instance_shutdown);
        let leave = Instant::now() + shutdown;
        if let Some(p) = c.pool_mut(&t.pool) {
            p.status = Status::Stopping;
            for i in &mut p.instances {
                i.leaving_at.get_or_insert(leave);
            }
        }
        Ok(self.start(
            &mut st,
            &key,
            "DELETE_NODE_POOL",
            link,
            Delays::duration(timing.pool.delete).max(shutdown),
            Effect::DeletePool(t.pool.clone()),
        ))
    }
}
