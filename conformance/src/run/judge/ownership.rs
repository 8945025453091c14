//! Who owns the provisioned cluster's objects: core's owner reference and cluster-name label
//! on the InfraCluster and the ControlPlane (C09) and on every pool (C13), and the provider's
//! finalizer on every recorded version that carries a provisioned or initialized flag (C12).

use serde_json::{Value, json};

use super::{Provisioned, Verdicts, all_clear, label, pool_verdict};
use crate::checks::{CheckId, Outcome, verdict};
use crate::objects::{CLUSTER_NAME_LABEL, finalizers, owner, rv};
use crate::run::lifecycle::CLUSTER;

/// C09, C13, C12.
pub(crate) fn ownership(seen: &Provisioned) -> Verdicts {
    vec![
        (CheckId::C09, cluster_objects_owned(seen)),
        (CheckId::C13, pools_owned(seen)),
        (CheckId::C12, finalizer_before_flags(seen)),
    ]
}

fn cluster_objects_owned(seen: &Provisioned) -> Outcome {
    let mut problems = Vec::new();
    let objects = [
        ("InfraCluster", &seen.state.infra),
        ("ControlPlane", &seen.state.control_plane),
    ];
    for (what, obj) in objects {
        if what == "InfraCluster" && seen.names.infra.is_none() {
            continue;
        }
        if owner(obj, "Cluster").and_then(|r| r["name"].as_str()) != Some(CLUSTER) {
            problems.push(format!(
                "{what} owners {}",
                obj["metadata"]["ownerReferences"]
            ));
        }
        if label(obj, CLUSTER_NAME_LABEL).as_deref() != Some(CLUSTER) {
            problems.push(format!(
                "{what} cluster-name label {:?}",
                label(obj, CLUSTER_NAME_LABEL)
            ));
        }
    }
    all_clear(
        problems,
        "owner reference to Cluster/conf and its label on both",
    )
}

fn pools_owned(seen: &Provisioned) -> Outcome {
    let mut problems = Vec::new();
    for (mp, (_, infra)) in &seen.state.pools {
        let controller = owner(infra, "MachinePool");
        if controller.and_then(|r| r["name"].as_str()) != Some(mp.as_str())
            || controller.map(|r| r["controller"].clone()) != Some(json!(true))
        {
            problems.push(format!(
                "pool of {mp}: owners {}",
                infra["metadata"]["ownerReferences"]
            ));
        }
        if label(infra, CLUSTER_NAME_LABEL).as_deref() != Some(CLUSTER) {
            problems.push(format!(
                "pool of {mp}: cluster-name label {:?}",
                label(infra, CLUSTER_NAME_LABEL)
            ));
        }
    }
    pool_verdict(
        &seen.names,
        problems,
        "controller owner MachinePool and the cluster-name label on every pool",
    )
}

/// The provisioned/initialized flags an object's status carries.
fn flagged(obj: &Value) -> Vec<&'static str> {
    let s = &obj["status"];
    let mut out = Vec::new();
    if s["initialization"]["provisioned"] == true {
        out.push("initialization.provisioned");
    }
    if s["initialization"]["controlPlaneInitialized"] == true {
        out.push("initialization.controlPlaneInitialized");
    }
    if s["ready"] == true {
        out.push("ready");
    }
    if s["initialized"] == true {
        out.push("initialized");
    }
    out
}

/// No recorded version with a flag and no finalizer.
fn finalizer_before_flags(seen: &Provisioned) -> Outcome {
    let mut problems = Vec::new();
    let mut flagged_seen = 0;
    for (kind, name) in seen.names.provider_objects() {
        for version in seen.recorded.history(&kind, &name) {
            if version.deleted {
                continue;
            }
            let flags = flagged(&version.obj);
            if !flags.is_empty() {
                flagged_seen += 1;
                if finalizers(&version.obj).is_empty() {
                    problems.push(format!(
                        "{kind}/{name} at resourceVersion {} had {} without a finalizer",
                        rv(&version.obj),
                        flags.join(", ")
                    ));
                }
            }
        }
    }
    if flagged_seen == 0 {
        problems.push(format!(
            "no provider object reached a provisioned/initialized flag{}",
            seen.note()
        ));
    }
    problems.dedup();
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!("{flagged_seen} recorded versions with a flag, all with the finalizer")
        } else {
            problems.into_iter().take(3).collect::<Vec<_>>().join("; ")
        },
    )
}
