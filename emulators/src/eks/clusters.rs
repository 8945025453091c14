//! Clusters: CreateCluster, DescribeCluster, ListClusters, DeleteCluster, UpdateClusterVersion,
//! UpdateClusterConfig, DescribeUpdate and ListUpdates.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::api::{Call, paginate, valid_name};
use super::catalog;
use super::error::EksError;
use super::state::{Change, Cluster, State, Status, Tags, Update};
use super::{Eks, epoch_now, lower_hex, upper_hex};
use crate::kit::idempotency::{Replay, fingerprint};
use crate::kit::{Delays, Lifecycle};

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

/// Fields of UpdateClusterConfig the emulator does not model.
const UNSUPPORTED_CONFIG: [&str; 10] = [
    "computeConfig",
    "kubernetesNetworkConfig",
    "remoteNetworkConfig",
    "storageConfig",
    "zonalShiftConfig",
    "deletionProtection",
    "controlPlaneScalingConfig",
    "kubeApiServerConfig",
    "kubeControllerManagerConfig",
    "kubeSchedulerConfig",
];

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

    /// Checks subnets in moto: they exist and span two availability zones. Returns the VPC.
    async fn check_subnets(&self, subnets: &[String]) -> Result<Option<String>, EksError> {
        let Some(ec2) = &self.ec2 else {
            return Ok(None);
        };
        // All subnets, then compare: an EC2 NotFound error does not reliably name the missing id.
        let found = ec2
            .describe_subnets(&[])
            .await
            .map_err(|e| EksError::server(format!("Could not look the subnets up in EC2: {e}")))?;
        let found: Vec<_> = found
            .into_iter()
            .filter(|f| subnets.contains(&f.id))
            .collect();
        if let Some(missing) = subnets.iter().find(|s| !found.iter().any(|f| &&f.id == s)) {
            return Err(EksError::invalid_parameter(format!(
                "The subnet ID '{missing}' does not exist"
            )));
        }
        let zones: BTreeSet<&str> = found.iter().map(|s| s.az.as_str()).collect();
        if zones.len() < 2 {
            return Err(EksError::invalid_parameter(
                "Subnets specified must be in at least two different AZs",
            ));
        }
        Ok(subnets
            .first()
            .and_then(|id| found.iter().find(|f| &f.id == id))
            .map(|s| s.vpc.clone()))
    }

    pub(super) async fn create_cluster(&self, call: &Call) -> Result<Value, EksError> {
        let req: CreateClusterRequest = call.parse()?;
        let name = req.name.clone().unwrap_or_default();
        if !valid_name(&name, 100) {
            return Err(EksError::invalid_parameter(
                "The cluster name must be 1-100 characters, start with a letter or digit, and contain only letters, \
                 digits, hyphens and underscores (^[0-9A-Za-z][A-Za-z0-9\\-_]*$)",
            )
            .cluster(&name));
        }
        let token = req.client_request_token.as_deref();
        if let Some(c) = self.replayed_cluster(&name, token, &call.body)? {
            return Ok(c);
        }
        let role_arn = req.role_arn.clone().unwrap_or_default();
        if role_arn.is_empty() {
            return Err(EksError::invalid_parameter("roleArn is required").cluster(&name));
        }
        if !(role_arn.starts_with("arn:aws:iam::") && role_arn.contains(":role/")) {
            return Err(EksError::invalid_parameter(format!(
                "Role {role_arn} is not a valid IAM role ARN"
            ))
            .cluster(&name));
        }
        let version = req
            .version
            .clone()
            .unwrap_or_else(|| catalog::default_version().to_string());
        if !catalog::is_supported(&version) {
            return Err(
                EksError::invalid_parameter("unsupported Kubernetes version").cluster(&name),
            );
        }
        let vpc = req.resources_vpc_config.unwrap_or_default();
        let mut subnets: Vec<String> = Vec::new();
        for s in vpc.subnet_ids.clone().unwrap_or_default() {
            if !subnets.contains(&s) {
                subnets.push(s);
            }
        }
        if subnets.len() < 2 {
            return Err(EksError::invalid_parameter(
                "Subnets specified must be in at least two different AZs",
            )
            .cluster(&name));
        }
        let cidrs = vpc
            .public_access_cidrs
            .clone()
            .unwrap_or_else(|| vec!["0.0.0.0/0".into()]);
        check_cidrs(&cidrs).map_err(|e| e.cluster(&name))?;
        let public = vpc.endpoint_public_access.unwrap_or(true);
        let private = vpc.endpoint_private_access.unwrap_or(false);
        if !public && !private {
            return Err(EksError::invalid_parameter(
                "At least one of endpointPublicAccess and endpointPrivateAccess must be enabled",
            )
            .cluster(&name));
        }
        let logging = match &req.logging {
            Some(l) => apply_logging(&BTreeSet::new(), l).map_err(|e| e.cluster(&name))?,
            None => BTreeSet::new(),
        };
        let access = req.access_config.unwrap_or_default();
        let auth_mode = access
            .authentication_mode
            .clone()
            .unwrap_or_else(|| "API_AND_CONFIG_MAP".into());
        if !AUTH_MODES.contains(&auth_mode.as_str()) {
            return Err(EksError::invalid_parameter(format!(
                "Unsupported authentication mode {auth_mode}"
            ))
            .cluster(&name));
        }
        let support_type = req
            .upgrade_policy
            .and_then(|u| u.support_type)
            .unwrap_or_else(|| "EXTENDED".into());
        if !["STANDARD", "EXTENDED"].contains(&support_type.as_str()) {
            return Err(EksError::invalid_parameter(format!(
                "Unsupported upgrade policy support type {support_type}"
            ))
            .cluster(&name));
        }
        let tags = req.tags.clone().unwrap_or_default();
        check_tags(&tags).map_err(|e| e.cluster(&name))?;
        let net = req.kubernetes_network_config.unwrap_or_default();
        let ip_family = net.ip_family.unwrap_or_else(|| "ipv4".into());
        if !["ipv4", "ipv6"].contains(&ip_family.as_str()) {
            return Err(
                EksError::invalid_parameter(format!("Unsupported ipFamily {ip_family}"))
                    .cluster(&name),
            );
        }

        let vpc_id = self
            .check_subnets(&subnets)
            .await
            .map_err(|e| e.cluster(&name))?;

        let mut st = self.lock();
        // A concurrent identical request may have finished while EC2 was asked.
        if let Some(c) = self
            .replay("CreateCluster", token, &call.body)?
            .and_then(|id| replayed(&st, &name, &id))
        {
            return Ok(c);
        }
        if st.clusters.contains_key(&name) {
            return Err(
                EksError::in_use(format!("Cluster already exists with name: {name}"))
                    .cluster(&name),
            );
        }
        if st.clusters.len() >= self.config.cluster_quota {
            return Err(
                EksError::limit_exceeded("Cluster limit exceeded for account.").cluster(&name),
            );
        }
        let timing = self.timing();
        let mut life = Lifecycle::moving(
            Status::Creating,
            Status::Active,
            Instant::now(),
            Delays::duration(timing.cluster.create),
        );
        let oidc_id = upper_hex(32);
        if self.ec2.is_some() {
            // CREATING until the ticker made the cluster security group in moto.
            life.hold();
        }
        let (endpoint, ca_data) = if self.config.workload.is_some() {
            life.hold();
            (None, None)
        } else {
            let ca = testbed::pki::Authority::new(&name)
                .map_err(|e| EksError::server(format!("generating the cluster CA: {e}")))?;
            (
                Some(format!(
                    "https://{oidc_id}.gr7.{}.eks.amazonaws.com",
                    self.config.region
                )),
                Some(STANDARD.encode(ca.cert_pem())),
            )
        };
        let mut network = json!({
            "ipFamily": ip_family,
            "elasticLoadBalancing": net.elastic_load_balancing.unwrap_or(json!({"enabled": false})),
        });
        if ip_family == "ipv4" {
            network["serviceIpv4Cidr"] = json!(
                net.service_ipv4_cidr
                    .unwrap_or_else(|| "10.100.0.0/16".into())
            );
        } else {
            network["serviceIpv6Cidr"] =
                json!(format!("fd{}:{}::/108", lower_hex(2), lower_hex(4)));
        }
        let mut echoed = Map::new();
        if let Some(e) = req.encryption_config {
            echoed.insert("encryptionConfig".into(), e);
        }
        if let Some(z) = req.zonal_shift_config {
            echoed.insert("zonalShiftConfig".into(), z);
        }
        if let Some(d) = req.deletion_protection {
            echoed.insert("deletionProtection".into(), json!(d));
        }
        let cluster = Cluster {
            arn: self.arn(&format!("cluster/{name}")),
            workload_id: format!("{name}-{}", lower_hex(8)),
            name: name.clone(),
            created_at: epoch_now(),
            version,
            platform_version: "eks.1".into(),
            role_arn,
            subnets,
            security_groups: vpc.security_group_ids.unwrap_or_default(),
            cluster_security_group: if self.ec2.is_some() {
                String::new()
            } else {
                format!("sg-{}", lower_hex(17))
            },
            group_leaving: false,
            vpc_id: vpc_id.unwrap_or_else(|| format!("vpc-{}", lower_hex(17))),
            public_access: public,
            private_access: private,
            public_cidrs: cidrs,
            network,
            logging,
            authentication_mode: auth_mode,
            bootstrap_admin: access
                .bootstrap_cluster_creator_admin_permissions
                .unwrap_or(true),
            support_type,
            echoed,
            tags,
            client_request_token: req.client_request_token.clone(),
            endpoint,
            ca_data,
            oidc_id,
            life,
            creator: call.caller.clone(),
            start_requested: false,
            updates: Vec::new(),
            pending: None,
            issues: Vec::new(),
            nodegroups: BTreeMap::new(),
            addons: BTreeMap::new(),
            access_entries: BTreeMap::new(),
            idps: BTreeMap::new(),
        };
        let out = json!({"cluster": cluster.json(&self.config.region)});
        self.remember("CreateCluster", token, &call.body, &cluster.workload_id);
        tracing::info!(cluster = %name, version = %cluster.version, "cluster creating");
        st.clusters.insert(name, cluster);
        Ok(out)
    }

    fn replayed_cluster(
        &self,
        name: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Result<Option<Value>, EksError> {
        let Some(id) = self
            .replay("CreateCluster", token, body)
            .map_err(|e| e.cluster(name))?
        else {
            return Ok(None);
        };
        Ok(replayed(&self.lock(), name, &id))
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

    pub(super) fn update_cluster_version(
        &self,
        name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: UpdateVersionRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(name)?;
        let scope = format!("UpdateClusterVersion/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| find_update(&cluster.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let version = req.version.unwrap_or_default();
        if version.is_empty() {
            return Err(EksError::invalid_parameter("version is required").cluster(name));
        }
        ensure_idle(cluster, "VersionUpdate")?;
        if !catalog::is_supported(&version) {
            return Err(
                EksError::invalid_parameter("unsupported Kubernetes version").cluster(name),
            );
        }
        let (Some((cm, cn)), Some((nm, nn))) = (
            catalog::minor_of(&cluster.version),
            catalog::minor_of(&version),
        ) else {
            return Err(
                EksError::invalid_parameter("unsupported Kubernetes version").cluster(name),
            );
        };
        if nm != cm || nn != cn + 1 {
            return Err(EksError::invalid_parameter(format!(
                "Unsupported Kubernetes minor version update from {} to {version}",
                cluster.version
            ))
            .cluster(name));
        }
        let behind: Vec<&str> = cluster
            .nodegroups
            .values()
            .filter(|n| catalog::minor_of(&n.version) != Some((cm, cn)))
            .map(|n| n.name.as_str())
            .collect();
        if !behind.is_empty() {
            return Err(EksError::invalid_parameter(format!(
                "Nodegroups {} must be updated to match cluster version {} before updating cluster version",
                behind.join(", "),
                cluster.version
            ))
            .cluster(name));
        }
        let params = vec![
            ("Version", version.clone()),
            ("PlatformVersion", "eks.1".to_string()),
        ];
        let update = Update::new(
            "VersionUpdate",
            params,
            Change::ClusterVersion(version),
            epoch_now(),
        );
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_cluster_update(cluster, update)}))
    }

    pub(super) fn update_cluster_config(&self, name: &str, call: &Call) -> Result<Value, EksError> {
        let req: UpdateConfigRequest = call.parse()?;
        if let Some(field) = UNSUPPORTED_CONFIG
            .iter()
            .find(|f| call.body.get(**f).is_some_and(|v| !v.is_null()))
        {
            return Err(EksError::invalid_parameter(format!(
                "Updating {field} is not supported by this EKS emulator"
            ))
            .cluster(name));
        }
        let mut st = self.lock();
        let cluster = st.cluster_mut(name)?;
        let scope = format!("UpdateClusterConfig/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| find_update(&cluster.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let vpc = req.resources_vpc_config.unwrap_or_default();
        let endpoint_kind = vpc.endpoint_public_access.is_some()
            || vpc.endpoint_private_access.is_some()
            || vpc.public_access_cidrs.is_some();
        let vpc_kind = vpc.subnet_ids.is_some() || vpc.security_group_ids.is_some();
        let kinds = [
            endpoint_kind,
            vpc_kind,
            req.logging.is_some(),
            req.access_config.is_some(),
            req.upgrade_policy.is_some(),
        ];
        match kinds.iter().filter(|k| **k).count() {
            0 => {
                return Err(EksError::invalid_parameter(
                    "At least one of resourcesVpcConfig, logging, accessConfig or upgradePolicy must be given",
                )
                .cluster(name));
            }
            1 => {}
            _ => {
                return Err(
                    EksError::invalid_parameter("Only one type of update can be allowed.")
                        .cluster(name),
                );
            }
        }

        let (kind, params, change): (&'static str, Vec<(&'static str, String)>, Change) =
            if endpoint_kind {
                let public = vpc.endpoint_public_access.unwrap_or(cluster.public_access);
                let private = vpc
                    .endpoint_private_access
                    .unwrap_or(cluster.private_access);
                let cidrs = vpc
                    .public_access_cidrs
                    .clone()
                    .unwrap_or_else(|| cluster.public_cidrs.clone());
                check_cidrs(&cidrs).map_err(|e| e.cluster(name))?;
                if !public && !private {
                    return Err(EksError::invalid_parameter(
                    "At least one of endpointPublicAccess and endpointPrivateAccess must be enabled",
                )
                .cluster(name));
                }
                if public == cluster.public_access
                    && private == cluster.private_access
                    && cidrs == cluster.public_cidrs
                {
                    return Err(EksError::invalid_parameter(format!(
                    "Cluster is already at the desired configuration with endpointPrivateAccess: {private} , \
                     endpointPublicAccess: {public}, and Public Endpoint Restrictions: [{}]",
                    cidrs.join(", ")
                ))
                .cluster(name));
                }
                let mut params = Vec::new();
                if let Some(p) = vpc.endpoint_public_access {
                    params.push(("EndpointPublicAccess", p.to_string()));
                }
                if let Some(p) = vpc.endpoint_private_access {
                    params.push(("EndpointPrivateAccess", p.to_string()));
                }
                if let Some(c) = &vpc.public_access_cidrs {
                    params.push(("PublicAccessCidrs", json!(c).to_string()));
                }
                (
                    "EndpointAccessUpdate",
                    params,
                    Change::Endpoint {
                        public,
                        private,
                        cidrs,
                    },
                )
            } else if vpc_kind {
                if let Some(s) = &vpc.subnet_ids
                    && s.iter().collect::<BTreeSet<_>>().len() < 2
                {
                    return Err(EksError::invalid_parameter(
                        "Subnets specified must be in at least two different AZs",
                    )
                    .cluster(name));
                }
                if vpc
                    .subnet_ids
                    .as_ref()
                    .is_none_or(|s| s == &cluster.subnets)
                    && vpc
                        .security_group_ids
                        .as_ref()
                        .is_none_or(|s| s == &cluster.security_groups)
                {
                    return Err(EksError::invalid_parameter(
                        "Cluster is already at the desired VPC configuration",
                    )
                    .cluster(name));
                }
                let mut params = Vec::new();
                if let Some(s) = &vpc.subnet_ids {
                    params.push(("Subnets", json!(s).to_string()));
                }
                if let Some(s) = &vpc.security_group_ids {
                    params.push(("SecurityGroups", json!(s).to_string()));
                }
                let change = Change::Vpc {
                    subnets: vpc.subnet_ids,
                    security_groups: vpc.security_group_ids,
                };
                ("VpcConfigUpdate", params, change)
            } else if let Some(logging) = &req.logging {
                let wanted =
                    apply_logging(&cluster.logging, logging).map_err(|e| e.cluster(name))?;
                if wanted == cluster.logging {
                    return Err(EksError::invalid_parameter(
                        "No changes needed for the logging config provided",
                    )
                    .cluster(name));
                }
                let value = json!(logging)
                    .get("clusterLogging")
                    .cloned()
                    .unwrap_or(json!([]))
                    .to_string();
                (
                    "LoggingUpdate",
                    vec![("ClusterLogging", value)],
                    Change::Logging(wanted),
                )
            } else if let Some(access) = &req.access_config {
                if access.bootstrap_cluster_creator_admin_permissions.is_some() {
                    return Err(EksError::invalid_parameter(
                    "bootstrapClusterCreatorAdminPermissions can only be set when the cluster is created",
                )
                .cluster(name));
                }
                let mode = access.authentication_mode.clone().unwrap_or_default();
                let rank = |m: &str| AUTH_MODES.iter().position(|x| *x == m);
                match (rank(&cluster.authentication_mode), rank(&mode)) {
                    (_, None) => {
                        return Err(EksError::invalid_parameter(format!(
                            "Unsupported authentication mode {mode}"
                        ))
                        .cluster(name));
                    }
                    (Some(from), Some(to)) if to == from => {
                        return Err(EksError::invalid_parameter(format!(
                            "Cluster is already at the desired authentication mode {mode}"
                        ))
                        .cluster(name));
                    }
                    (Some(from), Some(to)) if to < from => {
                        return Err(EksError::invalid_parameter(format!(
                            "Unsupported authentication mode update from {} to {mode}",
                            cluster.authentication_mode
                        ))
                        .cluster(name));
                    }
                    _ => {}
                }
                (
                    "AccessConfigUpdate",
                    vec![("AuthenticationMode", mode.clone())],
                    Change::AuthenticationMode(mode),
                )
            } else {
                let support = req
                    .upgrade_policy
                    .and_then(|u| u.support_type)
                    .unwrap_or_default();
                if !["STANDARD", "EXTENDED"].contains(&support.as_str()) {
                    return Err(EksError::invalid_parameter(format!(
                        "Unsupported upgrade policy support type {support}"
                    ))
                    .cluster(name));
                }
                if support == cluster.support_type {
                    return Err(EksError::invalid_parameter(format!(
                        "Cluster is already at the desired support type {support}"
                    ))
                    .cluster(name));
                }
                (
                    "UpgradePolicyUpdate",
                    vec![("UpgradePolicy", support.clone())],
                    Change::UpgradePolicy(support),
                )
            };
        ensure_idle(cluster, kind)?;
        let update = Update::new(kind, params, change, epoch_now());
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_cluster_update(cluster, update)}))
    }

    /// Puts the cluster into UPDATING with `update` pending; returns the update's JSON.
    pub(super) fn begin_cluster_update(&self, cluster: &mut Cluster, update: Update) -> Value {
        let delay = Delays::duration(self.timing().cluster.update);
        cluster
            .life
            .begin(Status::Updating, Status::Active, Instant::now(), delay);
        cluster.pending = Some(update.id.clone());
        let out = update.json();
        tracing::info!(cluster = %cluster.name, kind = update.kind, id = %update.id, "cluster update started");
        cluster.updates.push(update);
        out
    }

    pub(super) fn describe_update(
        &self,
        name: &str,
        id: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(name)?;
        let updates = self.update_list(cluster, call)?;
        let not_found =
            || EksError::not_found(format!("No update found for ID: {id}")).cluster(name);
        let update = updates.iter().find(|u| u.id == id).ok_or_else(not_found)?;
        Ok(json!({"update": update.json()}))
    }

    pub(super) fn list_updates(&self, name: &str, call: &Call) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(name)?;
        let ids: Vec<String> = self
            .update_list(cluster, call)?
            .iter()
            .map(|u| u.id.clone())
            .collect();
        let (page, next) = paginate(ids, call)?;
        Ok(with_next(json!({"updateIds": page}), next))
    }

    /// The updates `nodegroupName` / `addonName` select (the cluster's own without either).
    fn update_list<'a>(&self, cluster: &'a Cluster, call: &Call) -> Result<&'a [Update], EksError> {
        if let Some(ng) = call.param("nodegroupName") {
            let n = cluster
                .nodegroups
                .get(ng)
                .ok_or_else(|| super::nodegroups::nodegroup_not_found(&cluster.name, ng))?;
            return Ok(&n.updates);
        }
        if let Some(a) = call.param("addonName") {
            let addon = cluster
                .addons
                .get(a)
                .ok_or_else(|| super::addons::addon_not_found(&cluster.name, a))?;
            return Ok(&addon.updates);
        }
        if call.param("capabilityName").is_some() {
            return Err(EksError::invalid_parameter(
                "Capabilities are not supported by this EKS emulator",
            )
            .cluster(&cluster.name));
        }
        Ok(&cluster.updates)
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
