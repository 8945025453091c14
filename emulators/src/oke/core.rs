//! Core Services (`/20160918`), the networking an infra-cluster-owned OKE network needs: VCNs
//! (each with its default route table and security list), subnets, internet, NAT and service
//! gateways, route tables, security lists; the Oracle Services Network's services; and the
//! compute instances behind node pools (read only).
//!
//! Creates answer 200 with the resource `PROVISIONING`; it is `AVAILABLE` after the kit's
//! `addon` delay. Deletes answer 204 and the resource is `TERMINATING`, then `TERMINATED` (still
//! readable and listed for a while), then gone. What OCI refuses is refused: blocks outside the
//! VCN or overlapping a sibling, a second internet, NAT or service gateway in one VCN, a route to
//! a gateway of another VCN, deleting a VCN that still holds resources, a subnet in use, a
//! gateway a route table names, a route table or security list a subnet uses, or a VCN's
//! defaults.

use std::collections::BTreeMap;

use contract::cidr;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::{Answer, Req, required, str_field, tags};
use super::error::OciError;
use super::state::{CoreKind, CoreResource, State};
use super::{Oke, new_etag, now_rfc3339};
use crate::kit::lifecycle::Delays;

/// The Oracle Services Network's services in the emulated region: `(name, cidrBlock, description)`.
pub fn services(region_key: &str) -> Vec<Value> {
    let key = region_key.to_ascii_uppercase();
    let lower = region_key.to_ascii_lowercase();
    vec![
        json!({
            "id": format!("ocid1.service.oc1.{lower}.aaaaaaaaallservicesinoracleservicesnetwork000000000000"),
            "name": format!("All {key} Services In Oracle Services Network"),
            "cidrBlock": format!("all-{lower}-services-in-oracle-services-network"),
            "description": "All services in the Oracle Services Network in the region",
        }),
        json!({
            "id": format!("ocid1.service.oc1.{lower}.aaaaaaaaobjectstorage0000000000000000000000000000000000"),
            "name": format!("OCI {key} Object Storage"),
            "cidrBlock": format!("oci-{lower}-objectstorage"),
            "description": "Object Storage",
        }),
    ]
}

/// `(base, prefix)` of an IPv4 CIDR block whose host bits are clear.
pub fn parse_cidr(text: &str) -> Option<cidr::Block> {
    cidr::parse("", text, "").ok()
}

fn check_dns_label(label: Option<&str>) -> Result<(), OciError> {
    if let Some(l) = label {
        let ok = (1..=15).contains(&l.len())
            && l.starts_with(|c: char| c.is_ascii_alphabetic())
            && l.chars().all(|c| c.is_ascii_alphanumeric());
        if !ok {
            return Err(OciError::invalid(format!(
                "dnsLabel {l:?} must be 1 to 15 letters and digits, starting with a letter"
            )));
        }
    }
    Ok(())
}

fn check_rules(body: &Value, field: &str, peer: &str) -> Result<Value, OciError> {
    let rules = match &body[field] {
        Value::Null => return Ok(json!([])),
        Value::Array(a) => a,
        _ => return Err(OciError::invalid(format!("{field} must be a list"))),
    };
    for (i, r) in rules.iter().enumerate() {
        let protocol = r["protocol"].as_str().unwrap_or_default();
        if !matches!(protocol, "all" | "1" | "6" | "17" | "58") {
            return Err(OciError::invalid(format!(
                "{field}[{i}].protocol {protocol:?} must be all, 1 (ICMP), 6 (TCP), 17 (UDP) or 58 (ICMPv6)"
            )));
        }
        let address = r[peer].as_str().unwrap_or_default();
        let kind = r[format!("{peer}Type")].as_str().unwrap_or("CIDR_BLOCK");
        if kind == "CIDR_BLOCK" && parse_cidr(address).is_none() {
            return Err(OciError::invalid(format!(
                "{field}[{i}].{peer} {address:?} is not a CIDR block"
            )));
        }
    }
    Ok(Value::Array(rules.clone()))
}

impl Oke {
    fn core_delay(&self) -> std::time::Duration {
        Delays::duration(self.kit.timing().addon.create)
    }

    /// Whether `id` is a compartment of the tenancy (the tenancy itself is the root one).
    pub(super) fn known_compartment(&self, id: &str) -> bool {
        id == self.config.tenancy || self.config.compartments.iter().any(|c| c == id)
    }

