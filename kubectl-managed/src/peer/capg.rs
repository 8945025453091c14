//! CAPG (`GCPManagedCluster`, `GCPManagedControlPlane`, `GCPManagedMachinePool`, all
//! `infrastructure.cluster.x-k8s.io/v1beta1`) to ours on GKE.
//!
//! The network is brought by name: the VPC network CAPG names (made by CAPG or not) and its
//! subnetwork in the region (the first one CAPG lists there, else the auto-mode subnetwork, which
//! takes the network's name). Ours is regional only: a zonal CAPG cluster is refused.

use serde_json::{Map, Value, json};

use super::{Fields, Note, Source, Translation, taints, version};

/// What the notes say of a field ours has no place for.
const NO_EQUIVALENT: &str = "no equivalent in GKECluster/GKEControlPlane/GKEMachinePool: what it made stays in Google Cloud and nothing manages it any more";

/// CAPG's longest derived cluster name (its webhook hashes longer ones).
const CAPG_NAME_LIMIT: usize = 40;

/// CAPG's objects as ours.
pub fn translate(source: &Source) -> Translation {
    let mut t = Translation::default();
    let (infra, mut notes) = cluster(&source.infra);
    let project = infra["gke"]["project"].clone();
    let region = infra["region"].clone();
    let (control_plane, cp_notes) = control_plane(&source.control_plane, &project, &region);
    notes.extend(cp_notes);
    t.infra_cluster = infra;
    t.control_plane = control_plane;
    for pool in &source.pools {
        let (spec, pool_notes) = machine_pool(&pool.infra);
        let name = pool.machine_pool["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        t.pools.push((name, spec));
        notes.extend(pool_notes);
    }
    t.notes = notes;
    t
}

/// The GKECluster spec for a `GCPManagedCluster`.
fn cluster(obj: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut gke = Map::new();
    if let Some(project) = f.mapped("project", "GKECluster spec.gke.project") {
        gke.insert("project".into(), project.clone());
    }
    let region = f.str("region").unwrap_or_default().to_string();
    if f.mapped("region", "GKECluster spec.region").is_some() {
        spec.insert("region".into(), json!(region));
    }
    if f.get("network.hostProject").is_some() {
        f.refuse(
            "network.hostProject",
            "a Shared VPC network of another project: ours brings networks of the cluster's own project",
        );
    }
    if let Some(network) = f.mapped("network.name", "GKECluster spec.network.id") {
        let listed = f
            .get("network.subnets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|s| s["region"].as_str().is_none_or(|r| r == region))
            .and_then(|s| s["name"].as_str());
        let subnet = match listed {
            Some(name) => {
                f.mapped(
                    "network.subnets",
                    "GKECluster spec.network.subnetIDs (the one in the region)",
                );
                name.to_string()
            }
            // An auto-mode network's subnetwork in each region takes the network's name.
            None => network.as_str().unwrap_or_default().to_string(),
        };
        spec.insert(
            "network".into(),
            json!({"id": network, "subnetIDs": [subnet]}),
        );
        f.unmanaged(
            "network",
            "the VPC network, its subnetworks, firewall rules and router are brought by name: ours reads them and never changes or deletes them, even if CAPG made them; if the subnetwork's secondary ranges are not named pods and services, set GKECluster spec.gke.podsRange and servicesRange",
        );
    }
    if let Some(labels) = f.mapped("additionalLabels", "GKECluster spec.additionalTags") {
        spec.insert("additionalTags".into(), labels.clone());
    }
    if f.get("credentialsRef").is_some() {
        f.refuse(
            "credentialsRef",
            "ours reads a service-account key from the key credentials.json of a Secret in the Cluster's namespace (GKECluster spec.identityRef {kind: Secret}); CAPG's Secret holds it as credentials: add the credentials.json key to a Secret there, or run the controller with the same service account, then move the Cluster",
        );
    }
    f.unmanaged(
        "resourceManagerTags",
        "the tags stay bound; ours does not manage Resource Manager tags",
    );
    f.dropped("loadBalancer", "only for CAPG's own control-plane machines");
    f.dropped(
        "serviceEndpoints",
        "ours reaches Google's APIs from its own configuration",
    );
    f.dropped(
        "controlPlaneEndpoint",
        "GKEControlPlane publishes the endpoint itself",
    );
    spec.insert("gke".into(), Value::Object(gke));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

/// The GKEControlPlane spec for a `GCPManagedControlPlane` of the cluster in `project`, `region`.
fn control_plane(obj: &Value, project: &Value, region: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut gke = Map::new();
    match f.str("clusterName") {
        Some(name) => {
            f.mapped("clusterName", "GKEControlPlane spec.cloudName");
            spec.insert("cloudName".into(), json!(name));
        }
        // CAPG's webhook writes the name; without it, CAPG derived it the same way.
        None => match derived_name(obj) {
            Some(name) => {
                spec.insert("cloudName".into(), json!(name));
            }
            None => f.refuse(
                "clusterName",
                "unset, and the name CAPG derives for a long Cluster name is a hash this command does not repeat: set spec.clusterName to the GKE cluster's name",
            ),
        },
    }
    spec.insert("adoption".into(), json!({}));
    if f.get("project").is_some_and(|p| p != project) {
        f.refuse(
            "project",
            "not the GCPManagedCluster's project: ours keeps the cluster in the InfraCluster's project",
        );
    } else {
        f.dropped("project", "the same as GKECluster spec.gke.project");
    }
    match f.str("location") {
        Some(l) if Some(l) != region.as_str() => f.refuse(
            "location",
            &format!(
                "{l} is not the region {region}: ours runs regional clusters only, and a zonal GKE cluster cannot become regional"
            ),
        ),
        _ => f.dropped("location", "the same as GKECluster spec.region"),
    }
    let wanted = f
        .mapped("version", "GKEControlPlane spec.version")
        .or_else(|| f.mapped("controlPlaneVersion", "GKEControlPlane spec.version"))
        .and_then(Value::as_str)
        .or_else(|| obj["status"]["currentVersion"].as_str());
    if let Some(v) = wanted {
        spec.insert("version".into(), json!(version(v)));
    }
    if f.get("enableAutopilot") == Some(&json!(true)) {
        f.refuse(
            "enableAutopilot",
            "an Autopilot cluster: ours runs Standard clusters with node pools",
        );
    } else {
        f.dropped("enableAutopilot", "a Standard cluster, as ours runs");
    }
    if let Some(channel) = f.str("releaseChannel") {
        f.mapped("releaseChannel", "GKEControlPlane spec.gke.releaseChannel");
        let mut c = channel.to_ascii_lowercase();
        if let Some(first) = c.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        gke.insert("releaseChannel".into(), json!(c));
    }
    if let Some(blocks) = f
        .get("master_authorized_networks_config.cidr_blocks")
        .and_then(Value::as_array)
    {
        let ours: Vec<Value> = blocks
            .iter()
            .map(|b| {
                let mut n = json!({"cidrBlock": b["cidr_block"]});
                if let Some(d) = b["display_name"].as_str() {
                    n["displayName"] = json!(d);
                }
                n
            })
            .collect();
        f.mapped(
            "master_authorized_networks_config.cidr_blocks",
            "GKEControlPlane spec.gke.authorizedNetworks",
        );
        gke.insert("authorizedNetworks".into(), Value::Array(ours));
    }
    f.unmanaged(
        "master_authorized_networks_config.gcp_public_cidrs_access_enabled",
        "the cluster keeps the setting; ours does not manage it",
    );
    if f.get("clusterNetwork.privateCluster.enablePrivateEndpoint") == Some(&json!(true)) {
        f.mapped(
            "clusterNetwork.privateCluster.enablePrivateEndpoint",
            "GKEControlPlane spec.endpointAccess {public: false, private: true}",
        );
        spec.insert(
            "endpointAccess".into(),
            json!({"public": false, "private": true}),
        );
    }
    if let Some(private) = f.mapped(
        "clusterNetwork.privateCluster.enablePrivateNodes",
        "GKEControlPlane spec.gke.privateNodes",
    ) {
        gke.insert("privateNodes".into(), private.clone());
    }
    f.unmanaged(
        "clusterNetwork",
        "the cluster keeps its Pod and Service ranges and private-cluster settings, fixed when GKE made it",
    );
    if let Some(pool) = f.mapped(
        "clusterSecurity.workloadIdentityConfig.workloadPool",
        "GKEControlPlane spec.oidcIssuer.enabled and spec.gke.workloadIdentityPool",
    ) {
        spec.insert("oidcIssuer".into(), json!({"enabled": true}));
        gke.insert("workloadIdentityPool".into(), pool.clone());
    }
    f.unmanaged(
        "clusterSecurity",
        "the cluster keeps its security settings; ours does not manage them",
    );
    f.from_cloud(
        "loggingService",
        "ours reads the cluster's logging components into spec.logging when the plan is accepted",
    );
    f.unmanaged("monitoringService", "the cluster keeps its monitoring");
    f.unmanaged(
        "binaryAuthorization",
        "the cluster keeps its Binary Authorization setting",
    );
    f.unmanaged(
        "enableIdentityService",
        "the cluster keeps its Identity Service setting",
    );
    f.dropped("description", "GKE keeps the description it was given");
    f.dropped(
        "endpoint",
        "GKEControlPlane publishes the endpoint itself (the same one)",
    );
    f.dropped("machineTemplate", "not used for GKE clusters");
    spec.insert("gke".into(), Value::Object(gke));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

/// The name CAPG's webhook gives a cluster without `spec.clusterName`: `<namespace>-<name>`
/// (dots made hyphens) when short enough; `None` when CAPG would have hashed it.
fn derived_name(obj: &Value) -> Option<String> {
    let name = obj["metadata"]["name"].as_str()?.replace('.', "-");
    let namespace = obj["metadata"]["namespace"].as_str().unwrap_or("default");
    let derived = format!("{namespace}-{name}");
    (derived.len() < CAPG_NAME_LIMIT).then_some(derived)
}

/// The GKEMachinePool spec for a `GCPManagedMachinePool`.
fn machine_pool(obj: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut gke = Map::new();
    let name = match f.mapped("nodePoolName", "GKEMachinePool spec.cloudName") {
        Some(n) => n.clone(),
        // CAPG names the node pool after its object then.
        None => obj["metadata"]["name"].clone(),
    };
    spec.insert("cloudName".into(), name);
    spec.insert("adoption".into(), json!({}));
    let machine = f
        .mapped("machineType", "GKEMachinePool spec.machineType")
        .or_else(|| f.mapped("instanceType", "GKEMachinePool spec.machineType"))
        .cloned()
        // GKE's default when CAPG sends none.
        .unwrap_or_else(|| json!("e2-medium"));
    spec.insert("machineType".into(), machine);
    let disk = f
        .mapped("diskSizeGB", "GKEMachinePool spec.diskSizeGB")
        .or_else(|| f.mapped("diskSizeGb", "GKEMachinePool spec.diskSizeGB"));
    if let Some(size) = disk {
        spec.insert("diskSizeGB".into(), size.clone());
    }
    if let Some(image) = f.mapped("imageType", "GKEMachinePool spec.image") {
        spec.insert("image".into(), image.clone());
    }
    if let Some(labels) = f.mapped("kubernetesLabels", "GKEMachinePool spec.labels") {
        spec.insert("labels".into(), labels.clone());
    }
    if let Some(taints) = taints(&mut f, "kubernetesTaints", "GKEMachinePool spec.taints") {
        spec.insert("taints".into(), taints);
    }
    let autoscaling = f.get("scaling.enableAutoscaling") != Some(&json!(false));
    match (f.get("scaling.minCount"), f.get("scaling.maxCount")) {
        (Some(min), Some(max)) if autoscaling => {
            f.mapped(
                "scaling",
                "GKEMachinePool spec.scaling (GKE's autoscaler keeps the count between them)",
            );
            spec.insert(
                "scaling".into(),
                json!({"minReplicas": min, "maxReplicas": max}),
            );
        }
        _ => f.dropped("scaling", "no autoscaling: the MachinePool sets the count"),
    }
    f.unmanaged(
        "scaling.locationPolicy",
        "the node pool keeps its location policy",
    );
    if f.get("spot") == Some(&json!(true)) {
        f.mapped("spot", "GKEMachinePool spec.spot");
        spec.insert("spot".into(), json!(true));
    }
    f.unmanaged(
        "preemptible",
        "the node pool stays preemptible (ours asks for Spot VMs, not preemptible ones)",
    );
    f.unmanaged(
        "nodeLocations",
        "the node pool keeps its zones; ours places new ones by MachinePool spec.failureDomains",
    );
    if let Some(email) = f.mapped(
        "nodeSecurity.serviceAccount.email",
        "GKEMachinePool spec.gke.serviceAccount",
    ) {
        gke.insert("serviceAccount".into(), email.clone());
    }
    f.unmanaged(
        "nodeSecurity",
        "the node pool keeps its scopes, sandbox and Shielded VM settings",
    );
    if let Some(repair) = f.mapped(
        "management.autoRepair",
        "GKEMachinePool spec.gke.autoRepair",
    ) {
        gke.insert("autoRepair".into(), repair.clone());
    }
    f.unmanaged(
        "management.autoUpgrade",
        "the node pool keeps its auto-upgrade setting; ours upgrades it to the MachinePool's version",
    );
    f.dropped("providerIDList", "ours writes it from GKE's instances");
    spec.insert("gke".into(), Value::Object(gke));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::peer::{Outcome, Peer, PeerPool, refused_fields};

    /// CAPG's `cluster-template-gke.yaml` as `clusterctl generate` renders it, with the name
    /// CAPG's webhook writes.
    fn source() -> Source {
        Source {
            cluster: json!({"kind": "Cluster", "metadata": {"name": "g1", "namespace": "team"}}),
            infra: json!({"kind": "GCPManagedCluster", "metadata": {"name": "g1", "namespace": "team"}, "spec": {
                "project": "p-1", "region": "us-central1", "network": {"name": "net-1"}}}),
            control_plane: json!({"kind": "GCPManagedControlPlane", "metadata": {"name": "g1-control-plane", "namespace": "team"}, "spec": {
                "project": "p-1", "location": "us-central1", "clusterName": "team-g1-control-plane",
                "releaseChannel": "regular"},
                "status": {"currentVersion": "1.31.5-gke.1000"}}),
            pools: vec![PeerPool {
                machine_pool: json!({"kind": "MachinePool", "metadata": {"name": "g1-mp-0"}}),
                infra: json!({"kind": "GCPManagedMachinePool", "metadata": {"name": "g1-mp-0"}, "spec": {}}),
            }],
            region: None,
            related: Vec::new(),
        }
    }

    #[test]
    fn capg_s_template_becomes_ours_on_the_auto_mode_subnetwork() {
        let t = Peer::Capg.translate(&source());
        assert!(!t.refused(), "{:#?}", t.notes);
        assert_eq!(
            t.infra_cluster["spec"],
            json!({"region": "us-central1", "network": {"id": "net-1", "subnetIDs": ["net-1"]},
                   "gke": {"project": "p-1"}})
        );
        let cp = &t.control_plane["spec"];
        assert_eq!(cp["cloudName"], "team-g1-control-plane");
        assert_eq!(cp["version"], "v1.31.5");
        assert_eq!(cp["gke"]["releaseChannel"], "Regular");
        let pool = &t.pools[0].1["spec"];
        assert_eq!(pool["cloudName"], "g1-mp-0");
        assert_eq!(pool["machineType"], "e2-medium");
        assert!(pool.get("scaling").is_none());
    }

    #[test]
    fn zonal_autopilot_and_shared_vpc_clusters_are_refused() {
        let mut s = source();
        s.control_plane["spec"]["location"] = json!("us-central1-a");
        s.control_plane["spec"]["enableAutopilot"] = json!(true);
        s.infra["spec"]["network"]["hostProject"] = json!("host");
        let t = Peer::Capg.translate(&s);
        let refused = refused_fields(&t);
        assert_eq!(
            refused,
            [
                "spec.network.hostProject",
                "spec.location",
                "spec.enableAutopilot"
            ]
        );
    }

    #[test]
    fn a_name_left_to_capg_s_webhook_is_derived_as_it_derives_it() {
        let mut s = source();
        s.control_plane["spec"]
            .as_object_mut()
            .unwrap()
            .remove("clusterName");
        let t = Peer::Capg.translate(&s);
        assert_eq!(
            t.control_plane["spec"]["cloudName"],
            "team-g1-control-plane"
        );
        s.control_plane["metadata"]["name"] = json!("a-very-long-control-plane-name-for-gke");
        let t = Peer::Capg.translate(&s);
        assert!(t.refused());
    }

    #[test]
    fn an_autoscaled_pool_keeps_its_range_and_its_taints() {
        let mut s = source();
        s.pools[0].infra["spec"] = json!({
            "nodePoolName": "np", "machineType": "n2-standard-4", "diskSizeGb": 50,
            "scaling": {"minCount": 1, "maxCount": 5},
            "kubernetesTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
            "management": {"autoRepair": true, "autoUpgrade": false},
            "linuxNodeConfig": {"cgroupMode": 2}});
        let t = Peer::Capg.translate(&s);
        let pool = &t.pools[0].1["spec"];
        assert_eq!(pool["cloudName"], "np");
        assert_eq!(pool["diskSizeGB"], 50);
        assert_eq!(pool["scaling"], json!({"minReplicas": 1, "maxReplicas": 5}));
        assert_eq!(pool["gke"], json!({"autoRepair": true}));
        assert!(
            t.notes
                .iter()
                .any(|n| n.field == "spec.linuxNodeConfig.cgroupMode"
                    && matches!(n.outcome, Outcome::Unmanaged(_)))
        );
    }
}
