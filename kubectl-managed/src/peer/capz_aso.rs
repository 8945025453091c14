//! CAPZ's `AzureASOManaged*` kinds to ours on AKS. Their specs hold Azure Service Operator
//! objects (`spec.resources`): a `ResourceGroup` on the `AzureASOManagedCluster`, a
//! `ManagedCluster` on the `AzureASOManagedControlPlane`, a `ManagedClustersAgentPool` on each
//! `AzureASOManagedMachinePool`, each written the way ARM names the fields. The cluster's ARM
//! resource ID, and with it the subscription, is read from the live `ManagedCluster` object
//! (`status.id`, written by ASO once it reconciled it); the notes name each field as the user
//! wrote it in `spec.resources`.
//!
//! As for the classic kinds, the first System pool is kept by our control plane and every other
//! pool becomes an AKSMachinePool. Ours brings the virtual network by id: a cluster whose pools
//! name no subnet runs on the network AKS made for it, which ours cannot bring, and is refused.

use serde_json::{Map, Value, json};

use super::capz::NO_EQUIVALENT;
use super::{Fields, Note, Outcome, PeerPool, Source, Translation, autoscaled, title};

/// The CAPZ ASO kinds' objects as ours.
pub fn translate(source: &Source) -> Translation {
    let mut t = Translation::default();
    let cp = &source.control_plane;
    let mut notes = Vec::new();
    let mut f = Fields::new(cp);
    let Some(cluster) = resource(cp, "ManagedCluster") else {
        f.refuse(
            "resources",
            "no ManagedCluster among them, so there is no AKS cluster to adopt: CAPZ's control plane must hold its ManagedCluster object, as CAPZ's AKS ASO template writes it",
        );
        t.notes = f.finish(NO_EQUIVALENT);
        return t;
    };
    let Some(id) = live(source, "ManagedCluster", &cluster)
        .and_then(|l| l["status"]["id"].as_str())
        .map(str::to_string)
    else {
        f.refuse(
            "resources",
            &format!(
                "the ManagedCluster object {} has no status.id: Azure Service Operator has not made or found the cluster yet; run the command again once it reports the cluster's ID",
                cluster["metadata"]["name"].as_str().unwrap_or_default()
            ),
        );
        t.notes = f.finish(NO_EQUIVALENT);
        return t;
    };
    let Some(arm) = ArmId::parse(&id) else {
        f.refuse(
            "resources",
            &format!("the ManagedCluster's status.id {id} is not a managed cluster's ARM ID"),
        );
        t.notes = f.finish(NO_EQUIVALENT);
        return t;
    };
    let mut spec = Map::new();
    if let Some(v) = f.mapped("version", "AKSControlPlane spec.version") {
        spec.insert(
            "version".into(),
            json!(super::version(v.as_str().unwrap_or_default())),
        );
    }
    f.read("resources");
    f.dropped(
        "controlPlaneEndpoint",
        "AKSControlPlane publishes the endpoint itself (the same one)",
    );
    notes.extend(f.finish(NO_EQUIVALENT));
    spec.insert("cloudName".into(), json!(arm.name));
    spec.insert("adoption".into(), json!({"id": id}));
    let (cp_fields, infra_extra, cp_notes) = managed_cluster(&cluster);
    for (k, v) in cp_fields {
        spec.insert(k, v);
    }
    notes.extend(cp_notes);

    // The network: the subnet the pools are in (ours brings it by id).
    let subnet = source.pools.iter().find_map(|p| {
        let pool = resource(&p.infra, "ManagedClustersAgentPool")?;
        pool["spec"]["vnetSubnetReference"]["armId"]
            .as_str()
            .or_else(|| {
                live(source, "ManagedClustersAgentPool", &pool)?["status"]["vnetSubnetID"].as_str()
            })
            .map(str::to_string)
    });
    let mut infra = Map::new();
    infra.insert(
        "aks".into(),
        json!({"subscriptionID": arm.subscription, "resourceGroup": arm.group}),
    );
    for (k, v) in infra_extra {
        infra.insert(k, v);
    }
    match subnet.as_deref().and_then(|s| s.rsplit_once("/subnets/")) {
        Some((vnet, _)) => {
            infra.insert(
                "network".into(),
                json!({"id": vnet, "subnetIDs": [subnet.clone()]}),
            );
        }
        None => notes.push(Note {
            object: title(&source.infra),
            field: "(the cluster's network)".into(),
            outcome: Outcome::Refused(
                "the pools name no subnet (vnetSubnetReference), so the cluster runs on the virtual network AKS made for it; ours brings a virtual network by id and cannot take over AKS's own".into(),
            ),
        }),
    }
    let mut group = Fields::new(&source.infra);
    group.read("resources");
    group.dropped(
        "controlPlaneEndpoint",
        "AKSControlPlane publishes the endpoint itself",
    );
    notes.extend(group.finish(NO_EQUIVALENT));
    if let Some(rg) = resource(&source.infra, "ResourceGroup") {
        let mut f = Fields::new(&rg);
        f.dropped(
            "location",
            "the resource group stays where it is; AKSCluster spec.aks.resourceGroup names it, and ours never deletes a group it did not make",
        );
        f.read("azureName");
        notes.extend(f.finish(NO_EQUIVALENT));
    }
    t.infra_cluster = Value::Object(infra);

    let system = source.pools.iter().find(|p| {
        resource(&p.infra, "ManagedClustersAgentPool")
            .is_some_and(|r| r["spec"]["mode"] == "System")
    });
    for pool in &source.pools {
        let mp = pool.machine_pool["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Some(agent_pool) = resource(&pool.infra, "ManagedClustersAgentPool") else {
            notes.push(Note {
                object: title(&pool.infra),
                field: "spec.resources".into(),
                outcome: Outcome::Refused("no ManagedClustersAgentPool among them".into()),
            });
            continue;
        };
        let absorbed = system.is_some_and(|s| std::ptr::eq(s, pool));
        let (ours, pool_notes) = agent_pool_spec(&agent_pool, pool, absorbed, subnet.as_deref());
        notes.extend(pool_notes);
        if absorbed {
            let mut aks = spec
                .remove("aks")
                .and_then(|a| a.as_object().cloned())
                .unwrap_or_default();
            aks.insert("systemPool".into(), ours);
            spec.insert("aks".into(), Value::Object(aks));
            t.absorbed.push(mp);
        } else {
            t.pools.push((mp, ours));
        }
    }
    t.control_plane = Value::Object(spec);
    t.notes = notes;
    t
}

