//! Add-ons: CreateAddon, DescribeAddon, ListAddons, DeleteAddon, UpdateAddon and
//! DescribeAddonVersions.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::api::{Call, paginate};
use super::catalog::{self, ADDONS};
use super::clusters::{find_update, with_next};
use super::error::EksError;
use super::state::{Addon, Change, Status, Tags, Update};
use super::{Eks, epoch_now, uuid};
use crate::kit::{Delays, Lifecycle};

const RESOLVE_CONFLICTS: [&str; 3] = ["NONE", "OVERWRITE", "PRESERVE"];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateAddonRequest {
    addon_name: Option<String>,
    addon_version: Option<String>,
    service_account_role_arn: Option<String>,
    resolve_conflicts: Option<String>,
    client_request_token: Option<String>,
    tags: Option<Tags>,
    configuration_values: Option<String>,
    pod_identity_associations: Option<Value>,
    namespace_config: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateAddonRequest {
    addon_version: Option<String>,
    service_account_role_arn: Option<String>,
    resolve_conflicts: Option<String>,
    client_request_token: Option<String>,
    configuration_values: Option<String>,
    pod_identity_associations: Option<Value>,
}

/// `No addon: <addon> found in cluster: <cluster>`.
pub fn addon_not_found(cluster: &str, addon: &str) -> EksError {
    EksError::not_found(format!("No addon: {addon} found in cluster: {cluster}"))
        .cluster(cluster)
        .addon(addon)
}

fn check_resolve(r: Option<&String>, cluster: &str, addon: &str) -> Result<(), EksError> {
    match r {
        Some(r) if !RESOLVE_CONFLICTS.contains(&r.as_str()) => {
            Err(EksError::invalid_parameter(format!(
                "resolveConflicts {r} is not valid; valid values are NONE, OVERWRITE and PRESERVE"
            ))
            .cluster(cluster)
            .addon(addon))
        }
        _ => Ok(()),
    }
}

fn check_configuration(c: Option<&String>, cluster: &str, addon: &str) -> Result<(), EksError> {
    if let Some(c) = c.filter(|c| !c.trim().is_empty())
        && serde_json::from_str::<Value>(c).is_err()
        && !c.contains(':')
    {
        return Err(
            EksError::invalid_parameter("configurationValues must be JSON or YAML")
                .cluster(cluster)
                .addon(addon),
        );
    }
    Ok(())
}

impl Eks {
    pub(super) fn create_addon(&self, cluster_name: &str, call: &Call) -> Result<Value, EksError> {
        let req: CreateAddonRequest = call.parse()?;
        let name = req.addon_name.clone().unwrap_or_default();
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let scope = format!("CreateAddon/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(id) = self.replay(&scope, token, &call.body)?
            && let Some(a) = cluster.addons.get(&name).filter(|a| a.arn == id)
        {
            return Ok(json!({"addon": a.json(cluster_name)}));
        }
        if !matches!(cluster.life.state(), Status::Active | Status::Updating) {
            return Err(EksError::invalid_request(format!(
                "Cluster '{cluster_name}' is not in ACTIVE status"
            ))
            .cluster(cluster_name)
            .addon(&name));
        }
        let spec = catalog::addon(&name).ok_or_else(|| {
            EksError::invalid_parameter("Addon specified is not supported")
                .cluster(cluster_name)
                .addon(&name)
        })?;
        if cluster.addons.contains_key(&name) {
            return Err(EksError::in_use("Addon already exists.")
                .cluster(cluster_name)
                .addon(&name));
        }
        let version = match &req.addon_version {
            Some(v) if spec.supports(v, &cluster.version) => v.clone(),
            Some(_) => {
                return Err(EksError::invalid_parameter(
                    "Addon version specified is not supported",
                )
                .cluster(cluster_name)
                .addon(&name));
            }
            None => spec
                .default_for(&cluster.version)
                .unwrap_or_default()
                .to_string(),
        };
        check_resolve(req.resolve_conflicts.as_ref(), cluster_name, &name)?;
        check_configuration(req.configuration_values.as_ref(), cluster_name, &name)?;
        let mut echoed = Map::new();
        if let Some(p) = req.pod_identity_associations {
            echoed.insert("podIdentityAssociations".into(), p);
        }
        if let Some(n) = req.namespace_config {
            echoed.insert("namespaceConfig".into(), n);
        }
        let now = epoch_now();
        let delay = Delays::duration(self.timing().addon.create);
        let addon = Addon {
            arn: self.arn(&format!("addon/{cluster_name}/{name}/{}", uuid())),
            name: name.clone(),
            version,
            service_account_role: req.service_account_role_arn.clone(),
            configuration_values: req.configuration_values.clone().filter(|c| !c.is_empty()),
            created_at: now,
            modified_at: now,
            life: Lifecycle::moving(Status::Creating, Status::Active, Instant::now(), delay),
            updates: Vec::new(),
            pending: None,
            tags: req.tags.clone().unwrap_or_default(),
            echoed,
        };
        let out = json!({"addon": addon.json(cluster_name)});
        self.remember(&scope, token, &call.body, &addon.arn);
        cluster.addons.insert(name, addon);
        Ok(out)
    }

    pub(super) fn describe_addon(&self, cluster_name: &str, name: &str) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let a = cluster
            .addons
            .get(name)
            .ok_or_else(|| addon_not_found(cluster_name, name))?;
        Ok(json!({"addon": a.json(cluster_name)}))
    }

    pub(super) fn list_addons(&self, cluster_name: &str, call: &Call) -> Result<Value, EksError> {
        let st = self.lock();
        let names: Vec<String> = st.cluster(cluster_name)?.addons.keys().cloned().collect();
        let (page, next) = paginate(names, call)?;
        Ok(with_next(json!({"addons": page}), next))
    }

    pub(super) fn delete_addon(&self, cluster_name: &str, name: &str) -> Result<Value, EksError> {
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let a = cluster
            .addons
            .get_mut(name)
            .ok_or_else(|| addon_not_found(cluster_name, name))?;
        if *a.life.state() != Status::Deleting {
            let delay = Delays::duration(self.timing().addon.delete);
            a.life
                .begin(Status::Deleting, Status::Gone, Instant::now(), delay);
            a.modified_at = epoch_now();
        }
        Ok(json!({"addon": a.json(cluster_name)}))
    }

    pub(super) fn update_addon(
        &self,
        cluster_name: &str,
        name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: UpdateAddonRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let cluster_version = cluster.version.clone();
        let a = cluster
            .addons
            .get_mut(name)
            .ok_or_else(|| addon_not_found(cluster_name, name))?;
        let scope = format!("UpdateAddon/{}", a.arn);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| find_update(&a.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let version = req
            .addon_version
            .clone()
            .unwrap_or_else(|| a.version.clone());
        let supported =
            catalog::addon(name).is_some_and(|s| s.supports(&version, &cluster_version));
        if !supported {
            return Err(
                EksError::invalid_parameter("Addon version specified is not supported")
                    .cluster(cluster_name)
                    .addon(name),
            );
        }
        check_resolve(req.resolve_conflicts.as_ref(), cluster_name, name)?;
        check_configuration(req.configuration_values.as_ref(), cluster_name, name)?;
        if let Some(u) = a.pending_update() {
            return Err(EksError::in_use(format!(
                "Addon {name} currently has update {} in progress",
                u.id
            ))
            .cluster(cluster_name)
            .addon(name));
        }
        if *a.life.state() != Status::Active {
            return Err(EksError::in_use(format!(
                "Addon {name} is in {} status",
                a.life.state().as_str()
            ))
            .cluster(cluster_name)
            .addon(name));
        }
        let mut params = vec![("AddonVersion", version.clone())];
        if let Some(r) = &req.resolve_conflicts {
            params.push(("ResolveConflicts", r.clone()));
        }
        if let Some(r) = &req.service_account_role_arn {
            params.push(("ServiceAccountRoleArn", r.clone()));
        }
        if let Some(c) = &req.configuration_values {
            params.push(("ConfigurationValues", c.clone()));
        }
        if let Some(p) = &req.pod_identity_associations {
            params.push(("PodIdentityAssociations", p.to_string()));
            a.echoed.insert("podIdentityAssociations".into(), p.clone());
        }
        let change = Change::Addon {
            version,
            service_account_role: req.service_account_role_arn.clone(),
            configuration_values: req.configuration_values.clone(),
        };
        let update = Update::new("AddonUpdate", params, change, epoch_now());
        self.remember(&scope, token, &call.body, &update.id);
        let delay = Delays::duration(self.timing().addon.update);
        a.life
            .begin(Status::Updating, Status::Active, Instant::now(), delay);
        a.pending = Some(update.id.clone());
        a.modified_at = epoch_now();
        let out = update.json();
        a.updates.push(update);
        Ok(json!({"update": out}))
    }

    pub(super) fn describe_addon_versions(&self, call: &Call) -> Result<Value, EksError> {
        let minor = call.param("kubernetesVersion").filter(|v| !v.is_empty());
        if let Some(m) = minor
            && !catalog::is_supported(m)
        {
            return Err(EksError::invalid_parameter(
                "unsupported Kubernetes version",
            ));
        }
        let name = call.param("addonName").filter(|v| !v.is_empty());
        let types = call.params("types");
        let wanted: Vec<&catalog::AddonSpec> = ADDONS
            .iter()
            .filter(|a| name.is_none_or(|n| n == a.name))
            .filter(|a| types.is_empty() || types.iter().any(|t| t == a.kind))
            .filter(|_| call.params("publishers").iter().all(|p| p == "eks"))
            .filter(|_| call.params("owners").iter().all(|o| o == "aws"))
            .collect();
        let names: Vec<String> = wanted.iter().map(|a| a.name.to_string()).collect();
        let (page, next) = paginate(names, call)?;
        let addons: Vec<Value> = page
            .iter()
            .filter_map(|n| catalog::addon(n))
            .filter_map(|a| a.info(minor))
            .collect();
        Ok(with_next(json!({"addons": addons}), next))
    }
}

/// Applies a completed add-on update.
pub fn apply_addon_change(a: &mut Addon, change: &Change) {
    if let Change::Addon {
        version,
        service_account_role,
        configuration_values,
    } = change
    {
        a.version = version.clone();
        if let Some(r) = service_account_role {
            a.service_account_role = Some(r.clone()).filter(|r| !r.is_empty());
        }
        if let Some(c) = configuration_values {
            a.configuration_values = Some(c.clone()).filter(|c| !c.is_empty());
        }
        a.modified_at = epoch_now();
    }
}
