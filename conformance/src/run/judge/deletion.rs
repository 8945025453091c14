//! Deletion of the cluster: the control plane goes after the pools (C40), the InfraCluster
//! after the control plane and the Cluster last (C41), each object keeps its finalizer until
//! the cloud confirms the deletion (C42), the kubeconfig Secret is collected with its owner
//! (C32), C43, which managed node pools cannot show, and nothing is left in the cloud (C60).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::Verdicts;
use crate::checks::{CheckId, Outcome, verdict};
use crate::faults::oracle::Item;
use crate::objects::{Recorded, rv};
use crate::procs::Calls;
use crate::run::lifecycle::{CLUSTER, Names};

/// What deleting the Cluster showed.
#[derive(Debug, Clone)]
pub(crate) struct Deletion {
    /// The cluster's objects.
    pub(crate) names: Names,
    /// Every version the watches had delivered once everything was gone (or the time was up).
    pub(crate) recorded: Recorded,
    /// The cloud's call counters before the Cluster was deleted.
    pub(crate) before_delete: Option<Calls>,
    /// Provider object (kind, name) → the counters when a poll first saw it deleting.
    pub(crate) started: BTreeMap<(String, String), Option<Calls>>,
    /// Provider object (kind, name) → the counters when a poll first found it gone.
    pub(crate) ended: BTreeMap<(String, String), Option<Calls>>,
    /// How long the objects were given to go.
    pub(crate) timeout: Duration,
    /// Whether a read found the kubeconfig Secret gone.
    pub(crate) secret_gone: bool,
    /// How long the Secret's garbage collection was waited for.
    pub(crate) gc_wait: Duration,
}

/// C40, C41, C42, C32, C43.
pub(crate) fn deletion(seen: &Deletion) -> Verdicts {
    let names = &seen.names;
    let first_deleting = |kind: &str, name: &str| {
        seen.recorded
            .history(kind, name)
            .iter()
            .find(|s| !s.obj["metadata"]["deletionTimestamp"].is_null())
            .map(|s| rv(&s.obj))
    };
    let gone_at = |kind: &str, name: &str| {
        seen.recorded
            .history(kind, name)
            .iter()
            .find(|s| s.deleted)
            .map(|s| rv(&s.obj))
    };
    let (cp_kind, cp_name) = &names.control_plane;
    let cp_deleting = first_deleting(cp_kind, cp_name);
    let cp_gone = gone_at(cp_kind, cp_name);
    let pools_gone: Vec<Option<u64>> = names
        .pools
        .iter()
        .map(|(mp, _, _)| gone_at("MachinePool", mp))
        .collect();
    let c40 = if names.pools.is_empty() {
        Outcome::Skip("the default template has no MachinePool".into())
    } else {
        match (
            cp_deleting,
            pools_gone.iter().copied().collect::<Option<Vec<u64>>>(),
        ) {
            (Some(d), Some(gone)) => {
                let last = gone.iter().copied().max().unwrap_or(0);
                verdict(
                    d > last,
                    format!(
                        "MachinePools gone by resourceVersion {last}; control plane deletion started at {d}"
                    ),
                )
            }
            (d, g) => Outcome::Fail(format!(
                "control plane deletion at {d:?}; MachinePools gone at {g:?}"
            )),
        }
    };
    let cluster_at = gone_at("Cluster", CLUSTER);
    let c41 = match &names.infra {
        None => verdict(
            cluster_at.is_some() && cluster_at > cp_gone,
            format!("control plane gone at {cp_gone:?}; Cluster gone at {cluster_at:?}"),
        ),
        Some((kind, name)) => {
            let infra_deleting = first_deleting(kind, name);
            let infra_gone = gone_at(kind, name);
            verdict(
                infra_deleting.is_some()
                    && cp_gone.is_some()
                    && infra_deleting > cp_gone
                    && cluster_at.is_some()
                    && cluster_at > infra_gone
                    && cluster_at > cp_gone,
                format!(
                    "control plane gone at {cp_gone:?}; {kind} deletion started at {infra_deleting:?}, gone at {infra_gone:?}; Cluster gone at {cluster_at:?}"
                ),
            )
        }
    };
    // A C32 failure recorded on the provisioned cluster (a wrong owner) stands: results keep
    // the first failure.
    let secret_at = gone_at("Secret", &format!("{CLUSTER}-kubeconfig"));
    let c32 = verdict(
        seen.secret_gone && secret_at.is_some() && secret_at >= cp_gone,
        format!(
            "owned by {cp_kind}/{cp_name} (controller); control plane gone at {cp_gone:?}, Secret gone at {secret_at:?} ({})",
            if seen.secret_gone {
                "a read found it gone".to_string()
            } else {
                format!("still readable {:?} after the Cluster went", seen.gc_wait)
            }
        ),
    );
    vec![
        (CheckId::C40, c40),
        (CheckId::C41, c41),
        (CheckId::C42, finalizers_held(seen)),
        (CheckId::C32, c32),
        // C43 needs worker Machines, which managed node pools do not have.
        (
            CheckId::C43,
            Outcome::Skip(
                "managed node pools have no worker Machines; the suite's v1 has no Machine scenario"
                    .into(),
            ),
        ),
    ]
}