/// The parts of a managed cluster's ARM resource ID.
#[derive(Debug, PartialEq, Eq)]
struct ArmId {
    subscription: String,
    group: String,
    name: String,
}

impl ArmId {
    fn parse(id: &str) -> Option<ArmId> {
        let parts: Vec<&str> = id.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            [s, sub, r, group, p, ns, mc, name]
                if s.eq_ignore_ascii_case("subscriptions")
                    && r.eq_ignore_ascii_case("resourceGroups")
                    && p.eq_ignore_ascii_case("providers")
                    && ns.eq_ignore_ascii_case("Microsoft.ContainerService")
                    && mc.eq_ignore_ascii_case("managedClusters") =>
            {
                Some(ArmId {
                    subscription: (*sub).to_string(),
                    group: (*group).to_string(),
                    name: (*name).to_string(),
                })
            }
            _ => None,
        }
    }
}

/// The first object of `kind` in `obj`'s `spec.resources`.
fn resource(obj: &Value, kind: &str) -> Option<Value> {
    obj["spec"]["resources"]
        .as_array()?
        .iter()
        .find(|r| r["kind"] == kind)
        .cloned()
}

/// The live Azure Service Operator object `resource` stands for, as read.
fn live<'a>(source: &'a Source, kind: &str, resource: &Value) -> Option<&'a Value> {
    source
        .related
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == resource["metadata"]["name"])
}

