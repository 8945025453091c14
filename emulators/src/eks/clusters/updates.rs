//! Cluster updates: UpdateClusterVersion and UpdateClusterConfig (endpoint access, logging,
//! authentication mode, upgrade policy), each one update at a time, and DescribeUpdate and
//! ListUpdates over a cluster's, a nodegroup's or an add-on's updates.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    AUTH_MODES, UpdateConfigRequest, UpdateVersionRequest, apply_logging, check_cidrs, ensure_idle,
    find_update, with_next,
};
use crate::eks::api::{Call, paginate};
use crate::eks::catalog;
use crate::eks::error::EksError;
use crate::eks::state::{Change, Cluster, Status, Update};
use crate::eks::{Eks, epoch_now};
use crate::kit::Delays;

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
impl Eks {
    pub(in crate::eks) fn update_cluster_version(
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

    pub(in crate::eks) fn update_cluster_config(
        &self,
        name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
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
    pub(in crate::eks) fn begin_cluster_update(
        &self,
        cluster: &mut Cluster,
        update: Update,
    ) -> Value {
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

    pub(in crate::eks) fn describe_update(
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

    pub(in crate::eks) fn list_updates(&self, name: &str, call: &Call) -> Result<Value, EksError> {
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
                .ok_or_else(|| crate::eks::nodegroups::nodegroup_not_found(&cluster.name, ng))?;
            return Ok(&n.updates);
        }
        if let Some(a) = call.param("addonName") {
            let addon = cluster
                .addons
                .get(a)
                .ok_or_else(|| crate::eks::addons::addon_not_found(&cluster.name, a))?;
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
