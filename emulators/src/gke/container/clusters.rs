//! Clusters: create, update, resource labels and delete, with the checks of a cluster's network,
//! workload identity, authorized networks and database encryption.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::nodepools::{build_pool, zones_of};
use super::{Target, cluster_not_found, ensure_idle};
use crate::gke::catalog;
use crate::gke::error::GoogleError;
use crate::gke::render;
use crate::gke::state::{Cluster, Effect, NodePool, State, Status, cluster_key, region_of};
use crate::gke::validate::{self, int_of, last_segment, str_of};
use crate::gke::{Gke, hex, now_rfc3339};
use crate::kit::Delays;

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
    pub(super) fn create_cluster(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn update_cluster(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn set_labels(&self, t: &Target, body: Value) -> Result<Value, GoogleError> {
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

    pub(super) fn delete_cluster(&self, t: &Target) -> Result<Value, GoogleError> {
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
}
