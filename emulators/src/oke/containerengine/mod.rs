//! Container Engine for Kubernetes (`/20180222`): clusters, node pools, work requests,
//! kubeconfigs and the options OKE offers.
//!
//! Every mutation answers `202 Accepted` with `opc-work-request-id`; the work request moves
//! ACCEPTED → IN_PROGRESS → SUCCEEDED (or FAILED, with its errors and log) and the resource
//! CREATING/UPDATING/DELETING → ACTIVE/DELETED (or FAILED). One work request at a time per
//! cluster or node pool: another change meanwhile is 409 `IncorrectState`. Creates honour
//! `opc-retry-token`; updates and deletes honour `if-match`.
//!
//! [`clusters`] holds the clusters, their kubeconfigs and options, [`nodepools`] the node pools and
//! their options, [`workrequests`] the work requests every mutation answers with; this module the
//! helpers they share.

mod clusters;
mod nodepools;
mod workrequests;

use serde_json::Value;
use tokio::time::Instant;

use super::api::{Answer, Req};
use super::catalog;
use super::error::OciError;
use super::state::{Cluster, CoreKind, Effect, Life, State, WorkRequest, WrStatus};
use super::{Oke, now_rfc3339};
use crate::kit::idempotency::{Replay, fingerprint};
use crate::kit::lifecycle::Delays;

pub use nodepools::labels_of;

/// The API server's port on OKE.
pub const API_PORT: u16 = 6443;

/// Whether a cluster or node pool (`what`, as a sentence starts) may be deleted: not once it
/// is DELETED (it is not found), nor twice.
fn deletable(life: Life, what: &str, id: &str) -> Result<(), OciError> {
    match life {
        Life::Deleted => Err(OciError::not_found(format!("{} {id}", what.to_lowercase()))),
        Life::Deleting => Err(OciError::incorrect_state(format!(
            "{what} {id} is already being deleted"
        ))),
        _ => Ok(()),
    }
}

fn check_name(name: &str, what: &str) -> Result<(), OciError> {
    if name.is_empty() || name.chars().count() > 255 {
        return Err(OciError::invalid(format!(
            "{what} name must be 1 to 255 characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(OciError::invalid(format!(
            "{what} name {name:?} holds control characters"
        )));
    }
    Ok(())
}

fn version_error(field: &str, version: &str) -> OciError {
    OciError::invalid(format!(
        "Invalid {field}: {version} is not a Kubernetes version OKE offers; offered versions are {}",
        catalog::VERSIONS.join(", ")
    ))
}

impl Oke {
    fn delay(
        &self,
        which: fn(&crate::kit::Timing) -> Delays,
        pick: fn(&Delays) -> f64,
    ) -> std::time::Duration {
        Delays::duration(pick(&which(&self.kit.timing())))
    }

    /// Records a work request of `operation` on `entity`, completing with `effect` after `delay`.
    #[allow(clippy::too_many_arguments)]
    fn work_request(
        &self,
        st: &mut State,
        operation: &'static str,
        compartment: &str,
        entity: (&'static str, &str),
        cluster: &str,
        effect: Effect,
        delay: std::time::Duration,
    ) -> String {
        let id = self.ocid("clustersworkrequest");
        let now = Instant::now();
        st.work_requests.insert(
            id.clone(),
            WorkRequest {
                id: id.clone(),
                operation,
                status: WrStatus::Accepted,
                compartment: compartment.to_string(),
                entity: (entity.0, entity.1.to_string()),
                cluster: cluster.to_string(),
                times: [Some(now_rfc3339()), None, None],
                start_at: now + (delay / 10).min(std::time::Duration::from_millis(500)),
                done_at: now + delay,
                effect: Some(effect),
                errors: Vec::new(),
                logs: vec![(now_rfc3339(), format!("{operation} accepted"))],
            },
        );
        id
    }

    fn replay(&self, scope: &str, req: &Req) -> Result<Option<Answer>, OciError> {
        let Some(token) = req.retry_token() else {
            return Ok(None);
        };
        match self
            .tokens
            .check(scope, &token, &fingerprint(&req.body, ""))
        {
            Replay::New => Ok(None),
            Replay::Same(wr) => Ok(Some(Answer::accepted(&wr))),
            Replay::Mismatch => Err(OciError::conflict(
                "The opc-retry-token was used for a request with different parameters",
            )),
        }
    }

    fn remember(&self, scope: &str, req: &Req, work_request: &str) {
        if let Some(token) = req.retry_token() {
            self.tokens
                .remember(scope, &token, &fingerprint(&req.body, ""), work_request);
        }
    }

    fn subnet_in(&self, st: &State, id: &str, vcn: &str, field: &str) -> Result<Value, OciError> {
        if id.is_empty() {
            return Err(OciError::missing(field));
        }
        let subnet = st
            .live(CoreKind::Subnet, id)
            .ok_or_else(|| OciError::not_found(format!("{field} subnet {id}")))?;
        if subnet.vcn() != vcn {
            return Err(OciError::invalid(format!(
                "{field}: subnet {id} is not in the cluster's VCN {vcn}"
            )));
        }
        Ok(subnet.body.clone())
    }

    fn cluster<'s>(&self, st: &'s State, id: &str) -> Result<&'s Cluster, OciError> {
        st.clusters
            .get(id)
            .ok_or_else(|| OciError::not_found(format!("cluster {id}")))
    }
}

/// OCI's refusal when node instances would exceed the tenancy's OCPUs in the region.
pub fn quota_error(limit: u32, used: u32, wanted: u32) -> OciError {
    OciError::limit(format!(
        "The service limit for OCPUs in this region is {limit}: {used} are in use and {wanted} more were requested; request a service limit increase or use a smaller shape"
    ))
}
