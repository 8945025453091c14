//! Managed nodegroups: CreateNodegroup, DescribeNodegroup, ListNodegroups, DeleteNodegroup,
//! UpdateNodegroupConfig and UpdateNodegroupVersion.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::api::{Call, paginate, valid_name};
use super::catalog;
use super::clusters::{find_update, with_next};
use super::error::EksError;
use super::state::{
    Change, Nodegroup, NodegroupConfigChange, Scaling, Status, Tags, Taint, Update,
};
use super::{Eks, epoch_now, uuid};
use crate::kit::{Delays, Lifecycle};

const TAINT_EFFECTS: [&str; 3] = ["NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"];
const CAPACITY_TYPES: [&str; 3] = ["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"];
const AMI_TYPES: [&str; 23] = [
    "AL2023_ARM_64_NVIDIA",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NEURON",
    "AL2023_x86_64_NVIDIA",
    "AL2023_x86_64_STANDARD",
    "AL2_ARM_64",
    "AL2_x86_64",
    "AL2_x86_64_GPU",
    "BOTTLEROCKET_ARM_64",
    "BOTTLEROCKET_ARM_64_FIPS",
    "BOTTLEROCKET_ARM_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA_FIPS",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_x86_64_FIPS",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA_FIPS",
    "CUSTOM",
    "WINDOWS_CORE_2019_x86_64",
    "WINDOWS_CORE_2022_x86_64",
    "WINDOWS_CORE_2025_x86_64",
    "WINDOWS_FULL_2019_x86_64",
    "WINDOWS_FULL_2022_x86_64",
    "WINDOWS_FULL_2025_x86_64",
];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScalingRequest {
    min_size: Option<i64>,
    max_size: Option<i64>,
    desired_size: Option<i64>,
}

