//! CAPZ to ours on AKS: its classic kinds (`AzureManagedControlPlane`, `AzureManagedCluster`,
//! `AzureManagedMachinePool`, all `infrastructure.cluster.x-k8s.io/v1beta1`).
//!
//! CAPZ keeps every agent pool as a MachinePool, its System pools included; ours keeps the
//! cluster's System pool in the control plane (`AKSControlPlane spec.aks.systemPool`). So the
//! first System pool becomes the control plane's, by name, at its MachinePool's count, and its
//! MachinePool is removed at the end of the move (its nodes untouched); any other System pool
//! becomes an AKSMachinePool with `aks.mode: System`.
//!
//! CAPZ makes Azure resources through Azure Service Operator objects it controls; deleting one
//! whose `serviceoperator.azure.com/reconcile-policy` is not `skip` deletes what it stands for.
//! The move sets `skip` on each of them when it pauses CAPZ, as CAPZ does on pause, saving the
//! old policy in CAPZ's own annotation, so that CAPZ puts it back if the move is rolled back
//! ([`hold`]).
//!
//! What ours cannot take over is refused: a cluster without Microsoft Entra ID integration
//! (ours reaches the API server with Entra tokens), an autoscaled System pool kept by the control
//! plane, Windows pools. CAPZ's `AzureASOManaged*` kinds are read by [`super::capz_aso`].

use serde_json::{Map, Value, json};

use super::{
    Fields, Note, Outcome, PeerPool, Source, Translation, autoscaled, taints, title, version,
};

/// What the notes say of a field ours has no place for.
pub(super) const NO_EQUIVALENT: &str = "no equivalent in AKSCluster/AKSControlPlane/AKSMachinePool: what it made stays in Azure and nothing manages it any more";

/// The API groups of Azure Service Operator's kinds end with this.
pub const SERVICE_OPERATOR_GROUPS: &str = ".azure.com";

/// Azure Service Operator's annotation saying what deleting the object does in Azure.
pub const RECONCILE_POLICY: &str = "serviceoperator.azure.com/reconcile-policy";

/// CAPZ's annotation holding an object's policy from before CAPZ paused it.
pub const PRE_PAUSE_POLICY: &str =
    "sigs.k8s.io/cluster-api-provider-azure-pre-pause-reconcile-policy";

/// The merge patch that makes an Azure Service Operator object with `annotations` leave Azure
/// alone (`skip`), keeping its policy in CAPZ's pre-pause annotation; `None` when CAPZ or an
/// earlier run already did.
pub fn hold(annotations: &Value) -> Option<Value> {
    if annotations.get(PRE_PAUSE_POLICY).is_some() {
        return None;
    }
    let before = annotations[RECONCILE_POLICY].as_str().unwrap_or_default();
    Some(json!({"metadata": {"annotations": {
        PRE_PAUSE_POLICY: before,
        RECONCILE_POLICY: "skip",
    }}}))
}

/// CAPZ's objects as ours.
pub fn translate(source: &Source) -> Translation {
    if source.control_plane["kind"] == "AzureASOManagedControlPlane" {
        return super::capz_aso::translate(source);
    }
    let mut t = Translation::default();
    let cp = &source.control_plane;
    let (infra, control_plane, mut notes) = control_plane(cp);
    t.infra_cluster = infra;
    t.control_plane = control_plane;
    notes.push(Note {
        object: title(cp),
        field: "(its Secrets)".into(),
        outcome: Outcome::Dropped(format!(
            "CAPZ's {0}-kubeconfig-user and {0}-ca Secrets go with it; ours writes {0}-kubeconfig and {0}-user-kubeconfig (kubelogin)",
            source.cluster_name()
        )),
    });
    let mut empty = Fields::new(&source.infra);
    empty.dropped(
        "controlPlaneEndpoint",
        "AKSControlPlane publishes the endpoint itself",
    );
    notes.extend(empty.finish(NO_EQUIVALENT));
    let subnet = t.infra_cluster["network"]["subnetIDs"][0].clone();
    let system = source
        .pools
        .iter()
        .find(|p| p.infra["spec"]["mode"] == "System");
    if let Some(pool) = system {
        let (system_pool, pool_notes) = system_pool(pool);
        t.control_plane["aks"]["systemPool"] = system_pool;
        notes.extend(pool_notes);
    }
    for pool in &source.pools {
        let name = pool.machine_pool["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if system.is_some_and(|s| std::ptr::eq(s, pool)) {
            t.absorbed.push(name);
            continue;
        }
        let (spec, pool_notes) = machine_pool(&pool.infra, &subnet);
        t.pools.push((name, spec));
        notes.extend(pool_notes);
    }
    t.notes = notes;
    t
}

