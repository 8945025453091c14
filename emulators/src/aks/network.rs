//! The rest of ARM the provider touches: resource groups (`Microsoft.Resources`), virtual
//! networks and subnets (`Microsoft.Network`, asynchronous like AKS), the scale sets and
//! instances of node resource groups (`Microsoft.Compute`, read-only), and the status and
//! result resources of asynchronous operations.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::Req;
use super::arm::{self, ArmError, AsyncHeaders, str_of};
use super::entra::uuid_like;
use super::state::{Effect, Group, OpStatus, Operation, Pool, Provisioning, Target, Vnet, key};
use super::validate;
use super::{Aks, now_rfc3339};
use crate::kit::Delays;

/// Instances per page of a scale set's instance list.
const PAGE: usize = 50;

fn render_group(g: &Group) -> Value {
    let mut v = json!({
        "id": format!("/subscriptions/{}/resourceGroups/{}", g.subscription, g.name),
        "name": g.name,
        "type": "Microsoft.Resources/resourceGroups",
        "location": g.location,
        "tags": g.tags,
        "properties": { "provisioningState": if g.deleting { "Deleting" } else { "Succeeded" } },
    });
    if let Some(m) = &g.managed_by {
        v["managedBy"] = json!(m);
    }
    v
}

fn render_subnet(n: &Vnet, name: &str, prefix: &str) -> Value {
    json!({
        "id": format!("{}/subnets/{name}", n.id()),
        "name": name,
        "type": "Microsoft.Network/virtualNetworks/subnets",
        "etag": format!("W/\"{}\"", n.etag),
        "properties": { "provisioningState": n.state.as_str(), "addressPrefix": prefix },
    })
}

fn render_vnet(n: &Vnet) -> Value {
    json!({
        "id": n.id(),
        "name": n.name,
        "type": "Microsoft.Network/virtualNetworks",
        "location": n.location,
        "tags": n.tags,
        "etag": format!("W/\"{}\"", n.etag),
        "properties": {
            "provisioningState": n.state.as_str(),
            "resourceGuid": n.guid,
            "addressSpace": { "addressPrefixes": n.prefixes },
            "subnets": n.subnets.iter().map(|(s, p)| render_subnet(n, s, p)).collect::<Vec<_>>(),
        },
    })
}

impl Aks {
    fn network_operation(
        &self,
        st: &mut super::state::State,
        req: &Req,
        location: &str,
        target: Target,
        effect: Effect,
        delay: f64,
    ) -> AsyncHeaders {
        let id = uuid_like();
        st.operations.insert(
            id.clone(),
            Operation {
                id: id.clone(),
                subscription: req.subscription.clone(),
                namespace: "Microsoft.Network",
                location: location.to_string(),
                target,
                status: OpStatus::InProgress,
                start_time: now_rfc3339(),
                end_time: None,
                done_at: Instant::now() + Delays::duration(delay),
                error: None,
                effect: Some(effect),
                kind: Provisioning::Updating,
            },
        );
        AsyncHeaders::new(
            &req.base,
            &req.subscription,
            "Microsoft.Network",
            location,
            &id,
            &req.api_version,
        )
    }

