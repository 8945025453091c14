//! The machine pools: on the provisioned cluster, bootstrap data (C44), ready and provisioned
//! (C46), provider IDs counted (C47) and matched to Nodes (C48); over a scale-down, no provider
//! ID dropped before its instance is gone (C51); and a size set from outside written back to
//! the MachinePool (C50).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Provisioned, Verdicts, WorkloadNode, pool_verdict};
use crate::checks::{CheckId, Outcome, verdict};
use crate::objects::{Recorded, rv};
use crate::run::instances::{self, Observation};
use crate::run::lifecycle::{Names, provider_ids};

/// The annotation saying who sizes a MachinePool.
pub(crate) const MANAGED_BY_REPLICAS: &str = "cluster.x-k8s.io/replicas-managed-by";

/// C44, C46, C47, C48.
pub(crate) fn pools(seen: &Provisioned) -> Verdicts {
    let mut c44 = Vec::new();
    let mut c46 = Vec::new();
    let mut c47 = Vec::new();
    let mut c48 = Vec::new();
    let nodes: Result<&[WorkloadNode], String> = match &seen.workload {
        Some(w) => w.nodes.as_deref().map_err(Clone::clone),
        None => Err("no kubeconfig".into()),
    };
    for (mp, (pool, infra)) in &seen.state.pools {
        let bootstrap = &pool["spec"]["template"]["spec"]["bootstrap"]["dataSecretName"];
        let created = &pool["status"]["initialization"]["bootstrapDataSecretCreated"];
        if bootstrap != "" || created != true {
            c44.push(format!(
                "{mp}: dataSecretName {bootstrap}, bootstrapDataSecretCreated {created}"
            ));
        }
        if infra["status"]["ready"] != true
            || infra["status"]["initialization"]["provisioned"] != true
        {
            c46.push(format!(
                "{mp}: status.ready {}, initialization.provisioned {}",
                infra["status"]["ready"], infra["status"]["initialization"]["provisioned"]
            ));
        }
        let ids = provider_ids(infra);
        let reported = infra["status"]["replicas"].as_u64();
        let desired = pool["spec"]["replicas"].as_u64();
        if Some(ids.len() as u64) != reported || reported != desired {
            c47.push(format!(
                "{mp}: providerIDList {}, status.replicas {reported:?}, spec.replicas {desired:?}",
                ids.len()
            ));
        }
        match &nodes {
            Err(e) => c48.push(format!("cannot list the workload's Nodes: {e}")),
            Ok(nodes) => c48.extend(nodes_match(mp, pool, &ids, nodes)),
        }
    }
    let names = &seen.names;
    vec![
        (
            CheckId::C44,
            pool_verdict(
                names,
                c44,
                "dataSecretName \"\" admitted; bootstrapDataSecretCreated true",
            ),
        ),
        (
            CheckId::C46,
            pool_verdict(
                names,
                c46,
                "status.ready and status.initialization.provisioned on every pool",
            ),
        ),
        (
            CheckId::C47,
            pool_verdict(
                names,
                c47,
                "providerIDList = status.replicas = MachinePool spec.replicas",
            ),
        ),
        (
            CheckId::C48,
            pool_verdict(
                names,
                c48,
                "every provider ID is one Node; nodeRefs list them; phase Running",
            ),
        ),
    ]
}

/// C48 for one pool: each provider ID is exactly one Node, the nodeRefs are those Nodes, and
/// the pool is Running.
fn nodes_match(mp: &str, pool: &Value, ids: &[String], nodes: &[WorkloadNode]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut matched = BTreeSet::new();
    for id in ids {
        let hits: Vec<_> = nodes
            .iter()
            .filter(|n| n.provider_id.as_deref() == Some(id.as_str()))
            .filter_map(|n| n.name.clone())
            .collect();
        if hits.len() == 1 {
            matched.extend(hits);
        } else {
            problems.push(format!(
                "{mp}: provider ID {id} matches {} Nodes",
                hits.len()
            ));
        }
    }
    let refs: BTreeSet<String> = pool["status"]["nodeRefs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect();
    if refs != matched {
        problems.push(format!(
            "{mp}: nodeRefs {refs:?}, Nodes of the provider IDs {matched:?}"
        ));
    }
    if pool["status"]["phase"] != "Running" {
        problems.push(format!("{mp}: phase {}", pool["status"]["phase"]));
    }
    problems
}

/// What a scale-down by one showed.
#[derive(Debug, Clone)]
pub(crate) struct ScaleDown {
    /// The cluster's objects.
    pub(crate) names: Names,
    /// Every version the watches had delivered once it settled.
    pub(crate) recorded: Recorded,
    /// When the scale-down was asked for: earlier versions are not judged.
    pub(crate) from: Instant,
    /// MachinePool name → its provider IDs before.
    pub(crate) before: BTreeMap<String, Vec<String>>,
    /// The cloud's instance list read over the scale-down, and the reads that failed; `None`
    /// when the profile has no `instancesUrl`.
    pub(crate) instances: Option<(Vec<Observation>, Vec<String>)>,
    /// How long it took to settle, or why it did not.
    pub(crate) settled: Result<Duration, String>,
}

/// C51: a provider ID left the list, only once the cloud no longer listed its instance, and no
/// status write counted more replicas than the list held.
pub(crate) fn scale_down(seen: &ScaleDown) -> Verdicts {
    let mut problems = Vec::new();
    let mut removed = 0;
    for (mp, kind, name) in &seen.names.pools {
        let history = seen.recorded.history(kind, name);
        let before = seen.before.get(mp).cloned().unwrap_or_default();
        if let Some((observed, _)) = &seen.instances {
            let unlisted = instances::never_listed(&before, observed);
            if !unlisted.is_empty() {
                problems.push(format!(
                    "{mp}: the cloud's instance list (instancesUrl) never named {}",
                    unlisted.join(", ")
                ));
            }
            let versions: Vec<instances::ListVersion> = history
                .iter()
                .filter(|s| s.at >= seen.from && !s.deleted)
                .map(|s| instances::ListVersion {
                    at: s.at,
                    resource_version: rv(&s.obj).to_string(),
                    ids: provider_ids(&s.obj),
                })
                .collect();
            problems.extend(instances::premature_drops(mp, &before, &versions, observed));
        }
        let start = before.len();
        // Spec (the list) and status are written separately, so a version between the two
        // writes may hold the new list and the old count: judge each status write.
        let mut previous_status = &Value::Null;
        for s in &history {
            let status_written = s.obj["status"] != *previous_status;
            previous_status = &s.obj["status"];
            if s.at < seen.from || !status_written || s.deleted {
                continue;
            }
            let ids = provider_ids(&s.obj);
            let replicas = s.obj["status"]["replicas"].as_u64().unwrap_or(0) as usize;
            if ids.len() < replicas {
                problems.push(format!(
                    "{mp}: the status written at resourceVersion {} reports {replicas} replicas while providerIDList has {} IDs",
                    rv(&s.obj),
                    ids.len()
                ));
            }
        }
        if let Some(last) = history.last() {
            removed += start.saturating_sub(provider_ids(&last.obj).len());
        }
    }
    if let Err(w) = &seen.settled {
        problems.push(format!("the scale-down did not settle: {w}"));
    }
    if removed == 0 && problems.is_empty() {
        problems.push("no provider ID left the list: the scale-down was not observed".into());
    }
    problems.dedup();
    let outcome = verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "{removed} provider ID(s) left the list; no status write reported more replicas than the list held; {}",
                match &seen.instances {
                    Some((observed, failed)) => format!(
                        "no ID left while the cloud still listed its instance ({} reads of instancesUrl{})",
                        observed.len(),
                        if failed.is_empty() {
                            String::new()
                        } else {
                            format!(", {} failed", failed.len())
                        }
                    ),
                    None => "the cloud's instance states were not observed (the profile has no instancesUrl)".into(),
                }
            )
        } else {
            problems.into_iter().take(3).collect::<Vec<_>>().join("; ")
        },
    );
    vec![(CheckId::C51, outcome)]
}

