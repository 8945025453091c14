//! `Microsoft.ContainerService` at api-version 2026-08-01: managed clusters (PUT create or
//! update, GET, DELETE, list, tags, user and admin credentials, upgrade profile) and their agent
//! pools (PUT, GET, DELETE, list, upgrade profile). Every change is an asynchronous operation
//! the ticker completes.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::Req;
use super::arm::{self, ArmError, AsyncHeaders, CONTAINER_API_VERSION, str_of};
use super::catalog;
use super::entra::{AKS_SERVER_APP, uuid_like};
use super::state::{
    Cluster, Effect, Group, OpStatus, Operation, Pool, Provisioning, State, Target, key,
};
use super::validate;
use super::{Aks, now_rfc3339};
use crate::kit::Delays;

/// Properties the service sets; a request's values for them are ignored.
const READ_ONLY: &[&str] = &[
    "provisioningState",
    "powerState",
    "currentKubernetesVersion",
    "fqdn",
    "azurePortalFQDN",
    "privateFQDN",
    "maxAgentPools",
    "agentPoolProfiles",
    "identityProfile",
    "resourceUID",
];

/// Pool properties the service sets.
const POOL_READ_ONLY: &[&str] = &[
    "provisioningState",
    "powerState",
    "currentOrchestratorVersion",
    "nodeImageVersion",
    "eTag",
];

fn strip(props: &Value, fields: &[&str]) -> Value {
    let mut out = props.clone();
    if let Some(o) = out.as_object_mut() {
        for f in fields {
            o.remove(*f);
        }
    }
    out
}

/// The rendered agent pool properties (inside a cluster's `agentPoolProfiles` or an agent
/// pool's `properties`).
fn pool_properties(p: &Pool) -> Value {
    let mut v = p.props.clone();
    v["provisioningState"] = json!(p.state.as_str());
    v["powerState"] = json!({ "code": "Running" });
    v["currentOrchestratorVersion"] = json!(p.current);
    v["nodeImageVersion"] = json!(catalog::NODE_IMAGE);
    v["eTag"] = json!(p.etag);
    v
}

/// A cluster as GET answers it.
pub fn render_cluster(c: &Cluster) -> Value {
    let mut props = c.props.clone();
    props["provisioningState"] = json!(c.state.as_str());
    props["powerState"] = json!({ "code": "Running" });
    props["currentKubernetesVersion"] = json!(c.current);
    props["nodeResourceGroup"] = json!(c.node_group);
    props["maxAgentPools"] = json!(100);
    props["resourceUID"] = json!(c.workload_id);
    if props["apiServerAccessProfile"]["enablePrivateCluster"] == true {
        props["privateFQDN"] = json!(c.fqdn.replace(".hcp.", ".privatelink."));
        if props["apiServerAccessProfile"]["enablePrivateClusterPublicFQDN"] == true {
            props["fqdn"] = json!(c.fqdn);
        }
    } else {
        props["fqdn"] = json!(c.fqdn);
        props["azurePortalFQDN"] = json!(c.fqdn.replace(".hcp.", ".portal.hcp."));
    }
    props["agentPoolProfiles"] = Value::Array(
        c.pools
            .iter()
            .map(|p| {
                let mut v = pool_properties(p);
                v["name"] = json!(p.name);
                v
            })
            .collect(),
    );
    let mut out = json!({
        "id": c.id(),
        "name": c.name,
        "type": "Microsoft.ContainerService/managedClusters",
        "location": c.location,
        "tags": c.tags,
        "sku": c.sku,
        "eTag": c.etag,
        "properties": props,
    });
    if !c.identity.is_null() {
        out["identity"] = c.identity.clone();
    }
    out
}

/// An agent pool as GET answers it.
pub fn render_pool(c: &Cluster, p: &Pool) -> Value {
    json!({
        "id": format!("{}/agentPools/{}", c.id(), p.name),
        "name": p.name,
        "type": "Microsoft.ContainerService/managedClusters/agentPools",
        "eTag": p.etag,
        "properties": pool_properties(p),
    })
}

