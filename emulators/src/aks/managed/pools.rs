//! Agent pools of a managed cluster: PUT (create or update), GET, list, DELETE and the upgrade
//! profile.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{POOL_READ_ONLY, cluster_or_404, new_pool, render_pool, strip};
use crate::aks::Aks;
use crate::aks::api::Req;
use crate::aks::arm::{self, ArmError, str_of};
use crate::aks::catalog;
use crate::aks::state::{Effect, Provisioning, Target, key};
use crate::aks::validate;

impl Aks {
    /// `PUT …/agentPools/{pool}`.
    pub(in crate::aks) fn put_pool(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        pool: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let c = cluster_or_404(&st, req, group, name)?.clone();
        if let Some(running) = c.busy.as_ref().and_then(|b| st.operations.get(b)) {
            return Err(ArmError::busy(
                &format!("managed cluster {}", c.name),
                running.kind.as_str(),
            ));
        }
        let props = req
            .body
            .get("properties")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let timing = self.kit.timing();
        let existing = c.pool(pool).cloned();
        arm::check_if_match(req.headers, existing.as_ref().map(|p| p.etag.as_str()))?;
        let field = "properties";
        validate::pool_properties(field, &props)?;
        let (kind, created) = match &existing {
            None => {
                validate::pool_name(pool)?;
                if c.pools.len() >= 100 {
                    return Err(ArmError::bad_request(
                        "OperationNotAllowed",
                        "A managed cluster can have at most 100 agent pools.",
                    ));
                }
                (Provisioning::Creating, true)
            }
            Some(p) => {
                if p.state.busy() {
                    return Err(ArmError::busy(
                        &format!("agent pool {pool}"),
                        p.state.as_str(),
                    ));
                }
                for f in [
                    "vmSize",
                    "osType",
                    "vnetSubnetID",
                    "availabilityZones",
                    "maxPods",
                    "osDiskSizeGB",
                ] {
                    let (new, old) = (&props[f], &p.props[f]);
                    let same = match f {
                        "vmSize" => {
                            new.as_str().map(str::to_ascii_lowercase)
                                == Some(p.vm_size().to_ascii_lowercase())
                        }
                        _ => new == old,
                    };
                    if !new.is_null() && !same {
                        return Err(ArmError::bad_request(
                            "PropertyChangeNotAllowed",
                            format!(
                                "Changing property '{field}.{f}' of agent pool {pool} is not allowed."
                            ),
                        ));
                    }
                }
                if p.is_system()
                    && !str_of(&props, "mode").eq_ignore_ascii_case("System")
                    && c.pools.iter().filter(|q| q.is_system()).count() == 1
                {
                    return Err(ArmError::bad_request(
                        "OperationNotAllowed",
                        format!(
                            "Agent pool {pool} is the cluster's only System pool; make another pool System first."
                        ),
                    ));
                }
                (Provisioning::Updating, false)
            }
        };
        let pv = match str_of(&props, "orchestratorVersion") {
            "" => existing
                .as_ref()
                .map_or(c.current.as_str(), |p| p.current.as_str())
                .to_string(),
            v => validate::version(
                v,
                &format!("{field}.orchestratorVersion"),
                "AgentPoolK8sVersionNotSupported",
            )?
            .to_string(),
        };
        validate::pool_not_above(pool, &pv, &c.current)?;
        self.check_subnet(&st, field, &props)?;
        let kind = match &existing {
            Some(p) if pv != p.current => {
                if catalog::parse(&pv) < catalog::parse(&p.current) {
                    return Err(ArmError::bad_request(
                        "OperationNotAllowed",
                        format!(
                            "Downgrading agent pool {pool} from {} to {pv} is not allowed.",
                            p.current
                        ),
                    ));
                }
                Provisioning::Upgrading
            }
            Some(p)
                if props["count"]
                    .as_u64()
                    .is_some_and(|n| n as u32 != p.count()) =>
            {
                Provisioning::Scaling
            }
            _ => kind,
        };
        let size = catalog::vm_size(str_of(&props, "vmSize"))
            .or_else(|| {
                existing
                    .as_ref()
                    .and_then(|p| catalog::vm_size(p.vm_size()))
            })
            .map_or(2, |s| s.0);
        let want = props["count"].as_u64().unwrap_or(1) as u32;
        let have = existing.as_ref().map_or(0, |p| p.serving().count() as u32);
        let surge = u32::from(kind == Provisioning::Upgrading);
        if want + surge > have {
            self.quota_check(
                &st,
                &req.subscription,
                &c.location,
                (want + surge - have) * size,
            )?;
        }
        let mut stored = strip(&props, POOL_READ_ONLY);
        stored.as_object_mut().map(|o| o.remove("name"));
        if stored["count"].is_null() {
            stored["count"] = json!(1);
        }
        // AKS always answers a pool's mode: a PUT without one keeps the pool's, or is User.
        if stored["mode"].is_null() {
            stored["mode"] = existing
                .as_ref()
                .map_or_else(|| json!("User"), |p| p.props["mode"].clone());
        }
        stored["orchestratorVersion"] = json!(match str_of(&props, "orchestratorVersion") {
            "" => pv.clone(),
            v => v.to_string(),
        });
        let delay = if created {
            timing.pool.create
        } else {
            timing.pool.update
        };
        let op = self.new_operation(
            &mut st,
            req,
            &c.location,
            Target::Cluster(k.clone()),
            kind,
            Effect::PutPool(pool.to_string()),
            delay,
        );
        let Some(cm) = st.clusters.get_mut(&k) else {
            return Err(ArmError::not_found("managedClusters", name, group));
        };
        if created {
            let mut p = new_pool(pool, &stored, &pv);
            p.state = Provisioning::Creating;
            cm.pools.push(p);
        }
        let Some(p) = cm.pool_mut(pool) else {
            return Err(ArmError::not_found("agentPools", pool, group));
        };
        if !created {
            // What AKS defaulted or cannot change stays when a PUT leaves it out.
            for f in [
                "vmSize",
                "osType",
                "type",
                "maxPods",
                "mode",
                "availabilityZones",
                "vnetSubnetID",
                "osDiskSizeGB",
            ] {
                if stored[f].is_null() && !p.props[f].is_null() {
                    stored[f] = p.props[f].clone();
                }
            }
            p.props = stored;
            if pv != p.current {
                p.props["orchestratorVersion"] = json!(pv);
            }
        }
        p.state = kind;
        p.etag = arm::new_etag();
        let body = {
            let c = &*cm;
            let Some(p) = c.pool(pool) else {
                return Err(ArmError::not_found("agentPools", pool, group));
            };
            render_pool(c, p)
        };
        let location = c.location.clone();
        tracing::info!(
            cluster = name,
            pool,
            state = kind.as_str(),
            "agent pool changing"
        );
        Ok(Self::headers(req, &location, &op).respond(
            if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            Some(body),
        ))
    }

