//! Node pools: create, update, resize, autoscaling and delete, and how a pool is built from its
//! JSON and checked (version, node config, taints, autoscaling, upgrade settings, zones).

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Target, cluster_not_found, cluster_path, ensure_idle, pool_not_found};
use crate::gke::catalog;
use crate::gke::error::GoogleError;
use crate::gke::render;
use crate::gke::state::{Cluster, Effect, NodePool, State, Status, cluster_key, region_of};
use crate::gke::validate::{self, int_of, str_of};
use crate::gke::{Gke, hex, now_rfc3339};
use crate::kit::Delays;

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
pub(super) fn zones_of(
    given: &Value,
    region: &str,
    default: &[String],
) -> Result<Vec<String>, GoogleError> {
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
/// A new pool from its JSON, under a master at `master`.
pub(super) fn build_pool(
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

impl Gke {
    pub(super) fn create_pool(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn update_pool(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn set_size(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn set_autoscaling(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn delete_pool(&self, t: &Target) -> Result<Value, GoogleError> {
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