/// How a pool came to be marked as sized from outside.
#[derive(Debug, Clone)]
pub(crate) enum Marked {
    /// The provider set [`MANAGED_BY_REPLICAS`] (to this value) after the profile's
    /// `autoscalePatch`.
    ByProvider(Value),
    /// The suite set it (the profile has no `autoscalePatch`).
    BySuite,
}

/// What scaling a pool from outside Cluster API showed.
#[derive(Debug, Clone)]
pub(crate) enum OutsideScale {
    /// The profile has no `outsideScale` command.
    NoCommand,
    /// The template has no pool.
    NoPool,
    /// After the `autoscalePatch` the provider did not mark the MachinePool within 60 s.
    NotMarked,
    /// The `outsideScale` command failed (why).
    CommandFailed(String),
    /// `spec.replicas` followed the cloud's new size.
    Followed {
        /// How the pool was marked.
        marked: Marked,
        /// The pool scaled (its InfraMachinePool's name).
        pool: String,
        /// The size the cloud was given.
        target: i64,
        /// From the command's end until it followed and settled.
        took: Duration,
        /// Whether the cluster then settled.
        settled: Result<Duration, String>,
    },
    /// `spec.replicas` did not follow within the provisioning timeout.
    NotFollowed {
        /// The pool scaled (its InfraMachinePool's name).
        pool: String,
        /// The size the cloud was given.
        target: i64,
        /// `spec.replicas` at the end.
        replicas: Value,
        /// How long it was given.
        timeout: Duration,
    },
}

/// C50: the size the cloud was given is written back to `MachinePool.spec.replicas`.
pub(crate) fn outside_scale(seen: &OutsideScale) -> Verdicts {
    let outcome = match seen {
        OutsideScale::NoCommand => Outcome::Skip("the profile has no outsideScale command".into()),
        OutsideScale::NoPool => Outcome::Skip("no MachinePool".into()),
        OutsideScale::NotMarked => Outcome::Fail(format!(
            "after the profile's autoscalePatch the provider did not set {MANAGED_BY_REPLICAS} on the MachinePool within 60s"
        )),
        OutsideScale::CommandFailed(e) => {
            Outcome::Fail(format!("the outsideScale command failed: {e}"))
        }
        OutsideScale::Followed {
            marked,
            pool,
            target,
            took,
            settled,
        } => {
            let how = match marked {
                Marked::ByProvider(value) => format!(
                    "the provider annotated the MachinePool {MANAGED_BY_REPLICAS}={value} after the autoscale patch"
                ),
                Marked::BySuite => {
                    format!("the suite annotated the MachinePool {MANAGED_BY_REPLICAS}")
                }
            };
            match settled {
                Ok(_) => Outcome::Pass(format!(
                    "{how}; the cloud scaled {pool} to {target}; MachinePool spec.replicas followed in {:.1}s",
                    took.as_secs_f64()
                )),
                Err(w) => Outcome::Fail(format!("spec.replicas followed to {target}, but {w}")),
            }
        }
        OutsideScale::NotFollowed {
            pool,
            target,
            replicas,
            timeout,
        } => Outcome::Fail(format!(
            "the cloud scaled {pool} to {target}; MachinePool spec.replicas still {replicas} after {timeout:?}"
        )),
    };
    vec![(CheckId::C50, outcome)]
}