    /// `PUT /subscriptions/{s}/resourcegroups/{g}` (synchronous: 201 created, 200 updated).
    pub(super) fn put_group(&self, req: &Req, group: &str) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group]);
        if let Some(g) = st.groups.get_mut(&k) {
            if g.deleting {
                return Err(ArmError::new(
                    StatusCode::CONFLICT,
                    "ResourceGroupBeingDeleted",
                    format!(
                        "The resource group '{group}' is in deprovisioning state and cannot perform this operation."
                    ),
                ));
            }
            let location = str_of(&req.body, "location");
            if !location.is_empty() && !location.eq_ignore_ascii_case(&g.location) {
                return Err(ArmError::new(
                    StatusCode::CONFLICT,
                    "InvalidResourceGroupLocation",
                    format!(
                        "Invalid resource group location '{location}'. The Resource group already exists in location '{}'.",
                        g.location
                    ),
                ));
            }
            if let Some(t) = req.body.get("tags") {
                g.tags = t.clone();
            }
            return Ok(axum::Json(render_group(g)).into_response());
        }
        let ok = !group.is_empty()
            && group.len() <= 90
            && group
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.()".contains(c))
            && !group.ends_with('.');
        if !ok {
            return Err(ArmError::bad_request(
                "InvalidResourceGroupName",
                format!(
                    "The resource group name '{group}' is invalid: 1 to 90 letters, digits, underscores, hyphens, periods and parentheses, not ending in a period."
                ),
            ));
        }
        let location = str_of(&req.body, "location");
        if location.is_empty() {
            return Err(ArmError::bad_request(
                "LocationRequired",
                "The location property is required for this definition.",
            ));
        }
        let g = Group {
            subscription: req.subscription.clone(),
            name: group.to_string(),
            location: location.to_string(),
            tags: req.body.get("tags").cloned().unwrap_or_else(|| json!({})),
            managed_by: None,
            deleting: false,
        };
        let body = render_group(&g);
        st.groups.insert(k, g);
        Ok((StatusCode::CREATED, axum::Json(body)).into_response())
    }

    /// `GET /subscriptions/{s}/resourcegroups/{g}`.
    pub(super) fn get_group(&self, req: &Req, group: &str) -> Result<Response, ArmError> {
        let st = self.lock();
        let g = st
            .groups
            .get(&key(&[&req.subscription, group]))
            .ok_or_else(|| ArmError::group_not_found(group))?;
        Ok(axum::Json(render_group(g)).into_response())
    }

    /// `DELETE /subscriptions/{s}/resourcegroups/{g}`: 202 with `Location`; everything in the
    /// group goes with it. A node resource group is refused (its cluster owns it).
    pub(super) fn delete_group(&self, req: &Req, group: &str) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group]);
        let Some(g) = st.groups.get(&k).cloned() else {
            return Err(ArmError::group_not_found(group));
        };
        if let Some(m) = &g.managed_by {
            return Err(ArmError::new(
                StatusCode::CONFLICT,
                "ScopeLocked",
                format!(
                    "The resource group '{group}' is managed by {m} and can only be deleted with it."
                ),
            ));
        }
        if !g.deleting {
            let delay = self.kit.timing().cluster.delete;
            let _ = self.network_operation(
                &mut st,
                req,
                &g.location,
                Target::Group(k.clone()),
                Effect::DeleteGroup,
                delay,
            );
            if let Some(g) = st.groups.get_mut(&k) {
                g.deleting = true;
            }
        }
        let mut response = StatusCode::ACCEPTED.into_response();
        let location = format!(
            "{}/subscriptions/{}/operationresults/{}?api-version={}",
            req.base,
            req.subscription,
            url_token(&k),
            req.api_version
        );
        if let Ok(v) = axum::http::HeaderValue::from_str(&location) {
            response.headers_mut().insert("location", v);
        }
        response
            .headers_mut()
            .insert("retry-after", axum::http::HeaderValue::from_static("1"));
        Ok(response)
    }

    /// `GET /subscriptions/{s}/operationresults/{token}` (a resource group's deletion): 202
    /// while it runs, 200 once gone.
    pub(super) fn group_result(&self, _req: &Req, token: &str) -> Result<Response, ArmError> {
        let st = self.lock();
        let k = from_url_token(token).ok_or_else(|| {
            ArmError::bad_request(
                "InvalidOperationResultToken",
                "The operation result token is invalid.",
            )
        })?;
        Ok(if st.groups.get(&k).is_some_and(|g| g.deleting) {
            StatusCode::ACCEPTED.into_response()
        } else {
            StatusCode::OK.into_response()
        })
    }

    /// `PUT …/virtualNetworks/{name}` with its subnets.
    pub(super) fn put_vnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let g = st
            .groups
            .get(&key(&[&req.subscription, group]))
            .ok_or_else(|| ArmError::group_not_found(group))?
            .clone();
        let k = key(&[&req.subscription, group, name]);
        let existing = st.vnets.get(&k).cloned();
        if let Some(n) = &existing {
            arm::check_if_match(req.headers, Some(&n.etag))?;
            if n.state.busy() {
                return Err(ArmError::new(
                    StatusCode::CONFLICT,
                    "AnotherOperationInProgress",
                    format!(
                        "Another operation on this or dependent resource is in progress. To retry later, wait for virtual network {name} to finish its operation."
                    ),
                ));
            }
        }
        let props = &req.body["properties"];
        let prefixes: Vec<String> = props["addressSpace"]["addressPrefixes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(String::from))
            .collect();
        if prefixes.is_empty() || prefixes.iter().any(|p| validate::cidr(p).is_none()) {
            return Err(ArmError::bad_request(
                "InvalidAddressPrefixFormat",
                format!(
                    "properties.addressSpace.addressPrefixes of virtual network {name} must hold IPv4 CIDRs; got {prefixes:?}."
                ),
            ));
        }
        let mut subnets = std::collections::BTreeMap::new();
        for s in props["subnets"].as_array().into_iter().flatten() {
            let (sn, prefix) = (str_of(s, "name"), str_of(&s["properties"], "addressPrefix"));
            if validate::cidr(prefix).is_none() {
                return Err(ArmError::bad_request(
                    "InvalidAddressPrefixFormat",
                    format!("Subnet {sn}: '{prefix}' is not an IPv4 CIDR."),
                ));
            }
            if !prefixes.iter().any(|p| validate::cidr_within(prefix, p)) {
                return Err(ArmError::bad_request(
                    "NetcfgSubnetRangeOutsideVnet",
                    format!(
                        "Subnet '{sn}' is not valid because its IP address range {prefix} is outside the IP address range of virtual network '{name}'."
                    ),
                ));
            }
            subnets.insert(sn.to_string(), prefix.to_string());
        }
        if let Some(n) = &existing {
            // Subnets left out of a PUT are deleted, unless a cluster uses them.
            for gone in n.subnets.keys().filter(|s| !subnets.contains_key(*s)) {
                if let Some(user) = self.subnet_user(&st, &format!("{}/subnets/{gone}", n.id())) {
                    return Err(ArmError::bad_request(
                        "InUseSubnetCannotBeDeleted",
                        format!("Subnet {gone} is in use by {user} and cannot be deleted."),
                    ));
                }
            }
        }
        let location = existing.as_ref().map_or_else(
            || str_of(&req.body, "location").to_string(),
            |n| n.location.clone(),
        );
        let location = if location.is_empty() {
            g.location.clone()
        } else {
            location
        };
        let vnet = Vnet {
            subscription: req.subscription.clone(),
            group: g.name.clone(),
            name: name.to_string(),
            location: location.clone(),
            tags: req.body.get("tags").cloned().unwrap_or_else(|| json!({})),
            prefixes,
            subnets,
            state: Provisioning::Updating,
            etag: uuid_like(),
            guid: existing.as_ref().map_or_else(uuid_like, |n| n.guid.clone()),
        };
        let body = render_vnet(&vnet);
        st.vnets.insert(k.clone(), vnet);
        let delay = self.kit.timing().addon.create;
        let headers = self.network_operation(
            &mut st,
            req,
            &location,
            Target::Vnet(k),
            Effect::PutVnet,
            delay,
        );
        Ok(headers.respond(
            if existing.is_some() {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            },
            Some(body),
        ))
    }

    /// What uses subnet `id` (a cluster's agent pool), if anything.
    fn subnet_user(&self, st: &super::state::State, id: &str) -> Option<String> {
        st.clusters.values().find_map(|c| {
            c.pools
                .iter()
                .find(|p| str_of(&p.props, "vnetSubnetID").eq_ignore_ascii_case(id))
                .map(|p| format!("agent pool {} of managed cluster {}", p.name, c.name))
        })
    }

    /// `GET …/virtualNetworks/{name}`.
    pub(super) fn get_vnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let n = st
            .vnets
            .get(&key(&[&req.subscription, group, name]))
            .ok_or_else(|| ArmError::not_found("Microsoft.Network/virtualNetworks", name, group))?;
        Ok(axum::Json(render_vnet(n)).into_response())
    }

    /// `DELETE …/virtualNetworks/{name}`: refused while a cluster's pool uses a subnet.
    pub(super) fn delete_vnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let Some(n) = st.vnets.get(&k).cloned() else {
            return Ok(StatusCode::NO_CONTENT.into_response());
        };
        for s in n.subnets.keys() {
            if let Some(user) = self.subnet_user(&st, &format!("{}/subnets/{s}", n.id())) {
                return Err(ArmError::bad_request(
                    "InUseSubnetCannotBeDeleted",
                    format!(
                        "Subnet {s} of virtual network {name} is in use by {user} and cannot be deleted."
                    ),
                ));
            }
        }
        let delay = self.kit.timing().addon.delete;
        let headers = self.network_operation(
            &mut st,
            req,
            &n.location,
            Target::Vnet(k.clone()),
            Effect::DeleteVnet,
            delay,
        );
        if let Some(n) = st.vnets.get_mut(&k) {
            n.state = Provisioning::Deleting;
        }
        Ok(headers.respond(StatusCode::ACCEPTED, None))
    }

    /// `PUT …/subnets/{subnet}`.
    pub(super) fn put_subnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        subnet: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let Some(n) = st.vnets.get(&k).cloned() else {
            return Err(ArmError::not_found(
                "Microsoft.Network/virtualNetworks",
                name,
                group,
            ));
        };
        if n.state.busy() {
            return Err(ArmError::new(
                StatusCode::CONFLICT,
                "AnotherOperationInProgress",
                format!(
                    "Another operation on this or dependent resource is in progress. To retry later, wait for virtual network {name} to finish its operation."
                ),
            ));
        }
        let prefix = str_of(&req.body["properties"], "addressPrefix").to_string();
        if validate::cidr(&prefix).is_none() {
            return Err(ArmError::bad_request(
                "InvalidAddressPrefixFormat",
                format!("Subnet {subnet}: '{prefix}' is not an IPv4 CIDR."),
            ));
        }
        if !n.prefixes.iter().any(|p| validate::cidr_within(&prefix, p)) {
            return Err(ArmError::bad_request(
                "NetcfgSubnetRangeOutsideVnet",
                format!(
                    "Subnet '{subnet}' is not valid because its IP address range {prefix} is outside the IP address range of virtual network '{name}'."
                ),
            ));
        }
        let created = !n.subnets.contains_key(subnet);
        let delay = self.kit.timing().addon.create;
        let headers = self.network_operation(
            &mut st,
            req,
            &n.location,
            Target::Vnet(k.clone()),
            Effect::PutVnet,
            delay,
        );
        let Some(n) = st.vnets.get_mut(&k) else {
            return Err(ArmError::not_found(
                "Microsoft.Network/virtualNetworks",
                name,
                group,
            ));
        };
        n.subnets.insert(subnet.to_string(), prefix.clone());
        n.state = Provisioning::Updating;
        n.etag = uuid_like();
        let body = render_subnet(n, subnet, &prefix);
        Ok(headers.respond(
            if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            Some(body),
        ))
    }

    /// `GET …/subnets/{subnet}`.
    pub(super) fn get_subnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        subnet: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let n = st
            .vnets
            .get(&key(&[&req.subscription, group, name]))
            .ok_or_else(|| ArmError::not_found("Microsoft.Network/virtualNetworks", name, group))?;
        let (sn, prefix) = n
            .subnets
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(subnet))
            .ok_or_else(|| {
                ArmError::not_found(
                    "Microsoft.Network/virtualNetworks/subnets",
                    &format!("{name}/{subnet}"),
                    group,
                )
            })?;
        Ok(axum::Json(render_subnet(n, sn, prefix)).into_response())
    }

    /// `DELETE …/subnets/{subnet}`.
    pub(super) fn delete_subnet(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        subnet: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let Some(n) = st.vnets.get(&k).cloned() else {
            return Ok(StatusCode::NO_CONTENT.into_response());
        };
        if !n.subnets.contains_key(subnet) {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        if let Some(user) = self.subnet_user(&st, &format!("{}/subnets/{subnet}", n.id())) {
            return Err(ArmError::bad_request(
                "InUseSubnetCannotBeDeleted",
                format!("Subnet {subnet} is in use by {user} and cannot be deleted."),
            ));
        }
        let delay = self.kit.timing().addon.delete;
        let headers = self.network_operation(
            &mut st,
            req,
            &n.location,
            Target::Vnet(k.clone()),
            Effect::PutVnet,
            delay,
        );
        if let Some(n) = st.vnets.get_mut(&k) {
            n.subnets.remove(subnet);
            n.state = Provisioning::Updating;
            n.etag = uuid_like();
        }
        Ok(headers.respond(StatusCode::ACCEPTED, None))
    }

    /// `GET …/resourceGroups/{nodeRG}/providers/Microsoft.Compute/virtualMachineScaleSets`.
    pub(super) fn list_scale_sets(&self, req: &Req, group: &str) -> Result<Response, ArmError> {
        let st = self.lock();
        if !st.groups.contains_key(&key(&[&req.subscription, group])) {
            return Err(ArmError::group_not_found(group));
        }
        let value: Vec<Value> = st
            .cluster_of_node_group(&req.subscription, group)
            .map(|c| {
                c.pools
                    .iter()
                    .map(|p| render_scale_set(&req.subscription, &c.node_group, &c.location, p))
                    .collect()
            })
            .unwrap_or_default();
        Ok(axum::Json(json!({ "value": value })).into_response())
    }

    /// `GET …/virtualMachineScaleSets/{vmss}/virtualMachines`, 50 a page (`nextLink` with
    /// `$skiptoken`).
    pub(super) fn list_scale_set_vms(
        &self,
        req: &Req,
        group: &str,
        vmss: &str,
        skip: usize,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = st.cluster_of_node_group(&req.subscription, group);
        let Some((c, p)) = c.and_then(|c| {
            c.pools
                .iter()
                .find(|p| p.vmss().eq_ignore_ascii_case(vmss))
                .map(|p| (c, p))
        }) else {
            return Err(ArmError::not_found(
                "Microsoft.Compute/virtualMachineScaleSets",
                vmss,
                group,
            ));
        };
        let base = format!(
            "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Compute/virtualMachineScaleSets/{}",
            req.subscription,
            c.node_group,
            p.vmss()
        );
        let all: Vec<Value> = p
            .vms
            .iter()
            .map(|v| {
                let mut vm = json!({
                    "id": format!("{base}/virtualMachines/{}", v.instance_id),
                    "name": format!("{}_{}", p.vmss(), v.instance_id),
                    "instanceId": v.instance_id.to_string(),
                    "type": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
                    "location": c.location,
                    "sku": { "name": p.vm_size(), "tier": "Standard" },
                    "properties": {
                        "provisioningState": if v.leaving_at.is_some() { "Deleting" } else { "Succeeded" },
                        "latestModelApplied": true,
                        "osProfile": { "computerName": p.computer_name(v.instance_id) },
                    },
                });
                if let Some(z) = &v.zone {
                    vm["zones"] = json!([z]);
                }
                vm
            })
            .collect();
        let page: Vec<Value> = all.iter().skip(skip).take(PAGE).cloned().collect();
        let mut out = json!({ "value": page });
        if skip + PAGE < all.len() {
            out["nextLink"] = json!(format!(
                "{}{base}/virtualMachines?api-version={}&$skiptoken={}",
                req.base,
                req.api_version,
                skip + PAGE
            ));
        }
        Ok(axum::Json(out).into_response())
    }

    /// `GET …/providers/{ns}/locations/{loc}/operations/{id}`: the operation status resource.
    pub(super) fn operation_status(
        &self,
        req: &Req,
        namespace: &str,
        location: &str,
        id: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let op = operation_of(&st, req, namespace, id)?;
        let mut v = json!({
            "id": format!("/subscriptions/{}/providers/{}/locations/{location}/operations/{id}", req.subscription, op.namespace),
            "name": id,
            "status": op.status.as_str(),
            "startTime": op.start_time,
        });
        if let Some(end) = &op.end_time {
            v["endTime"] = json!(end);
        }
        v["percentComplete"] = json!(if op.status == OpStatus::InProgress {
            50.0
        } else {
            100.0
        });
        if let Some(e) = &op.error {
            v["error"] = e.body();
        }
        Ok(axum::Json(v).into_response())
    }

    /// `GET …/operationresults/{id}`: 202 while running; then 204 (a deletion), the error, or
    /// 200 with the resource.
    pub(super) fn operation_result(
        &self,
        req: &Req,
        namespace: &str,
        location: &str,
        id: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let op = operation_of(&st, req, namespace, id)?;
        match op.status {
            OpStatus::InProgress => Ok(AsyncHeaders::new(
                &req.base,
                &req.subscription,
                op.namespace,
                location,
                id,
                &req.api_version,
            )
            .respond(StatusCode::ACCEPTED, None)),
            OpStatus::Failed | OpStatus::Canceled => Err(op.error.clone().unwrap_or_else(|| {
                ArmError::bad_request("Canceled", "The operation was canceled.")
            })),
            OpStatus::Succeeded => {
                let body = match &op.target {
                    Target::Cluster(k) => st.clusters.get(k).map(super::managed::render_cluster),
                    Target::Vnet(k) => st.vnets.get(k).map(render_vnet),
                    Target::Group(_) => None,
                };
                Ok(match body {
                    Some(b) => axum::Json(b).into_response(),
                    None => StatusCode::NO_CONTENT.into_response(),
                })
            }
        }
    }
}

