//! Managed clusters: PUT (create, or update of what AKS lets change), PATCH of tags, GET, list,
//! DELETE, the user and admin credentials (kubeconfigs) and the upgrade profile.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::{READ_ONLY, cluster_or_404, group_for_write, new_pool, render_cluster, strip};
use crate::aks::api::Req;
use crate::aks::arm::{self, ArmError, str_of};
use crate::aks::catalog;
use crate::aks::entra::{AKS_SERVER_APP, uuid_like};
use crate::aks::state::{Cluster, Effect, Group, OpStatus, Pool, Provisioning, State, Target, key};
use crate::aks::validate;
use crate::aks::{Aks, now_rfc3339};

impl Aks {
    /// `PUT …/managedClusters/{name}`.
    pub(in crate::aks) fn put_cluster(
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
                crate::aks::hex(8)
            ),
            busy: None,
            creator: req.caller.clone(),
            admin_token: crate::aks::hex(64),
            workload_id: format!("aks-{}", crate::aks::hex(16)),
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
    pub(in crate::aks) fn patch_tags(
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
    pub(in crate::aks) fn get_cluster(
        &self,
        req: &Req,
        group: &str,
        name: &str,
    ) -> Result<Response, ArmError> {
        let st = self.lock();
        Ok(axum::Json(render_cluster(cluster_or_404(&st, req, group, name)?)).into_response())
    }

    /// `GET …/managedClusters` of a group, or of the subscription (`group` `None`).
    pub(in crate::aks) fn list_clusters(
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
    pub(in crate::aks) fn delete_cluster(
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
    pub(in crate::aks) fn credentials(
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
    pub(in crate::aks) fn upgrade_profile(
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