/// Our control plane's fields, the InfraCluster's (tags) and the notes, for a `ManagedCluster`.
fn managed_cluster(obj: &Value) -> (Map<String, Value>, Map<String, Value>, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut infra = Map::new();
    let mut aks = Map::new();
    f.read("azureName");
    f.dropped(
        "owner",
        "the resource group, read from the cluster's ARM ID (AKSCluster spec.aks.resourceGroup)",
    );
    if let Some(location) = f.mapped("location", "AKSCluster spec.region") {
        infra.insert("region".into(), location.clone());
    }
    if let Some(tags) = f.mapped("tags", "AKSCluster spec.additionalTags") {
        infra.insert("additionalTags".into(), tags.clone());
    }
    f.dropped(
        "kubernetesVersion",
        "CAPZ sets it from AzureASOManagedControlPlane spec.version",
    );
    if let Some(tier) = f.mapped("sku.tier", "AKSControlPlane spec.aks.sku") {
        aks.insert("sku".into(), tier.clone());
    }
    f.dropped("sku.name", "Base, as every AKS cluster");
    match f.get("aadProfile.managed") {
        Some(v) if v == &json!(true) => {
            f.read("aadProfile.managed");
            if let Some(rbac) = f.mapped("aadProfile.enableAzureRBAC", "AKSControlPlane spec.aks.azureRBAC") {
                aks.insert("azureRBAC".into(), rbac.clone());
            }
            if let Some(groups) = f.mapped(
                "aadProfile.adminGroupObjectIDs",
                "AKSControlPlane spec.aks.adminGroupObjectIDs",
            ) {
                aks.insert("adminGroupObjectIDs".into(), groups.clone());
            }
        }
        _ => f.refuse(
            "aadProfile",
            "no AKS-managed Microsoft Entra ID integration, and ours reaches the API server with Entra tokens; turn it on (aadProfile.managed: true) first (AKS cannot turn it off again)",
        ),
    }
    super::capz::accounts_and_dns(&mut f, &mut aks);
    if let Some(policy) = f.mapped(
        "networkProfile.networkPolicy",
        "AKSControlPlane spec.aks.networkPolicy",
    ) {
        aks.insert("networkPolicy".into(), policy.clone());
    }
    f.unmanaged(
        "networkProfile",
        "the cluster keeps its network plugin and ranges, fixed when AKS created it",
    );
    super::capz::access_and_security(&mut f, &mut spec, "keyId");
    f.dropped(
        "identity",
        "the cluster keeps its managed identity; ours does not change it",
    );
    f.dropped(
        "servicePrincipalProfile",
        "the cluster keeps its identity; ours does not change it",
    );
    f.dropped(
        "operatorSpec",
        "Azure Service Operator's own settings (where it wrote Secrets); ours writes <cluster>-kubeconfig itself",
    );
    f.dropped(
        "agentPoolProfiles",
        "CAPZ fills them from the pools; ours reads each pool from its own object",
    );
    if !aks.is_empty() {
        spec.insert("aks".into(), Value::Object(aks));
    }
    (spec, infra, f.finish(NO_EQUIVALENT))
}

