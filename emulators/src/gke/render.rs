//! The resources as the APIs return them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::state::{Cluster, NodePool, OpStatus, Operation, Scope, region_of};
use super::{catalog, project_number};

/// Kubernetes Engine's base URL in self links.
pub const CONTAINER: &str = "https://container.googleapis.com/v1";

/// Compute Engine's base URL in self links.
pub const COMPUTE: &str = "https://www.googleapis.com/compute/v1";

/// `projects/<p>/locations/<l>/clusters/<c>` as GKE links it: `zones/` for a zonal cluster.
pub fn cluster_link(project: &str, location: &str, name: &str) -> String {
    let kind = if region_of(location) == location {
        "locations"
    } else {
        "zones"
    };
    format!("{CONTAINER}/projects/{project}/{kind}/{location}/clusters/{name}")
}

/// A node pool's self link.
pub fn pool_link(c: &Cluster, pool: &str) -> String {
    format!(
        "{}/nodePools/{pool}",
        cluster_link(&c.project, &c.location, &c.name)
    )
}

/// The instance group manager URL of a pool in a zone.
pub fn group_url(c: &Cluster, pool: &NodePool, zone: &str) -> String {
    format!(
        "{COMPUTE}/projects/{}/zones/{zone}/instanceGroupManagers/{}",
        c.project,
        pool.group_name(&c.name, zone)
    )
}

/// The 8-hex fingerprint of a label set.
pub fn label_fingerprint(labels: &std::collections::BTreeMap<String, String>) -> String {
    let text: String = labels.iter().map(|(k, v)| format!("{k}={v};")).collect();
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    hex::encode(&digest.as_ref()[..4])
}