/// The operation `id` of `namespace` in the request's subscription.
fn operation_of<'s>(
    st: &'s super::state::State,
    req: &Req,
    namespace: &str,
    id: &str,
) -> Result<&'s Operation, ArmError> {
    st.operations
        .get(id)
        .filter(|o| {
            o.namespace.eq_ignore_ascii_case(namespace)
                && o.subscription.eq_ignore_ascii_case(&req.subscription)
        })
        .ok_or_else(|| {
            ArmError::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!("Operation {id} was not found."),
            )
        })
}

fn render_scale_set(subscription: &str, node_group: &str, location: &str, p: &Pool) -> Value {
    json!({
        "id": format!("/subscriptions/{subscription}/resourceGroups/{node_group}/providers/Microsoft.Compute/virtualMachineScaleSets/{}", p.vmss()),
        "name": p.vmss(),
        "type": "Microsoft.Compute/virtualMachineScaleSets",
        "location": location,
        "tags": { "aks-managed-poolName": p.name, "aks-managed-orchestrator": format!("Kubernetes:{}", p.current), "aks-managed-createOperationID": "" },
        "sku": { "name": p.vm_size(), "tier": "Standard", "capacity": p.serving().count() },
        "properties": { "provisioningState": if p.state.busy() { "Updating" } else { "Succeeded" }, "uniqueId": p.digits },
    })
}

/// A resource group deletion's result token (its key, hex-encoded).
fn url_token(k: &str) -> String {
    hex::encode(k.as_bytes())
}

fn from_url_token(t: &str) -> Option<String> {
    String::from_utf8(hex::decode(t).ok()?).ok()
}