    /// The `compartmentId` a list names, which OCI requires and must know.
    pub(super) fn listed_compartment<'r>(&self, req: &'r Req) -> Result<&'r str, OciError> {
        let compartment = req
            .param("compartmentId")
            .ok_or_else(|| OciError::missing("compartmentId"))?;
        if !self.known_compartment(compartment) {
            return Err(OciError::not_found(format!("compartment {compartment}")));
        }
        Ok(compartment)
    }

    pub(super) fn check_compartment(&self, body: &Value) -> Result<String, OciError> {
        let compartment = required(body, "compartmentId")?;
        if !self.known_compartment(compartment) {
            return Err(OciError::not_found(format!("compartment {compartment}")));
        }
        Ok(compartment.to_string())
    }

    /// `POST /20160918/<collection>`.
    pub(super) fn core_create(&self, kind: CoreKind, req: &Req) -> Result<Answer, OciError> {
        let body = &req.body;
        let compartment = self.check_compartment(body)?;
        let fingerprint = crate::kit::idempotency::fingerprint(body, "");
        let scope = format!("Create{}", kind.name());
        let token = req.retry_token();
        if let Some(t) = &token {
            match self.tokens.check(&scope, t, &fingerprint) {
                crate::kit::idempotency::Replay::Same(id) => {
                    let st = self.lock();
                    if let Some(r) = st.core.get(&id) {
                        return Ok(Answer::json(200, r.body.clone()).etag(&r.etag));
                    }
                }
                crate::kit::idempotency::Replay::Mismatch => {
                    return Err(OciError::conflict(
                        "The opc-retry-token was used for a request with different parameters",
                    ));
                }
                crate::kit::idempotency::Replay::New => {}
            }
        }
        let now = now_rfc3339();
        let mut st = self.lock();
        let id = self.ocid(kind.ocid_type());
        let common = json!({
            "id": id,
            "compartmentId": compartment,
            "displayName": str_field(body, "displayName").map_or_else(|| format!("{}{}", kind.ocid_type(), &id[id.len() - 8..]), String::from),
            "freeformTags": tags(body, "freeformTags")?,
            "definedTags": tags(body, "definedTags")?,
            "lifecycleState": "PROVISIONING",
            "timeCreated": now,
        });
        let mut resource = common;
        let mut extra: Vec<CoreResource> = Vec::new();
        match kind {
            CoreKind::Vcn => {
                let blocks: Vec<String> = match (&body["cidrBlocks"], str_field(body, "cidrBlock"))
                {
                    (Value::Array(a), _) if !a.is_empty() => a
                        .iter()
                        .enumerate()
                        .map(|(i, b)| {
                            b.as_str().map(String::from).ok_or_else(|| {
                                OciError::invalid(format!("cidrBlocks[{i}] must be a string"))
                            })
                        })
                        .collect::<Result<_, _>>()?,
                    (_, Some(b)) => vec![b.to_string()],
                    _ => return Err(OciError::missing("cidrBlock")),
                };
                for b in &blocks {
                    match parse_cidr(b) {
                        Some((_, p)) if (16..=30).contains(&p) => {}
                        _ => {
                            return Err(OciError::invalid(format!(
                                "The CIDR block {b} is not valid for a VCN: it must be an IPv4 block from /16 to /30 without host bits set"
                            )));
                        }
                    }
                }
                check_dns_label(str_field(body, "dnsLabel"))?;
                let rt = self.ocid("routetable");
                let sl = self.ocid("securitylist");
                resource["cidrBlock"] = json!(blocks[0]);
                resource["cidrBlocks"] = json!(blocks);
                resource["dnsLabel"] = body["dnsLabel"].clone();
                if let Some(l) = str_field(body, "dnsLabel") {
                    resource["vcnDomainName"] = json!(format!("{l}.oraclevcn.com"));
                }
                resource["defaultRouteTableId"] = json!(rt);
                resource["defaultSecurityListId"] = json!(sl);
                resource["defaultDhcpOptionsId"] = json!(self.ocid("dhcpoptions"));
                let default_of = |kind: CoreKind, id: &str, name: &str, rules: Value| {
                    let mut b = json!({
                        "id": id,
                        "compartmentId": compartment,
                        "vcnId": resource["id"],
                        "displayName": format!("Default {name} for {}", resource["displayName"].as_str().unwrap_or_default()),
                        "freeformTags": {},
                        "definedTags": {},
                        "lifecycleState": "AVAILABLE",
                        "timeCreated": now,
                    });
                    if let (Some(o), Value::Object(r)) = (b.as_object_mut(), rules) {
                        o.extend(r);
                    }
                    CoreResource {
                        kind,
                        body: b,
                        etag: new_etag(),
                        due: None,
                        forget_at: None,
                    }
                };
                extra.push(default_of(
                    CoreKind::RouteTable,
                    &rt,
                    "Route Table",
                    json!({ "routeRules": [] }),
                ));
                extra.push(default_of(
                    CoreKind::SecurityList,
                    &sl,
                    "Security List",
                    json!({
                        "ingressSecurityRules": [{"protocol": "6", "source": "0.0.0.0/0", "isStateless": false, "tcpOptions": {"destinationPortRange": {"min": 22, "max": 22}}}],
                        "egressSecurityRules": [{"protocol": "all", "destination": "0.0.0.0/0", "isStateless": false}],
                    }),
                ));
            }
            CoreKind::Subnet => {
                let vcn = self.vcn_for(&st, body)?;
                let block = required(body, "cidrBlock")?;
                let cidr = parse_cidr(block).ok_or_else(|| {
                    OciError::invalid(format!("The CIDR block {block} is not a valid IPv4 block"))
                })?;
                let vcn_blocks: Vec<(u32, u8)> = vcn.body["cidrBlocks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b.as_str().and_then(parse_cidr))
                    .collect();
                if !vcn_blocks.iter().any(|v| cidr::within(cidr, *v)) {
                    return Err(OciError::invalid(format!(
                        "The requested CIDR {block} is invalid: subnet CIDR is not within the VCN's CIDR blocks"
                    )));
                }
                if cidr.1 > 30 {
                    return Err(OciError::invalid(format!(
                        "The requested CIDR {block} is invalid: a subnet is at most a /30"
                    )));
                }
                let vcn_id = vcn.id().to_string();
                if let Some(other) = st.core.values().find(|r| {
                    r.kind == CoreKind::Subnet
                        && !r.terminating()
                        && r.vcn() == vcn_id
                        && r.body["cidrBlock"]
                            .as_str()
                            .and_then(parse_cidr)
                            .is_some_and(|c| cidr::overlap(c, cidr))
                }) {
                    return Err(OciError::invalid(format!(
                        "The requested CIDR {block} is invalid: subnet {} with CIDR {} overlaps with this CIDR",
                        other.id(),
                        other.body["cidrBlock"].as_str().unwrap_or_default()
                    )));
                }
                check_dns_label(str_field(body, "dnsLabel"))?;
                let route_table = match str_field(body, "routeTableId") {
                    Some(rt) => {
                        self.in_vcn(&st, CoreKind::RouteTable, rt, &vcn_id)?;
                        rt.to_string()
                    }
                    None => vcn.body["defaultRouteTableId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                };
                let lists: Vec<String> = match &body["securityListIds"] {
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect(),
                    _ => vec![
                        vcn.body["defaultSecurityListId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    ],
                };
                if lists.len() > 5 {
                    return Err(OciError::invalid("A subnet takes at most 5 security lists"));
                }
                for l in &lists {
                    self.in_vcn(&st, CoreKind::SecurityList, l, &vcn_id)?;
                }
                if let Some(ad) = str_field(body, "availabilityDomain")
                    && !self.availability_domains().iter().any(|a| a == ad)
                {
                    return Err(OciError::invalid(format!(
                        "availabilityDomain {ad} does not exist in {}",
                        self.config.region
                    )));
                }
                resource["vcnId"] = json!(vcn_id);
                resource["cidrBlock"] = json!(block);
                resource["availabilityDomain"] = body["availabilityDomain"].clone();
                resource["dnsLabel"] = body["dnsLabel"].clone();
                // The two fields are one setting; either makes the subnet private.
                let private = body["prohibitPublicIpOnVnic"] == true
                    || body["prohibitInternetIngress"] == true;
                resource["prohibitPublicIpOnVnic"] = json!(private);
                resource["prohibitInternetIngress"] = json!(private);
                resource["routeTableId"] = json!(route_table);
                resource["securityListIds"] = json!(lists);
                resource["dhcpOptionsId"] = vcn.body["defaultDhcpOptionsId"].clone();
                let base = cidr.0;
                resource["virtualRouterIp"] = json!(std::net::Ipv4Addr::from(base + 1).to_string());
            }
            CoreKind::InternetGateway | CoreKind::NatGateway | CoreKind::ServiceGateway => {
                let vcn = self.vcn_for(&st, body)?;
                let vcn_id = vcn.id().to_string();
                if st
                    .core
                    .values()
                    .any(|r| r.kind == kind && !r.terminating() && r.vcn() == vcn_id)
                {
                    return Err(OciError::limit(format!(
                        "The VCN {vcn_id} already has a{} {}; a VCN may have only one",
                        if kind == CoreKind::InternetGateway {
                            "n"
                        } else {
                            ""
                        },
                        kind.name()
                    )));
                }
                resource["vcnId"] = json!(vcn_id);
                match kind {
                    CoreKind::InternetGateway => {
                        let enabled = body["isEnabled"]
                            .as_bool()
                            .ok_or_else(|| OciError::missing("isEnabled"))?;
                        resource["isEnabled"] = json!(enabled);
                    }
                    CoreKind::NatGateway => {
                        resource["blockTraffic"] =
                            json!(body["blockTraffic"].as_bool().unwrap_or(false));
                        resource["natIp"] = json!(format!(
                            "129.213.{}.{}",
                            st.core.len() % 250,
                            10 + st.core.len() % 200
                        ));
                    }
                    _ => {
                        let known = services(self.region_key());
                        let wanted = body["services"].as_array().cloned().unwrap_or_default();
                        let mut chosen = Vec::new();
                        for s in &wanted {
                            let id = s["serviceId"].as_str().unwrap_or_default();
                            let Some(svc) = known.iter().find(|k| k["id"] == id) else {
                                return Err(OciError::invalid(format!(
                                    "services: {id:?} is not a service of the Oracle Services Network in {}",
                                    self.config.region
                                )));
                            };
                            chosen.push(json!({ "serviceId": id, "serviceName": svc["name"] }));
                        }
                        resource["services"] = json!(chosen);
                        resource["blockTraffic"] = json!(false);
                    }
                }
            }
            CoreKind::RouteTable => {
                let vcn = self.vcn_for(&st, body)?;
                let vcn_id = vcn.id().to_string();
                resource["vcnId"] = json!(vcn_id);
                resource["routeRules"] = self.check_routes(&st, body, &vcn_id)?;
            }
            CoreKind::SecurityList => {
                let vcn = self.vcn_for(&st, body)?;
                resource["vcnId"] = json!(vcn.id());
                resource["ingressSecurityRules"] =
                    check_rules(body, "ingressSecurityRules", "source")?;
                resource["egressSecurityRules"] =
                    check_rules(body, "egressSecurityRules", "destination")?;
            }
        }
        let created = CoreResource {
            kind,
            body: resource,
            etag: new_etag(),
            due: Some(Instant::now() + self.core_delay()),
            forget_at: None,
        };
        let answer = Answer::json(200, created.body.clone()).etag(&created.etag);
        if let Some(t) = &token {
            self.tokens.remember(&scope, t, &fingerprint, created.id());
        }
        for e in extra {
            st.core.insert(e.id().to_string(), e);
        }
        st.core.insert(created.id().to_string(), created);
        Ok(answer)
    }

    fn vcn_for<'s>(&self, st: &'s State, body: &Value) -> Result<&'s CoreResource, OciError> {
        let vcn = required(body, "vcnId")?;
        st.live(CoreKind::Vcn, vcn)
            .ok_or_else(|| OciError::not_found(format!("VCN {vcn}")))
    }

    fn in_vcn(&self, st: &State, kind: CoreKind, id: &str, vcn: &str) -> Result<(), OciError> {
        match st.live(kind, id) {
            None => Err(OciError::not_found(format!("{} {id}", kind.name()))),
            Some(r) if r.vcn() != vcn => Err(OciError::invalid(format!(
                "{} {id} belongs to VCN {}, not {vcn}",
                kind.name(),
                r.vcn()
            ))),
            Some(_) => Ok(()),
        }
    }

    fn check_routes(&self, st: &State, body: &Value, vcn: &str) -> Result<Value, OciError> {
        let rules = match &body["routeRules"] {
            Value::Null => return Ok(json!([])),
            Value::Array(a) => a.clone(),
            _ => return Err(OciError::invalid("routeRules must be a list")),
        };
        let mut out = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let target = r["networkEntityId"].as_str().unwrap_or_default();
            let destination = r["destination"]
                .as_str()
                .or_else(|| r["cidrBlock"].as_str())
                .unwrap_or_default();
            let kind = r["destinationType"].as_str().unwrap_or("CIDR_BLOCK");
            let Some(entity) = st.core.get(target).filter(|e| !e.terminating()) else {
                return Err(OciError::not_found(format!(
                    "routeRules[{i}].networkEntityId {target}"
                )));
            };
            if entity.vcn() != vcn {
                return Err(OciError::invalid(format!(
                    "routeRules[{i}]: the route target {target} is in another VCN"
                )));
            }
            match (kind, entity.kind) {
                ("SERVICE_CIDR_BLOCK", CoreKind::ServiceGateway) => {
                    if !services(self.region_key())
                        .iter()
                        .any(|s| s["cidrBlock"] == destination)
                    {
                        return Err(OciError::invalid(format!(
                            "routeRules[{i}].destination {destination:?} is not a service CIDR label"
                        )));
                    }
                }
                ("SERVICE_CIDR_BLOCK", _) | (_, CoreKind::ServiceGateway) => {
                    return Err(OciError::invalid(format!(
                        "routeRules[{i}]: a service gateway takes routes whose destinationType is SERVICE_CIDR_BLOCK, and only a service gateway does"
                    )));
                }
                ("CIDR_BLOCK", CoreKind::InternetGateway | CoreKind::NatGateway) => {
                    if parse_cidr(destination).is_none() {
                        return Err(OciError::invalid(format!(
                            "routeRules[{i}].destination {destination:?} is not a CIDR block"
                        )));
                    }
                }
                _ => {
                    return Err(OciError::invalid(format!(
                        "routeRules[{i}]: {} {target} cannot be a route target",
                        entity.kind.name()
                    )));
                }
            }
            out.push(json!({
                "destination": destination,
                "destinationType": kind,
                "networkEntityId": target,
                "description": r["description"],
                "routeType": "STATIC",
            }));
        }
        let has_igw = out.iter().any(|r| {
            st.live(
                CoreKind::InternetGateway,
                r["networkEntityId"].as_str().unwrap_or_default(),
            )
            .is_some()
        });
        let has_nat = out.iter().any(|r| {
            st.live(
                CoreKind::NatGateway,
                r["networkEntityId"].as_str().unwrap_or_default(),
            )
            .is_some()
        });
        if has_igw && has_nat {
            return Err(OciError::invalid(
                "A route table cannot route to both an internet gateway and a NAT gateway: subnets using the internet gateway are public, those using the NAT gateway private",
            ));
        }
        Ok(Value::Array(out))
    }

    /// `GET /20160918/<collection>/<id>`.
    pub(super) fn core_get(&self, kind: CoreKind, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let r = st
            .core
            .get(id)
            .filter(|r| r.kind == kind)
            .ok_or_else(|| OciError::not_found(format!("{} {id}", kind.name())))?;
        Ok(Answer::json(200, r.body.clone())
            .etag(&r.etag)
            .gone_if(r.state() == "TERMINATED"))
    }

    /// `GET /20160918/<collection>?compartmentId=…`.
    pub(super) fn core_list(&self, kind: CoreKind, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = st
            .core
            .values()
            .filter(|r| r.kind == kind && r.compartment() == compartment)
            .filter(|r| req.passes("vcnId", r.vcn()))
            .filter(|r| {
                req.passes(
                    "displayName",
                    r.body["displayName"].as_str().unwrap_or_default(),
                )
            })
            .filter(|r| req.passes("lifecycleState", r.state()))
            .map(|r| r.body.clone())
            .collect();
        req.page(items)
    }

    /// `PUT /20160918/<collection>/<id>`: names, tags, and what each kind lets change.
    pub(super) fn core_update(
        &self,
        kind: CoreKind,
        id: &str,
        req: &Req,
    ) -> Result<Answer, OciError> {
        let body = &req.body;
        let mut st = self.lock();
        let current = st
            .core
            .get(id)
            .filter(|r| r.kind == kind)
            .ok_or_else(|| OciError::not_found(format!("{} {id}", kind.name())))?;
        if current.terminating() {
            return Err(OciError::incorrect_state(format!(
                "{} {id} is {}",
                kind.name(),
                current.state()
            )));
        }
        req.check_etag(&current.etag)?;
        let vcn = current.vcn().to_string();
        let mut updated = current.body.clone();
        for field in ["displayName"] {
            if let Some(v) = str_field(body, field) {
                updated[field] = json!(v);
            }
        }
        for field in ["freeformTags", "definedTags"] {
            if !body[field].is_null() {
                updated[field] = tags(body, field)?;
            }
        }
        match kind {
            CoreKind::RouteTable if !body["routeRules"].is_null() => {
                updated["routeRules"] = self.check_routes(&st, body, &vcn)?;
            }
            CoreKind::SecurityList => {
                if !body["ingressSecurityRules"].is_null() {
                    updated["ingressSecurityRules"] =
                        check_rules(body, "ingressSecurityRules", "source")?;
                }
                if !body["egressSecurityRules"].is_null() {
                    updated["egressSecurityRules"] =
                        check_rules(body, "egressSecurityRules", "destination")?;
                }
            }
            CoreKind::Subnet => {
                if let Some(rt) = str_field(body, "routeTableId") {
                    self.in_vcn(&st, CoreKind::RouteTable, rt, &vcn)?;
                    updated["routeTableId"] = json!(rt);
                }
                if let Value::Array(lists) = &body["securityListIds"] {
                    for l in lists {
                        self.in_vcn(
                            &st,
                            CoreKind::SecurityList,
                            l.as_str().unwrap_or_default(),
                            &vcn,
                        )?;
                    }
                    updated["securityListIds"] = json!(lists);
                }
            }
            CoreKind::InternetGateway => {
                if let Some(e) = body["isEnabled"].as_bool() {
                    updated["isEnabled"] = json!(e);
                }
            }
            _ => {}
        }
        let Some(r) = st.core.get_mut(id) else {
            return Err(OciError::not_found(format!("{} {id}", kind.name())));
        };
        r.body = updated;
        r.etag = new_etag();
        Ok(Answer::json(200, r.body.clone()).etag(&r.etag))
    }

    /// `DELETE /20160918/<collection>/<id>`.
    pub(super) fn core_delete(
        &self,
        kind: CoreKind,
        id: &str,
        req: &Req,
    ) -> Result<Answer, OciError> {
        let mut st = self.lock();
        let current = st
            .core
            .get(id)
            .filter(|r| r.kind == kind)
            .ok_or_else(|| OciError::not_found(format!("{} {id}", kind.name())))?;
        if current.terminating() {
            return Ok(Answer::empty(204));
        }
        req.check_etag(&current.etag)?;
        let vcn = current.vcn().to_string();
        let defaults: Vec<String> = st
            .core
            .get(&vcn)
            .map(|v| {
                ["defaultRouteTableId", "defaultSecurityListId"]
                    .iter()
                    .filter_map(|f| v.body[*f].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let refusal = match kind {
            CoreKind::Vcn => st
                .core
                .values()
                .find(|r| {
                    r.kind != CoreKind::Vcn
                        && r.vcn() == id
                        && !r.terminating()
                        && !defaults.iter().any(|d| d == r.id())
                })
                .map(|r| {
                    format!(
                        "The VCN {id} still holds {} {}; delete its subnets, gateways, route tables and security lists first",
                        r.kind.name(),
                        r.id()
                    )
                }),
            CoreKind::Subnet => st.subnet_user(id).map(|user| {
                format!("The subnet {id} is in use by {user}; it cannot be deleted while it is used")
            }),
            CoreKind::RouteTable | CoreKind::SecurityList if defaults.iter().any(|d| d == id) => {
                Some(format!(
                    "{} {id} is the default of VCN {vcn}; it is deleted with the VCN",
                    kind.name()
                ))
            }
            CoreKind::RouteTable | CoreKind::SecurityList => {
                let field = if kind == CoreKind::RouteTable {
                    "routeTableId"
                } else {
                    "securityListIds"
                };
                st.core
                    .values()
                    .find(|s| {
                        s.kind == CoreKind::Subnet
                            && !s.terminating()
                            && (s.body[field] == id
                                || s.body[field]
                                    .as_array()
                                    .is_some_and(|a| a.iter().any(|x| x == id)))
                    })
                    .map(|s| format!("{} {id} is used by subnet {}", kind.name(), s.id()))
            }
            CoreKind::InternetGateway | CoreKind::NatGateway | CoreKind::ServiceGateway => st
                .core
                .values()
                .find(|t| {
                    t.kind == CoreKind::RouteTable
                        && !t.terminating()
                        && t.body["routeRules"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|r| r["networkEntityId"] == id))
                })
                .map(|t| {
                    format!(
                        "Route table {} has a rule that targets {} {id}; remove the rule first",
                        t.id(),
                        kind.name()
                    )
                }),
        };
        if let Some(message) = refusal {
            return Err(OciError::conflict(message));
        }
        let due = Instant::now() + Delays::duration(self.kit.timing().addon.delete);
        let mut going = vec![id.to_string()];
        if kind == CoreKind::Vcn {
            going.extend(defaults);
        }
        for g in going {
            if let Some(r) = st.core.get_mut(&g) {
                r.body["lifecycleState"] = json!("TERMINATING");
                r.etag = new_etag();
                r.due = Some(due);
            }
        }
        Ok(Answer::empty(204))
    }

    /// Moves Core resources through PROVISIONING → AVAILABLE and TERMINATING → TERMINATED → gone.
    pub(super) fn tick_core(&self, st: &mut State, now: Instant) {
        let forget = std::time::Duration::from_secs(30);
        st.core.retain(|_, r| r.forget_at.is_none_or(|at| at > now));
        for r in st.core.values_mut() {
            if r.due.is_some_and(|d| d <= now) {
                r.due = None;
                let next = match r.state() {
                    "PROVISIONING" => "AVAILABLE",
                    "TERMINATING" => {
                        r.forget_at = Some(now + forget);
                        "TERMINATED"
                    }
                    other => other,
                }
                .to_string();
                r.body["lifecycleState"] = json!(next);
                r.etag = new_etag();
            }
        }
    }

    /// `GET /20160918/availabilityDomains?compartmentId=…` (Identity).
    pub(super) fn list_availability_domains(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let items = self
            .availability_domains()
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                json!({
                    "id": format!("ocid1.availabilitydomain.oc1..aaaaaaaaemulatedad{i}"),
                    "name": name,
                    "compartmentId": compartment,
                })
            })
            .collect();
        req.page(items)
    }

    /// `GET /20160918/services`.
    pub(super) fn list_services(&self, req: &Req) -> Result<Answer, OciError> {
        req.page(services(self.region_key()))
    }

    /// The compute instances of node pools, as `ListInstances` and `GetInstance` show them.
    pub(super) fn instance_bodies(&self, st: &State) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for p in st.pools.values() {
            for (i, n) in p.nodes.iter().enumerate() {
                let cluster_short: String = p
                    .cluster
                    .chars()
                    .rev()
                    .take(11)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect();
                let pool_short: String =
                    p.id.chars()
                        .rev()
                        .take(11)
                        .collect::<String>()
                        .chars()
                        .rev()
                        .collect();
                out.insert(
                    n.id.clone(),
                    json!({
                        "id": n.id,
                        "compartmentId": p.compartment,
                        "availabilityDomain": n.availability_domain,
                        "faultDomain": n.fault_domain,
                        "displayName": format!("oke-c{cluster_short}-n{pool_short}-{i}"),
                        "shape": p.shape,
                        "shapeConfig": p.shape_config,
                        "region": self.config.region,
                        "lifecycleState": if n.leaving_at.is_some() { "TERMINATING" } else { "RUNNING" },
                        "timeCreated": n.time_created,
                        "freeformTags": p.node_config["freeformTags"].as_object().cloned().unwrap_or_default(),
                        "definedTags": {},
                        "metadata": { "oke-cluster-id": p.cluster, "oke-nodepool-id": p.id },
                        "sourceDetails": { "sourceType": "image", "imageId": p.source["imageId"] },
                    }),
                );
            }
        }
        out
    }

    /// `GET /20160918/instances?compartmentId=…`.
    pub(super) fn list_instances(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = self
            .instance_bodies(&st)
            .into_values()
            .filter(|i| i["compartmentId"] == compartment)
            .filter(|i| {
                req.passes(
                    "lifecycleState",
                    i["lifecycleState"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20160918/instances/<id>`.
    pub(super) fn get_instance(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        self.instance_bodies(&st)
            .remove(id)
            .map(|b| Answer::json(200, b))
            .ok_or_else(|| OciError::not_found(format!("instance {id}")))
    }
}