/// C42: each provider object went on its own only after the cloud answered not-found (or a
/// deleted state) in its deletion's window.
fn finalizers_held(seen: &Deletion) -> Outcome {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    // A not-found, or (clouds that keep deleted resources readable) a deleted state.
    let confirmed = |calls: &Calls| {
        calls
            .0
            .keys()
            .any(|(_, outcome)| outcome == "error" || outcome == "gone")
    };
    for key in &seen.names.provider_objects() {
        let (kind, name) = key;
        let Some(end) = seen.ended.get(key) else {
            problems.push(format!(
                "{kind}/{name} still exists after {:?}",
                seen.timeout
            ));
            continue;
        };
        // Its own window (from the poll that first saw it deleting); if the polls missed its
        // start, or saw no call in it, the window from the Cluster's deletion: the calls that
        // removed it then lie before the poll that saw it deleting.
        let own = match (seen.started.get(key), end) {
            (Some(Some(s0)), Some(s1)) => Some(s1.since(s0)).filter(|d| d.total() > 0),
            _ => None,
        };
        let widened = own.is_none();
        let during = own.or_else(|| match (&seen.before_delete, end) {
            (Some(s0), Some(s1)) => Some(s1.since(s0)),
            _ => None,
        });
        match during {
            None => notes.push(format!("{kind}/{name}: cloud calls not counted")),
            Some(d) if d.total() == 0 => {
                notes.push(format!("{kind}/{name}: no counted cloud call"));
            }
            Some(d) if confirmed(&d) => notes.push(format!(
                "{kind}/{name}{}: {}",
                if widened {
                    " (since the Cluster's deletion)"
                } else {
                    ""
                },
                d.describe()
            )),
            Some(d) => problems.push(format!(
                "{kind}/{name} lost its finalizer with no not-found (or deleted-state) answer from the cloud after {} started: {}",
                if widened {
                    "the Cluster's deletion"
                } else {
                    "its deletion"
                },
                d.describe()
            )),
        }
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "each went on its own after the cloud answered not-found: {}",
                notes.join("; ")
            )
        } else {
            problems.join("; ")
        },
    )
}

/// What the cloud holds now (`after`) that it did not hold before the provider started
/// (`before`), by the cloud's ids.
pub(crate) fn left_behind(before: &[Item], after: &[Item]) -> Vec<String> {
    let there: BTreeSet<&str> = before.iter().map(|i| i.id.as_str()).collect();
    after
        .iter()
        .filter(|i| !there.contains(i.id.as_str()))
        .map(Item::describe)
        .collect()
}

/// C60: once every Cluster of the run is gone, the cloud holds nothing that it did not hold
/// before the provider started.
pub(crate) fn nothing_left(before: &[Item], after: &[Item]) -> Outcome {
    let left = left_behind(before, after);
    verdict(
        left.is_empty(),
        match left.is_empty() {
            true => format!(
                "the cloud holds {} resources, all there before the provider started",
                after.len()
            ),
            false => format!(
                "left in the cloud after the Clusters were deleted: {}",
                left.join("; ")
            ),
        },
    )
}
