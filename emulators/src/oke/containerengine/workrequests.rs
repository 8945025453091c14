//! OKE work requests: each one's state, its errors and its log, read and listed.

use serde_json::{Value, json};

use crate::oke::api::{Answer, Req};
use crate::oke::error::OciError;
use crate::oke::state::{State, WorkRequest, WrStatus};
use crate::oke::{Oke, now_rfc3339};

impl Oke {
    fn work_request_body(&self, w: &WorkRequest) -> Value {
        let action = match (w.status, w.operation) {
            (WrStatus::Failed, _) => "FAILED",
            (WrStatus::Accepted | WrStatus::InProgress, _) => "IN_PROGRESS",
            (WrStatus::Succeeded, op) if op.ends_with("_CREATE") => "CREATED",
            (WrStatus::Succeeded, op) if op.ends_with("_DELETE") => "DELETED",
            (WrStatus::Succeeded, _) => "UPDATED",
        };
        let collection = if w.entity.0 == "cluster" {
            "clusters"
        } else {
            "nodePools"
        };
        let mut resources = vec![json!({
            "actionType": action,
            "entityType": w.entity.0,
            "identifier": w.entity.1,
            "entityUri": format!("/{collection}/{}", w.entity.1),
        })];
        if w.entity.0 == "nodepool" {
            resources.push(json!({
                "actionType": "RELATED",
                "entityType": "cluster",
                "identifier": w.cluster,
                "entityUri": format!("/clusters/{}", w.cluster),
            }));
        }
        json!({
            "id": w.id,
            "operationType": w.operation,
            "status": w.status.as_str(),
            "compartmentId": w.compartment,
            "resources": resources,
            "timeAccepted": w.times[0],
            "timeStarted": w.times[1],
            "timeFinished": w.times[2],
        })
    }

    fn work<'s>(&self, st: &'s State, id: &str) -> Result<&'s WorkRequest, OciError> {
        st.work_requests
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("work request {id}")))
    }

    /// `GET /20180222/workRequests/{id}`.
    pub(in crate::oke) fn get_work_request(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let mut answer = Answer::json(200, self.work_request_body(w));
        if matches!(w.status, WrStatus::Accepted | WrStatus::InProgress) {
            answer = answer.header("retry-after", "1".into());
        }
        Ok(answer)
    }

    /// `GET /20180222/workRequests?compartmentId=…&resourceId=…`.
    pub(in crate::oke) fn list_work_requests(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = st
            .work_requests
            .values()
            .filter(|w| w.compartment == compartment)
            .filter(|w| {
                req.passes("resourceId", &w.entity.1) || req.passes("resourceId", &w.cluster)
            })
            .filter(|w| req.passes("status", w.status.as_str()))
            .map(|w| self.work_request_body(w))
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20180222/workRequests/{id}/errors`.
    pub(in crate::oke) fn work_request_errors(
        &self,
        id: &str,
        req: &Req,
    ) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let finished = w.times[2].clone().unwrap_or_else(now_rfc3339);
        let items = w
            .errors
            .iter()
            .map(|e| json!({ "code": e.code, "message": e.message, "timestamp": finished }))
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20180222/workRequests/{id}/logs`.
    pub(in crate::oke) fn work_request_logs(
        &self,
        id: &str,
        req: &Req,
    ) -> Result<Answer, OciError> {
        let st = self.lock();
        let w = self.work(&st, id)?;
        let items = w
            .logs
            .iter()
            .map(|(t, m)| json!({ "message": m, "timestamp": t }))
            .collect();
        drop(st);
        req.page(items)
    }
}
