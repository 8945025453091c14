//! Container Engine for Kubernetes (`/20180222`): clusters, node pools, work requests,
//! kubeconfigs and the options OKE offers.
//!
//! Every mutation answers `202 Accepted` with `opc-work-request-id`; the work request moves
//! ACCEPTED → IN_PROGRESS → SUCCEEDED (or FAILED, with its errors and log) and the resource
//! CREATING/UPDATING/DELETING → ACTIVE/DELETED (or FAILED). One work request at a time per
//! cluster or node pool: another change meanwhile is 409 `IncorrectState`. Creates honour
//! `opc-retry-token`; updates and deletes honour `if-match`.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::{Answer, Req, required, str_field, tags};
use super::catalog::{self, POOL_SKEW};
use super::core::parse_cidr;
use super::error::OciError;
use super::state::{Cluster, CoreKind, Effect, Life, NodePool, State, WorkRequest, WrStatus};
use super::{Oke, new_etag, now_rfc3339};
use crate::kit::idempotency::{Replay, fingerprint};
use crate::kit::lifecycle::Delays;

/// The cluster types OKE offers.
const CLUSTER_TYPES: [&str; 2] = ["BASIC_CLUSTER", "ENHANCED_CLUSTER"];

/// The CNIs OKE offers.
const CNI_TYPES: [&str; 2] = ["OCI_VCN_IP_NATIVE", "FLANNEL_OVERLAY"];

/// The API server's port on OKE.
pub const API_PORT: u16 = 6443;

/// Whether a cluster or node pool (`what`, as a sentence starts) may be deleted: not once it
/// is DELETED (it is not found), nor twice.
fn deletable(life: Life, what: &str, id: &str) -> Result<(), OciError> {
    match life {
        Life::Deleted => Err(OciError::not_found(format!("{} {id}", what.to_lowercase()))),
        Life::Deleting => Err(OciError::incorrect_state(format!(
            "{what} {id} is already being deleted"
        ))),
        _ => Ok(()),
    }
}

fn check_name(name: &str, what: &str) -> Result<(), OciError> {
    if name.is_empty() || name.chars().count() > 255 {
        return Err(OciError::invalid(format!(
            "{what} name must be 1 to 255 characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(OciError::invalid(format!(
            "{what} name {name:?} holds control characters"
        )));
    }
    Ok(())
}

