//! OKE node pools: create, read, list, update, delete and the node pool options, with the checks
//! of shapes, images, labels, placements, versions and the OCPU limit they go through.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{check_name, deletable, quota_error, version_error};
use crate::oke::api::{Answer, Req, required, str_field, tags};
use crate::oke::catalog::{self, POOL_SKEW};
use crate::oke::error::OciError;
use crate::oke::state::{Effect, Life, NodePool, State};
use crate::oke::{Oke, new_etag};

/// A label key as Kubernetes takes it (an optional DNS prefix, a name of at most 63).
fn label_ok(key: &str, value: &str) -> bool {
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.len() <= 63
            && n.starts_with(|c: char| c.is_ascii_alphanumeric())
            && n.ends_with(|c: char| c.is_ascii_alphanumeric())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            })
    });
    prefix_ok && name_ok(name) && (value.is_empty() || name_ok(value))
}

impl Oke {
    /// Checks a pool's shape, its shape config and its image against each other and `version`.
    fn check_node_shape(
        shape: &str,
        shape_config: &Value,
        image: &catalog::Image,
        version: &str,
    ) -> Result<(), OciError> {
        let s = catalog::shape(shape).ok_or_else(|| {
            OciError::invalid(format!(
                "Invalid nodeShape: {shape} is not a shape OKE offers for node pools"
            ))
        })?;
        match (s.flexible, shape_config.is_null()) {
            (true, true) => {
                return Err(OciError::invalid(format!(
                    "nodeShapeConfig.ocpus is required for the flexible shape {shape}"
                )));
            }
            (true, false) => {
                let ocpus = shape_config["ocpus"].as_f64().unwrap_or(0.0);
                if ocpus < 1.0 || ocpus > f64::from(s.max_ocpus) {
                    return Err(OciError::invalid(format!(
                        "nodeShapeConfig.ocpus {ocpus} must be from 1 to {} for {shape}",
                        s.max_ocpus
                    )));
                }
                if let Some(m) = shape_config["memoryInGBs"].as_f64()
                    && (m < ocpus || m > ocpus * 64.0)
                {
                    return Err(OciError::invalid(format!(
                        "nodeShapeConfig.memoryInGBs {m} must be from 1 to 64 GB per OCPU for {shape}"
                    )));
                }
            }
            (false, false) => {
                return Err(OciError::invalid(format!(
                    "nodeShapeConfig is only for flexible shapes; {shape} is fixed"
                )));
            }
            (false, true) => {}
        }
        if image.arm != s.arm {
            return Err(OciError::invalid(format!(
                "The image {} is built for {} processors; shape {shape} has {} processors",
                image.name,
                if image.arm { "Arm" } else { "x86" },
                if s.arm { "Arm" } else { "x86" }
            )));
        }
        if let Some(k) = image.kubernetes
            && k != catalog::minor_text(version)
        {
            return Err(OciError::invalid(format!(
                "The image {} is an OKE image for Kubernetes {k}; the node pool runs {version}",
                image.name
            )));
        }
        Ok(())
    }

