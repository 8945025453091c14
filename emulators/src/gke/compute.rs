//! The Compute Engine subset (`/compute/v1/projects/{project}/…`): networks, subnetworks with
//! secondary ranges, routers with Cloud NAT, the instance group managers of node pools with
//! their managed instances, and the global, regional and zonal operations.

use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::error::GoogleError;
use super::render::{self, COMPUTE};
use super::state::{ComputeKind, Effect, OpStatus, Operation, Scope, State};
use super::validate::{self, int_of, last_segment, str_of};
use super::{Gke, hex, now_rfc3339, numeric_id};
use crate::kit::Delays;

/// One Compute method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `insert` of a kind.
    Insert(ComputeKind),
    /// `get`.
    Get(ComputeKind),
    /// `delete`.
    Delete(ComputeKind),
    /// `patch`.
    Patch(ComputeKind),
    /// `instanceGroupManagers.get`.
    GetGroup,
    /// `instanceGroupManagers.listManagedInstances`.
    ListManagedInstances,
    /// `*Operations.get`, or `wait` (`true`: answers once done or after two minutes).
    GetOperation(bool),
    /// `regions.get`.
    GetRegion,
    /// `zones.list`, with its `filter`.
    ListZones,
}

impl Call {
    /// The method's name for the call counters (`compute.networks.insert`).
    pub fn rpc(&self) -> String {
        let kind = |k: &ComputeKind| match k {
            ComputeKind::Network => "networks",
            ComputeKind::Subnetwork => "subnetworks",
            ComputeKind::Router => "routers",
        };
        match self {
            Self::Insert(k) => format!("compute.{}.insert", kind(k)),
            Self::Get(k) => format!("compute.{}.get", kind(k)),
            Self::Delete(k) => format!("compute.{}.delete", kind(k)),
            Self::Patch(k) => format!("compute.{}.patch", kind(k)),
            Self::GetGroup => "compute.instanceGroupManagers.get".into(),
            Self::ListManagedInstances => {
                "compute.instanceGroupManagers.listManagedInstances".into()
            }
            Self::GetOperation(false) => "compute.operations.get".into(),
            Self::GetOperation(true) => "compute.operations.wait".into(),
            Self::GetRegion => "compute.regions.get".into(),
            Self::ListZones => "compute.zones.list".into(),
        }
    }

    /// The IAM permission it needs.
    pub fn permission(&self) -> String {
        let rpc = self.rpc();
        rpc.replace("listManagedInstances", "get")
    }
}

/// What a Compute path names.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// Project id.
    pub project: String,
    /// `regions/<r>`, `zones/<z>` or `None` for global.
    pub place: Option<String>,
    /// The resource's name.
    pub name: String,
}

impl Target {
    fn region(&self) -> &str {
        self.place
            .as_deref()
            .and_then(|p| p.strip_prefix("regions/"))
            .unwrap_or_default()
    }

    fn key(&self) -> String {
        match self
            .place
            .as_deref()
            .and_then(|p| p.strip_prefix("regions/"))
        {
            Some(region) => format!("{}/{region}/{}", self.project, self.name),
            None => format!("{}/{}", self.project, self.name),
        }
    }

    fn path(&self, collection: &str) -> String {
        let place = self.place.as_deref().unwrap_or("global");
        format!(
            "projects/{}/{place}/{collection}/{}",
            self.project, self.name
        )
    }
}