/// Our spec for a `ManagedClustersAgentPool`: the control plane's System pool when `absorbed`,
/// else an AKSMachinePool's; with the notes.
fn agent_pool_spec(
    obj: &Value,
    pool: &PeerPool,
    absorbed: bool,
    subnet: Option<&str>,
) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mp = &pool.machine_pool;
    let mp_name = mp["metadata"]["name"].as_str().unwrap_or_default();
    let name = f
        .str("azureName")
        .or_else(|| obj["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let mut spec = Map::new();
    f.dropped("owner", "the cluster this pool is in");
    f.dropped("type", "VirtualMachineScaleSets, as every pool of ours");
    f.dropped(
        "count",
        "the MachinePool's spec.replicas sets the count (CAPZ sets it from there too)",
    );
    f.dropped(
        "orchestratorVersion",
        "the MachinePool's spec.template.spec.version sets the version",
    );
    if f.str("osType").is_some_and(|o| o != "Linux") {
        f.refuse("osType", "a Windows pool: ours runs Linux pools");
    } else {
        f.dropped("osType", "Linux, as ours runs");
    }
    if absorbed {
        spec.insert("name".into(), json!(name));
        f.mapped("azureName", "AKSControlPlane spec.aks.systemPool.name");
        f.mapped(
            "mode",
            &format!(
                "AKSControlPlane spec.aks.systemPool: the control plane keeps the cluster's System pool; MachinePool {mp_name} is removed at the end of the move, its nodes untouched"
            ),
        );
        if let Some(size) = f.mapped("vmSize", "AKSControlPlane spec.aks.systemPool.vmSize") {
            spec.insert("vmSize".into(), size.clone());
        }
        if let Some(replicas) = mp["spec"]["replicas"].as_i64() {
            spec.insert("count".into(), json!(replicas));
        }
        if f.get("enableAutoScaling") == Some(&json!(true)) || autoscaled(mp) {
            f.refuse(
                "enableAutoScaling",
                &format!(
                    "{name} is autoscaled, and ours keeps the System pool at AKSControlPlane spec.aks.systemPool.count: turn its autoscaler off first"
                ),
            );
        }
        return (
            Value::Object(spec),
            f.finish("the System pool keeps it; the control plane does not manage it"),
        );
    }
    let mut aks = Map::new();
    spec.insert("cloudName".into(), json!(name));
    spec.insert("adoption".into(), json!({}));
    f.mapped("azureName", "AKSMachinePool spec.cloudName");
    super::capz::pool_mode(&mut f, &mut aks);
    if let Some(size) = f.mapped("vmSize", "AKSMachinePool spec.machineType") {
        spec.insert("machineType".into(), size.clone());
    }
    if let Some(disk) = f.mapped("osDiskSizeGB", "AKSMachinePool spec.diskSizeGB") {
        spec.insert("diskSizeGB".into(), disk.clone());
    }
    if let Some(sku) = f.mapped("osSKU", "AKSMachinePool spec.image") {
        spec.insert("image".into(), sku.clone());
    }
    if let Some(labels) = f.mapped("nodeLabels", "AKSMachinePool spec.labels") {
        spec.insert("labels".into(), labels.clone());
    }
    if let Some(list) = f.get("nodeTaints").and_then(Value::as_array) {
        let mut taints = Vec::new();
        for t in list {
            match t.as_str().and_then(parse_taint) {
                Some(taint) => taints.push(taint),
                None => f.refuse(
                    "nodeTaints",
                    &format!("a taint ours cannot read (key=value:Effect): {t}"),
                ),
            }
        }
        f.mapped("nodeTaints", "AKSMachinePool spec.taints");
        spec.insert("taints".into(), Value::Array(taints));
    }
    if f.get("enableAutoScaling") == Some(&json!(true)) {
        f.mapped(
            "enableAutoScaling",
            "AKSMachinePool spec.scaling (AKS's autoscaler keeps the count between minCount and maxCount)",
        );
        f.read("minCount");
        f.read("maxCount");
        spec.insert(
            "scaling".into(),
            json!({"minReplicas": obj["spec"]["minCount"], "maxReplicas": obj["spec"]["maxCount"]}),
        );
    }
    if let Some(max) = f.mapped("maxPods", "AKSMachinePool spec.aks.maxPods") {
        aks.insert("maxPods".into(), max.clone());
    }
    if f.str("scaleSetPriority") == Some("Spot") {
        f.mapped("scaleSetPriority", "AKSMachinePool spec.spot");
        spec.insert("spot".into(), json!(true));
    } else {
        f.dropped("scaleSetPriority", "Regular, ours' default");
    }
    if let Some(max) = f.mapped(
        "upgradeSettings.maxSurge",
        "AKSMachinePool spec.update.maxSurge",
    ) {
        spec.insert("update".into(), json!({"maxSurge": max}));
    }
    let own = obj["spec"]["vnetSubnetReference"]["armId"].as_str();
    f.mapped("vnetSubnetReference", "AKSMachinePool spec.subnetIDs");
    if let Some(s) = own.or(subnet) {
        spec.insert("subnetIDs".into(), json!([s]));
    }
    f.unmanaged(
        "availabilityZones",
        "the pool keeps its zones; ours places new pools by MachinePool spec.failureDomains",
    );
    spec.insert("aks".into(), Value::Object(aks));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

/// A taint as AKS writes it (`key=value:Effect` or `key:Effect`), as our spec writes it.
fn parse_taint(text: &str) -> Option<Value> {
    let (kv, effect) = text.rsplit_once(':')?;
    let effect = super::taint_effect(effect)?;
    let mut taint = json!({"effect": effect});
    match kv.split_once('=') {
        Some((k, v)) => {
            taint["key"] = json!(k);
            taint["value"] = json!(v);
        }
        None => taint["key"] = json!(kv),
    }
    Some(taint)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::peer::{Peer, refused_fields};

    const ID: &str = "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.ContainerService/managedClusters/z2";
    const SUBNET: &str = "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Network/virtualNetworks/v/subnets/nodes";

    /// CAPZ's `cluster-template-aks-aso.yaml` as rendered, with Entra ID on and the pools on a
    /// brought subnet, and the live ManagedCluster ASO made.
    fn source() -> Source {
        let pool = |name: &str, mode: &str, extra: Value| {
            let mut spec = json!({"azureName": name, "mode": mode, "owner": {"name": "z2"},
                "type": "VirtualMachineScaleSets", "vmSize": "Standard_D2s_v5",
                "vnetSubnetReference": {"armId": SUBNET}});
            if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
                s.extend(e.clone());
            }
            PeerPool {
                machine_pool: json!({"kind": "MachinePool", "metadata": {"name": format!("z2-{name}")}, "spec": {"replicas": 2}}),
                infra: json!({"kind": "AzureASOManagedMachinePool", "metadata": {"name": format!("z2-{name}")}, "spec": {"resources": [
                    {"apiVersion": "containerservice.azure.com/v1api20240901", "kind": "ManagedClustersAgentPool",
                     "metadata": {"name": format!("z2-{name}")}, "spec": spec}]}}),
            }
        };
        Source {
            cluster: json!({"kind": "Cluster", "metadata": {"name": "z2", "namespace": "team"}}),
            infra: json!({"kind": "AzureASOManagedCluster", "metadata": {"name": "z2"}, "spec": {"resources": [
                {"apiVersion": "resources.azure.com/v1api20200601", "kind": "ResourceGroup",
                 "metadata": {"name": "z2"}, "spec": {"location": "eastus"}}]}}),
            control_plane: json!({"kind": "AzureASOManagedControlPlane", "metadata": {"name": "z2"}, "spec": {
                "version": "v1.32.7", "resources": [
                {"apiVersion": "containerservice.azure.com/v1api20240901", "kind": "ManagedCluster",
                 "metadata": {"name": "z2", "annotations": {"serviceoperator.azure.com/credential-from": "aso"}},
                 "spec": {"dnsPrefix": "z2", "identity": {"type": "SystemAssigned"}, "location": "eastus",
                          "networkProfile": {"networkPlugin": "azure"}, "owner": {"name": "z2"},
                          "servicePrincipalProfile": {"clientId": "msi"},
                          "aadProfile": {"managed": true, "enableAzureRBAC": true}}}]}}),
            pools: vec![
                pool("pool0", "System", json!({})),
                pool(
                    "pool1",
                    "User",
                    json!({"nodeTaints": ["k=v:NoSchedule", "only:NoExecute"],
                    "enableAutoScaling": true, "minCount": 1, "maxCount": 5}),
                ),
            ],
            region: None,
            related: vec![
                json!({"kind": "ManagedCluster", "metadata": {"name": "z2"}, "status": {"id": ID}}),
            ],
        }
    }

    #[test]
    fn an_aso_cluster_is_adopted_by_the_id_aso_found_with_its_system_pool_kept_by_the_control_plane()
     {
        let t = Peer::Capz.translate(&source());
        assert!(refused_fields(&t).is_empty(), "{:#?}", t.notes);
        let cp = &t.control_plane["spec"];
        assert_eq!(cp["adoption"]["id"], ID);
        assert_eq!(cp["cloudName"], "z2");
        assert_eq!(cp["version"], "v1.32.7");
        assert_eq!(
            cp["aks"],
            json!({"azureRBAC": true, "dnsPrefix": "z2",
                   "systemPool": {"name": "pool0", "vmSize": "Standard_D2s_v5", "count": 2}})
        );
        assert_eq!(
            t.infra_cluster["spec"],
            json!({"region": "eastus",
                   "aks": {"subscriptionID": "sub-1", "resourceGroup": "rg-1"},
                   "network": {"id": SUBNET.rsplit_once("/subnets/").unwrap().0, "subnetIDs": [SUBNET]}})
        );
        assert_eq!(t.absorbed, ["z2-pool0"]);
        let (mp, pool) = &t.pools[0];
        assert_eq!(mp, "z2-pool1");
        assert_eq!(pool["kind"], "AKSMachinePool");
        assert_eq!(pool["spec"]["cloudName"], "pool1");
        assert_eq!(
            pool["spec"]["taints"],
            json!([{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "only", "effect": "NoExecute"}])
        );
        assert_eq!(
            pool["spec"]["scaling"],
            json!({"minReplicas": 1, "maxReplicas": 5})
        );
    }

    #[test]
    fn an_aso_cluster_is_refused_before_aso_found_it_without_entra_id_or_on_aks_s_own_network() {
        let mut s = source();
        s.related.clear();
        assert_eq!(
            refused_fields(&Peer::Capz.translate(&s)),
            ["spec.resources"]
        );
        let mut s = source();
        s.control_plane["spec"]["resources"][0]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("aadProfile");
        for p in &mut s.pools {
            p.infra["spec"]["resources"][0]["spec"]
                .as_object_mut()
                .unwrap()
                .remove("vnetSubnetReference");
        }
        assert_eq!(
            refused_fields(&Peer::Capz.translate(&s)),
            ["spec.aadProfile", "(the cluster's network)"]
        );
        assert_eq!(
            ArmId::parse(
                "/subscriptions/s/resourcegroups/g/providers/Microsoft.ContainerService/managedClusters/n"
            ),
            Some(ArmId {
                subscription: "s".into(),
                group: "g".into(),
                name: "n".into()
            })
        );
        assert_eq!(ArmId::parse("/subscriptions/s"), None);
    }
}