/// Whether the cluster's public endpoint is off.
pub fn public_endpoint_disabled(spec: &Value) -> bool {
    spec["privateClusterConfig"]["enablePrivateEndpoint"] == true
        || spec["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["enablePublicEndpoint"] == false
}

/// The cluster's private endpoint: `.2` of its control plane range, else of the first subnet range.
fn private_endpoint(spec: &Value) -> String {
    let block = spec["privateClusterConfig"]["masterIpv4CidrBlock"]
        .as_str()
        .unwrap_or("10.128.0.0/28");
    let base = block.split('/').next().unwrap_or("10.128.0.0");
    let mut octets: Vec<u8> = base.split('.').filter_map(|o| o.parse().ok()).collect();
    if octets.len() != 4 {
        octets = vec![10, 128, 0, 0];
    }
    octets[3] = octets[3].saturating_add(2);
    format!("{}.{}.{}.{}", octets[0], octets[1], octets[2], octets[3])
}

/// The cluster's DNS endpoint.
pub fn dns_endpoint(c: &Cluster) -> String {
    format!(
        "gke-{}-{}.{}.gke.goog",
        &c.id[..32.min(c.id.len())],
        project_number(&c.project),
        c.region()
    )
}

/// A `StatusCondition` for an error message (`statusMessage` is deprecated in favour of these).
fn condition(message: &str) -> Value {
    let quota = message.contains("Quota");
    json!({
        "code": if quota { "GCE_QUOTA_EXCEEDED" } else { "UNKNOWN" },
        "message": message,
        "canonicalCode": if quota { "RESOURCE_EXHAUSTED" } else { "UNKNOWN" },
    })
}

/// A node pool.
pub fn pool(c: &Cluster, p: &NodePool) -> Value {
    let mut v = p.spec.clone();
    let config = v["config"].as_object().cloned().unwrap_or_default();
    let mut config = Value::Object(config);
    for (key, default) in [
        ("machineType", json!(catalog::DEFAULT_MACHINE_TYPE)),
        ("diskSizeGb", json!(100)),
        ("diskType", json!("pd-balanced")),
        ("imageType", json!(catalog::DEFAULT_IMAGE_TYPE)),
        ("serviceAccount", json!("default")),
        (
            "oauthScopes",
            json!([
                "https://www.googleapis.com/auth/devstorage.read_only",
                "https://www.googleapis.com/auth/logging.write",
                "https://www.googleapis.com/auth/monitoring"
            ]),
        ),
    ] {
        if config.get(key).is_none_or(Value::is_null) {
            config[key] = default;
        }
    }
    v["config"] = config;
    v["name"] = json!(p.name);
    v["version"] = json!(p.version);
    v["status"] = json!(p.status.as_str());
    if !p.status_message.is_empty() {
        v["statusMessage"] = json!(p.status_message);
        v["conditions"] = json!([condition(&p.status_message)]);
    }
    v["locations"] = json!(p.zones);
    v["selfLink"] = json!(pool_link(c, &p.name));
    v["instanceGroupUrls"] = json!(
        p.zones
            .iter()
            .map(|z| group_url(c, p, z))
            .collect::<Vec<_>>()
    );
    if v["management"].is_null() {
        v["management"] = json!({ "autoUpgrade": true, "autoRepair": true });
    }
    if v["upgradeSettings"].is_null() {
        v["upgradeSettings"] = json!({ "maxSurge": 1, "strategy": "SURGE" });
    }
    if v["maxPodsConstraint"].is_null() {
        v["maxPodsConstraint"] = json!({ "maxPodsPerNode": "110" });
    }
    v["podIpv4CidrSize"] = json!(24);
    v["etag"] = json!(label_fingerprint(&Default::default()));
    v
}

/// A cluster.
pub fn cluster(c: &Cluster) -> Value {
    let mut v = c.spec.clone();
    v["name"] = json!(c.name);
    v["id"] = json!(c.id);
    v["selfLink"] = json!(cluster_link(&c.project, &c.location, &c.name));
    v["location"] = json!(c.location);
    v["zone"] = json!(c.location);
    v["locations"] = json!(c.zones);
    v["status"] = json!(c.status.as_str());
    if !c.status_message.is_empty() {
        v["statusMessage"] = json!(c.status_message);
        v["conditions"] = json!([condition(&c.status_message)]);
    }
    v["createTime"] = json!(c.create_time);
    v["initialClusterVersion"] = json!(c.initial_version);
    v["currentMasterVersion"] = json!(c.version);
    let node_version = c
        .pools
        .iter()
        .map(|p| p.version.as_str())
        .min_by(|a, b| catalog::compare(a, b))
        .unwrap_or(&c.version);
    v["currentNodeVersion"] = json!(node_version);
    v["currentNodeCount"] = json!(c.pools.iter().map(|p| p.serving().count()).sum::<usize>());
    v["resourceLabels"] = json!(c.labels);
    v["labelFingerprint"] = json!(label_fingerprint(&c.labels));
    v["nodePools"] = json!(c.pools.iter().map(|p| pool(c, p)).collect::<Vec<_>>());
    v["instanceGroupUrls"] = json!(
        c.pools
            .iter()
            .flat_map(|p| p.zones.iter().map(move |z| group_url(c, p, z)))
            .collect::<Vec<_>>()
    );
    for (key, default) in [
        ("network", "default"),
        ("subnetwork", "default"),
        ("loggingService", "logging.googleapis.com/kubernetes"),
        ("monitoringService", "monitoring.googleapis.com/kubernetes"),
        ("clusterIpv4Cidr", "10.4.0.0/14"),
        ("servicesIpv4Cidr", "34.118.224.0/20"),
    ] {
        if v[key].as_str().is_none_or(str::is_empty) {
            v[key] = json!(default);
        }
    }
    let private = private_endpoint(&c.spec);
    let public = c
        .endpoint
        .as_ref()
        .map(|e| format!("{}:{}", e.host, e.port));
    let public_off = public_endpoint_disabled(&c.spec);
    if let Some(ep) = &c.endpoint {
        v["masterAuth"] = json!({ "clusterCaCertificate": STANDARD.encode(&ep.ca_pem) });
    } else if v["masterAuth"].is_null() {
        v["masterAuth"] = json!({});
    }
    if c.endpoint.is_some() {
        v["endpoint"] = json!(if public_off {
            Some(&private)
        } else {
            public.as_ref()
        });
        v["privateClusterConfig"]["privateEndpoint"] = json!(private);
        v["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["enabled"] = json!(true);
        v["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["privateEndpoint"] = json!(private);
        v["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["enablePublicEndpoint"] =
            json!(!public_off);
        if !public_off {
            v["privateClusterConfig"]["publicEndpoint"] = json!(public);
            v["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["publicEndpoint"] = json!(public);
        }
        v["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["endpoint"] = json!(dns_endpoint(c));
    }
    v
}

/// A Kubernetes Engine operation.
pub fn container_operation(op: &Operation) -> Value {
    let mut v = json!({
        "name": op.name,
        "zone": op.location,
        "location": op.location,
        "operationType": op.kind,
        "status": op.status.as_str(),
        "selfLink": format!("{CONTAINER}/projects/{}/locations/{}/operations/{}", project_number(&op.project), op.location, op.name),
        "targetLink": op.target_link,
        "startTime": op.start_time,
    });
    if let Some(end) = &op.end_time {
        v["endTime"] = json!(end);
    }
    if op.status == OpStatus::Done {
        v["progress"] = json!({ "status": "DONE" });
    }
    if let Some(e) = &op.error {
        v["error"] = e.rpc_status();
        v["statusMessage"] = json!(e.message);
        v["detail"] = json!(e.message);
    }
    v
}

/// A Compute operation.
pub fn compute_operation(op: &Operation) -> Value {
    let place = match &op.scope {
        Scope::Compute { place: Some(p) } => p.clone(),
        _ => "global".to_string(),
    };
    let mut v = json!({
        "kind": "compute#operation",
        "id": super::numeric_id().to_string(),
        "name": op.name,
        "operationType": op.kind,
        "status": op.status.as_str(),
        "targetLink": op.target_link,
        "selfLink": format!("{COMPUTE}/projects/{}/{place}/operations/{}", op.project, op.name),
        "insertTime": op.start_time,
        "startTime": op.start_time,
        "progress": if op.status == OpStatus::Done { 100 } else { 0 },
    });
    if let Some(region) = place.strip_prefix("regions/") {
        v["region"] = json!(format!(
            "{COMPUTE}/projects/{}/regions/{region}",
            op.project
        ));
    }
    if let Some(zone) = place.strip_prefix("zones/") {
        v["zone"] = json!(format!("{COMPUTE}/projects/{}/zones/{zone}", op.project));
    }
    if let Some(end) = &op.end_time {
        v["endTime"] = json!(end);
    }
    if let Some(e) = &op.error {
        v["error"] = json!({ "errors": [{ "code": e.reason.unwrap_or("RESOURCE_ERROR"), "message": e.message }] });
        v["httpErrorStatusCode"] = json!(e.http.as_u16());
        v["httpErrorMessage"] = json!(
            e.http
                .canonical_reason()
                .unwrap_or("ERROR")
                .to_ascii_uppercase()
        );
    }
    v
}
