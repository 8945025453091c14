//! Clusters beside the main one: a Cluster with only a `controlPlaneRef` reaches Provisioned
//! (C52), and a Cluster endpoint the user set is kept when the provider publishes another
//! (C17).

use serde_json::Value;

use super::{Verdicts, endpoint};
use crate::checks::{CheckId, Outcome, verdict};

/// What the control-plane-only clusters showed once provisioned (or out of time).
#[derive(Debug, Clone)]
pub(crate) struct ControlPlaneOnly {
    /// The profile's control-plane-only flavor.
    pub(crate) flavor: Option<String>,
    /// The endpoint the user set on C17's Cluster: (host, port).
    pub(crate) user_endpoint: (String, u64),
    /// Each cluster, as read.
    pub(crate) clusters: Vec<Seen>,
}

/// One of the clusters.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// The check it was made for: C52 or C17.
    pub(crate) id: CheckId,
    /// Whether its rendered flavor held an InfraCluster.
    pub(crate) has_infra: bool,
    /// The Cluster (`null` when absent).
    pub(crate) cluster: Value,
    /// Its control plane (`null` when absent).
    pub(crate) control_plane: Value,
}

/// C52 and C17, for the clusters that ran.
pub(crate) fn control_plane_only(seen: &ControlPlaneOnly) -> Verdicts {
    seen.clusters
        .iter()
        .map(|c| match c.id {
            CheckId::C52 => (CheckId::C52, provisioned(seen, c)),
            _ => (CheckId::C17, endpoint_kept(seen, c)),
        })
        .collect()
}

fn provisioned(seen: &ControlPlaneOnly, c: &Seen) -> Outcome {
    if c.has_infra {
        return Outcome::Fail(format!("flavor {:?} has an InfraCluster", seen.flavor));
    }
    let conditions: Vec<String> = c.cluster["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}={}",
                c["type"].as_str().unwrap_or("?"),
                c["status"].as_str().unwrap_or("?")
            )
        })
        .collect();
    let phase = &c.cluster["status"]["phase"];
    verdict(
        *phase == "Provisioned"
            && c.control_plane["status"]["initialization"]["controlPlaneInitialized"] == true,
        format!("phase {phase}; conditions {}", conditions.join(" ")),
    )
}

fn endpoint_kept(seen: &ControlPlaneOnly, c: &Seen) -> Outcome {
    let kept = endpoint(&c.cluster);
    let published = endpoint(&c.control_plane);
    let (host, port) = &seen.user_endpoint;
    verdict(
        kept.as_ref() == Some(&seen.user_endpoint) && published.is_some(),
        format!(
            "user-set {host}:{port}; control plane published {published:?}; Cluster has {kept:?}"
        ),
    )
}
