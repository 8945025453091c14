//! The judges of a cluster's life: pure functions that turn what a step recorded into check
//! outcomes, one function per group of related checks. Nothing here waits, reads a cluster or
//! calls a cloud; the steps of [`super::lifecycle`] and [`super::control_plane_only`] observe,
//! these decide, so every verdict can be tested on a record built by hand.
//!
//! The record of the provisioned cluster, [`Provisioned`], is shared by five judges:
//! [`ownership::ownership`], [`infrastructure::infrastructure`],
//! [`control_plane::control_plane`], [`kubeconfig::kubeconfig`] and [`pools::pools`]. The later
//! steps each record their own, beside their judge.

pub(crate) mod adoption;
pub(crate) mod clusterctl;
pub(crate) mod control_plane;
pub(crate) mod control_plane_only;
pub(crate) mod deletion;
pub(crate) mod infrastructure;
pub(crate) mod kubeconfig;
pub(crate) mod ownership;
pub(crate) mod pause;
pub(crate) mod pools;
#[cfg(test)]
mod tests;

use serde_json::Value;

use super::lifecycle::{Names, State};
use crate::checks::{CheckId, Outcome};
use crate::objects::Recorded;

/// Outcomes of some checks, in the order they were judged.
pub(crate) type Verdicts = Vec<(CheckId, Outcome)>;

/// What the run saw of the cluster once it settled (or its provisioning timed out).
#[derive(Debug, Clone)]
pub(crate) struct Provisioned {
    /// The cluster's objects.
    pub(crate) names: Names,
    /// Each of them as read at the end of provisioning (`null` when absent).
    pub(crate) state: State,
    /// Every version the watches had delivered by then.
    pub(crate) recorded: Recorded,
    /// Why the cluster had not settled, when it had not: added to what the checks report.
    pub(crate) not_settled: Option<String>,
    /// Whether the profile says the cloud has failure domains (C19 then wants some).
    pub(crate) failure_domains: bool,
    /// What the workload API server answered a client built from the kubeconfig Secret; `None`
    /// when the Secret holds no kubeconfig to build one from.
    pub(crate) workload: Option<Workload>,
}

impl Provisioned {
    /// ` (why not settled)`, or nothing.
    fn note(&self) -> String {
        self.not_settled
            .as_ref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    }
}

/// What the workload API server answered.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    /// How many namespaces a list (at most 50) returned, or why it failed.
    pub(crate) namespaces: Result<usize, String>,
    /// The Nodes, or why they could not be listed.
    pub(crate) nodes: Result<Vec<WorkloadNode>, String>,
}

/// One Node of the workload cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkloadNode {
    /// `metadata.name`.
    pub(crate) name: Option<String>,
    /// `spec.providerID`.
    pub(crate) provider_id: Option<String>,
}

/// Every check judged on the provisioned cluster: C09, C12–C16, C18–C23, C25–C32, C34, C44,
/// C46–C48.
pub(crate) fn provisioned(seen: &Provisioned) -> Verdicts {
    let mut out = ownership::ownership(seen);
    out.extend(infrastructure::infrastructure(seen));
    out.extend(control_plane::control_plane(seen));
    out.extend(kubeconfig::kubeconfig(seen));
    out.extend(pools::pools(seen));
    out
}

/// Pass with `ok` when there are no problems, else fail with all of them.
fn all_clear(problems: Vec<String>, ok: impl Into<String>) -> Outcome {
    if problems.is_empty() {
        Outcome::Pass(ok.into())
    } else {
        Outcome::Fail(problems.join("; "))
    }
}

/// Like [`all_clear`], skipped when the default template has no MachinePool.
fn pool_verdict(names: &Names, problems: Vec<String>, ok: &str) -> Outcome {
    if names.pools.is_empty() {
        return Outcome::Skip("the default template has no MachinePool".into());
    }
    all_clear(problems, ok)
}

fn label(obj: &Value, key: &str) -> Option<String> {
    obj["metadata"]["labels"][key].as_str().map(str::to_string)
}

/// `spec.controlPlaneEndpoint` as (host, port), when it has a host.
pub(crate) fn endpoint(obj: &Value) -> Option<(String, u64)> {
    let e = &obj["spec"]["controlPlaneEndpoint"];
    let host = e["host"].as_str().filter(|h| !h.is_empty())?;
    Some((host.to_string(), e["port"].as_u64().unwrap_or(0)))
}

/// The kubeconfig in a kubeconfig Secret: (text, server of its current context).
pub(crate) fn kubeconfig_of(secret: &Value) -> Option<(String, String)> {
    use base64::Engine as _;
    let data = secret["data"]["value"].as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let config: Value = serde_saphyr::from_str(&text).ok()?;
    let context_name = config["current-context"].as_str()?;
    let context = config["contexts"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == context_name)?;
    let cluster_name = context["context"]["cluster"].as_str()?;
    let server = config["clusters"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == cluster_name)?["cluster"]["server"]
        .as_str()?
        .to_string();
    Some((text, server))
}