/// Reads a `/compute/v1/…` path (segments after `v1`).
pub fn parse(method: &Method, segs: &[&str]) -> Option<(Call, Target)> {
    let ["projects", project, rest @ ..] = segs else {
        return None;
    };
    let mut t = Target {
        project: (*project).to_string(),
        ..Target::default()
    };
    match rest {
        ["regions", region] if method == Method::GET => {
            t.name = (*region).to_string();
            return Some((Call::GetRegion, t));
        }
        ["zones"] if method == Method::GET => return Some((Call::ListZones, t)),
        _ => {}
    }
    let (place, rest) = match rest {
        ["global", rest @ ..] => (None, rest),
        ["regions", r, rest @ ..] => (Some(format!("regions/{r}")), rest),
        ["zones", z, rest @ ..] => (Some(format!("zones/{z}")), rest),
        _ => return None,
    };
    t.place = place;
    let kind = |collection: &str, regional: bool| match (collection, regional) {
        ("networks", false) => Some(ComputeKind::Network),
        ("subnetworks", true) => Some(ComputeKind::Subnetwork),
        ("routers", true) => Some(ComputeKind::Router),
        _ => None,
    };
    let regional = t
        .place
        .as_deref()
        .is_some_and(|p| p.starts_with("regions/"));
    let call = match rest {
        ["operations", op] if method == Method::GET => {
            t.name = (*op).to_string();
            Call::GetOperation(false)
        }
        ["operations", op, "wait"] if method == Method::POST => {
            t.name = (*op).to_string();
            Call::GetOperation(true)
        }
        ["instanceGroupManagers", igm] if method == Method::GET => {
            t.name = (*igm).to_string();
            Call::GetGroup
        }
        ["instanceGroupManagers", igm, "listManagedInstances"] if method == Method::POST => {
            t.name = (*igm).to_string();
            Call::ListManagedInstances
        }
        [collection] if method == Method::POST => Call::Insert(kind(collection, regional)?),
        [collection, name] => {
            t.name = (*name).to_string();
            let k = kind(collection, regional)?;
            match *method {
                Method::GET => Call::Get(k),
                Method::DELETE => Call::Delete(k),
                Method::PATCH => Call::Patch(k),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((call, t))
}

/// The regions the zone listing shows unfiltered; any other well-formed region is served too
/// (as clusters are), each with the zones `-a`, `-b` and `-c`, the ones clusters use.
const LISTED_REGIONS: [&str; 6] = [
    "us-central1",
    "us-east1",
    "us-west1",
    "europe-west1",
    "europe-west4",
    "asia-east1",
];

fn region_link(project: &str, region: &str) -> String {
    format!("{COMPUTE}/projects/{project}/regions/{region}")
}

fn zone_names(region: &str) -> [String; 3] {
    ["a", "b", "c"].map(|z| format!("{region}-{z}"))
}

/// `regions.get`: the region with its zones' links.
fn region(project: &str, name: &str) -> Result<Value, GoogleError> {
    if region_name(name).is_none() {
        return Err(not_found(&format!("projects/{project}/regions/{name}")));
    }
    Ok(json!({
        "kind": "compute#region",
        "id": stable_id(name),
        "name": name,
        "description": name,
        "status": "UP",
        "zones": zone_names(name).iter().map(|z| zone_link(project, z)).collect::<Vec<_>>(),
        "selfLink": region_link(project, name),
    }))
}

/// `zones.list`: every listed region's zones (or, with a `region eq` term, that region's), kept
/// by Compute's legacy filter: `field eq|ne value` terms, several each in parentheses, on
/// `name`, `region` (a link or a name) and `status`; `eq` compares the whole value.
fn zones(project: &str, filter: Option<&str>) -> Result<Value, GoogleError> {
    let terms = match filter.map(str::trim).filter(|f| !f.is_empty()) {
        None => Vec::new(),
        Some(f) => filter_terms(f)?,
    };
    let wanted = terms
        .iter()
        .find(|(field, eq, _)| field == "region" && *eq)
        .map(|(_, _, value)| last_segment(value).to_string());
    let regions: Vec<String> = match wanted {
        Some(region) => region_name(&region).into_iter().collect(),
        None => LISTED_REGIONS.iter().map(|r| (*r).to_string()).collect(),
    };
    let items: Vec<Value> = regions
        .iter()
        .flat_map(|region| {
            zone_names(region).into_iter().map(move |zone| {
                json!({
                    "kind": "compute#zone",
                    "id": stable_id(&zone),
                    "name": zone,
                    "description": zone,
                    "status": "UP",
                    "region": region_link(project, region),
                    "selfLink": zone_link(project, &zone),
                })
            })
        })
        .filter(|zone| {
            terms.iter().all(|(field, eq, value)| {
                let have = zone[field.as_str()].as_str().unwrap_or_default();
                let same = if field == "region" {
                    last_segment(have) == last_segment(value)
                } else {
                    have == value
                };
                same == *eq
            })
        })
        .collect();
    Ok(json!({
        "kind": "compute#zoneList",
        "id": format!("projects/{project}/zones"),
        "items": items,
        "selfLink": format!("{COMPUTE}/projects/{project}/zones"),
    }))
}

/// The terms of a legacy list filter: `(field, eq, value)`.
fn filter_terms(filter: &str) -> Result<Vec<(String, bool, String)>, GoogleError> {
    let bad = || GoogleError::invalid(format!("Invalid list filter expression '{filter}'."));
    let groups: Vec<&str> = if filter.starts_with('(') {
        filter
            .split('(')
            .map(|g| g.trim().trim_end_matches(')').trim())
            .filter(|g| !g.is_empty())
            .collect()
    } else {
        vec![filter]
    };
    groups
        .into_iter()
        .map(|term| {
            let (field, eq, value) = if let Some((f, v)) = term.split_once(" eq ") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once(" ne ") {
                (f, false, v)
            } else {
                return Err(bad());
            };
            let field = field.trim();
            if !["name", "region", "status"].contains(&field) {
                return Err(bad());
            }
            Ok((
                field.to_string(),
                eq,
                value.trim().trim_matches('"').to_string(),
            ))
        })
        .collect()
}

fn zone_link(project: &str, zone: &str) -> String {
    format!("{COMPUTE}/projects/{project}/zones/{zone}")
}

/// A place's numeric id, the same on every call.
fn stable_id(name: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, name.as_bytes());
    let mut bytes = [0_u8; 8];
    bytes.copy_from_slice(&digest.as_ref()[..8]);
    (u64::from_be_bytes(bytes) >> 1).to_string()
}

fn region_name(name: &str) -> Option<String> {
    (validate::location(name).is_ok() && super::state::region_of(name) == name)
        .then(|| name.to_string())
}

fn collection(kind: ComputeKind) -> &'static str {
    match kind {
        ComputeKind::Network => "networks",
        ComputeKind::Subnetwork => "subnetworks",
        ComputeKind::Router => "routers",
    }
}

fn not_found(path: &str) -> GoogleError {
    GoogleError::not_found(format!("The resource '{path}' was not found"))
}

fn in_use(path: &str, by: &str) -> GoogleError {
    let mut e = GoogleError::invalid(format!(
        "The {} resource '{path}' is already being used by '{by}'",
        path.split('/')
            .nth(3)
            .unwrap_or("resource")
            .trim_end_matches('s')
    ));
    e.reason = Some("resourceInUseByAnotherResource");
    e
}

/// A network reference (full URL, `projects/p/global/networks/n` or `global/networks/n`) as
/// the key of an existing network.
fn network_key(st: &State, project: &str, reference: &str) -> Result<String, GoogleError> {
    let name = last_segment(reference);
    let key = format!("{project}/{name}");
    if st.networks.contains_key(&key) {
        Ok(key)
    } else {
        Err(GoogleError::not_found(format!(
            "The resource 'projects/{project}/global/networks/{name}' was not found"
        )))
    }
}

impl Gke {
    /// Serves one Compute call.
    pub(super) async fn compute_call(
        &self,
        call: Call,
        t: &Target,
        body: Value,
        query: &std::collections::HashMap<String, String>,
    ) -> Result<Value, GoogleError> {
        match call {
            Call::GetRegion => region(&t.project, &t.name),
            Call::ListZones => zones(&t.project, query.get("filter").map(String::as_str)),
            Call::Insert(kind) => self.compute_insert(kind, t, body),
            Call::Get(kind) => {
                let st = self.lock();
                st.compute(kind)
                    .get(&t.key())
                    .cloned()
                    .ok_or_else(|| not_found(&t.path(collection(kind))))
            }
            Call::Delete(kind) => self.compute_delete(kind, t),
            Call::Patch(kind) => self.compute_patch(kind, t, body),
            Call::GetGroup => self.group(t, |c, p, zone| {
                let serving = p.serving().filter(|i| i.zone == zone).count();
                let leaving = p
                    .instances
                    .iter()
                    .filter(|i| i.zone == zone && i.leaving_at.is_some())
                    .count();
                json!({
                    "kind": "compute#instanceGroupManager",
                    "name": p.group_name(&c.name, zone),
                    "zone": format!("{COMPUTE}/projects/{}/zones/{zone}", c.project),
                    "selfLink": render::group_url(c, p, zone),
                    "baseInstanceName": p.base_name(&c.name, zone),
                    "targetSize": p.per_zone,
                    "currentActions": { "none": serving, "deleting": leaving, "creating": 0 },
                    "status": { "isStable": leaving == 0 },
                })
            }),
            Call::ListManagedInstances => {
                let max = query
                    .get("maxResults")
                    .and_then(|m| m.parse::<usize>().ok())
                    .filter(|m| *m > 0)
                    .unwrap_or(500);
                let start = query
                    .get("pageToken")
                    .and_then(|p| p.parse::<usize>().ok())
                    .unwrap_or(0);
                self.group(t, |c, p, zone| {
                    let all: Vec<Value> = p
                        .instances
                        .iter()
                        .filter(|i| i.zone == zone)
                        .map(|i| {
                            let leaving = i.leaving_at.is_some();
                            json!({
                                "instance": format!("{COMPUTE}/projects/{}/zones/{zone}/instances/{}", c.project, i.name),
                                "id": i.id.to_string(),
                                "name": i.name,
                                "instanceStatus": if leaving { "STOPPING" } else { "RUNNING" },
                                "currentAction": if leaving { "DELETING" } else { "NONE" },
                            })
                        })
                        .collect();
                    let page: Vec<Value> = all.iter().skip(start).take(max).cloned().collect();
                    let mut out = json!({ "managedInstances": page });
                    if start + max < all.len() {
                        out["nextPageToken"] = json!((start + max).to_string());
                    }
                    out
                })
            }
            Call::GetOperation(waiting) => {
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let op = {
                        let st = self.lock();
                        st.operations
                            .get(&t.name)
                            .filter(|o| matches!(&o.scope, Scope::Compute { place } if *place == t.place))
                            .filter(|o| o.project == t.project)
                            .cloned()
                    };
                    let Some(op) = op else {
                        return Err(not_found(&format!(
                            "projects/{}/{}/operations/{}",
                            t.project,
                            t.place.as_deref().unwrap_or("global"),
                            t.name
                        )));
                    };
                    if !waiting || op.status == OpStatus::Done || Instant::now() >= deadline {
                        return Ok(render::compute_operation(&op));
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// Answers from the node pool behind an instance group manager.
    fn group(
        &self,
        t: &Target,
        f: impl FnOnce(&super::state::Cluster, &super::state::NodePool, &str) -> Value,
    ) -> Result<Value, GoogleError> {
        let zone = t
            .place
            .as_deref()
            .and_then(|p| p.strip_prefix("zones/"))
            .unwrap_or_default();
        let st = self.lock();
        for c in st.clusters.values().filter(|c| c.project == t.project) {
            for p in &c.pools {
                if p.zones.iter().any(|z| z == zone) && p.group_name(&c.name, zone) == t.name {
                    return Ok(f(c, p, zone));
                }
            }
        }
        Err(not_found(&format!(
            "projects/{}/zones/{zone}/instanceGroupManagers/{}",
            t.project, t.name
        )))
    }

    fn compute_op(
        &self,
        st: &mut State,
        t: &Target,
        kind: &'static str,
        target_link: String,
        effect: Effect,
    ) -> Value {
        let delay = Delays::duration(self.kit.timing().addon.create);
        let now = Instant::now();
        let name = format!(
            "operation-{}-{}-{}-{}",
            jiff::Timestamp::now().as_millisecond(),
            hex(13),
            hex(8),
            hex(8)
        );
        let op = Operation {
            name: name.clone(),
            project: t.project.clone(),
            location: t.place.clone().unwrap_or_else(|| "global".into()),
            kind,
            target_link,
            scope: Scope::Compute {
                place: t.place.clone(),
            },
            status: OpStatus::Pending,
            start_time: now_rfc3339(),
            end_time: None,
            running_at: now + (delay / 4).min(Duration::from_millis(200)),
            done_at: now + delay,
            held: false,
            error: None,
            effect: Some(effect),
        };
        let rendered = render::compute_operation(&op);
        st.operations.insert(name, op);
        rendered
    }

    fn compute_insert(
        &self,
        kind: ComputeKind,
        t: &Target,
        mut body: Value,
    ) -> Result<Value, GoogleError> {
        let name = str_of(&body, "name").to_string();
        validate::compute_name(&name)?;
        let t = Target {
            name: name.clone(),
            ..t.clone()
        };
        let mut st = self.lock();
        let key = t.key();
        let path = t.path(collection(kind));
        let pending = st.operations.values().any(|o| {
            matches!(&o.effect, Some(Effect::ComputeInsert(k, pending_key, _)) if *k == kind && *pending_key == key)
        });
        if st.compute(kind).contains_key(&key) || pending {
            return Err(GoogleError::already_exists(format!(
                "The resource '{path}' already exists"
            )));
        }
        let self_link = format!("{COMPUTE}/{path}");
        match kind {
            ComputeKind::Network => {
                if body.get("autoCreateSubnetworks").is_none_or(Value::is_null) {
                    return Err(GoogleError::invalid(
                        "Invalid value for field 'resource.autoCreateSubnetworks': ''. It must be \
                         set: legacy networks are not supported.",
                    ));
                }
                let mtu = int_of(&body, "mtu");
                if mtu != 0 && !(1300..=8896).contains(&mtu) {
                    return Err(GoogleError::invalid(format!(
                        "Invalid value for field 'resource.mtu': '{mtu}'. Must be between 1300 and 8896."
                    )));
                }
                if mtu == 0 {
                    body["mtu"] = json!(1460);
                }
                if body["routingConfig"]["routingMode"].is_null() {
                    body["routingConfig"]["routingMode"] = json!("REGIONAL");
                }
                body["subnetworks"] = json!([]);
                body["kind"] = json!("compute#network");
            }
            ComputeKind::Subnetwork => {
                let net_key = network_key(&st, &t.project, str_of(&body, "network"))?;
                let primary = validate::cidr("resource.ipCidrRange", str_of(&body, "ipCidrRange"))?;
                let mut blocks = vec![("primary".to_string(), primary)];
                let mut names = std::collections::BTreeSet::new();
                for r in body["secondaryIpRanges"].as_array().into_iter().flatten() {
                    let range_name = str_of(r, "rangeName");
                    validate::compute_name(range_name)?;
                    if !names.insert(range_name.to_string()) {
                        return Err(GoogleError::invalid(format!(
                            "Invalid value for field 'resource.secondaryIpRanges': secondary range name '{range_name}' is used twice."
                        )));
                    }
                    let block = validate::cidr(
                        "resource.secondaryIpRanges.ipCidrRange",
                        str_of(r, "ipCidrRange"),
                    )?;
                    blocks.push((range_name.to_string(), block));
                }
                for (i, (a_name, a)) in blocks.iter().enumerate() {
                    for (b_name, b) in &blocks[i + 1..] {
                        if validate::overlaps(*a, *b) {
                            return Err(GoogleError::invalid(format!(
                                "Invalid IPCidrRange: the ranges '{a_name}' and '{b_name}' of subnetwork '{name}' overlap."
                            )));
                        }
                    }
                }
                let net_name = last_segment(&net_key).to_string();
                for (other, s) in &st.subnetworks {
                    if last_segment(str_of(s, "network")) != net_name
                        || !other.starts_with(&format!("{}/", t.project))
                    {
                        continue;
                    }
                    let theirs = std::iter::once(str_of(s, "ipCidrRange")).chain(
                        s["secondaryIpRanges"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|r| str_of(r, "ipCidrRange")),
                    );
                    for text in theirs {
                        if let Ok(block) = validate::cidr("x", text)
                            && blocks.iter().any(|(_, b)| validate::overlaps(*b, block))
                        {
                            return Err(GoogleError::invalid(format!(
                                "Invalid IPCidrRange: {text} conflicts with existing subnetwork '{}' in region '{}'.",
                                str_of(s, "name"),
                                t.region()
                            )));
                        }
                    }
                }
                body["network"] = json!(format!(
                    "{COMPUTE}/projects/{}/global/networks/{net_name}",
                    t.project
                ));
                body["region"] = json!(format!(
                    "{COMPUTE}/projects/{}/regions/{}",
                    t.project,
                    t.region()
                ));
                body["gatewayAddress"] = json!(std::net::Ipv4Addr::from(primary.0 + 1).to_string());
                body["kind"] = json!("compute#subnetwork");
                body["fingerprint"] = json!(hex(16));
                if body["stackType"].is_null() {
                    body["stackType"] = json!("IPV4_ONLY");
                }
            }
            ComputeKind::Router => {
                let net_key = network_key(&st, &t.project, str_of(&body, "network"))?;
                for nat in body["nats"].as_array().into_iter().flatten() {
                    validate::compute_name(str_of(nat, "name"))?;
                    let alloc = str_of(nat, "natIpAllocateOption");
                    if !["AUTO_ONLY", "MANUAL_ONLY"].contains(&alloc) {
                        return Err(GoogleError::invalid(format!(
                            "Invalid value for field 'resource.nats[0].natIpAllocateOption': '{alloc}'. Must be AUTO_ONLY or MANUAL_ONLY."
                        )));
                    }
                    let ranges = str_of(nat, "sourceSubnetworkIpRangesToNat");
                    if ![
                        "ALL_SUBNETWORKS_ALL_IP_RANGES",
                        "ALL_SUBNETWORKS_ALL_PRIMARY_IP_RANGES",
                        "LIST_OF_SUBNETWORKS",
                    ]
                    .contains(&ranges)
                    {
                        return Err(GoogleError::invalid(format!(
                            "Invalid value for field 'resource.nats[0].sourceSubnetworkIpRangesToNat': '{ranges}'."
                        )));
                    }
                }
                let net_name = last_segment(&net_key).to_string();
                body["network"] = json!(format!(
                    "{COMPUTE}/projects/{}/global/networks/{net_name}",
                    t.project
                ));
                body["region"] = json!(format!(
                    "{COMPUTE}/projects/{}/regions/{}",
                    t.project,
                    t.region()
                ));
                body["kind"] = json!("compute#router");
            }
        }
        body["id"] = json!(numeric_id().to_string());
        body["selfLink"] = json!(self_link);
        body["creationTimestamp"] = json!(now_rfc3339());
        Ok(self.compute_op(
            &mut st,
            &t,
            "insert",
            self_link,
            Effect::ComputeInsert(kind, key, body),
        ))
    }

    fn compute_delete(&self, kind: ComputeKind, t: &Target) -> Result<Value, GoogleError> {
        let mut st = self.lock();
        let key = t.key();
        let path = t.path(collection(kind));
        let resource = st.compute(kind).get(&key).ok_or_else(|| not_found(&path))?;
        let self_link = str_of(resource, "selfLink").to_string();
        match kind {
            ComputeKind::Network => {
                let users = st
                    .subnetworks
                    .values()
                    .chain(st.routers.values())
                    .find(|s| {
                        last_segment(str_of(s, "network")) == t.name
                            && str_of(s, "selfLink").contains(&format!("/projects/{}/", t.project))
                    });
                if let Some(user) = users {
                    let by = str_of(user, "selfLink")
                        .trim_start_matches(&format!("{COMPUTE}/"))
                        .to_string();
                    return Err(in_use(&path, &by));
                }
                if let Some(c) = st.clusters.values().find(|c| {
                    c.project == t.project && last_segment(str_of(&c.spec, "network")) == t.name
                }) {
                    return Err(in_use(
                        &path,
                        &format!(
                            "projects/{}/locations/{}/clusters/{}",
                            c.project, c.location, c.name
                        ),
                    ));
                }
            }
            ComputeKind::Subnetwork => {
                if let Some(c) = st.clusters.values().find(|c| {
                    c.project == t.project
                        && c.region() == t.region()
                        && last_segment(str_of(&c.spec, "subnetwork")) == t.name
                }) {
                    return Err(in_use(
                        &path,
                        &format!(
                            "projects/{}/locations/{}/clusters/{}",
                            c.project, c.location, c.name
                        ),
                    ));
                }
            }
            ComputeKind::Router => {}
        }
        Ok(self.compute_op(
            &mut st,
            t,
            "delete",
            self_link,
            Effect::ComputeDelete(kind, key),
        ))
    }

    fn compute_patch(
        &self,
        kind: ComputeKind,
        t: &Target,
        body: Value,
    ) -> Result<Value, GoogleError> {
        let mut st = self.lock();
        let key = t.key();
        let path = t.path(collection(kind));
        let current = st.compute(kind).get(&key).ok_or_else(|| not_found(&path))?;
        if kind == ComputeKind::Subnetwork
            && str_of(&body, "fingerprint") != str_of(current, "fingerprint")
        {
            let mut e = GoogleError::invalid(format!(
                "Invalid value for field 'resource.fingerprint': '{}'. Supplied fingerprint does not match current metadata fingerprint.",
                str_of(&body, "fingerprint")
            ));
            e.http = axum::http::StatusCode::PRECONDITION_FAILED;
            e.status = "FAILED_PRECONDITION";
            e.reason = Some("conditionNotMet");
            return Err(e);
        }
        if kind == ComputeKind::Network {
            return Err(GoogleError::unimplemented("networks.patch"));
        }
        let mut next = current.clone();
        for (k, v) in body.as_object().into_iter().flatten() {
            if [
                "name",
                "selfLink",
                "id",
                "kind",
                "network",
                "region",
                "creationTimestamp",
                "fingerprint",
                "ipCidrRange",
            ]
            .contains(&k.as_str())
            {
                continue;
            }
            next[k] = v.clone();
        }
        if kind == ComputeKind::Subnetwork {
            next["fingerprint"] = json!(hex(16));
        }
        let self_link = str_of(current, "selfLink").to_string();
        Ok(self.compute_op(
            &mut st,
            t,
            "patch",
            self_link,
            Effect::ComputePatch(kind, key, next),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(filter: Option<&str>) -> Vec<String> {
        zones("p", filter).unwrap()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|z| z["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn zones_are_listed_by_compute_s_legacy_filter() {
        let link = region_link("p", "us-central1");
        let central = ["us-central1-a", "us-central1-b", "us-central1-c"];
        assert_eq!(names(Some(&format!("region eq {link}"))), central);
        assert_eq!(
            names(Some(&format!("(region eq \"{link}\") (status eq UP)"))),
            central
        );
        assert_eq!(
            names(Some("(region eq us-central1) (name ne us-central1-b)")),
            ["us-central1-a", "us-central1-c"]
        );
        assert!(names(Some("(region eq us-central1) (status eq DOWN)")).is_empty());
        assert_eq!(names(None).len(), LISTED_REGIONS.len() * 3);
        assert!(zones("p", Some("region = us-central1")).is_err());
        assert!(zones("p", Some("zone eq us-central1-a")).is_err());
        assert!(region("p", "us-central1").is_ok());
        assert!(region("p", "us-central1-a").is_err(), "a zone is no region");
    }
}
