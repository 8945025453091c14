//! Core Services updates and deletes: what each kind lets change, and the deletes OCI refuses
//! while something still uses the resource.

use serde_json::{Value, json};
use tokio::time::Instant;

use super::check_rules;
use crate::kit::lifecycle::Delays;
use crate::oke::api::{Answer, Req, str_field, tags};
use crate::oke::error::OciError;
use crate::oke::state::CoreKind;
use crate::oke::{Oke, new_etag};

impl Oke {
    /// `PUT /20160918/<collection>/<id>`: names, tags, and what each kind lets change.
    pub(in crate::oke) fn core_update(
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
    pub(in crate::oke) fn core_delete(
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
}
