//! Core Services creates: each kind's request checked against its VCN and siblings (CIDR blocks,
//! DNS labels, one gateway of a kind per VCN, routes, rules) and recorded as PROVISIONING.

use contract::cidr;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{check_rules, parse_cidr, services};
use crate::oke::api::{Answer, Req, required, str_field, tags};
use crate::oke::error::OciError;
use crate::oke::state::{CoreKind, CoreResource};
use crate::oke::{Oke, new_etag, now_rfc3339};

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

impl Oke {
    /// `POST /20160918/<collection>`.
    pub(in crate::oke) fn core_create(
        &self,
        kind: CoreKind,
        req: &Req,
    ) -> Result<Answer, OciError> {
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
                // The SDK marks it mandatory: OCI's own prefix, then the block's last three bytes.
                let [_, b, c, d] = base.to_be_bytes();
                resource["virtualRouterMac"] = json!(format!("00:00:17:{b:02X}:{c:02X}:{d:02X}"));
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
}
