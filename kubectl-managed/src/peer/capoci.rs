//! CAPOCI (`OCIManagedCluster`, `OCIManagedControlPlane`, `OCIManagedMachinePool`, all
//! `infrastructure.cluster.x-k8s.io/v1beta2`) to ours on OKE.
//!
//! CAPOCI records the OCIDs of its cluster and node pools in their specs, so ours adopts them by
//! OCID. The VCN is brought by id, with the subnets CAPOCI recorded by role. CAPOCI's template
//! names no region (its controller's default is used): then `--region` must say it.

use serde_json::{Map, Value, json};

use super::{Fields, Note, Source, Translation};

/// What the notes say of a field ours has no place for.
const NO_EQUIVALENT: &str = "no equivalent in OKECluster/OKEControlPlane/OKEMachinePool: what it made stays in OCI and nothing manages it any more";

/// CAPOCI's objects as ours.
pub fn translate(source: &Source) -> Translation {
    let mut t = Translation::default();
    let (infra, subnets, mut notes) = cluster(&source.infra, source.region.as_deref());
    let (control_plane, cp_notes) = control_plane(&source.control_plane);
    notes.extend(cp_notes);
    t.infra_cluster = infra;
    t.control_plane = control_plane;
    for pool in &source.pools {
        let (spec, pool_notes) = machine_pool(&pool.infra, &subnets);
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

/// The OKECluster spec for an `OCIManagedCluster`, and its subnets by name (for the pools'
/// placements).
fn cluster(obj: &Value, region: Option<&str>) -> (Value, Map<String, Value>, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut oke = Map::new();
    if let Some(compartment) = f.mapped("compartmentId", "OKECluster spec.oke.compartmentID") {
        oke.insert("compartmentID".into(), compartment.clone());
    }
    match (f.mapped("region", "OKECluster spec.region"), region) {
        (Some(r), _) => {
            spec.insert("region".into(), r.clone());
        }
        (None, Some(r)) => {
            spec.insert("region".into(), json!(r));
        }
        (None, None) => f.refuse(
            "region",
            "unset: CAPOCI used its controller's default region; run the command with --region <that region>",
        ),
    }
    if let Some(ads) = f
        .get("availabilityDomains")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        let names: Vec<Value> = ads
            .values()
            .filter_map(|ad| ad.get("name").cloned())
            .collect();
        f.mapped(
            "availabilityDomains",
            "OKECluster spec.oke.availabilityDomains",
        );
        oke.insert("availabilityDomains".into(), Value::Array(names));
    }
    let mut by_name = Map::new();
    let mut network = Map::new();
    if let Some(vcn) = f.mapped("networkSpec.vcn.id", "OKECluster spec.network.id") {
        network.insert("id".into(), vcn.clone());
        let subnets = f
            .get("networkSpec.vcn.subnets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let with_role = |role: &str| -> Vec<Value> {
            subnets
                .iter()
                .filter(|s| s["role"] == role)
                .filter_map(|s| s.get("id").cloned())
                .collect()
        };
        let workers = with_role("worker");
        if !workers.is_empty() {
            network.insert("subnetIDs".into(), Value::Array(workers));
        }
        if let Some(endpoint) = with_role("control-plane-endpoint").first() {
            oke.insert("endpointSubnetID".into(), endpoint.clone());
        }
        let lbs: Vec<Value> = with_role("service-lb").into_iter().take(2).collect();
        if !lbs.is_empty() {
            oke.insert("serviceLBSubnetIDs".into(), Value::Array(lbs));
        }
        for s in &subnets {
            if let (Some(name), Some(id)) = (s["name"].as_str(), s.get("id")) {
                by_name.insert(name.to_string(), id.clone());
            }
        }
        f.mapped(
            "networkSpec.vcn.subnets",
            "OKECluster spec.network.subnetIDs (worker), spec.oke.endpointSubnetID (control-plane-endpoint), spec.oke.serviceLBSubnetIDs (service-lb)",
        );
        f.unmanaged(
            "networkSpec",
            "the VCN and its gateways, route tables, security lists and groups are brought by id: ours reads them and never changes or deletes them, even if CAPOCI made them",
        );
    } else {
        f.refuse(
            "networkSpec.vcn.id",
            "CAPOCI has not recorded its VCN yet: move the Cluster once CAPOCI has made it",
        );
    }
    spec.insert("network".into(), Value::Object(network));
    if let Some(tags) = f.mapped("freeformTags", "OKECluster spec.additionalTags") {
        let kept: Map<String, Value> = tags
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !matches!(k.as_str(), "CreatedBy" | "ClusterResourceIdentifier"))
            .filter(|(k, _)| !k.starts_with("capi-managed-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !kept.is_empty() {
            spec.insert("additionalTags".into(), Value::Object(kept));
        }
    }
    f.unmanaged(
        "definedTags",
        "the defined tags stay; ours manages freeform tags only",
    );
    f.dropped(
        "ociResourceIdentifier",
        "CAPOCI's own tag value; its tags stay on the resources",
    );
    if f.get("identityRef").is_some() {
        f.refuse(
            "identityRef",
            "ours reads an API key from a Secret in the Cluster's namespace (OKECluster spec.identityRef {kind: Secret}: tenancy, user, fingerprint, key) or the controller's environment; set one of those up, then move the Cluster without CAPOCI's OCIClusterIdentity",
        );
    }
    if f.get("hostUrl").is_some() {
        f.refuse(
            "hostUrl",
            "CAPOCI reaches OCI at other hosts for this cluster; ours reaches the region's public endpoints",
        );
    }
    f.dropped(
        "controlPlaneEndpoint",
        "OKEControlPlane publishes the endpoint itself",
    );
    spec.insert("oke".into(), Value::Object(oke));
    (Value::Object(spec), by_name, f.finish(NO_EQUIVALENT))
}

/// The OKEControlPlane spec for an `OCIManagedControlPlane`.
fn control_plane(obj: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut oke = Map::new();
    // CAPOCI names the OKE cluster after its control-plane object.
    spec.insert("cloudName".into(), obj["metadata"]["name"].clone());
    match f.mapped("id", "OKEControlPlane spec.adoption.id") {
        Some(id) => {
            spec.insert("adoption".into(), json!({"id": id}));
        }
        None => f.refuse(
            "id",
            "CAPOCI has not recorded its cluster's OCID yet: move the Cluster once CAPOCI has made it",
        ),
    }
    if let Some(v) = f.mapped("version", "OKEControlPlane spec.version") {
        spec.insert(
            "version".into(),
            json!(super::version(v.as_str().unwrap_or_default())),
        );
    }
    match f.str("clusterType") {
        Some("ENHANCED_CLUSTER") => {
            f.mapped("clusterType", "OKEControlPlane spec.oke.clusterType");
            oke.insert("clusterType".into(), json!("enhanced"));
        }
        Some(_) => {
            f.mapped("clusterType", "OKEControlPlane spec.oke.clusterType");
            oke.insert("clusterType".into(), json!("basic"));
        }
        None => {}
    }
    let cni = f
        .get("clusterPodNetworkOptions")
        .and_then(Value::as_array)
        .and_then(|o| o.first())
        .and_then(|o| o["cniType"].as_str());
    if let Some(cni) = cni {
        f.mapped(
            "clusterPodNetworkOptions",
            "OKEControlPlane spec.oke.cniType",
        );
        let ours = if cni == "FLANNEL_OVERLAY" {
            "flannel"
        } else {
            "vcnNative"
        };
        oke.insert("cniType".into(), json!(ours));
    }
    if let Some(key) = f.mapped("kmsKeyId", "OKEControlPlane spec.encryption.kmsKeyID") {
        spec.insert("encryption".into(), json!({"kmsKeyID": key}));
    }
    if let Some(on) = f.mapped(
        "clusterOptions.openIdConnectDiscovery.isOpenIdConnectDiscoveryEnabled",
        "OKEControlPlane spec.oidcIssuer.enabled",
    ) {
        spec.insert("oidcIssuer".into(), json!({"enabled": on}));
    }
    f.unmanaged(
        "clusterOptions",
        "the cluster keeps its OIDC authentication, add-on and admission settings; ours does not manage them",
    );
    f.unmanaged(
        "addons",
        "the cluster add-ons keep running as OKE has them; ours does not manage OKE add-ons",
    );
    f.unmanaged("imagePolicyConfig", "the cluster keeps its image policy");
    f.dropped(
        "controlPlaneEndpoint",
        "OKEControlPlane publishes the endpoint itself (the same one)",
    );
    spec.insert("oke".into(), Value::Object(oke));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

/// The OKEMachinePool spec for an `OCIManagedMachinePool`; `subnets` maps the cluster's subnet
/// names to their OCIDs.
fn machine_pool(obj: &Value, subnets: &Map<String, Value>) -> (Value, Vec<Note>) {
    let mut f = Fields::new(obj);
    let mut spec = Map::new();
    let mut oke = Map::new();
    spec.insert("cloudName".into(), obj["metadata"]["name"].clone());
    match f.mapped("id", "OKEMachinePool spec.adoption.id") {
        Some(id) => {
            spec.insert("adoption".into(), json!({"id": id}));
        }
        None => f.refuse(
            "id",
            "CAPOCI has not recorded the node pool's OCID yet: move the Cluster once CAPOCI has made it",
        ),
    }
    if let Some(shape) = f.mapped("nodeShape", "OKEMachinePool spec.machineType") {
        spec.insert("machineType".into(), shape.clone());
    }
    for (theirs, ours, field) in [
        (
            "nodeShapeConfig.ocpus",
            "ocpus",
            "OKEMachinePool spec.oke.ocpus",
        ),
        (
            "nodeShapeConfig.memoryInGBs",
            "memoryGB",
            "OKEMachinePool spec.oke.memoryGB",
        ),
    ] {
        let Some(text) = f.str(theirs) else { continue };
        match text.parse::<u32>() {
            Ok(n) => {
                f.mapped(theirs, field);
                oke.insert(ours.into(), json!(n));
            }
            Err(_) => f.refuse(
                theirs,
                &format!("{text}: ours sizes flexible shapes in whole OCPUs and gigabytes"),
            ),
        }
    }
    if let Some(image) = f.mapped("nodeSourceViaImage.imageId", "OKEMachinePool spec.image") {
        spec.insert("image".into(), image.clone());
    }
    if let Some(size) = f.mapped(
        "nodeSourceViaImage.bootVolumeSizeInGBs",
        "OKEMachinePool spec.diskSizeGB",
    ) {
        spec.insert("diskSizeGB".into(), size.clone());
    }
    if let Some(key) = f.mapped("sshPublicKey", "OKEMachinePool spec.oke.sshPublicKey") {
        oke.insert("sshPublicKey".into(), key.clone());
    }
    if let Some(labels) = f.get("initialNodeLabels").and_then(Value::as_array) {
        let ours: Map<String, Value> = labels
            .iter()
            .filter_map(|l| Some((l["key"].as_str()?.to_string(), l["value"].clone())))
            .collect();
        f.mapped("initialNodeLabels", "OKEMachinePool spec.labels");
        spec.insert("labels".into(), Value::Object(ours));
    }
    let placement_subnets: Vec<Value> = f
        .get("nodePoolNodeConfig.placementConfigs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p["subnetName"].as_str())
        .filter_map(|name| subnets.get(name).cloned())
        .collect();
    if let Some(first) = placement_subnets.first() {
        f.mapped(
            "nodePoolNodeConfig.placementConfigs",
            "OKEMachinePool spec.subnetIDs (the subnet's OCID) and MachinePool spec.failureDomains",
        );
        spec.insert("subnetIDs".into(), json!([first]));
    }
    if let Some(max) = f.mapped(
        "nodePoolNodeConfig.nodePoolPodNetworkOptionDetails.vcnIpNativePodNetworkOptions.maxPodsPerNode",
        "OKEMachinePool spec.oke.maxPodsPerNode",
    ) {
        oke.insert("maxPodsPerNode".into(), max.clone());
    }
    f.unmanaged(
        "nodePoolNodeConfig",
        "the node pool keeps its placement details, pod subnets, security groups and encryption settings",
    );
    let mut update = Map::new();
    for (theirs, ours) in [
        ("nodePoolCyclingDetails.maximumSurge", "maxSurge"),
        (
            "nodePoolCyclingDetails.maximumUnavailable",
            "maxUnavailable",
        ),
    ] {
        if let Some(v) = f.mapped(theirs, &format!("OKEMachinePool spec.update.{ours}")) {
            let value = v
                .as_str()
                .and_then(|s| s.parse::<i64>().ok())
                .map_or_else(|| v.clone(), |n| json!(n));
            update.insert(ours.into(), value);
        }
    }
    if !update.is_empty() {
        spec.insert("update".into(), Value::Object(update));
    }
    f.unmanaged(
        "nodePoolCyclingDetails.isNodeCyclingEnabled",
        "the node pool keeps its cycling setting",
    );
    f.dropped(
        "version",
        "the node pool's version is the MachinePool's spec.template.spec.version",
    );
    f.unmanaged("nodeMetadata", "the node pool keeps its metadata");
    f.unmanaged(
        "nodeEvictionNodePoolSettings",
        "the node pool keeps its eviction settings",
    );
    f.dropped(
        "providerID",
        "ours writes the provider IDs from OKE's nodes",
    );
    f.dropped("providerIDList", "ours writes it from OKE's nodes");
    spec.insert("oke".into(), Value::Object(oke));
    (Value::Object(spec), f.finish(NO_EQUIVALENT))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::peer::{Peer, PeerPool, refused_fields};

    /// CAPOCI's `cluster-template-managed.yaml` as rendered, after CAPOCI made the cluster and
    /// recorded what it made.
    fn source() -> Source {
        Source {
            cluster: json!({"kind": "Cluster", "metadata": {"name": "o1", "namespace": "team"}}),
            infra: json!({"kind": "OCIManagedCluster", "metadata": {"name": "o1"}, "spec": {
                "compartmentId": "ocid1.compartment.oc1..c",
                "ociResourceIdentifier": "uuid-1",
                "freeformTags": {"CreatedBy": "OCIClusterAPIProvider", "team": "x"},
                "networkSpec": {"vcn": {"id": "ocid1.vcn.oc1.iad.v", "cidr": "10.0.0.0/16", "subnets": [
                    {"role": "control-plane-endpoint", "id": "ocid1.subnet.oc1.iad.ep", "name": "control-plane-endpoint"},
                    {"role": "worker", "id": "ocid1.subnet.oc1.iad.w", "name": "worker"},
                    {"role": "service-lb", "id": "ocid1.subnet.oc1.iad.lb", "name": "service-lb"}]}}}}),
            control_plane: json!({"kind": "OCIManagedControlPlane", "metadata": {"name": "o1"}, "spec": {
                "version": "v1.31.1", "id": "ocid1.cluster.oc1.iad.c1",
                "clusterPodNetworkOptions": [{"cniType": "OCI_VCN_IP_NATIVE"}]}}),
            pools: vec![PeerPool {
                machine_pool: json!({"kind": "MachinePool", "metadata": {"name": "o1-mp-0",
                    "annotations": {"cluster.x-k8s.io/replicas-managed-by": ""}}}),
                infra: json!({"kind": "OCIManagedMachinePool", "metadata": {"name": "o1-mp-0"}, "spec": {
                    "id": "ocid1.nodepool.oc1.iad.np1", "version": "v1.31.1",
                    "nodeShape": "VM.Standard.E4.Flex", "sshPublicKey": "",
                    "nodeSourceViaImage": {"imageId": "ocid1.image.oc1.iad.i", "bootVolumeSizeInGBs": 50},
                    "nodeShapeConfig": {"ocpus": "1"},
                    "nodePoolNodeConfig": {"placementConfigs": [{"availabilityDomain": "AD-1", "subnetName": "worker"}]}}}),
            }],
            region: Some("us-ashburn-1".into()),
            related: Vec::new(),
        }
    }

    #[test]
    fn capoci_s_cluster_becomes_ours_by_ocid_on_its_brought_vcn() {
        let t = Peer::Capoci.translate(&source());
        assert!(!t.refused(), "{:#?}", t.notes);
        assert_eq!(
            t.infra_cluster["spec"],
            json!({"region": "us-ashburn-1",
                   "network": {"id": "ocid1.vcn.oc1.iad.v", "subnetIDs": ["ocid1.subnet.oc1.iad.w"]},
                   "additionalTags": {"team": "x"},
                   "oke": {"compartmentID": "ocid1.compartment.oc1..c",
                           "endpointSubnetID": "ocid1.subnet.oc1.iad.ep",
                           "serviceLBSubnetIDs": ["ocid1.subnet.oc1.iad.lb"]}})
        );
        let cp = &t.control_plane["spec"];
        assert_eq!(cp["cloudName"], "o1");
        assert_eq!(cp["adoption"], json!({"id": "ocid1.cluster.oc1.iad.c1"}));
        assert_eq!(cp["oke"], json!({"cniType": "vcnNative"}));
        let pool = &t.pools[0].1["spec"];
        assert_eq!(
            pool["adoption"],
            json!({"id": "ocid1.nodepool.oc1.iad.np1"})
        );
        assert_eq!(pool["machineType"], "VM.Standard.E4.Flex");
        assert_eq!(pool["oke"], json!({"ocpus": 1}));
        assert_eq!(pool["diskSizeGB"], 50);
        assert_eq!(pool["subnetIDs"], json!(["ocid1.subnet.oc1.iad.w"]));
    }

    #[test]
    fn no_region_fractional_ocpus_and_no_recorded_ocid_are_refused() {
        let mut s = source();
        s.region = None;
        s.pools[0].infra["spec"]["nodeShapeConfig"]["ocpus"] = json!("1.5");
        s.control_plane["spec"]
            .as_object_mut()
            .unwrap()
            .remove("id");
        let t = Peer::Capoci.translate(&s);
        let refused = refused_fields(&t);
        assert_eq!(
            refused,
            ["spec.region", "spec.id", "spec.nodeShapeConfig.ocpus"]
        );
    }
}
