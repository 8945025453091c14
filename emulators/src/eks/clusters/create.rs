//! CreateCluster: the request checked (name, version, role, subnets in moto, network, logging,
//! access, tags), the cluster recorded as CREATING, and a replay of the same request answered.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::{AUTH_MODES, CreateClusterRequest, apply_logging, check_cidrs, check_tags, replayed};
use crate::eks::api::{Call, valid_name};
use crate::eks::catalog;
use crate::eks::error::EksError;
use crate::eks::state::{Cluster, Status};
use crate::eks::{Eks, epoch_now, lower_hex, upper_hex};
use crate::kit::{Delays, Lifecycle};

impl Eks {
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

    pub(in crate::eks) async fn create_cluster(&self, call: &Call) -> Result<Value, EksError> {
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
}
