//! The ControlPlane of the provisioned cluster: its endpoint published and copied to the
//! Cluster (C16), initialized and shown so on the Cluster (C20) even from an empty endpoint
//! (C21), externally managed (C22), reporting its version (C23), its Available condition
//! mirrored (C25), and every provider object's conditions complete (C26).

use serde_json::Value;

use super::{Provisioned, Verdicts, all_clear, endpoint};
use crate::checks::{CheckId, Outcome, verdict};
use crate::objects::condition_status;
use crate::run::lifecycle::CLUSTER;

/// C16, C20, C21, C22, C23, C25, C26.
pub(crate) fn control_plane(seen: &Provisioned) -> Verdicts {
    let note = seen.note();
    let cluster = &seen.state.cluster;
    let cp = &seen.state.control_plane;
    let cp_kind = &seen.names.control_plane.0;

    let cluster_ep = endpoint(cluster);
    let cp_ep = endpoint(cp);
    let c16 = verdict(
        cp_ep.is_some() && cp_ep.as_ref().is_some_and(|(_, p)| *p > 0) && cp_ep == cluster_ep,
        format!("{cp_kind} endpoint {cp_ep:?}; Cluster {cluster_ep:?}{note}"),
    );
    let cp_init = cp["status"]["initialization"]["controlPlaneInitialized"] == true;
    let cluster_init = cluster["status"]["initialization"]["controlPlaneInitialized"] == true;
    let cond = condition_status(cluster, "ControlPlaneInitialized");
    let c20 = verdict(
        cp_init && cluster_init && cond == "True",
        format!(
            "{cp_kind} controlPlaneInitialized {cp_init}; Cluster {cluster_init}, condition ControlPlaneInitialized {cond}{note}"
        ),
    );
    let first_cluster = seen
        .recorded
        .history("Cluster", CLUSTER)
        .first()
        .map(|s| endpoint(&s.obj));
    let c21 = match first_cluster {
        Some(None) => verdict(
            cp_init,
            format!(
                "the Cluster was created without an endpoint; {cp_kind} initialized: {cp_init}{note}"
            ),
        ),
        Some(Some(e)) => Outcome::Skip(format!("the Cluster had endpoint {e:?} when first seen")),
        None => Outcome::Fail("the Cluster was never seen".into()),
    };
    let c22 = verdict(
        cp["status"]["externalManagedControlPlane"] == true,
        format!(
            "status.externalManagedControlPlane = {}",
            cp["status"]["externalManagedControlPlane"]
        ),
    );
    let available = condition_status(cp, "Available");
    let cluster_available = condition_status(cluster, "ControlPlaneAvailable");
    let c25 = verdict(
        available == cluster_available && available != "absent",
        format!(
            "{cp_kind} Available {available}; Cluster ControlPlaneAvailable {cluster_available}{note}"
        ),
    );
    vec![
        (CheckId::C16, c16),
        (CheckId::C20, c20),
        (CheckId::C21, c21),
        (CheckId::C22, c22),
        (CheckId::C23, version_reported(cp, &note)),
        (CheckId::C25, c25),
        (CheckId::C26, conditions_complete(seen)),
    ]
}

/// `(major, minor)` of a `v`-prefixed semantic version.
fn minor(version: &str) -> Option<(u64, u64)> {
    let rest = version.strip_prefix('v')?;
    let mut parts = rest.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// C23: every reported version is a v-semver of `spec.version`'s minor.
fn version_reported(cp: &Value, note: &str) -> Outcome {
    let spec_minor = cp["spec"]["version"].as_str().and_then(minor);
    let mut reported: Vec<String> = cp["status"]["version"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    reported.extend(
        cp["status"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str().map(str::to_string)),
    );
    let bad: Vec<_> = reported
        .iter()
        .filter(|v| minor(v).is_none() || minor(v) != spec_minor)
        .collect();
    verdict(
        !reported.is_empty() && bad.is_empty() && spec_minor.is_some(),
        format!(
            "spec.version {}; reported {reported:?}{note}",
            cp["spec"]["version"]
        ),
    )
}

/// C26: the shape of every condition on every provider object.
fn conditions_complete(seen: &Provisioned) -> Outcome {
    let mut problems = Vec::new();
    let mut count = 0;
    let mut objs: Vec<&Value> = vec![&seen.state.control_plane];
    if seen.names.infra.is_some() {
        objs.push(&seen.state.infra);
    }
    objs.extend(seen.state.pools.values().map(|(_, i)| i));
    for obj in objs {
        let generation = obj["metadata"]["generation"].as_i64();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let conditions = obj["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions.is_empty() {
            problems.push(format!("{kind} has no conditions"));
        }
        for c in conditions {
            count += 1;
            let t = c["type"].as_str().unwrap_or_default();
            let mut missing = Vec::new();
            if t.is_empty() {
                missing.push("type");
            }
            if !["True", "False", "Unknown"].contains(&c["status"].as_str().unwrap_or_default()) {
                missing.push("status");
            }
            if c["reason"].as_str().unwrap_or_default().is_empty() {
                missing.push("reason");
            }
            if c["lastTransitionTime"]
                .as_str()
                .unwrap_or_default()
                .is_empty()
            {
                missing.push("lastTransitionTime");
            }
            if c["observedGeneration"].as_i64() != generation {
                missing.push("observedGeneration = generation");
            }
            if !missing.is_empty() {
                problems.push(format!("{kind} condition {t}: no {}", missing.join(", ")));
            }
        }
    }
    all_clear(problems, format!("{count} conditions, all complete"))
}
