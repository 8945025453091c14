//! `clusterctl move` (C59): the move succeeds, the target rebuilds the cluster's status, nothing
//! is left on the source, and the cloud sees no create call.

use std::time::Duration;

use super::Verdicts;
use crate::checks::{CheckId, Outcome, verdict};
use crate::procs::Calls;

/// What moving the cluster to a second plane showed.
#[derive(Debug, Clone)]
pub(crate) enum Move {
    /// `clusterctl init` on the target failed (its stderr).
    InitFailed(String),
    /// `clusterctl move` failed (its stderr).
    Failed(String),
    /// The move went through.
    Moved {
        /// How long the target took to settle, or why it did not.
        settled: Result<Duration, String>,
        /// Whether the Cluster was still on the source afterwards.
        left_on_source: bool,
        /// The cloud calls from before the move until the target settled; `None` when not
        /// counted.
        calls: Option<Calls>,
        /// The profile's patterns of create operations.
        create_operations: Vec<String>,
    },
}

/// C59.
pub(crate) fn moved(seen: &Move) -> Verdicts {
    let outcome = match seen {
        Move::InitFailed(stderr) => {
            Outcome::Fail(format!("clusterctl init on the target failed: {stderr}"))
        }
        Move::Failed(stderr) => Outcome::Fail(format!("clusterctl move failed: {stderr}")),
        Move::Moved {
            settled,
            left_on_source,
            calls,
            create_operations,
        } => {
            let mut problems = Vec::new();
            if let Err(w) = settled {
                problems.push(format!("on the target: {w}"));
            }
            if *left_on_source {
                problems.push("the Cluster is still on the source".into());
            }
            let counted = match calls {
                Some(calls) => {
                    let created = calls.matching(create_operations);
                    if created.total() > 0 {
                        problems.push(format!("the cloud saw {}", created.describe()));
                    }
                    "no create call in the cloud"
                }
                None => "cloud calls not counted",
            };
            verdict(
                problems.is_empty(),
                if problems.is_empty() {
                    format!(
                        "moved; the target settled in {:.1}s; {counted}",
                        settled
                            .as_ref()
                            .map(Duration::as_secs_f64)
                            .unwrap_or_default()
                    )
                } else {
                    problems.join("; ")
                },
            )
        }
    };
    vec![(CheckId::C59, outcome)]
}
