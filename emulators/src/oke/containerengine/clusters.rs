//! OKE clusters: create, read, list, update (and its endpoint configuration), delete, the
//! kubeconfig a cluster's users get and the cluster options.

use serde_json::{Value, json};

use super::{API_PORT, check_name, deletable, version_error};
use crate::oke::api::{Answer, Req, required, str_field, tags};
use crate::oke::catalog::{self, POOL_SKEW};
use crate::oke::core::parse_cidr;
use crate::oke::error::OciError;
use crate::oke::state::{Cluster, CoreKind, Effect, Life, State};
use crate::oke::{Oke, new_etag, now_rfc3339};

/// The cluster types OKE offers.
const CLUSTER_TYPES: [&str; 2] = ["BASIC_CLUSTER", "ENHANCED_CLUSTER"];

/// The CNIs OKE offers.
const CNI_TYPES: [&str; 2] = ["OCI_VCN_IP_NATIVE", "FLANNEL_OVERLAY"];

impl Oke {
    /// `POST /20180222/clusters`.
    pub(in crate::oke) fn create_cluster(&self, req: &Req) -> Result<Answer, OciError> {
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
        let mut options = if b["options"].is_null() {
            json!({})
        } else {
            b["options"].clone()
        };
        // What OKE answers for the options a create leaves out.
        for (key, default) in [
            (
                "addOns",
                json!({"isKubernetesDashboardEnabled": false, "isTillerEnabled": false}),
            ),
            (
                "admissionControllerOptions",
                json!({"isPodSecurityPolicyEnabled": false}),
            ),
        ] {
            if let Some(o) = options.as_object_mut()
                && o.get(key).is_none_or(Value::is_null)
            {
                o.insert(key.into(), default);
            }
        }
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

    /// `GET /20180222/clusters/{id}`.
    pub(in crate::oke) fn get_cluster(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let c = self.cluster(&st, id)?;
        Ok(Answer::json(200, self.cluster_body(c))
            .etag(&c.etag)
            .gone_if(c.life == Life::Deleted))
    }

    /// `GET /20180222/clusters?compartmentId=…`: summaries, DELETED ones included unless a
    /// `lifecycleState` is asked for.
    pub(in crate::oke) fn list_clusters(&self, req: &Req) -> Result<Answer, OciError> {
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
    pub(in crate::oke) fn update_cluster(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
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
    pub(in crate::oke) fn update_endpoint_config(
        &self,
        id: &str,
        req: &Req,
    ) -> Result<Answer, OciError> {
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
    pub(in crate::oke) fn delete_cluster(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
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
    pub(in crate::oke) fn kubeconfig(&self, id: &str, req: &Req) -> Result<Answer, OciError> {
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
    pub(in crate::oke) fn cluster_options(&self, id: &str) -> Result<Answer, OciError> {
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
}