fn version_error(field: &str, version: &str) -> OciError {
    OciError::invalid(format!(
        "Invalid {field}: {version} is not a Kubernetes version OKE offers; offered versions are {}",
        catalog::VERSIONS.join(", ")
    ))
}

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
    fn delay(
        &self,
        which: fn(&crate::kit::Timing) -> Delays,
        pick: fn(&Delays) -> f64,
    ) -> std::time::Duration {
        Delays::duration(pick(&which(&self.kit.timing())))
    }

    /// Records a work request of `operation` on `entity`, completing with `effect` after `delay`.
    #[allow(clippy::too_many_arguments)]
    fn work_request(
        &self,
        st: &mut State,
        operation: &'static str,
        compartment: &str,
        entity: (&'static str, &str),
        cluster: &str,
        effect: Effect,
        delay: std::time::Duration,
    ) -> String {
        let id = self.ocid("clustersworkrequest");
        let now = Instant::now();
        st.work_requests.insert(
            id.clone(),
            WorkRequest {
                id: id.clone(),
                operation,
                status: WrStatus::Accepted,
                compartment: compartment.to_string(),
                entity: (entity.0, entity.1.to_string()),
                cluster: cluster.to_string(),
                times: [Some(now_rfc3339()), None, None],
                start_at: now + (delay / 10).min(std::time::Duration::from_millis(500)),
                done_at: now + delay,
                effect: Some(effect),
                errors: Vec::new(),
                logs: vec![(now_rfc3339(), format!("{operation} accepted"))],
            },
        );
        id
    }

    fn replay(&self, scope: &str, req: &Req) -> Result<Option<Answer>, OciError> {
        let Some(token) = req.retry_token() else {
            return Ok(None);
        };
        match self
            .tokens
            .check(scope, &token, &fingerprint(&req.body, ""))
        {
            Replay::New => Ok(None),
            Replay::Same(wr) => Ok(Some(Answer::accepted(&wr))),
            Replay::Mismatch => Err(OciError::conflict(
                "The opc-retry-token was used for a request with different parameters",
            )),
        }
    }

    fn remember(&self, scope: &str, req: &Req, work_request: &str) {
        if let Some(token) = req.retry_token() {
            self.tokens
                .remember(scope, &token, &fingerprint(&req.body, ""), work_request);
        }
    }

    fn subnet_in(&self, st: &State, id: &str, vcn: &str, field: &str) -> Result<Value, OciError> {
        if id.is_empty() {
            return Err(OciError::missing(field));
        }
        let subnet = st
            .live(CoreKind::Subnet, id)
            .ok_or_else(|| OciError::not_found(format!("{field} subnet {id}")))?;
        if subnet.vcn() != vcn {
            return Err(OciError::invalid(format!(
                "{field}: subnet {id} is not in the cluster's VCN {vcn}"
            )));
        }
        Ok(subnet.body.clone())
    }

    // ---- clusters ----

    /// `POST /20180222/clusters`.
    pub(super) fn create_cluster(&self, req: &Req) -> Result<Answer, OciError> {
        if let Some(a) = self.replay("CreateCluster", req)? {
            return Ok(a);
        }
        let b = &req.body;
        let name = required(b, "name")?;
        check_name(name, "Cluster")?;
        let compartment = self.check_compartment(b)?;
        let vcn_id = required(b, "vcnId")?;
        let version = required(b, "kubernetesVersion")?;
        if !catalog::offered(version) {
            return Err(version_error("kubernetesVersion", version));
        }
        let cluster_type = str_field(b, "type").unwrap_or("BASIC_CLUSTER");
        if !CLUSTER_TYPES.contains(&cluster_type) {
            return Err(OciError::invalid(format!(
                "type {cluster_type:?} must be BASIC_CLUSTER or ENHANCED_CLUSTER"
            )));
        }
        let pod_network = match &b["clusterPodNetworkOptions"] {
            Value::Array(a) if !a.is_empty() => {
                for o in a {
                    let cni = o["cniType"].as_str().unwrap_or_default();
                    if !CNI_TYPES.contains(&cni) {
                        return Err(OciError::invalid(format!(
                            "clusterPodNetworkOptions.cniType {cni:?} must be OCI_VCN_IP_NATIVE or FLANNEL_OVERLAY"
                        )));
                    }
                }
                Value::Array(a.clone())
            }
            _ => json!([{ "cniType": "FLANNEL_OVERLAY" }]),
        };
        if let Some(key) = str_field(b, "kmsKeyId")
            && !key.starts_with("ocid1.key.")
        {
            return Err(OciError::invalid(format!(
                "kmsKeyId {key} is not the OCID of a Vault key"
            )));
        }
        let freeform = tags(b, "freeformTags")?;
        let defined = tags(b, "definedTags")?;
        let mut st = self.lock();
        let vcn = st
            .live(CoreKind::Vcn, vcn_id)
            .ok_or_else(|| OciError::not_found(format!("VCN {vcn_id}")))?
            .clone();
        let endpoint = &b["endpointConfig"];
        let endpoint_subnet = required(endpoint, "subnetId")
            .map_err(|_| OciError::missing("endpointConfig.subnetId"))?;
        let subnet = self.subnet_in(&st, endpoint_subnet, vcn_id, "endpointConfig.subnetId")?;
        let public = endpoint["isPublicIpEnabled"].as_bool().unwrap_or(false);
        if public && subnet["prohibitPublicIpOnVnic"] == true {
            return Err(OciError::invalid(format!(
                "endpointConfig.isPublicIpEnabled is true but subnet {endpoint_subnet} is private (prohibitPublicIpOnVnic): a public endpoint needs a public subnet"
            )));
        }
        let options = if b["options"].is_null() {
            json!({})
        } else {
            b["options"].clone()
        };
        for s in options["serviceLbSubnetIds"]
            .as_array()
            .into_iter()
            .flatten()
        {
            self.subnet_in(
                &st,
                s.as_str().unwrap_or_default(),
                vcn_id,
                "options.serviceLbSubnetIds",
            )?;
        }
        let vcn_blocks: Vec<(u32, u8)> = vcn.body["cidrBlocks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().and_then(parse_cidr))
            .collect();
        for field in ["podsCidr", "servicesCidr"] {
            if let Some(c) = options["kubernetesNetworkConfig"][field].as_str() {
                let cidr = parse_cidr(c).ok_or_else(|| {
                    OciError::invalid(format!(
                        "options.kubernetesNetworkConfig.{field} {c} is not a CIDR block"
                    ))
                })?;
                let flannel = pod_network[0]["cniType"] == "FLANNEL_OVERLAY";
                if (field == "servicesCidr" || flannel)
                    && vcn_blocks.iter().any(|v| contract::cidr::overlap(*v, cidr))
                {
                    return Err(OciError::invalid(format!(
                        "options.kubernetesNetworkConfig.{field} {c} overlaps the VCN's CIDR blocks"
                    )));
                }
            }
        }
        let live = st
            .clusters
            .values()
            .filter(|c| c.life != Life::Deleted)
            .count();
        if live >= self.config.cluster_limit {
            return Err(OciError::limit(format!(
                "You have reached the service limit of {} clusters in {}; delete a cluster or request a limit increase",
                self.config.cluster_limit, self.config.region
            )));
        }
        let id = self.ocid("cluster");
        let private_ip = st.allocate_ip(endpoint_subnet);
        let delay = self.delay(|t| t.cluster, |d| d.create);
        let wr = self.work_request(
            &mut st,
            "CLUSTER_CREATE",
            &compartment,
            ("cluster", &id),
            &id,
            Effect::CreateCluster,
            delay,
        );
        let now = now_rfc3339();
        let workload_id = format!("oke-{}", &id[id.len() - 12..]);
        st.clusters.insert(
            id.clone(),
            Cluster {
                id: id.clone(),
                name: name.to_string(),
                compartment,
                vcn: vcn_id.to_string(),
                version: version.to_string(),
                endpoint_config: json!({
                    "subnetId": endpoint_subnet,
                    "nsgIds": endpoint["nsgIds"].as_array().cloned().unwrap_or_default(),
                    "isPublicIpEnabled": public,
                }),
                options,
                freeform_tags: freeform,
                defined_tags: defined,
                kms_key: str_field(b, "kmsKeyId").map(String::from),
                cluster_type: cluster_type.to_string(),
                pod_network,
                image_policy: if b["imagePolicyConfig"].is_null() {
                    json!({ "isPolicyEnabled": false, "keyDetails": [] })
                } else {
                    b["imagePolicyConfig"].clone()
                },
                life: Life::Creating,
                details: "Creating".into(),
                metadata: json!({
                    "timeCreated": now,
                    "createdByUserId": req.user(),
                    "createdByWorkRequestId": wr,
                }),
                etag: new_etag(),
                busy: Some(wr.clone()),
                creator: req.user(),
                private_ip,
                workload_id,
                start_requested: false,
                endpoint: None,
                nodes_dirty: false,
                forget_at: None,
            },
        );
        drop(st);
        self.remember("CreateCluster", req, &wr);
        tracing::info!(cluster = %id, %name, "cluster create accepted");
        Ok(Answer::accepted(&wr))
    }

    fn public_ip(c: &Cluster) -> String {
        let n =
            c.id.bytes()
                .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
        format!("150.136.{}.{}", n % 250, 10 + n % 200)
    }

    /// The `endpoints` object: the public endpoint (the workload API server's address when one
    /// runs) and the private one in the endpoint subnet.
    fn endpoints(&self, c: &Cluster) -> Value {
        if matches!(c.life, Life::Creating | Life::Deleted) && c.endpoint.is_none() {
            return Value::Null;
        }
        let mut e = json!({
            "privateEndpoint": format!("{}:{API_PORT}", c.private_ip),
        });
        if c.endpoint_config["isPublicIpEnabled"] == true {
            e["publicEndpoint"] = json!(match &c.endpoint {
                Some(ep) => format!("{}:{}", ep.host, ep.port),
                None => format!("{}:{API_PORT}", Self::public_ip(c)),
            });
        }
        e
    }

    fn cluster_body(&self, c: &Cluster) -> Value {
        let mut metadata = c.metadata.clone();
        metadata["timeCredentialExpiration"] = json!("2031-11-30T00:00:00.000Z");
        json!({
            "id": c.id,
            "name": c.name,
            "compartmentId": c.compartment,
            "vcnId": c.vcn,
            "kubernetesVersion": c.version,
            "endpointConfig": c.endpoint_config,
            "kmsKeyId": c.kms_key,
            "options": c.options,
            "freeformTags": c.freeform_tags,
            "definedTags": c.defined_tags,
            "systemTags": {},
            "metadata": metadata,
            "lifecycleState": c.life.as_str(),
            "lifecycleDetails": c.details,
            "endpoints": self.endpoints(c),
            "availableKubernetesUpgrades": if c.life == Life::Active { catalog::upgrades(&c.version) } else { Vec::new() },
            "imagePolicyConfig": c.image_policy,
            "clusterPodNetworkOptions": c.pod_network,
            "type": c.cluster_type,
        })
    }

    fn cluster<'s>(&self, st: &'s State, id: &str) -> Result<&'s Cluster, OciError> {
        st.clusters
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("cluster {id}")))
    }

    /// `GET /20180222/clusters/{id}`.
    pub(super) fn get_cluster(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let c = self.cluster(&st, id)?;
        Ok(Answer::json(200, self.cluster_body(c))
            .etag(&c.etag)
            .gone_if(c.life == Life::Deleted))
    }

    /// `GET /20180222/clusters?compartmentId=…`: summaries, DELETED ones included unless a
    /// `lifecycleState` is asked for.
    pub(super) fn list_clusters(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = st
            .clusters
            .values()
            .filter(|c| c.compartment == compartment)
            .filter(|c| req.passes("name", &c.name))
            .filter(|c| req.passes("lifecycleState", c.life.as_str()))
            .map(|c| {
                let mut s = self.cluster_body(c);
                if let Some(o) = s.as_object_mut() {
                    o.remove("kmsKeyId");
                }
                s
            })
            .collect();
        drop(st);
        req.page(items)
    }

    fn cluster_for_change<'s>(
        &self,
        st: &'s mut State,
        id: &str,
        req: &Req,
    ) -> Result<&'s mut Cluster, OciError> {
        let c = st
            .clusters
            .get_mut(id)
            .ok_or_else(|| OciError::not_found(format!("cluster {id}")))?;
        req.check_etag(&c.etag)?;
        match (c.life, &c.busy) {
            (Life::Deleted, _) => Err(OciError::not_found(format!("cluster {id}"))),
            (_, Some(wr)) => Err(OciError::incorrect_state(format!(
                "Cluster {id} is {} (work request {wr}); try again when it is ACTIVE",
                c.life.as_str()
            ))),
            (Life::Active | Life::Failed, None) => Ok(c),
            (life, None) => Err(OciError::incorrect_state(format!(
                "Cluster {id} is {}",
                life.as_str()
            ))),
        }
    }

    /// `PUT /20180222/clusters/{id}`: name, version, options, tags, image policy, type.
    pub(super) fn update_cluster(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let b = &req.body;
        let mut st = self.lock();
        let pool_versions: Vec<(String, String)> = st
            .pools_of(id)
            .map(|p| (p.name.clone(), p.version.clone()))
            .collect();
        let c = self.cluster_for_change(&mut st, id, req)?;
        let mut upgrade = None;
        if let Some(v) = str_field(b, "kubernetesVersion")
            && v != c.version
        {
            if !catalog::offered(v) {
                return Err(version_error("kubernetesVersion", v));
            }
            if !catalog::upgrades(&c.version).contains(&v) {
                return Err(OciError::invalid(format!(
                    "Invalid kubernetesVersion: cluster {id} runs {} and can be upgraded only to {}; OKE never downgrades and moves one minor version at a time",
                    c.version,
                    catalog::upgrades(&c.version).join(", ")
                )));
            }
            let (_, target_minor) = catalog::minor(v);
            if let Some((pool, pv)) = pool_versions
                .iter()
                .find(|(_, pv)| target_minor.saturating_sub(catalog::minor(pv).1) > POOL_SKEW)
            {
                return Err(OciError::invalid(format!(
                    "Invalid kubernetesVersion: node pool {pool} runs {pv}, which would fall more than {POOL_SKEW} minor versions behind {v}; upgrade the node pool first"
                )));
            }
            upgrade = Some(v.to_string());
        }
        if let Some(t) = str_field(b, "type") {
            if !CLUSTER_TYPES.contains(&t) {
                return Err(OciError::invalid(format!(
                    "type {t:?} must be BASIC_CLUSTER or ENHANCED_CLUSTER"
                )));
            }
            if c.cluster_type == "ENHANCED_CLUSTER" && t == "BASIC_CLUSTER" {
                return Err(OciError::invalid(
                    "An enhanced cluster cannot be changed back into a basic cluster",
                ));
            }
        }
        if let Some(n) = str_field(b, "name") {
            check_name(n, "Cluster")?;
        }
        let freeform = (!b["freeformTags"].is_null())
            .then(|| tags(b, "freeformTags"))
            .transpose()?;
        let defined = (!b["definedTags"].is_null())
            .then(|| tags(b, "definedTags"))
            .transpose()?;
        if let Some(n) = str_field(b, "name") {
            c.name = n.to_string();
        }
        if let Some(t) = str_field(b, "type") {
            c.cluster_type = t.to_string();
        }
        if let Some(f) = freeform {
            c.freeform_tags = f;
        }
        if let Some(d) = defined {
            c.defined_tags = d;
        }
        if let Value::Object(o) = &b["options"]
            && let Some(current) = c.options.as_object_mut()
        {
            for (k, v) in o {
                current.insert(k.clone(), v.clone());
            }
        }
        if !b["imagePolicyConfig"].is_null() {
            c.image_policy = b["imagePolicyConfig"].clone();
        }
        c.life = Life::Updating;
        c.details = "Updating".into();
        c.etag = new_etag();
        c.metadata["timeUpdated"] = json!(now_rfc3339());
        c.metadata["updatedByUserId"] = json!(req.user());
        let compartment = c.compartment.clone();
        let delay = self.delay(|t| t.cluster, |d| d.update);
        let effect = match upgrade {
            Some(v) => Effect::UpgradeCluster(v),
            None => Effect::UpdateCluster,
        };
        let wr = self.work_request(
            &mut st,
            "CLUSTER_UPDATE",
            &compartment,
            ("cluster", id),
            id,
            effect,
            delay,
        );
        if let Some(c) = st.clusters.get_mut(id) {
            c.busy = Some(wr.clone());
            c.metadata["updatedByWorkRequestId"] = json!(wr);
        }
        Ok(Answer::accepted(&wr))
    }

    /// `POST /20180222/clusters/{id}/actions/updateEndpointConfig`.
    pub(super) fn update_endpoint_config(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let b = &req.body;
        let mut st = self.lock();
        let subnet_private = {
            let c = self.cluster(&st, id)?;
            let s = c.endpoint_config["subnetId"].as_str().unwrap_or_default();
            st.core
                .get(s)
                .is_some_and(|s| s.body["prohibitPublicIpOnVnic"] == true)
        };
        let c = self.cluster_for_change(&mut st, id, req)?;
        if let Some(public) = b["isPublicIpEnabled"].as_bool() {
            if public && subnet_private {
                return Err(OciError::invalid(
                    "isPublicIpEnabled is true but the endpoint subnet is private: a public endpoint needs a public subnet",
                ));
            }
            c.endpoint_config["isPublicIpEnabled"] = json!(public);
        }
        if let Value::Array(n) = &b["nsgIds"] {
            c.endpoint_config["nsgIds"] = json!(n);
        }
        c.life = Life::Updating;
        c.details = "Updating endpoint configuration".into();
        c.etag = new_etag();
        let compartment = c.compartment.clone();
        let delay = self.delay(|t| t.cluster, |d| d.update);
        let wr = self.work_request(
            &mut st,
            "CLUSTER_UPDATE",
            &compartment,
            ("cluster", id),
            id,
            Effect::UpdateCluster,
            delay,
        );
        if let Some(c) = st.clusters.get_mut(id) {
            c.busy = Some(wr.clone());
        }
        Ok(Answer::accepted(&wr))
    }

    /// `DELETE /20180222/clusters/{id}`: the cluster and its node pools.
    pub(super) fn delete_cluster(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let mut st = self.lock();
        let c = st
            .clusters
            .get_mut(id)
            .ok_or_else(|| OciError::not_found(format!("cluster {id}")))?;
        req.check_etag(&c.etag)?;
        deletable(c.life, "Cluster", id)?;
        c.life = Life::Deleting;
        c.details = "Deleting".into();
        c.etag = new_etag();
        let compartment = c.compartment.clone();
        // A running change of the cluster or of its pools gives way to the deletion.
        let mut given_way: Vec<String> = c.busy.take().into_iter().collect();
        for p in st
            .pools
            .values_mut()
            .filter(|p| p.cluster == id && p.life != Life::Deleted)
        {
            p.life = Life::Deleting;
            p.etag = new_etag();
            given_way.extend(p.busy.take());
        }
        for old in given_way {
            if let Some(w) = st.work_requests.get_mut(&old) {
                w.fail(OciError::conflict("The cluster is being deleted"));
            }
        }
        let delay = self.delay(|t| t.cluster, |d| d.delete);
        let wr = self.work_request(
            &mut st,
            "CLUSTER_DELETE",
            &compartment,
            ("cluster", id),
            id,
            Effect::DeleteCluster,
            delay,
        );
        if let Some(c) = st.clusters.get_mut(id) {
            c.busy = Some(wr.clone());
            c.metadata["deletedByWorkRequestId"] = json!(wr);
            c.metadata["deletedByUserId"] = json!(req.user());
        }
        tracing::info!(cluster = %id, "cluster delete accepted");
        Ok(Answer::accepted(&wr))
    }

    /// `POST /20180222/clusters/{id}/kubeconfig/content`: a kubeconfig whose user runs
    /// `oci ce cluster generate-token`.
    pub(super) fn kubeconfig(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let b = &req.body;
        let token_version = str_field(b, "tokenVersion").unwrap_or("2.0.0");
        if token_version != "2.0.0" {
            return Err(OciError::invalid(format!(
                "tokenVersion {token_version} is not supported; use 2.0.0"
            )));
        }
        let which = str_field(b, "endpoint").unwrap_or("LEGACY_KUBERNETES");
        let st = self.lock();
        let c = self.cluster(&st, id)?;
        if !matches!(c.life, Life::Active | Life::Updating) {
            return Err(OciError::incorrect_state(format!(
                "Cluster {id} is {}; its kubeconfig is available once it is ACTIVE",
                c.life.as_str()
            )));
        }
        let endpoints = self.endpoints(c);
        let address = match which {
            "PUBLIC_ENDPOINT" | "LEGACY_KUBERNETES" => endpoints["publicEndpoint"].as_str(),
            "PRIVATE_ENDPOINT" => endpoints["privateEndpoint"].as_str(),
            "VCN_HOSTNAME" => None,
            other => {
                return Err(OciError::invalid(format!(
                    "endpoint {other:?} must be LEGACY_KUBERNETES, PUBLIC_ENDPOINT, PRIVATE_ENDPOINT or VCN_HOSTNAME"
                )));
            }
        }
        .ok_or_else(|| {
            OciError::invalid(format!(
                "Cluster {id} has no {which} endpoint; ask for the PRIVATE_ENDPOINT of a cluster without a public one"
            ))
        })?;
        let ca = match (&c.endpoint, &self.config.workload) {
            (Some(e), _) => e.ca_pem.clone(),
            (None, Some(w)) => w.ca_pem().to_string(),
            (None, None) => String::new(),
        };
        use base64::Engine as _;
        let ca_b64 = base64::engine::general_purpose::STANDARD.encode(ca);
        let short = &c.id[c.id.len() - 11..];
        let text = format!(
            "---\napiVersion: v1\nkind: \"\"\nclusters:\n- name: cluster-{short}\n  cluster:\n    server: https://{address}\n    certificate-authority-data: {ca_b64}\nusers:\n- name: user-{short}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: oci\n      args:\n      - ce\n      - cluster\n      - generate-token\n      - --cluster-id\n      - {}\n      - --region\n      - {}\n      env: []\ncontexts:\n- name: context-{short}\n  context:\n    cluster: cluster-{short}\n    user: user-{short}\ncurrent-context: context-{short}\n",
            c.id, self.config.region
        );
        Ok(Answer::text(200, text))
    }

    /// `GET /20180222/clusterOptions/{id}` (`all`, or a cluster).
    pub(super) fn cluster_options(&self, id: &str) -> Result<Answer, OciError> {
        if id != "all" {
            let st = self.lock();
            self.cluster(&st, id)?;
        }
        Ok(Answer::json(
            200,
            json!({
                "kubernetesVersions": catalog::VERSIONS,
                "clusterPodNetworkOptions": CNI_TYPES.iter().map(|c| json!({ "cniType": c })).collect::<Vec<_>>(),
            }),
        ))
    }

    // ---- node pools ----

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
    pub(super) fn create_pool(&self, req: &Req) -> Result<Answer, OciError> {
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
            node_metadata: if b["nodeMetadata"].is_null() {
                json!({})
            } else {
                b["nodeMetadata"].clone()
            },
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
    pub(super) fn get_pool(&self, id: &str) -> Result<Answer, OciError> {
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
    pub(super) fn list_pools(&self, req: &Req) -> Result<Answer, OciError> {
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
    pub(super) fn update_pool(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
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
    pub(super) fn delete_pool(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
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
    pub(super) fn pool_options(&self, id: &str) -> Result<Answer, OciError> {
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

    // ---- work requests ----

    fn work_request_body(&self, w: &WorkRequest) -> Value {
        let action = match (w.status, w.operation) {
            (WrStatus::Failed, _) => "FAILED",
            (WrStatus::Accepted | WrStatus::InProgress, _) => "IN_PROGRESS",
            (WrStatus::Succeeded, op) if op.ends_with("_CREATE") => "CREATED",
            (WrStatus::Succeeded, op) if op.ends_with("_DELETE") => "DELETED",
            (WrStatus::Succeeded, _) => "UPDATED",
        };
        let collection = if w.entity.0 == "cluster" {
            "clusters"
        } else {
            "nodePools"
        };
        let mut resources = vec![json!({
            "actionType": action,
            "entityType": w.entity.0,
            "identifier": w.entity.1,
            "entityUri": format!("/{collection}/{}", w.entity.1),
        })];
        if w.entity.0 == "nodepool" {
            resources.push(json!({
                "actionType": "RELATED",
                "entityType": "cluster",
                "identifier": w.cluster,
                "entityUri": format!("/clusters/{}", w.cluster),
            }));
        }
        json!({
            "id": w.id,
            "operationType": w.operation,
            "status": w.status.as_str(),
            "compartmentId": w.compartment,
            "resources": resources,
            "timeAccepted": w.times[0],
            "timeStarted": w.times[1],
            "timeFinished": w.times[2],
        })
    }

    fn work<'s>(&self, st: &'s State, id: &str) -> Result<&'s WorkRequest, OciError> {
        st.work_requests
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("work request {id}")))
    }

    /// `GET /20180222/workRequests/{id}`.
    pub(super) fn get_work_request(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let mut answer = Answer::json(200, self.work_request_body(w));
        if matches!(w.status, WrStatus::Accepted | WrStatus::InProgress) {
            answer = answer.header("retry-after", "1".into());
        }
        Ok(answer)
    }

    /// `GET /20180222/workRequests?compartmentId=…&resourceId=…`.
    pub(super) fn list_work_requests(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = st
            .work_requests
            .values()
            .filter(|w| w.compartment == compartment)
            .filter(|w| {
                req.passes("resourceId", &w.entity.1) || req.passes("resourceId", &w.cluster)
            })
            .filter(|w| req.passes("status", w.status.as_str()))
            .map(|w| self.work_request_body(w))
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20180222/workRequests/{id}/errors`.
    pub(super) fn work_request_errors(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let finished = w.times[2].clone().unwrap_or_else(now_rfc3339);
        let items = w
            .errors
            .iter()
            .map(|e| json!({ "code": e.code, "message": e.message, "timestamp": finished }))
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20180222/workRequests/{id}/logs`.
    pub(super) fn work_request_logs(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let items = w
            .logs
            .iter()
            .map(|(t, m)| json!({ "message": m, "timestamp": t }))
            .collect();
        drop(st);
        req.page(items)
    }
}

/// OCI's refusal when node instances would exceed the tenancy's OCPUs in the region.
pub fn quota_error(limit: u32, used: u32, wanted: u32) -> OciError {
    OciError::limit(format!(
        "The service limit for OCPUs in this region is {limit}: {used} are in use and {wanted} more were requested; request a service limit increase or use a smaller shape"
    ))
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
