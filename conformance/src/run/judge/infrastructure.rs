//! The InfraCluster of the provisioned cluster: provisioned and shown so on the Cluster (C14),
//! never setting the control plane's endpoint itself (C15), its Ready condition mirrored by the
//! Cluster (C18), and its failure domains copied to the Cluster (C19).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Provisioned, Verdicts, endpoint};
use crate::checks::{CheckId, Outcome, verdict};
use crate::objects::{condition_status, rv};

/// C14, C15, C18, C19; all skipped when the default template has no InfraCluster.
pub(crate) fn infrastructure(seen: &Provisioned) -> Verdicts {
    let ids = [CheckId::C14, CheckId::C15, CheckId::C18, CheckId::C19];
    let Some((kind, name)) = &seen.names.infra else {
        return ids
            .into_iter()
            .map(|id| {
                (
                    id,
                    Outcome::Skip("the default template has no InfraCluster".into()),
                )
            })
            .collect();
    };
    let note = seen.note();
    let infra = &seen.state.infra;
    let cluster = &seen.state.cluster;
    let mut out = Vec::new();
    out.push((
        CheckId::C14,
        verdict(
            infra["status"]["initialization"]["provisioned"] == true
                && cluster["status"]["initialization"]["infrastructureProvisioned"] == true,
            format!(
                "{kind} initialization.provisioned {}; Cluster infrastructureProvisioned {}{note}",
                infra["status"]["initialization"]["provisioned"],
                cluster["status"]["initialization"]["infrastructureProvisioned"]
            ),
        ),
    ));
    let history = seen.recorded.history(kind, name);
    let set: Vec<_> = history
        .iter()
        .filter_map(|s| endpoint(&s.obj).map(|e| (rv(&s.obj), e)))
        .collect();
    out.push((
        CheckId::C15,
        match set.first() {
            None => Outcome::Pass(format!(
                "{} recorded versions, none with spec.controlPlaneEndpoint",
                history.len()
            )),
            Some((v, (h, p))) => Outcome::Fail(format!(
                "{kind}/{name} set spec.controlPlaneEndpoint {h}:{p} (resourceVersion {v})"
            )),
        },
    ));
    let infra_ready = condition_status(infra, "Ready");
    let cluster_ready = condition_status(cluster, "InfrastructureReady");
    out.push((
        CheckId::C18,
        verdict(
            infra_ready == cluster_ready && infra_ready != "absent",
            format!(
                "{kind} Ready {infra_ready}; Cluster InfrastructureReady {cluster_ready}{note}"
            ),
        ),
    ));
    let (mine, core) = (failure_domains(infra), failure_domains(cluster));
    out.push((
        CheckId::C19,
        verdict(
            mine == core && (!mine.is_empty() || !seen.failure_domains),
            format!("{kind} failureDomains {mine:?}; Cluster {core:?}{note}"),
        ),
    ));
    out
}

/// The names of `status.failureDomains`.
fn failure_domains(obj: &Value) -> BTreeSet<String> {
    obj["status"]["failureDomains"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["name"].as_str().map(str::to_string))
        .collect()
}