    fn image_of(b: &Value) -> Result<Option<&'static catalog::Image>, OciError> {
        if let Some(id) = str_field(&b["nodeSourceDetails"], "imageId") {
            if b["nodeSourceDetails"]["sourceType"] != "IMAGE" {
                return Err(OciError::invalid(
                    "nodeSourceDetails.sourceType must be IMAGE",
                ));
            }
            if let Some(size) = b["nodeSourceDetails"]["bootVolumeSizeInGBs"].as_i64()
                && !(50..=32_768).contains(&size)
            {
                return Err(OciError::invalid(format!(
                    "nodeSourceDetails.bootVolumeSizeInGBs {size} must be from 50 to 32768"
                )));
            }
            return catalog::image(id).map(Some).ok_or_else(|| {
                OciError::not_found(format!("image {id} (nodeSourceDetails.imageId)"))
            });
        }
        if let Some(name) = str_field(b, "nodeImageName") {
            return catalog::image_named(name)
                .map(Some)
                .ok_or_else(|| OciError::invalid(format!("Invalid nodeImageName: {name}")));
        }
        Ok(None)
    }

    fn check_labels(b: &Value) -> Result<Value, OciError> {
        let labels = match &b["initialNodeLabels"] {
            Value::Null => return Ok(json!([])),
            Value::Array(a) => a,
            _ => return Err(OciError::invalid("initialNodeLabels must be a list")),
        };
        for (i, l) in labels.iter().enumerate() {
            let Some(key) = l["key"].as_str().filter(|k| !k.is_empty()) else {
                return Err(OciError::missing(&format!("initialNodeLabels[{i}].key")));
            };
            let value = l["value"].as_str().unwrap_or_default();
            if !label_ok(key, value) {
                return Err(OciError::invalid(format!(
                    "initialNodeLabels: {key}={value} is not a valid Kubernetes label"
                )));
            }
        }
        Ok(Value::Array(labels.clone()))
    }

    fn check_placements(&self, st: &State, config: &Value, vcn: &str) -> Result<(), OciError> {
        let placements = config["placementConfigs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if placements.is_empty() {
            return Err(OciError::missing("nodeConfigDetails.placementConfigs"));
        }
        let ads = self.availability_domains();
        for (i, p) in placements.iter().enumerate() {
            let ad = p["availabilityDomain"].as_str().unwrap_or_default();
            if !ads.iter().any(|a| a == ad) {
                return Err(OciError::invalid(format!(
                    "nodeConfigDetails.placementConfigs[{i}].availabilityDomain {ad:?} is not one of {}",
                    ads.join(", ")
                )));
            }
            let subnet = p["subnetId"].as_str().unwrap_or_default();
            self.subnet_in(
                st,
                subnet,
                vcn,
                &format!("nodeConfigDetails.placementConfigs[{i}].subnetId"),
            )?;
            for fd in p["faultDomains"].as_array().into_iter().flatten() {
                if !catalog::FAULT_DOMAINS.iter().any(|f| fd == f) {
                    return Err(OciError::invalid(format!(
                        "nodeConfigDetails.placementConfigs[{i}].faultDomains: {fd} is not a fault domain"
                    )));
                }
            }
        }
        let size = match &config["size"] {
            Value::Null => return Err(OciError::missing("nodeConfigDetails.size")),
            v => v.as_i64().ok_or_else(|| {
                OciError::invalid(format!("nodeConfigDetails.size {v} is not an integer"))
            })?,
        };
        if !(0..=1000).contains(&size) {
            return Err(OciError::invalid(format!(
                "nodeConfigDetails.size {size} must be from 0 to 1000"
            )));
        }
        if let Some(max) = config["nodePoolPodNetworkOptionDetails"]["maxPodsPerNode"].as_i64()
            && !(1..=110).contains(&max)
        {
            return Err(OciError::invalid(format!(
                "nodeConfigDetails.nodePoolPodNetworkOptionDetails.maxPodsPerNode {max} must be from 1 to 110"
            )));
        }
        Ok(())
    }

    fn check_pool_version(version: &str, cluster: &str) -> Result<(), OciError> {
        if !catalog::offered(version) {
            return Err(version_error("kubernetesVersion", version));
        }
        let (p, c) = (catalog::parse(version), catalog::parse(cluster));
        if p > c {
            return Err(OciError::invalid(format!(
                "Invalid kubernetesVersion: a node pool cannot run {version}, newer than its cluster's {cluster}"
            )));
        }
        if catalog::minor(cluster)
            .1
            .saturating_sub(catalog::minor(version).1)
            > POOL_SKEW
        {
            return Err(OciError::invalid(format!(
                "Invalid kubernetesVersion: {version} is more than {POOL_SKEW} minor versions behind the cluster's {cluster}"
            )));
        }
        Ok(())
    }

    fn check_quota(&self, st: &State, ocpus: u32) -> Result<(), OciError> {
        let used = st.ocpus_used();
        if used + ocpus > self.config.ocpu_limit {
            return Err(quota_error(self.config.ocpu_limit, used, ocpus));
        }
        Ok(())
    }

    /// `POST /20180222/nodePools`.
    pub(in crate::oke) fn create_pool(&self, req: &Req) -> Result<Answer, OciError> {
        if let Some(a) = self.replay("CreateNodePool", req)? {
            return Ok(a);
        }
        let b = &req.body;
        let compartment = self.check_compartment(b)?;
        let cluster_id = required(b, "clusterId")?;
        let name = required(b, "name")?;
        check_name(name, "Node pool")?;
        let version = required(b, "kubernetesVersion")?;
        let shape = required(b, "nodeShape")?;
        let image = Self::image_of(b)?.ok_or_else(|| OciError::missing("nodeSourceDetails"))?;
        if !b["subnetIds"].is_null() || !b["quantityPerSubnet"].is_null() {
            return Err(OciError::invalid(
                "subnetIds and quantityPerSubnet are not supported for VCN-native clusters; use nodeConfigDetails.placementConfigs and nodeConfigDetails.size",
            ));
        }
        let labels = Self::check_labels(b)?;
        let config = &b["nodeConfigDetails"];
        if config.is_null() {
            return Err(OciError::missing("nodeConfigDetails"));
        }
        let freeform = tags(b, "freeformTags")?;
        let defined = tags(b, "definedTags")?;
        let mut st = self.lock();
        let cluster = self.cluster(&st, cluster_id)?;
        if cluster.life != Life::Active && cluster.life != Life::Updating {
            return Err(OciError::incorrect_state(format!(
                "Cluster {cluster_id} is {}; node pools are created in ACTIVE clusters",
                cluster.life.as_str()
            )));
        }
        Self::check_pool_version(version, &cluster.version)?;
        Self::check_node_shape(shape, &b["nodeShapeConfig"], image, version)?;
        let vcn = cluster.vcn.clone();
        self.check_placements(&st, config, &vcn)?;
        let size = config["size"].as_u64().unwrap_or(0) as u32;
        let mut pool = NodePool {
            id: self.ocid("nodepool"),
            cluster: cluster_id.to_string(),
            compartment: compartment.clone(),
            name: name.to_string(),
            version: version.to_string(),
            shape: shape.to_string(),
            shape_config: b["nodeShapeConfig"].clone(),
            source: json!({
                "sourceType": "IMAGE",
                "imageId": image.id,
                "bootVolumeSizeInGBs": b["nodeSourceDetails"]["bootVolumeSizeInGBs"].as_i64().unwrap_or(50),
            }),
            labels,
            node_config: config.clone(),
            // Absent unless given, as OKE answers it.
            node_metadata: b["nodeMetadata"].clone(),
            ssh_key: str_field(b, "sshPublicKey").map(String::from),
            eviction: b["nodeEvictionNodePoolSettings"].clone(),
            cycling: b["nodePoolCyclingDetails"].clone(),
            freeform_tags: freeform,
            defined_tags: defined,
            life: Life::Creating,
            details: "Creating".into(),
            etag: new_etag(),
            busy: None,
            nodes: Vec::new(),
            forget_at: None,
        };
        self.check_quota(&st, pool.ocpus_per_node() * size)?;
        let delay = self.delay(|t| t.pool, |d| d.create);
        let id = pool.id.clone();
        let wr = self.work_request(
            &mut st,
            "NODEPOOL_CREATE",
            &compartment,
            ("nodepool", &id),
            cluster_id,
            Effect::CreatePool,
            delay,
        );
        pool.busy = Some(wr.clone());
        st.pools.insert(id.clone(), pool);
        drop(st);
        self.remember("CreateNodePool", req, &wr);
        tracing::info!(pool = %id, %name, "node pool create accepted");
        Ok(Answer::accepted(&wr))
    }

    fn pool_body(&self, p: &NodePool, nodes: bool) -> Value {
        let image = p.source["imageId"].as_str().and_then(catalog::image);
        let mut body = json!({
            "id": p.id,
            "compartmentId": p.compartment,
            "clusterId": p.cluster,
            "name": p.name,
            "kubernetesVersion": p.version,
            "nodeMetadata": p.node_metadata,
            "nodeImageId": p.source["imageId"],
            "nodeImageName": image.map(|i| i.name),
            "nodeShapeConfig": p.shape_config,
            "nodeSourceDetails": p.source,
            "nodeSource": { "sourceType": "IMAGE", "sourceName": image.map(|i| i.name), "imageId": p.source["imageId"] },
            "nodeShape": p.shape,
            "initialNodeLabels": p.labels,
            "sshPublicKey": p.ssh_key,
            "quantityPerSubnet": 0,
            "subnetIds": [],
            "nodeConfigDetails": p.node_config,
            "freeformTags": p.freeform_tags,
            "definedTags": p.defined_tags,
            "systemTags": {},
            "nodeEvictionNodePoolSettings": p.eviction,
            "nodePoolCyclingDetails": p.cycling,
            "lifecycleState": p.life.as_str(),
            "lifecycleDetails": p.details,
        });
        if nodes {
            body["nodes"] = json!(
                p.nodes
                    .iter()
                    .map(|n| json!({
                        "id": n.id,
                        "name": n.name,
                        "availabilityDomain": n.availability_domain,
                        "subnetId": n.subnet,
                        "nodePoolId": p.id,
                        "faultDomain": n.fault_domain,
                        "privateIp": n.private_ip,
                        "kubernetesVersion": n.version,
                        "lifecycleState": if n.leaving_at.is_some() { "DELETING" } else { "ACTIVE" },
                        "lifecycleDetails": "",
                        "nodeError": null,
                        "freeformTags": p.node_config["freeformTags"],
                    }))
                    .collect::<Vec<_>>()
            );
        }
        body
    }

    /// `GET /20180222/nodePools/{id}`, with its nodes.
    pub(in crate::oke) fn get_pool(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let p = st
            .pools
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("node pool {id}")))?;
        Ok(Answer::json(200, self.pool_body(p, true))
            .etag(&p.etag)
            .gone_if(p.life == Life::Deleted))
    }

    /// `GET /20180222/nodePools?compartmentId=…`: summaries.
    pub(in crate::oke) fn list_pools(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = st
            .pools
            .values()
            .filter(|p| p.compartment == compartment)
            .filter(|p| req.passes("clusterId", &p.cluster))
            .filter(|p| req.passes("name", &p.name))
            .filter(|p| req.passes("lifecycleState", p.life.as_str()))
            .map(|p| self.pool_body(p, false))
            .collect();
        drop(st);
        req.page(items)
    }

    /// `PUT /20180222/nodePools/{id}`.
    pub(in crate::oke) fn update_pool(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let b = &req.body;
        let mut st = self.lock();
        let p = st
            .pools
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("node pool {id}")))?
            .clone();
        req.check_etag(&p.etag)?;
        if let Some(wr) = &p.busy {
            return Err(OciError::incorrect_state(format!(
                "Node pool {id} is {} (work request {wr}); try again when it is ACTIVE",
                p.life.as_str()
            )));
        }
        if matches!(p.life, Life::Deleting | Life::Deleted | Life::Creating) {
            return Err(OciError::incorrect_state(format!(
                "Node pool {id} is {}",
                p.life.as_str()
            )));
        }
        let cluster = self.cluster(&st, &p.cluster)?.clone();
        let mut next = p.clone();
        if let Some(n) = str_field(b, "name") {
            check_name(n, "Node pool")?;
            next.name = n.to_string();
        }
        if let Some(v) = str_field(b, "kubernetesVersion")
            && v != p.version
        {
            Self::check_pool_version(v, &cluster.version)?;
            if catalog::parse(v) < catalog::parse(&p.version) {
                return Err(OciError::invalid(format!(
                    "Invalid kubernetesVersion: node pool {id} runs {} and cannot be downgraded to {v}",
                    p.version
                )));
            }
            next.version = v.to_string();
        }
        if let Some(s) = str_field(b, "nodeShape") {
            next.shape = s.to_string();
        }
        if !b["nodeShapeConfig"].is_null() {
            next.shape_config = b["nodeShapeConfig"].clone();
        }
        if (!b["nodeSourceDetails"].is_null() || !b["nodeImageName"].is_null())
            && let Some(image) = Self::image_of(b)?
        {
            next.source = json!({
                "sourceType": "IMAGE",
                "imageId": image.id,
                "bootVolumeSizeInGBs": b["nodeSourceDetails"]["bootVolumeSizeInGBs"].as_i64().or(p.source["bootVolumeSizeInGBs"].as_i64()).unwrap_or(50),
            });
        }
        let image = next.source["imageId"]
            .as_str()
            .and_then(catalog::image)
            .ok_or_else(|| OciError::internal("the node pool's image is unknown"))?;
        Self::check_node_shape(&next.shape, &next.shape_config, image, &next.version)?;
        if !b["initialNodeLabels"].is_null() {
            next.labels = Self::check_labels(b)?;
        }
        if let Value::Object(c) = &b["nodeConfigDetails"] {
            let mut merged = p.node_config.clone();
            for (k, v) in c {
                merged[k] = v.clone();
            }
            self.check_placements(&st, &merged, &cluster.vcn)?;
            next.node_config = merged;
        }
        for (field, slot) in [
            ("nodeMetadata", &mut next.node_metadata),
            ("nodeEvictionNodePoolSettings", &mut next.eviction),
            ("nodePoolCyclingDetails", &mut next.cycling),
        ] {
            if !b[field].is_null() {
                *slot = b[field].clone();
            }
        }
        if !b["freeformTags"].is_null() {
            next.freeform_tags = tags(b, "freeformTags")?;
        }
        if !b["definedTags"].is_null() {
            next.defined_tags = tags(b, "definedTags")?;
        }
        if let Some(k) = str_field(b, "sshPublicKey") {
            next.ssh_key = Some(k.to_string());
        }
        let more = next.size().saturating_sub(p.serving().count() as u32);
        self.check_quota(&st, next.ocpus_per_node() * more)?;
        next.life = Life::Updating;
        next.details = "Updating".into();
        next.etag = new_etag();
        let delay = self.delay(|t| t.pool, |d| d.update);
        let wr = self.work_request(
            &mut st,
            "NODEPOOL_UPDATE",
            &p.compartment,
            ("nodepool", id),
            &p.cluster,
            Effect::UpdatePool,
            delay,
        );
        next.busy = Some(wr.clone());
        st.pools.insert(id.to_string(), next);
        Ok(Answer::accepted(&wr))
    }

    /// `DELETE /20180222/nodePools/{id}`.
    pub(in crate::oke) fn delete_pool(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let mut st = self.lock();
        let p = st
            .pools
            .get_mut(id)
            .ok_or_else(|| OciError::not_found(format!("node pool {id}")))?;
        req.check_etag(&p.etag)?;
        deletable(p.life, "Node pool", id)?;
        if let Some(old) = p.busy.take()
            && let Some(w) = st.work_requests.get_mut(&old)
        {
            w.fail(OciError::conflict("The node pool is being deleted"));
        }
        let Some(p) = st.pools.get_mut(id) else {
            return Err(OciError::not_found(format!("node pool {id}")));
        };
        p.life = Life::Deleting;
        p.details = "Deleting".into();
        p.etag = new_etag();
        let (compartment, cluster) = (p.compartment.clone(), p.cluster.clone());
        let delay = self.delay(|t| t.pool, |d| d.delete);
        let wr = self.work_request(
            &mut st,
            "NODEPOOL_DELETE",
            &compartment,
            ("nodepool", id),
            &cluster,
            Effect::DeletePool,
            delay,
        );
        if let Some(p) = st.pools.get_mut(id) {
            p.busy = Some(wr.clone());
        }
        Ok(Answer::accepted(&wr))
    }

    /// `GET /20180222/nodePoolOptions/{id}` (`all`, or a cluster).
    pub(in crate::oke) fn pool_options(&self, id: &str) -> Result<Answer, OciError> {
        let versions: Vec<&str> = if id == "all" {
            catalog::VERSIONS.to_vec()
        } else {
            let st = self.lock();
            let c = self.cluster(&st, id)?;
            catalog::VERSIONS
                .iter()
                .copied()
                .filter(|v| Self::check_pool_version(v, &c.version).is_ok())
                .collect()
        };
        Ok(Answer::json(
            200,
            json!({
                "kubernetesVersions": versions,
                "shapes": catalog::SHAPES.iter().map(|s| s.name).collect::<Vec<_>>(),
                "images": catalog::IMAGES.iter().map(|i| i.name).collect::<Vec<_>>(),
                "sources": catalog::IMAGES.iter().map(|i| json!({ "sourceType": "IMAGE", "sourceName": i.name, "imageId": i.id })).collect::<Vec<_>>(),
            }),
        ))
    }
}

/// The labels of a pool's nodes (`initialNodeLabels`), as a map.
pub fn labels_of(p: &NodePool) -> BTreeMap<String, String> {
    p.labels
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            Some((
                l["key"].as_str()?.to_string(),
                l["value"].as_str().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_checked_as_kubernetes_checks_them() {
        assert!(label_ok("team", "a"));
        assert!(label_ok("example.com/team", ""));
        assert!(!label_ok("Example.com/team", "a"));
        assert!(!label_ok("team", "-a"));
        assert!(!label_ok(&"a".repeat(64), "b"));
    }
}