fn cluster_or_404<'s>(
    st: &'s State,
    req: &Req,
    group: &str,
    name: &str,
) -> Result<&'s Cluster, ArmError> {
    st.clusters
        .get(&key(&[&req.subscription, group, name]))
        .ok_or_else(|| {
            ArmError::not_found("Microsoft.ContainerService/managedClusters", name, group)
        })
}

/// AKS's preflight refusal when the regional vCPU quota would be exceeded.
pub fn quota_error(location: &str, limit: u32, used: u32, asked: u32) -> ArmError {
    ArmError::bad_request(
        "QuotaExceeded",
        format!(
            "Preflight validation check for resource(s) for container service failed. Message: Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Location: {location}, Current Limit: {limit}, Current Usage: {used}, Additional Required: {asked}. Please read more about quota limits at https://aka.ms/AzurePerVMQuotaLimits."
        ),
    )
}

impl Aks {
    fn quota_check(
        &self,
        st: &State,
        subscription: &str,
        location: &str,
        extra: u32,
    ) -> Result<(), ArmError> {
        let used = st.vcpus_used(subscription, location);
        if used + extra > self.config.vcpu_quota {
            return Err(quota_error(location, self.config.vcpu_quota, used, extra));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // each is one field of the operation
    fn new_operation(
        &self,
        st: &mut State,
        req: &Req,
        location: &str,
        target: Target,
        kind: Provisioning,
        effect: Effect,
        delay: f64,
    ) -> String {
        let id = uuid_like();
        st.operations.insert(
            id.clone(),
            Operation {
                id: id.clone(),
                subscription: req.subscription.clone(),
                namespace: "Microsoft.ContainerService",
                location: location.to_string(),
                target,
                status: OpStatus::InProgress,
                start_time: now_rfc3339(),
                end_time: None,
                done_at: Instant::now() + Delays::duration(delay),
                error: None,
                effect: Some(effect),
                kind,
            },
        );
        id
    }

    fn headers(req: &Req, location: &str, id: &str) -> AsyncHeaders {
        AsyncHeaders::new(
            &req.base,
            &req.subscription,
            "Microsoft.ContainerService",
            location,
            id,
            CONTAINER_API_VERSION,
        )
    }

    /// `PUT …/managedClusters/{name}`.
    pub(super) fn put_cluster(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let timing = self.kit.timing();
        if let Some(c) = st.clusters.get(&k) {
            arm::check_if_match(req.headers, Some(&c.etag))?;
            return self.update_cluster(&mut st, req, &k, timing.cluster.update);
        }
        arm::check_if_match(req.headers, None)?;
        let g = group_for_write(&st, req, group)?.clone();
        validate::cluster_name(name)?;
        let body = &req.body;
        let location = str_of(body, "location").to_string();
        if location.is_empty() {
            return Err(ArmError::bad_request(
                "LocationRequired",
                "The location property is required for this definition.",
            ));
        }
        let props = body.get("properties").cloned().unwrap_or_else(|| json!({}));
        let dns = str_of(&props, "dnsPrefix");
        if dns.is_empty() && str_of(&props, "fqdnSubdomain").is_empty() {
            return Err(ArmError::bad_request(
                "InvalidDnsPrefix",
                "Either properties.dnsPrefix or properties.fqdnSubdomain must be specified.",
            ));
        }
        if !dns.is_empty() {
            validate::dns_prefix(dns)?;
        }
        let version = validate::version(
            str_of(&props, "kubernetesVersion"),
            "properties.kubernetesVersion",
            "K8sVersionNotSupported",
        )?;
        validate::network_profile(&props["networkProfile"])?;
        let tier = str_of(&body["sku"], "tier");
        if !matches!(tier, "" | "Free" | "Standard" | "Premium") {
            return Err(ArmError::invalid_parameter(
                "sku.tier",
                format!("'{tier}' is not one of Free, Standard, Premium."),
            ));
        }
        if props["disableLocalAccounts"] == true && props["aadProfile"]["managed"] != true {
            return Err(ArmError::bad_request(
                "BadRequest",
                "properties.disableLocalAccounts requires AKS-managed Microsoft Entra integration (properties.aadProfile.managed: true).",
            ));
        }
        let access = &props["apiServerAccessProfile"];
        if access["enablePrivateCluster"] == true
            && access["authorizedIPRanges"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        {
            return Err(ArmError::bad_request(
                "BadRequest",
                "properties.apiServerAccessProfile.authorizedIPRanges cannot be used with enablePrivateCluster.",
            ));
        }
        for r in access["authorizedIPRanges"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if validate::cidr(r.as_str().unwrap_or_default()).is_none() {
                return Err(ArmError::invalid_parameter(
                    "properties.apiServerAccessProfile.authorizedIPRanges",
                    format!("{r} is not an IPv4 CIDR."),
                ));
            }
        }
        let profiles = props["agentPoolProfiles"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !profiles
            .iter()
            .any(|p| str_of(p, "mode").eq_ignore_ascii_case("System"))
        {
            return Err(ArmError::invalid_parameter(
                "properties.agentPoolProfiles",
                "A managed cluster needs at least one agent pool of mode System.",
            ));
        }
        let mut pools = Vec::new();
        let mut vcpus = 0;
        for (i, p) in profiles.iter().enumerate() {
            let field = format!("properties.agentPoolProfiles[{i}]");
            let pname = str_of(p, "name");
            validate::pool_name(pname)?;
            if pools.iter().any(|q: &Pool| q.name == pname) {
                return Err(ArmError::invalid_parameter(
                    &format!("{field}.name"),
                    format!("Agent pool name {pname} is used twice."),
                ));
            }
            validate::pool_properties(&field, p)?;
            let pv = match str_of(p, "orchestratorVersion") {
                "" => version,
                v => validate::version(
                    v,
                    &format!("{field}.orchestratorVersion"),
                    "AgentPoolK8sVersionNotSupported",
                )?,
            };
            validate::pool_not_above(pname, pv, version)?;
            self.check_subnet(&st, &field, p)?;
            let pool = new_pool(pname, &strip(p, &["name"]), pv);
            vcpus += catalog::vm_size(pool.vm_size()).map_or(2, |s| s.0) * pool.count();
            pools.push(pool);
        }
        self.quota_check(&st, &req.subscription, &location, vcpus)?;
        let mut stored = strip(&props, READ_ONLY);
        if stored["kubernetesVersion"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            stored["kubernetesVersion"] = json!(version);
        }
        if stored["enableRBAC"].is_null() {
            stored["enableRBAC"] = json!(true);
        }
        if stored["aadProfile"]["managed"] == true && stored["aadProfile"]["tenantID"].is_null() {
            stored["aadProfile"]["tenantID"] = json!(self.entra.tenant());
        }
        fill_network_defaults(&mut stored["networkProfile"]);
        if stored["oidcIssuerProfile"]["enabled"] == true {
            stored["oidcIssuerProfile"]["issuerURL"] = json!(format!(
                "https://{location}.oic.prod-aks.azure.com/{}/{}/",
                self.entra.tenant(),
                uuid_like()
            ));
        }
        let node_group = match str_of(&stored, "nodeResourceGroup") {
            "" => {
                let mut n = format!("MC_{}_{}_{}", g.name, name, location);
                n.truncate(80);
                n
            }
            n => n.to_string(),
        };
        stored
            .as_object_mut()
            .map(|o| o.remove("nodeResourceGroup"));
        let prefix = if dns.is_empty() {
            str_of(&props, "fqdnSubdomain")
        } else {
            dns
        };
        let cluster = Cluster {
            subscription: req.subscription.clone(),
            group: g.name.clone(),
            name: name.to_string(),
            location: location.clone(),
            tags: body.get("tags").cloned().unwrap_or_else(|| json!({})),
            sku: json!({ "name": "Base", "tier": if tier.is_empty() { "Free" } else { tier } }),
            identity: body
                .get("identity")
                .cloned()
                .map(|mut i| {
                    i["principalId"] = json!(uuid_like());
                    i["tenantId"] = json!(self.entra.tenant());
                    i
                })
                .unwrap_or(Value::Null),
            props: stored,
            current: version.to_string(),
            state: Provisioning::Creating,
            etag: arm::new_etag(),
            pools,
            node_group: node_group.clone(),
            fqdn: format!(
                "{}-{}.hcp.{location}.azmk8s.io",
                prefix.to_ascii_lowercase(),
                super::hex(8)
            ),
            busy: None,
            creator: req.caller.clone(),
            admin_token: super::hex(64),
            workload_id: format!("aks-{}", super::hex(16)),
            start_requested: false,
            endpoint: None,
            nodes_dirty: false,
        };
        let op = self.new_operation(
            &mut st,
            req,
            &location,
            Target::Cluster(k.clone()),
            Provisioning::Creating,
            Effect::CreateCluster,
            timing.cluster.create,
        );
        let mut cluster = cluster;
        cluster.busy = Some(op.clone());
        let rendered = render_cluster(&cluster);
        st.clusters.insert(k, cluster);
        st.groups.insert(
            key(&[&req.subscription, &node_group]),
            Group {
                subscription: req.subscription.clone(),
                name: node_group,
                location: location.clone(),
                tags: json!({ "aks-managed-cluster-name": name, "aks-managed-cluster-rg": g.name }),
                managed_by: Some(rendered["id"].as_str().unwrap_or_default().to_string()),
                deleting: false,
            },
        );
        tracing::info!(cluster = name, version, "managed cluster creating");
        Ok(Self::headers(req, &location, &op).respond(StatusCode::CREATED, Some(rendered)))
    }

    fn check_subnet(&self, st: &State, field: &str, profile: &Value) -> Result<(), ArmError> {
        let id = str_of(profile, "vnetSubnetID");
        if id.is_empty() {
            return Ok(());
        }
        let parts: Vec<&str> = id.trim_matches('/').split('/').collect();
        let found = match parts.as_slice() {
            [
                "subscriptions",
                s,
                rg,
                g,
                "providers",
                ns,
                vn,
                v,
                sn,
                subnet,
            ] if rg.eq_ignore_ascii_case("resourceGroups")
                && ns.eq_ignore_ascii_case("Microsoft.Network")
                && vn.eq_ignore_ascii_case("virtualNetworks")
                && sn.eq_ignore_ascii_case("subnets") =>
            {
                st.vnets
                    .get(&key(&[s, g, v]))
                    .is_some_and(|n| n.subnets.keys().any(|k| k.eq_ignore_ascii_case(subnet)))
            }
            _ => false,
        };
        if found {
            Ok(())
        } else {
            Err(ArmError::invalid_parameter(
                &format!("{field}.vnetSubnetID"),
                format!("Subnet {id} was not found: create the virtual network and subnet first."),
            ))
        }
    }

    fn update_cluster(
        &self,
        st: &mut State,
        req: &Req,
        k: &str,
        delay: f64,
    ) -> Result<Response, ArmError> {
        let c = st
            .clusters
            .get(k)
            .cloned()
            .ok_or_else(|| ArmError::not_found("managedClusters", k, ""))?;
        if let Some(running) = c.busy.as_ref().and_then(|b| st.operations.get(b)) {
            return Err(ArmError::busy(
                &format!("managed cluster {}", c.name),
                running.kind.as_str(),
            ));
        }
        if let Some(p) = c.pools.iter().find(|p| p.state.busy()) {
            return Err(ArmError::busy(
                &format!("agent pool {} of managed cluster {}", p.name, c.name),
                p.state.as_str(),
            ));
        }
        let body = &req.body;
        let location = str_of(body, "location");
        if !location.is_empty() && !location.eq_ignore_ascii_case(&c.location) {
            return Err(ArmError::new(
                StatusCode::CONFLICT,
                "InvalidResourceLocation",
                format!(
                    "The resource '{}' already exists in location '{}' in resource group '{}'. A resource with the same name cannot be created in location '{location}'.",
                    c.name, c.location, c.group
                ),
            ));
        }
        let props = body.get("properties").cloned().unwrap_or_else(|| json!({}));
        let immutable = [
            ("dnsPrefix", &props["dnsPrefix"], &c.props["dnsPrefix"]),
            (
                "fqdnSubdomain",
                &props["fqdnSubdomain"],
                &c.props["fqdnSubdomain"],
            ),
            (
                "networkProfile.networkPlugin",
                &props["networkProfile"]["networkPlugin"],
                &c.props["networkProfile"]["networkPlugin"],
            ),
            (
                "apiServerAccessProfile.enablePrivateCluster",
                &props["apiServerAccessProfile"]["enablePrivateCluster"],
                &c.props["apiServerAccessProfile"]["enablePrivateCluster"],
            ),
        ];
        for (field, new, old) in immutable {
            if !new.is_null() && new != old && !(new == false && old.is_null()) {
                return Err(ArmError::bad_request(
                    "PropertyChangeNotAllowed",
                    format!("Changing property 'properties.{field}' is not allowed."),
                ));
            }
        }
        if let Some(n) = props.get("nodeResourceGroup").and_then(Value::as_str)
            && !n.eq_ignore_ascii_case(&c.node_group)
        {
            return Err(ArmError::bad_request(
                "PropertyChangeNotAllowed",
                "Changing property 'properties.nodeResourceGroup' is not allowed.",
            ));
        }
        if c.props["aadProfile"]["managed"] == true && props["aadProfile"]["managed"] != true {
            return Err(ArmError::bad_request(
                "BadRequest",
                "AKS-managed Microsoft Entra integration cannot be disabled (properties.aadProfile.managed).",
            ));
        }
        if props["disableLocalAccounts"] == true && props["aadProfile"]["managed"] != true {
            return Err(ArmError::bad_request(
                "BadRequest",
                "properties.disableLocalAccounts requires AKS-managed Microsoft Entra integration (properties.aadProfile.managed: true).",
            ));
        }
        validate::network_profile(&props["networkProfile"])?;
        let wanted = validate::version(
            str_of(&props, "kubernetesVersion"),
            "properties.kubernetesVersion",
            "K8sVersionNotSupported",
        )?;
        let wanted = if str_of(&props, "kubernetesVersion").is_empty() {
            c.current.as_str()
        } else {
            wanted
        };
        let (from, to) = (catalog::parse(&c.current), catalog::parse(wanted));
        let upgrade = wanted != c.current;
        if let (Some((a, b, x)), Some((d, e, y))) = (from, to) {
            if (d, e, y) < (a, b, x) {
                return Err(ArmError::bad_request(
                    "OperationNotAllowed",
                    format!(
                        "Downgrading the control plane from {} to {wanted} is not allowed.",
                        c.current
                    ),
                ));
            }
            if d != a || e > b + 1 {
                return Err(ArmError::bad_request(
                    "OperationNotAllowed",
                    format!(
                        "Upgrading the control plane from {} to {wanted} is not allowed: AKS upgrades one minor version at a time. Upgrade to {a}.{} first.",
                        c.current,
                        b + 1
                    ),
                ));
            }
        }
        let mut stored = strip(&props, READ_ONLY);
        stored
            .as_object_mut()
            .map(|o| o.remove("nodeResourceGroup"));
        if stored["kubernetesVersion"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            stored["kubernetesVersion"] = c.props["kubernetesVersion"].clone();
        }
        if stored["enableRBAC"].is_null() {
            stored["enableRBAC"] = json!(true);
        }
        if stored["aadProfile"]["managed"] == true && stored["aadProfile"]["tenantID"].is_null() {
            stored["aadProfile"]["tenantID"] = json!(self.entra.tenant());
        }
        fill_network_defaults(&mut stored["networkProfile"]);
        if stored["oidcIssuerProfile"]["enabled"] == true {
            stored["oidcIssuerProfile"]["issuerURL"] = match &c.props["oidcIssuerProfile"]["issuerURL"]
            {
                Value::String(u) => json!(u),
                _ => json!(format!(
                    "https://{}.oic.prod-aks.azure.com/{}/{}/",
                    c.location,
                    self.entra.tenant(),
                    uuid_like()
                )),
            };
        }
        let (kind, effect) = if upgrade {
            (
                Provisioning::Upgrading,
                Effect::UpgradeCluster(wanted.to_string()),
            )
        } else {
            (Provisioning::Updating, Effect::UpdateCluster)
        };
        let op = self.new_operation(
            st,
            req,
            &c.location,
            Target::Cluster(k.to_string()),
            kind,
            effect,
            delay,
        );
        let location = c.location.clone();
        let Some(c) = st.clusters.get_mut(k) else {
            return Err(ArmError::not_found("managedClusters", k, ""));
        };
        c.props = stored;
        if let Some(t) = body.get("tags") {
            c.tags = t.clone();
        }
        if let Some(tier) = body["sku"].get("tier") {
            c.sku["tier"] = tier.clone();
        }
        c.state = kind;
        c.etag = arm::new_etag();
        c.busy = Some(op.clone());
        let rendered = render_cluster(c);
        Ok(Self::headers(req, &location, &op).respond(StatusCode::OK, Some(rendered)))
    }

    /// `PATCH …/managedClusters/{name}` (tags only).
    pub(super) fn patch_tags(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?.clone();
        if let Some(running) = c.busy.as_ref().and_then(|b| st.operations.get(b)) {
            return Err(ArmError::busy(
                &format!("managed cluster {}", c.name),
                running.kind.as_str(),
            ));
        }
        let k = key(&[&req.subscription, group, name]);
        let op = self.new_operation(
            &mut st,
            req,
            &c.location,
            Target::Cluster(k.clone()),
            Provisioning::Updating,
            Effect::UpdateCluster,
            self.kit.timing().addon.update,
        );
        let Some(c) = st.clusters.get_mut(&k) else {
            return Err(ArmError::not_found("managedClusters", name, group));
        };
        c.tags = req.body.get("tags").cloned().unwrap_or_else(|| json!({}));
        c.state = Provisioning::Updating;
        c.etag = arm::new_etag();
        c.busy = Some(op.clone());
        let rendered = render_cluster(c);
        let location = c.location.clone();
        Ok(Self::headers(req, &location, &op).respond(StatusCode::OK, Some(rendered)))
    }

    /// `GET …/managedClusters/{name}`.
    pub(super) fn get_cluster(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        Ok(axum::Json(render_cluster(cluster_or_404(&st, req, group, name)?)).into_response())
    }

    /// `GET …/managedClusters` of a group, or of the subscription (`group` `None`).
    pub(super) fn list_clusters(
        &self,
        req: &Req,
        group: Option<&str>,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        if let Some(g) = group
            && !st.groups.contains_key(&key(&[&req.subscription, g]))
        {
            return Err(ArmError::group_not_found(g));
        }
        let value: Vec<Value> = st
            .clusters
            .values()
            .filter(|c| c.subscription.eq_ignore_ascii_case(&req.subscription))
            .filter(|c| group.is_none_or(|g| c.group.eq_ignore_ascii_case(g)))
            .map(render_cluster)
            .collect();
        Ok(axum::Json(json!({ "value": value })).into_response())
    }

    /// `DELETE …/managedClusters/{name}`: 202 with `Location`, or 204 when there is none. A
    /// running operation is canceled.
    pub(super) fn delete_cluster(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let mut st = self.lock();
        let k = key(&[&req.subscription, group, name]);
        let Some(c) = st.clusters.get(&k).cloned() else {
            return Ok(StatusCode::NO_CONTENT.into_response());
        };
        if c.state == Provisioning::Deleting {
            let op = c.busy.clone().unwrap_or_default();
            return Ok(Self::headers(req, &c.location, &op).respond(StatusCode::ACCEPTED, None));
        }
        if let Some(running) = c.busy.as_ref().and_then(|b| st.operations.get_mut(b)) {
            running.status = OpStatus::Canceled;
            running.end_time = Some(now_rfc3339());
            running.effect = None;
            running.error = Some(ArmError::bad_request(
                "Canceled",
                "The operation was canceled by a delete of the managed cluster.",
            ));
        }
        let op = self.new_operation(
            &mut st,
            req,
            &c.location,
            Target::Cluster(k.clone()),
            Provisioning::Deleting,
            Effect::DeleteCluster,
            self.kit.timing().cluster.delete,
        );
        if let Some(c) = st.clusters.get_mut(&k) {
            c.state = Provisioning::Deleting;
            c.busy = Some(op.clone());
            c.etag = arm::new_etag();
        }
        tracing::info!(cluster = name, "managed cluster deleting");
        Ok(Self::headers(req, &c.location, &op).respond(StatusCode::ACCEPTED, None))
    }

    /// `POST …/listClusterUserCredential` and `…/listClusterAdminCredential`.
    pub(super) fn credentials(
        &self,
        req: &Req,
        group: &str,
        name: &str,
        admin: bool,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?;
        if admin && c.local_accounts_disabled() {
            return Err(ArmError::bad_request(
                "BadRequest",
                "Getting static credential is not allowed because this cluster is set to disable local accounts.",
            ));
        }
        if c.state == Provisioning::Creating && c.endpoint.is_none() {
            return Err(ArmError::bad_request(
                "BadRequest",
                format!(
                    "The managed cluster {} is still being created; its credentials are not available yet.",
                    c.name
                ),
            ));
        }
        let (server, ca) = match &c.endpoint {
            Some(ep) => (ep.server.clone(), Some(ep.ca_pem.clone())),
            None => (
                format!("https://{}:443", c.fqdn),
                self.config
                    .workload
                    .as_ref()
                    .map(|w| w.ca_pem().to_string()),
            ),
        };
        let aad = c.props["aadProfile"]["managed"] == true;
        let (user, kind) = if admin {
            (
                format!("clusterAdmin_{}_{}", c.group, c.name),
                "clusterAdmin",
            )
        } else {
            (format!("clusterUser_{}_{}", c.group, c.name), "clusterUser")
        };
        let auth = if admin || !aad {
            format!("    token: {}\n", c.admin_token)
        } else {
            format!(
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n      args:\n      - get-token\n      - --environment\n      - AzurePublicCloud\n      - --server-id\n      - {AKS_SERVER_APP}\n      - --client-id\n      - 80faf920-1908-4b52-b5ef-a8e7bedfc67a\n      - --tenant-id\n      - {}\n      - --login\n      - devicecode\n      env: null\n      installHint: |2\n\n        kubelogin is not installed which is required to connect to AAD enabled cluster.\n\n        To learn more, please go to https://aka.ms/aks/kubelogin\n      provideClusterInfo: false\n",
                self.entra.tenant()
            )
        };
        let ca_line = ca
            .map(|pem| format!("    certificate-authority-data: {}\n", STANDARD.encode(pem)))
            .unwrap_or_default();
        let kubeconfig = format!(
            "apiVersion: v1\nclusters:\n- cluster:\n{ca_line}    server: {server}\n  name: {name}\ncontexts:\n- context:\n    cluster: {name}\n    user: {user}\n  name: {name}\ncurrent-context: {name}\nkind: Config\npreferences: {{}}\nusers:\n- name: {user}\n  user:\n{auth}",
            name = c.name
        );
        Ok(axum::Json(
            json!({ "kubeconfigs": [{ "name": kind, "value": STANDARD.encode(kubeconfig) }] }),
        )
        .into_response())
    }

    /// `GET …/managedClusters/{name}/upgradeProfiles/default`.
    pub(super) fn upgrade_profile(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        let c = cluster_or_404(&st, req, group, name)?;
        let upgrades = |v: &str| {
            catalog::upgrades(v)
                .into_iter()
                .map(|u| json!({ "kubernetesVersion": u }))
                .collect::<Vec<_>>()
        };
        Ok(axum::Json(json!({
            "id": format!("{}/upgradeprofiles/default", c.id()),
            "name": "default",
            "type": "Microsoft.ContainerService/managedClusters/upgradeprofiles",
            "properties": {
                "controlPlaneProfile": { "kubernetesVersion": c.current, "name": "", "osType": "Linux", "upgrades": upgrades(&c.current) },
                "agentPoolProfiles": c.pools.iter().map(|p| json!({
                    "kubernetesVersion": p.current, "name": p.name, "osType": "Linux",
                    "upgrades": upgrades(&p.current).into_iter().filter(|u| {
                        validate::pool_not_above(&p.name, u["kubernetesVersion"].as_str().unwrap_or_default(), &c.current).is_ok()
                    }).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            }
        }))
        .into_response())
    }

    /// `PUT …/agentPools/{pool}`.
    pub(super) fn put_pool(
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
    pub(super) fn get_pool(
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
    pub(super) fn list_pools(
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
    pub(super) fn pool_upgrade_profile(
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
    pub(super) fn delete_pool(
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

fn group_for_write<'s>(st: &'s State, req: &Req, group: &str) -> Result<&'s Group, ArmError> {
    let g = st
        .groups
        .get(&key(&[&req.subscription, group]))
        .ok_or_else(|| ArmError::group_not_found(group))?;
    if g.deleting {
        return Err(ArmError::new(
            StatusCode::CONFLICT,
            "ResourceGroupBeingDeleted",
            format!(
                "The resource group '{group}' is in deprovisioning state and cannot perform this operation."
            ),
        ));
    }
    Ok(g)
}

/// A pool as first PUT.
fn new_pool(name: &str, props: &Value, version: &str) -> Pool {
    let mut props = strip(props, POOL_READ_ONLY);
    if props["count"].is_null() {
        props["count"] = json!(1);
    }
    if props["vmSize"].is_null() {
        props["vmSize"] = json!(catalog::DEFAULT_VM_SIZE);
    }
    if props["mode"].is_null() {
        props["mode"] = json!("User");
    }
    if props["osType"].is_null() {
        props["osType"] = json!("Linux");
    }
    if props["maxPods"].is_null() {
        props["maxPods"] = json!(250);
    }
    if props["type"].is_null() {
        props["type"] = json!("VirtualMachineScaleSets");
    }
    if props["orchestratorVersion"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        props["orchestratorVersion"] = json!(version);
    }
    let digits: String = super::hex(8)
        .bytes()
        .map(|b| char::from(b'0' + b % 10))
        .collect();
    Pool {
        name: name.to_string(),
        props,
        current: version.to_string(),
        state: Provisioning::Creating,
        etag: arm::new_etag(),
        digits,
        vms: Vec::new(),
        next_id: 0,
    }
}

fn fill_network_defaults(np: &mut Value) {
    if !np.is_object() {
        *np = json!({});
    }
    let defaults = [
        ("networkPlugin", json!("azure")),
        ("networkPluginMode", json!("overlay")),
        ("podCidr", json!("10.244.0.0/16")),
        ("serviceCidr", json!("10.0.0.0/16")),
        ("dnsServiceIP", json!("10.0.0.10")),
        ("outboundType", json!("loadBalancer")),
        ("loadBalancerSku", json!("standard")),
        ("ipFamilies", json!(["IPv4"])),
    ];
    for (k, v) in defaults {
        if np[k].is_null() {
            if k == "networkPluginMode" && np["networkPlugin"] != "azure" {
                continue;
            }
            np[k] = v;
        }
    }
}

/// The instance shutting-down window, for the ticker.
pub fn shutdown_window(aks: &Aks) -> Duration {
    Delays::duration(aks.kit.timing().instance_shutdown)
}