#[derive(Debug, Default, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct TaintRequest {
    key: Option<String>,
    value: Option<String>,
    effect: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateNodegroupRequest {
    nodegroup_name: Option<String>,
    scaling_config: Option<ScalingRequest>,
    disk_size: Option<i64>,
    subnets: Option<Vec<String>>,
    instance_types: Option<Vec<String>>,
    ami_type: Option<String>,
    remote_access: Option<Value>,
    node_role: Option<String>,
    labels: Option<BTreeMap<String, String>>,
    taints: Option<Vec<TaintRequest>>,
    tags: Option<Tags>,
    client_request_token: Option<String>,
    launch_template: Option<Value>,
    update_config: Option<Value>,
    node_repair_config: Option<Value>,
    capacity_type: Option<String>,
    version: Option<String>,
    release_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LabelsPayload {
    add_or_update_labels: Option<BTreeMap<String, String>>,
    remove_labels: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaintsPayload {
    add_or_update_taints: Option<Vec<TaintRequest>>,
    remove_taints: Option<Vec<TaintRequest>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateConfigRequest {
    labels: Option<LabelsPayload>,
    taints: Option<TaintsPayload>,
    scaling_config: Option<ScalingRequest>,
    update_config: Option<Value>,
    node_repair_config: Option<Value>,
    client_request_token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateVersionRequest {
    version: Option<String>,
    release_version: Option<String>,
    launch_template: Option<Value>,
    force: Option<bool>,
    client_request_token: Option<String>,
}

/// `No node group found for name: <ng>.`
pub fn nodegroup_not_found(cluster: &str, ng: &str) -> EksError {
    EksError::not_found(format!("No node group found for name: {ng}."))
        .cluster(cluster)
        .nodegroup(ng)
}

fn check_scaling(s: &Scaling, cluster: &str, ng: &str) -> Result<(), EksError> {
    let err = |m: String| {
        Err(EksError::invalid_parameter(m)
            .cluster(cluster)
            .nodegroup(ng))
    };
    if s.max < 1 {
        return err(format!("Maximum capacity {} can't be less than 1", s.max));
    }
    if s.min < 0 {
        return err(format!("Minimum capacity {} can't be negative", s.min));
    }
    if s.desired < 0 {
        return err("desiredSize is not valid".into());
    }
    if s.min > s.max {
        return err(format!(
            "Minimum capacity {} can't be greater than max size {}",
            s.min, s.max
        ));
    }
    if s.min > s.desired {
        return err(format!(
            "Minimum capacity {} can't be greater than desired size {}",
            s.min, s.desired
        ));
    }
    if s.desired > s.max {
        return err(format!(
            "Desired capacity {} can't be greater than max size {}",
            s.desired, s.max
        ));
    }
    Ok(())
}

fn taint(t: &TaintRequest, cluster: &str, ng: &str) -> Result<Taint, EksError> {
    let key = t.key.clone().unwrap_or_default();
    if key.is_empty() || key.len() > 63 {
        return Err(
            EksError::invalid_parameter("Taint key must be 1-63 characters")
                .cluster(cluster)
                .nodegroup(ng),
        );
    }
    let effect = t.effect.clone().unwrap_or_default();
    if !TAINT_EFFECTS.contains(&effect.as_str()) {
        return Err(EksError::invalid_parameter(format!(
            "Taint effect {effect} is not valid; valid effects are NO_SCHEDULE, NO_EXECUTE and PREFER_NO_SCHEDULE"
        ))
        .cluster(cluster)
        .nodegroup(ng));
    }
    Ok(Taint {
        key,
        value: t.value.clone().filter(|v| !v.is_empty()),
        effect,
    })
}

fn check_update_config(v: &Value, cluster: &str, ng: &str) -> Result<(), EksError> {
    let err = |m: &str| {
        Err(EksError::invalid_parameter(m)
            .cluster(cluster)
            .nodegroup(ng))
    };
    let count = v.get("maxUnavailable").and_then(Value::as_i64);
    let percent = v.get("maxUnavailablePercentage").and_then(Value::as_i64);
    match (count, percent) {
        (Some(_), Some(_)) => {
            err("Only one of maxUnavailable and maxUnavailablePercentage can be set")
        }
        (Some(n), None) if !(1..=100).contains(&n) => {
            err("maxUnavailable must be between 1 and 100")
        }
        (None, Some(p)) if !(1..=100).contains(&p) => {
            err("maxUnavailablePercentage must be between 1 and 100")
        }
        _ => Ok(()),
    }
}

impl Eks {
    pub(super) fn create_nodegroup(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: CreateNodegroupRequest = call.parse()?;
        let name = req.nodegroup_name.clone().unwrap_or_default();
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let scope = format!("CreateNodegroup/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(id) = self.replay(&scope, token, &call.body)?
            && let Some(n) = cluster.nodegroups.get(&name).filter(|n| n.arn == id)
        {
            return Ok(json!({"nodegroup": n.json(cluster_name)}));
        }
        let bad = |m: String| {
            EksError::invalid_parameter(m)
                .cluster(cluster_name)
                .nodegroup(&name)
        };
        if !valid_name(&name, 63) {
            return Err(bad(
                "The nodegroup name must be 1-63 characters, start with a letter or digit, and contain only letters, \
                 digits, hyphens and underscores"
                    .into(),
            ));
        }
        if *cluster.life.state() != Status::Active {
            return Err(EksError::invalid_request(format!(
                "Cluster '{cluster_name}' is not in ACTIVE status"
            ))
            .cluster(cluster_name)
            .nodegroup(&name));
        }
        if cluster.nodegroups.contains_key(&name) {
            return Err(EksError::in_use(format!(
                "NodeGroup already exists with name {name} and cluster name {cluster_name}"
            ))
            .cluster(cluster_name)
            .nodegroup(&name));
        }
        let node_role = req.node_role.clone().unwrap_or_default();
        if node_role.is_empty() {
            return Err(bad("nodeRole is required".into()));
        }
        let subnets = req.subnets.clone().unwrap_or_default();
        if subnets.is_empty() {
            return Err(bad("subnets is required".into()));
        }
        let s = req.scaling_config.unwrap_or_default();
        let scaling = Scaling {
            min: s.min_size.unwrap_or(1),
            max: s.max_size.unwrap_or(2),
            desired: s.desired_size.unwrap_or(2),
        };
        check_scaling(&scaling, cluster_name, &name)?;
        let version = req
            .version
            .clone()
            .unwrap_or_else(|| cluster.version.clone());
        check_node_version(&version, &cluster.version)
            .map_err(|e| e.cluster(cluster_name).nodegroup(&name))?;
        let release_version = match &req.release_version {
            Some(r) => {
                check_release(r, &version).map_err(|e| e.cluster(cluster_name).nodegroup(&name))?;
                r.clone()
            }
            None => catalog::release_version(&version),
        };
        let capacity_type = req
            .capacity_type
            .clone()
            .unwrap_or_else(|| "ON_DEMAND".into());
        if !CAPACITY_TYPES.contains(&capacity_type.as_str()) {
            return Err(bad(format!("Unsupported capacityType {capacity_type}")));
        }
        let ami_type = req
            .ami_type
            .clone()
            .unwrap_or_else(|| "AL2023_x86_64_STANDARD".into());
        if !AMI_TYPES.contains(&ami_type.as_str()) {
            return Err(bad(format!("Unsupported amiType {ami_type}")));
        }
        let mut taints = Vec::new();
        for t in req.taints.iter().flatten() {
            taints.push(taint(t, cluster_name, &name)?);
        }
        if taints.len() > 50 {
            return Err(bad("A nodegroup can have at most 50 taints".into()));
        }
        let update_config = req
            .update_config
            .clone()
            .unwrap_or_else(|| json!({"maxUnavailable": 1}));
        check_update_config(&update_config, cluster_name, &name)?;
        let tags = req.tags.clone().unwrap_or_default();
        if tags.len() > 50 {
            return Err(bad("A resource can have at most 50 tags".into()));
        }
        let mut echoed = Map::new();
        // EKS reports node auto repair off when the request left it out.
        let repair = Some(
            req.node_repair_config
                .clone()
                .unwrap_or_else(|| json!({"enabled": false})),
        );
        for (k, v) in [
            ("remoteAccess", &req.remote_access),
            ("launchTemplate", &req.launch_template),
            ("nodeRepairConfig", &repair),
        ] {
            if let Some(v) = v {
                echoed.insert(k.into(), v.clone());
            }
        }
        let id = uuid();
        let now = epoch_now();
        let delay = Delays::duration(self.timing().pool.create);
        let nodegroup = Nodegroup {
            arn: self.arn(&format!("nodegroup/{cluster_name}/{name}/{id}")),
            name: name.clone(),
            created_at: now,
            modified_at: now,
            version,
            release_version,
            ami_type,
            capacity_type,
            instance_types: req.instance_types.clone().unwrap_or_else(|| {
                if req.launch_template.is_some() {
                    Vec::new()
                } else {
                    vec!["t3.medium".into()]
                }
            }),
            disk_size: req
                .disk_size
                .unwrap_or(if req.launch_template.is_some() { 0 } else { 20 }),
            subnets,
            node_role,
            labels: req.labels.clone().unwrap_or_default(),
            taints,
            scaling,
            update_config,
            echoed,
            tags,
            asg_name: format!("eks-{name}-{id}"),
            group_made: false,
            life: Lifecycle::moving(Status::Creating, Status::Active, Instant::now(), delay),
            updates: Vec::new(),
            pending: None,
            applied: false,
            reconciling: false,
            replace: false,
            instances: Vec::new(),
            issues: Vec::new(),
        };
        let out = json!({"nodegroup": nodegroup.json(cluster_name)});
        self.remember(&scope, token, &call.body, &nodegroup.arn);
        tracing::info!(cluster = %cluster_name, nodegroup = %name, "nodegroup creating");
        cluster.nodegroups.insert(name, nodegroup);
        Ok(out)
    }

    pub(super) fn describe_nodegroup(
        &self,
        cluster_name: &str,
        ng: &str,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let n = cluster
            .nodegroups
            .get(ng)
            .ok_or_else(|| nodegroup_not_found(cluster_name, ng))?;
        Ok(json!({"nodegroup": n.json(cluster_name)}))
    }

    pub(super) fn list_nodegroups(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let names: Vec<String> = st
            .cluster(cluster_name)?
            .nodegroups
            .keys()
            .cloned()
            .collect();
        let (page, next) = paginate(names, call)?;
        Ok(with_next(json!({"nodegroups": page}), next))
    }

    pub(super) fn delete_nodegroup(&self, cluster_name: &str, ng: &str) -> Result<Value, EksError> {
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let n = cluster
            .nodegroups
            .get_mut(ng)
            .ok_or_else(|| nodegroup_not_found(cluster_name, ng))?;
        if *n.life.state() != Status::Deleting {
            let delay = Delays::duration(self.timing().pool.delete);
            n.life
                .begin(Status::Deleting, Status::Gone, Instant::now(), delay);
            if n.reconciling {
                // A pass is launching or terminating: the deletion waits for it and for its
                // own pass, which terminates whatever is left.
                n.life.hold();
            }
            n.applied = false;
            n.modified_at = epoch_now();
            if let Some(id) = n.pending.take()
                && let Some(u) = n.updates.iter_mut().find(|u| u.id == id)
            {
                u.status = super::state::UpdateStatus::Failed;
                u.errors.push(json!({"errorCode": "Unknown", "errorMessage": "The nodegroup was deleted", "resourceIds": [ng]}));
            }
            tracing::info!(cluster = %cluster_name, nodegroup = %ng, "nodegroup deleting");
        }
        Ok(json!({"nodegroup": n.json(cluster_name)}))
    }

    pub(super) fn update_nodegroup_config(
        &self,
        cluster_name: &str,
        ng: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: UpdateConfigRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let cluster_status = *cluster.life.state();
        let n = cluster
            .nodegroups
            .get_mut(ng)
            .ok_or_else(|| nodegroup_not_found(cluster_name, ng))?;
        let scope = format!("UpdateNodegroupConfig/{}", n.arn);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| find_update(&n.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let bad = |m: String| {
            EksError::invalid_parameter(m)
                .cluster(cluster_name)
                .nodegroup(ng)
        };
        if req.labels.is_none()
            && req.taints.is_none()
            && req.scaling_config.is_none()
            && req.update_config.is_none()
            && req.node_repair_config.is_none()
        {
            return Err(bad("At least one of labels, taints, scalingConfig, updateConfig or nodeRepairConfig must be given".into()));
        }
        let mut change = NodegroupConfigChange::default();
        let mut params: Vec<(&'static str, String)> = Vec::new();
        if let Some(s) = &req.scaling_config {
            let merged = Scaling {
                min: s.min_size.unwrap_or(n.scaling.min),
                max: s.max_size.unwrap_or(n.scaling.max),
                desired: s.desired_size.unwrap_or(n.scaling.desired),
            };
            check_scaling(&merged, cluster_name, ng)?;
            if let Some(v) = s.min_size {
                params.push(("MinSize", v.to_string()));
            }
            if let Some(v) = s.max_size {
                params.push(("MaxSize", v.to_string()));
            }
            if let Some(v) = s.desired_size {
                params.push(("DesiredSize", v.to_string()));
            }
            change.scaling = Some(merged);
        }
        if let Some(l) = &req.labels {
            change.labels_add = l.add_or_update_labels.clone().unwrap_or_default();
            change.labels_remove = l.remove_labels.clone().unwrap_or_default();
            if let Some(k) = change
                .labels_remove
                .iter()
                .find(|k| change.labels_add.contains_key(*k))
            {
                return Err(bad(format!(
                    "The label key {k} can't be both added and removed"
                )));
            }
            if !change.labels_add.is_empty() {
                params.push(("LabelsToAdd", json!(change.labels_add).to_string()));
            }
            if !change.labels_remove.is_empty() {
                params.push(("LabelsToRemove", json!(change.labels_remove).to_string()));
            }
        }
        if let Some(t) = &req.taints {
            for x in t.add_or_update_taints.iter().flatten() {
                change.taints_add.push(taint(x, cluster_name, ng)?);
            }
            for x in t.remove_taints.iter().flatten() {
                let key = x.key.clone().unwrap_or_default();
                let effect = x.effect.clone().unwrap_or_default();
                if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect.as_str()) {
                    return Err(bad(format!("Taint effect {effect} is not valid")));
                }
                change.taints_remove.push(Taint {
                    key,
                    value: x.value.clone(),
                    effect,
                });
            }
            let json_of =
                |ts: &[Taint]| json!(ts.iter().map(Taint::json).collect::<Vec<_>>()).to_string();
            if !change.taints_add.is_empty() {
                params.push(("TaintsToAdd", json_of(&change.taints_add)));
            }
            if !change.taints_remove.is_empty() {
                params.push(("TaintsToRemove", json_of(&change.taints_remove)));
            }
        }
        if let Some(u) = &req.update_config {
            check_update_config(u, cluster_name, ng)?;
            if let Some(v) = u.get("maxUnavailable") {
                params.push(("MaxUnavailable", v.to_string()));
            }
            if let Some(v) = u.get("maxUnavailablePercentage") {
                params.push(("MaxUnavailablePercentage", v.to_string()));
            }
            change.update_config = Some(u.clone());
        }
        if let Some(r) = &req.node_repair_config {
            params.push((
                "NodeRepairEnabled",
                r.get("enabled")
                    .cloned()
                    .unwrap_or(json!(false))
                    .to_string(),
            ));
            n.echoed.insert("nodeRepairConfig".into(), r.clone());
        }
        ensure_nodegroup_idle(n, cluster_name, cluster_status, "ConfigUpdate")?;
        let update = Update::new(
            "ConfigUpdate",
            params,
            Change::NodegroupConfig(Box::new(change)),
            epoch_now(),
        );
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_nodegroup_update(cluster_name, n, update)}))
    }

    pub(super) fn update_nodegroup_version(
        &self,
        cluster_name: &str,
        ng: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: UpdateVersionRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let cluster_status = *cluster.life.state();
        let cluster_version = cluster.version.clone();
        let cluster_update = cluster.pending_update().map(|u| u.id.clone());
        let n = cluster
            .nodegroups
            .get_mut(ng)
            .ok_or_else(|| nodegroup_not_found(cluster_name, ng))?;
        let scope = format!("UpdateNodegroupVersion/{}", n.arn);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| find_update(&n.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let version = req
            .version
            .clone()
            .unwrap_or_else(|| cluster_version.clone());
        check_node_version(&version, &cluster_version)
            .map_err(|e| e.cluster(cluster_name).nodegroup(ng))?;
        if catalog::minor_of(&version) < catalog::minor_of(&n.version) {
            return Err(EksError::invalid_parameter(format!(
                "Requested Nodegroup version {version} is older than the nodegroup's version {}; downgrades are not supported",
                n.version
            ))
            .cluster(cluster_name)
            .nodegroup(ng));
        }
        let release = match &req.release_version {
            Some(r) => {
                check_release(r, &version).map_err(|e| e.cluster(cluster_name).nodegroup(ng))?;
                r.clone()
            }
            None => catalog::release_version(&version),
        };
        if version == n.version
            && release == n.release_version
            && req.launch_template.is_none()
            && !req.force.unwrap_or(false)
        {
            return Err(EksError::invalid_parameter(format!(
                "Nodegroup {ng} is already at version {version} with release version {release}"
            ))
            .cluster(cluster_name)
            .nodegroup(ng));
        }
        if let Some(id) = cluster_update {
            return Err(EksError::in_use(format!(
                "Cannot VersionUpdate because cluster {cluster_name} currently has update {id} in progress"
            ))
            .cluster(cluster_name)
            .nodegroup(ng));
        }
        ensure_nodegroup_idle(n, cluster_name, cluster_status, "VersionUpdate")?;
        let mut params = vec![
            ("Version", version.clone()),
            ("ReleaseVersion", release.clone()),
        ];
        if let Some(lt) = &req.launch_template {
            if let Some(v) = lt.get("name").and_then(Value::as_str) {
                params.push(("LaunchTemplateName", v.to_string()));
            }
            if let Some(v) = lt.get("version").and_then(Value::as_str) {
                params.push(("LaunchTemplateVersion", v.to_string()));
            }
            n.echoed.insert("launchTemplate".into(), lt.clone());
        }
        let update = Update::new(
            "VersionUpdate",
            params,
            Change::NodegroupVersion { version, release },
            epoch_now(),
        );
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_nodegroup_update(cluster_name, n, update)}))
    }

    fn begin_nodegroup_update(&self, cluster: &str, n: &mut Nodegroup, update: Update) -> Value {
        let delay = Delays::duration(self.timing().pool.update);
        n.life
            .begin(Status::Updating, Status::Active, Instant::now(), delay);
        n.applied = false;
        n.pending = Some(update.id.clone());
        n.modified_at = epoch_now();
        let out = update.json();
        tracing::info!(cluster, nodegroup = %n.name, kind = update.kind, id = %update.id, "nodegroup update started");
        n.updates.push(update);
        out
    }
}

fn ensure_nodegroup_idle(
    n: &Nodegroup,
    cluster: &str,
    cluster_status: Status,
    kind: &str,
) -> Result<(), EksError> {
    if matches!(cluster_status, Status::Deleting | Status::Gone) {
        return Err(
            EksError::in_use(format!("Cluster {cluster} is being deleted"))
                .cluster(cluster)
                .nodegroup(&n.name),
        );
    }
    if let Some(u) = n.pending_update() {
        return Err(EksError::in_use(format!(
            "Cannot {kind} because nodegroup {} currently has update {} in progress",
            n.name, u.id
        ))
        .cluster(cluster)
        .nodegroup(&n.name));
    }
    let status = *n.life.state();
    if status != Status::Active {
        return Err(EksError::in_use(format!(
            "Nodegroup {} is in {} status",
            n.name,
            status.as_str()
        ))
        .cluster(cluster)
        .nodegroup(&n.name));
    }
    Ok(())
}

/// A nodegroup version must be supported and never ahead of the cluster's minor.
fn check_node_version(version: &str, cluster_version: &str) -> Result<(), EksError> {
    if !catalog::is_supported(version) {
        return Err(EksError::invalid_parameter(format!(
            "Requested Nodegroup version {version} is not a supported Kubernetes version"
        )));
    }
    if catalog::minor_of(version) > catalog::minor_of(cluster_version) {
        return Err(EksError::invalid_parameter(format!(
            "Requested Nodegroup version {version} is invalid: it can't be newer than the cluster's version {cluster_version}"
        )));
    }
    Ok(())
}

fn check_release(release: &str, version: &str) -> Result<(), EksError> {
    if !release.starts_with(&format!("{version}.")) {
        return Err(EksError::invalid_parameter(format!(
            "Requested release version {release} is not valid for kubernetes version {version}."
        )));
    }
    Ok(())
}

/// Applies a completed nodegroup update; whether the instances must be reconciled.
pub fn apply_nodegroup_change(n: &mut Nodegroup, change: &Change) -> bool {
    match change {
        Change::NodegroupConfig(c) => {
            let mut resize = false;
            if let Some(s) = c.scaling {
                resize = s.desired != n.scaling.desired;
                n.scaling = s;
            }
            for k in &c.labels_remove {
                n.labels.remove(k);
            }
            n.labels.extend(c.labels_add.clone());
            n.taints.retain(|t| {
                !c.taints_remove
                    .iter()
                    .any(|r| r.key == t.key && (r.effect.is_empty() || r.effect == t.effect))
            });
            for t in &c.taints_add {
                n.taints
                    .retain(|x| !(x.key == t.key && x.effect == t.effect));
                n.taints.push(t.clone());
            }
            if let Some(u) = &c.update_config {
                n.update_config = u.clone();
            }
            resize
        }
        Change::NodegroupVersion { version, release } => {
            n.version = version.clone();
            n.release_version = release.clone();
            n.replace = true;
            true
        }
        _ => false,
    }
}
