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
//!
//! This module holds the reads, the lists, the tick and the checks creates and updates share;
//! [`create`] the creates, [`changes`] the updates and deletes, [`instances`] the node pools'
//! compute instances.

mod changes;
mod create;
mod instances;

use contract::cidr;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::api::{Answer, Req, required};
use super::error::OciError;
use super::state::{CoreKind, CoreResource, State};
use super::{Oke, new_etag};
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

    /// `GET /20160918/faultDomains?compartmentId=…&availabilityDomain=…` (Identity): the three
    /// fault domains of one of the region's availability domains.
    pub(super) fn list_fault_domains(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let ad = req
            .param("availabilityDomain")
            .ok_or_else(|| OciError::missing("availabilityDomain"))?;
        let Some(i) = self.availability_domains().iter().position(|a| a == ad) else {
            return Err(OciError::not_found(format!("availability domain {ad}")));
        };
        let items = crate::oke::catalog::FAULT_DOMAINS
            .iter()
            .enumerate()
            .map(|(f, name)| {
                json!({
                    "id": format!("ocid1.faultdomain.oc1..aaaaaaaaemulatedad{i}fd{f}"),
                    "name": name,
                    "compartmentId": compartment,
                    "availabilityDomain": ad,
                })
            })
            .collect();
        req.page(items)
    }

    /// `GET /20160918/services`.
    pub(super) fn list_services(&self, req: &Req) -> Result<Answer, OciError> {
        req.page(services(self.region_key()))
    }
}