/// `AKSControlPlane spec.aks.systemPool` for CAPZ's System `pool`: the same agent pool, by name,
/// at its MachinePool's count.
fn system_pool(pool: &PeerPool) -> (Value, Vec<Note>) {
    let obj = &pool.infra;
    let mp = &pool.machine_pool;
    let mut f = Fields::new(obj);
    let name = f
        .str("name")
        .or_else(|| obj["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let mp_name = mp["metadata"]["name"].as_str().unwrap_or_default();
    let mut ours = Map::new();
    ours.insert("name".into(), json!(name));
    f.mapped("name", "AKSControlPlane spec.aks.systemPool.name");
    f.mapped(
        "mode",
        &format!(
            "AKSControlPlane spec.aks.systemPool: the control plane keeps the cluster's System pool; MachinePool {mp_name} is removed at the end of the move, its nodes untouched"
        ),
    );
    if let Some(sku) = f.mapped("sku", "AKSControlPlane spec.aks.systemPool.vmSize") {
        ours.insert("vmSize".into(), sku.clone());
    }
    if let Some(replicas) = mp["spec"]["replicas"].as_i64() {
        ours.insert("count".into(), json!(replicas));
    }
    if f.get("scaling").is_some() || autoscaled(mp) {
        f.refuse(
            "scaling",
            &format!(
                "{name} is autoscaled, and ours keeps the System pool at AKSControlPlane spec.aks.systemPool.count: turn its autoscaler off with CAPZ first"
            ),
        );
    }
    for (path, what) in [
        ("nodeLabels", "labels"),
        ("taints", "taints"),
        ("osDiskSizeGB", "disk size"),
        ("maxPods", "Pods per node"),
        ("availabilityZones", "zones"),
        ("subnetName", "subnet"),
    ] {
        f.unmanaged(
            path,
            &format!("the System pool keeps its {what}; the control plane does not manage them"),
        );
    }
    if f.str("osType") == Some("Windows") {
        f.refuse(
            "osType",
            "a Windows System pool: AKS runs System pools on Linux",
        );
    } else {
        f.dropped("osType", "Linux, as ours runs");
    }
    f.dropped("scaleSetPriority", "System pools run on regular VMs");
    f.dropped(
        "providerIDList",
        "the control plane does not list the System pool's nodes",
    );
    (Value::Object(ours), f.finish(NO_EQUIVALENT))
}

/// The AKSCluster spec and the AKSControlPlane spec for an `AzureManagedControlPlane`.
fn control_plane(obj: &Value) -> (Value, Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut infra = Map::new();
    let mut infra_aks = Map::new();
    let mut spec = Map::new();
    let mut aks = Map::new();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    // CAPZ names the AKS cluster after its control-plane object.
    spec.insert("cloudName".into(), json!(name));
    let subscription = f.str("subscriptionID").unwrap_or_default().to_string();
    let group = f.str("resourceGroupName").unwrap_or_default().to_string();
    if f.mapped("subscriptionID", "AKSCluster spec.aks.subscriptionID")
        .is_some()
    {
        infra_aks.insert("subscriptionID".into(), json!(subscription));
    }
    if f.mapped("resourceGroupName", "AKSCluster spec.aks.resourceGroup")
        .is_some()
    {
        infra_aks.insert("resourceGroup".into(), json!(group));
    }
    spec.insert(
        "adoption".into(),
        json!({"id": format!(
            "/subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.ContainerService/managedClusters/{name}"
        )}),
    );
    if let Some(location) = f.mapped("location", "AKSCluster spec.region") {
        infra.insert("region".into(), location.clone());
    }
    if let Some(v) = f.mapped("version", "AKSControlPlane spec.version") {
        spec.insert(
            "version".into(),
            json!(version(v.as_str().unwrap_or_default())),
        );
    }
    // The network as CAPZ's webhook defaults it: a virtual network and a subnet named after the
    // control plane, in the cluster's resource group.
    let vnet = f.str("virtualNetwork.name").unwrap_or(name).to_string();
    let vnet_group = f
        .str("virtualNetwork.resourceGroup")
        .unwrap_or(&group)
        .to_string();
    let subnet = f
        .str("virtualNetwork.subnet.name")
        .unwrap_or(name)
        .to_string();
    let vnet_id = format!(
        "/subscriptions/{subscription}/resourceGroups/{vnet_group}/providers/Microsoft.Network/virtualNetworks/{vnet}"
    );
    infra.insert(
        "network".into(),
        json!({"id": vnet_id, "subnetIDs": [format!("{vnet_id}/subnets/{subnet}")]}),
    );
    f.read("virtualNetwork.name");
    f.read("virtualNetwork.resourceGroup");
    f.read("virtualNetwork.subnet.name");
    f.unmanaged(
        "virtualNetwork",
        "the virtual network and subnet are brought by id (AKSCluster spec.network): ours reads them and never changes or deletes them, even if CAPZ made them",
    );
    if let Some(tags) = f.mapped("additionalTags", "AKSCluster spec.additionalTags") {
        infra.insert("additionalTags".into(), tags.clone());
    }
    f.dropped(
        "identityRef",
        "ours uses its controller's Entra credentials or an AKSCluster spec.identityRef Secret: that identity must be allowed to manage this cluster (the plan is refused if it cannot see it)",
    );
    if let Some(tier) = f.str("sku.tier") {
        f.mapped("sku.tier", "AKSControlPlane spec.aks.sku");
        let ours = if tier == "Paid" { "Standard" } else { tier };
        aks.insert("sku".into(), json!(ours));
    }
    match f.get("aadProfile") {
        None => f.refuse(
            "aadProfile",
            "unset: the cluster has no Microsoft Entra ID integration, and ours reaches its API server with Entra tokens; turn on Entra ID integration (aadProfile.managed: true) with CAPZ first (AKS cannot turn it off again)",
        ),
        Some(_) => {
            if let Some(rbac) = f.mapped("aadProfile.managed", "AKSControlPlane spec.aks.azureRBAC") {
                aks.insert("azureRBAC".into(), rbac.clone());
            }
            if let Some(groups) = f.mapped(
                "aadProfile.adminGroupObjectIDs",
                "AKSControlPlane spec.aks.adminGroupObjectIDs",
            ) {
                aks.insert("adminGroupObjectIDs".into(), groups.clone());
            }
        }
    }
    accounts_and_dns(&mut f, &mut aks);
    if let Some(policy) = f.mapped("networkPolicy", "AKSControlPlane spec.aks.networkPolicy") {
        aks.insert("networkPolicy".into(), policy.clone());
    }
    f.unmanaged(
        "networkPlugin",
        "the cluster keeps its network plugin and mode, fixed when AKS created it",
    );
    f.unmanaged("networkPluginMode", "fixed when AKS created the cluster");
    f.unmanaged("networkDataplane", "fixed when AKS created the cluster");
    access_and_security(&mut f, &mut spec, "keyID");
    if f.str("azureEnvironment")
        .is_some_and(|e| e != "AzurePublicCloud")
    {
        f.refuse(
            "azureEnvironment",
            "ours reaches the Azure public cloud only",
        );
    }
    f.dropped("sshPublicKey", "the nodes keep the key they were made with");
    f.dropped(
        "nodeResourceGroupName",
        "AKS reports it; ours shows it in status.aks.nodeResourceGroup",
    );
    f.dropped(
        "controlPlaneEndpoint",
        "AKSControlPlane publishes the endpoint itself (the same one)",
    );
    f.dropped("machineTemplate", "not used for AKS clusters");
    infra.insert("aks".into(), Value::Object(infra_aks));
    spec.insert("aks".into(), Value::Object(aks));
    (
        Value::Object(infra),
        Value::Object(spec),
        f.finish(NO_EQUIVALENT),
    )
}

/// Local accounts and the DNS prefix, into `aks`, as CAPZ's control plane and an ASO
/// `ManagedCluster` both write them.
pub(super) fn accounts_and_dns(f: &mut Fields, aks: &mut Map<String, Value>) {
    if let Some(disabled) = f.mapped(
        "disableLocalAccounts",
        "AKSControlPlane spec.aks.localAccounts (negated)",
    ) {
        aks.insert("localAccounts".into(), json!(disabled != &json!(true)));
    }
    if let Some(prefix) = f.mapped("dnsPrefix", "AKSControlPlane spec.aks.dnsPrefix") {
        aks.insert("dnsPrefix".into(), prefix.clone());
    }
}

/// The API server's access, the OIDC issuer and Key Vault encryption, into `spec`, as CAPZ's
/// control plane and an ASO `ManagedCluster` both write them (ARM's names; the key's field is
/// `keyID` in CAPZ's kind, `keyId` in ARM's).
pub(super) fn access_and_security(f: &mut Fields, spec: &mut Map<String, Value>, key_field: &str) {
    let mut access = Map::new();
    if let Some(ranges) = f.mapped(
        "apiServerAccessProfile.authorizedIPRanges",
        "AKSControlPlane spec.endpointAccess.publicCIDRs",
    ) {
        access.insert("publicCIDRs".into(), ranges.clone());
    }
    if f.get("apiServerAccessProfile.enablePrivateCluster") == Some(&json!(true)) {
        f.mapped(
            "apiServerAccessProfile.enablePrivateCluster",
            "AKSControlPlane spec.endpointAccess {public: false, private: true}",
        );
        access.insert("public".into(), json!(false));
        access.insert("private".into(), json!(true));
    }
    if !access.is_empty() {
        spec.insert("endpointAccess".into(), Value::Object(access));
    }
    f.unmanaged(
        "apiServerAccessProfile",
        "the cluster keeps its private DNS zone and public FQDN settings",
    );
    if let Some(on) = f.mapped(
        "oidcIssuerProfile.enabled",
        "AKSControlPlane spec.oidcIssuer.enabled",
    ) {
        spec.insert("oidcIssuer".into(), json!({"enabled": on}));
    }
    let key_path = format!("securityProfile.azureKeyVaultKms.{key_field}");
    if let Some(key) = f.mapped(&key_path, "AKSControlPlane spec.encryption.kmsKeyID") {
        spec.insert("encryption".into(), json!({"kmsKeyID": key}));
    }
    if f.str("securityProfile.azureKeyVaultKms.keyVaultNetworkAccess") == Some("Private") {
        f.refuse(
            "securityProfile.azureKeyVaultKms.keyVaultNetworkAccess",
            "Private: ours encrypts with a key in a public key vault only",
        );
    }
    f.unmanaged(
        "securityProfile",
        "the cluster keeps its workload identity, Defender and image cleaner settings",
    );
}

/// A pool's `mode` as ours writes it: a System pool other than the one the control plane keeps
/// stays an AKSMachinePool, `aks.mode: System`.
pub(super) fn pool_mode(f: &mut Fields, aks: &mut Map<String, Value>) {
    if f.str("mode") == Some("System") {
        f.mapped(
            "mode",
            "AKSMachinePool spec.aks.mode (a second System pool)",
        );
        aks.insert("mode".into(), json!("System"));
    } else {
        f.dropped("mode", "User, ours' default");
    }
}

/// The AKSMachinePool spec for an `AzureManagedMachinePool` in the cluster's `subnet`.
fn machine_pool(obj: &Value, subnet: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut aks = Map::new();
    let name = f
        .str("name")
        .or_else(|| obj["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string();
    f.mapped("name", "AKSMachinePool spec.cloudName");
    spec.insert("cloudName".into(), json!(name));
    spec.insert("adoption".into(), json!({}));
    pool_mode(&mut f, &mut aks);
    if let Some(sku) = f.mapped("sku", "AKSMachinePool spec.machineType") {
        spec.insert("machineType".into(), sku.clone());
    }
    if let Some(size) = f.mapped("osDiskSizeGB", "AKSMachinePool spec.diskSizeGB") {
        spec.insert("diskSizeGB".into(), size.clone());
    }
    if f.str("osType") == Some("Windows") {
        f.refuse("osType", "a Windows pool: ours runs Linux node pools");
    } else {
        f.dropped("osType", "Linux, as ours runs");
    }
    if let Some(labels) = f.mapped("nodeLabels", "AKSMachinePool spec.labels") {
        spec.insert("labels".into(), labels.clone());
    }
    if let Some(taints) = taints(&mut f, "taints", "AKSMachinePool spec.taints") {
        spec.insert("taints".into(), taints);
    }
    if let (Some(min), Some(max)) = (f.get("scaling.minSize"), f.get("scaling.maxSize")) {
        f.mapped(
            "scaling",
            "AKSMachinePool spec.scaling (AKS's autoscaler keeps the count between them)",
        );
        spec.insert(
            "scaling".into(),
            json!({"minReplicas": min, "maxReplicas": max}),
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
    if f.get("subnetName").is_some() {
        f.unmanaged(
            "subnetName",
            "the pool keeps its subnet; ours places new pools in the cluster's subnet",
        );
    } else if subnet.is_string() {
        spec.insert("subnetIDs".into(), json!([subnet]));
    }
    f.unmanaged(
        "availabilityZones",
        "the pool keeps its zones; ours places new pools by MachinePool spec.failureDomains",
    );
    f.dropped("providerIDList", "ours writes it from AKS's instances");
    spec.insert("aks".into(), Value::Object(aks));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::peer::{Peer, PeerPool, refused_fields};

    /// CAPZ's `cluster-template-aks.yaml` as rendered and defaulted, with Entra ID turned on
    /// and its System pool named `system`.
    fn source() -> Source {
        Source {
            cluster: json!({"kind": "Cluster", "metadata": {"name": "z1", "namespace": "team"}}),
            infra: json!({"kind": "AzureManagedCluster", "metadata": {"name": "z1"}, "spec": {}}),
            control_plane: json!({"kind": "AzureManagedControlPlane", "metadata": {"name": "z1"}, "spec": {
                "identityRef": {"kind": "AzureClusterIdentity", "name": "id"},
                "location": "westeurope", "oidcIssuerProfile": {"enabled": true},
                "resourceGroupName": "rg-1", "sshPublicKey": "", "subscriptionID": "sub-1",
                "version": "v1.31.2", "aadProfile": {"managed": true, "adminGroupObjectIDs": ["g-1"]},
                "sku": {"tier": "Paid"}}}),
            pools: vec![
                PeerPool {
                    machine_pool: json!({"kind": "MachinePool", "metadata": {"name": "z1-system"}}),
                    infra: json!({"kind": "AzureManagedMachinePool", "metadata": {"name": "z1-system"}, "spec": {
                        "mode": "System", "name": "system", "sku": "Standard_D2s_v5"}}),
                },
                PeerPool {
                    machine_pool: json!({"kind": "MachinePool", "metadata": {"name": "z1-pool1"}}),
                    infra: json!({"kind": "AzureManagedMachinePool", "metadata": {"name": "z1-pool1"}, "spec": {
                        "mode": "User", "name": "pool1", "sku": "Standard_D4s_v5",
                        "scaling": {"minSize": 1, "maxSize": 4},
                        "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}),
                },
            ],
            region: None,
            related: Vec::new(),
        }
    }

    #[test]
    fn a_capz_cluster_maps_by_resource_id_with_its_system_pool_kept_by_the_control_plane() {
        let mut src = source();
        src.pools[0].machine_pool["spec"] = json!({"replicas": 3});
        let t = Peer::Capz.translate(&src);
        assert!(refused_fields(&t).is_empty(), "{:#?}", t.notes);
        let vnet = "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Network/virtualNetworks/z1";
        assert_eq!(
            t.infra_cluster["spec"],
            json!({"region": "westeurope",
                   "network": {"id": vnet, "subnetIDs": [format!("{vnet}/subnets/z1")]},
                   "aks": {"subscriptionID": "sub-1", "resourceGroup": "rg-1"}})
        );
        let cp = &t.control_plane["spec"];
        assert_eq!(
            cp["adoption"]["id"],
            "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.ContainerService/managedClusters/z1"
        );
        assert_eq!(
            cp["aks"],
            json!({"sku": "Standard", "azureRBAC": true, "adminGroupObjectIDs": ["g-1"],
                   "systemPool": {"name": "system", "vmSize": "Standard_D2s_v5", "count": 3}})
        );
        assert_eq!(cp["oidcIssuer"], json!({"enabled": true}));
        assert_eq!(t.absorbed, ["z1-system"]);
        assert_eq!(t.pools.len(), 1);
        let (mp, user) = &t.pools[0];
        assert_eq!(mp, "z1-pool1");
        assert_eq!(user["metadata"]["name"], "z1-pool1");
        assert_eq!(user["spec"]["cloudName"], "pool1");
        assert_eq!(
            user["spec"]["scaling"],
            json!({"minReplicas": 1, "maxReplicas": 4})
        );
    }

    #[test]
    fn a_second_system_pool_is_a_pool_of_ours_and_an_autoscaled_first_one_is_refused() {
        let mut s = source();
        s.pools[1].infra["spec"]["mode"] = json!("System");
        let t = Peer::Capz.translate(&s);
        assert_eq!(t.absorbed, ["z1-system"]);
        assert_eq!(t.pools[0].1["spec"]["aks"]["mode"], "System");
        s.pools[0].infra["spec"]["scaling"] = json!({"minSize": 1, "maxSize": 3});
        assert_eq!(refused_fields(&Peer::Capz.translate(&s)), ["spec.scaling"]);
    }

    #[test]
    fn capz_s_default_template_is_refused_for_want_of_entra_id_only() {
        let mut s = source();
        s.control_plane["spec"]
            .as_object_mut()
            .unwrap()
            .remove("aadProfile");
        s.pools[0].infra["spec"]["name"] = json!("pool0");
        let t = Peer::Capz.translate(&s);
        assert_eq!(refused_fields(&t), ["spec.aadProfile"]);
        assert_eq!(
            t.control_plane["spec"]["aks"]["systemPool"]["name"],
            "pool0"
        );
    }

    #[test]
    fn service_operator_objects_are_held_once_keeping_their_policy_for_capz() {
        let patch = hold(&json!({RECONCILE_POLICY: "manage"})).unwrap();
        assert_eq!(
            patch["metadata"]["annotations"],
            json!({PRE_PAUSE_POLICY: "manage", RECONCILE_POLICY: "skip"})
        );
        assert_eq!(
            hold(&Value::Null).unwrap()["metadata"]["annotations"][PRE_PAUSE_POLICY],
            ""
        );
        assert_eq!(
            hold(&json!({PRE_PAUSE_POLICY: "manage", RECONCILE_POLICY: "skip"})),
            None
        );
    }
}