    /// `GET …/agentPools/{pool}`.
    pub(in crate::aks) fn get_pool(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        pool: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?;
        let p = c.pool(pool).ok_or_else(|| {
            ArmError::not_found(
                "Microsoft.ContainerService/managedClusters/agentPools",
                &format!("{name}/{pool}"),
                group,
            )
        })?;
        Ok(axum::Json(render_pool(c, p)).into_response())
    }

    /// `GET …/agentPools`.
    pub(in crate::aks) fn list_pools(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?;
        let value: Vec<Value> = c.pools.iter().map(|p| render_pool(c, p)).collect();
        Ok(axum::Json(json!({ "value": value })).into_response())
    }

    /// `GET …/agentPools/{pool}/upgradeProfiles/default`.
    pub(in crate::aks) fn pool_upgrade_profile(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        pool: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?;
        let p = c.pool(pool).ok_or_else(|| {
            ArmError::not_found(
                "Microsoft.ContainerService/managedClusters/agentPools",
                &format!("{name}/{pool}"),
                group,
            )
        })?;
        let upgrades: Vec<Value> = catalog::upgrades(&p.current)
            .into_iter()
            .filter(|u| validate::pool_not_above(&p.name, u, &c.current).is_ok())
            .map(|u| json!({ "kubernetesVersion": u }))
            .collect();
        Ok(axum::Json(json!({
            "id": format!("{}/agentPools/{}/upgradeprofiles/default", c.id(), p.name),
            "name": "default",
            "type": "Microsoft.ContainerService/managedClusters/agentPools/upgradeProfiles",
            "properties": { "kubernetesVersion": p.current, "osType": "Linux", "latestNodeImageVersion": catalog::NODE_IMAGE, "upgrades": upgrades }
        }))
        .into_response())
    }

    /// `DELETE …/agentPools/{pool}`.
    pub(in crate::aks) fn delete_pool(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        pool: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let c = cluster_or_404(&st, req, group, name)?.clone();
        let Some(p) = c.pool(pool) else {
            return Ok(StatusCode::NO_CONTENT.into_response());
        };
        if c.state == Provisioning::Deleting {
            return Err(ArmError::busy(
                &format!("managed cluster {}", c.name),
                "Deleting",
            ));
        }
        if p.state == Provisioning::Deleting {
            return Ok(StatusCode::ACCEPTED.into_response());
        }
        if p.is_system() && c.pools.iter().filter(|q| q.is_system()).count() == 1 {
            return Err(ArmError::bad_request(
                "OperationNotAllowed",
                format!(
                    "Agent pool {pool} is the cluster's only System pool and cannot be deleted: a managed cluster needs at least one System pool."
                ),
            ));
        }
        if p.state.busy() {
            return Err(ArmError::busy(
                &format!("agent pool {pool}"),
                p.state.as_str(),
            ));
        }
        let op = self.new_operation(
            &mut st,
            req,
            &c.location,
            Target::Cluster(k.clone()),
            Provisioning::Deleting,
            Effect::DeletePool(pool.to_string()),
            self.kit.timing().pool.delete,
        );
        if let Some(p) = st.clusters.get_mut(&k).and_then(|c| c.pool_mut(pool)) {
            p.state = Provisioning::Deleting;
            p.etag = arm::new_etag();
        }
        Ok(Self::headers(req, &c.location, &op).respond(StatusCode::ACCEPTED, None))
    }
}
