//! The InfraCluster's shared status, the same on every cloud.

use std::collections::BTreeMap;

use crate::api::{FailureDomain, InfraClusterInitialization, InfraClusterStatusCommon};

/// One failure domain per zone, in the order first used, each open to the control plane.
pub fn failure_domains<'a>(zones: impl IntoIterator<Item = &'a str>) -> Vec<FailureDomain> {
    let mut seen: Vec<&str> = Vec::new();
    for z in zones {
        if !z.is_empty() && !seen.contains(&z) {
            seen.push(z);
        }
    }
    seen.into_iter()
        .map(|z| FailureDomain {
            name: z.to_string(),
            control_plane: Some(true),
            attributes: BTreeMap::new(),
        })
        .collect()
}

/// The shared status after a pass: the failure domains of the zones the network uses, and
/// `initialization.provisioned` with v1beta1 `ready` once the network is `complete`. Both are
/// milestones: once reached they stay reached (drift shows in `NetworkReady`, not here).
/// Conditions are the engine's to write.
pub fn infra_cluster_status<'a>(
    previous: Option<&InfraClusterStatusCommon>,
    zones: impl IntoIterator<Item = &'a str>,
    complete: bool,
) -> InfraClusterStatusCommon {
    let reached = complete
        || previous
            .and_then(|s| s.initialization.as_ref())
            .and_then(|i| i.provisioned)
            .unwrap_or(false);
    InfraClusterStatusCommon {
        initialization: reached.then_some(InfraClusterInitialization {
            provisioned: Some(true),
        }),
        ready: reached,
        failure_domains: failure_domains(zones),
        network: None,
        conditions: Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_incomplete_network_is_not_provisioned_but_reports_its_zones_once_each_in_order() {
        let s = infra_cluster_status(None, ["z2", "z1", "z2", ""], false);
        assert_eq!(s.initialization, None);
        assert!(!s.ready);
        let names: Vec<&str> = s.failure_domains.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["z2", "z1"]);
        assert!(
            s.failure_domains
                .iter()
                .all(|d| d.control_plane == Some(true))
        );
    }

    #[test]
    fn provisioned_is_a_milestone_in_both_contracts_that_drift_does_not_undo() {
        let done = infra_cluster_status(None, ["z1", "z2"], true);
        assert_eq!(
            done.initialization.as_ref().and_then(|i| i.provisioned),
            Some(true)
        );
        assert!(done.ready);
        let drifted = infra_cluster_status(Some(&done), ["z1"], false);
        assert_eq!(
            drifted.initialization.and_then(|i| i.provisioned),
            Some(true)
        );
        assert!(drifted.ready);
        assert_eq!(drifted.failure_domains.len(), 1);
        let v = serde_json::to_value(infra_cluster_status(None, ["z1"], true)).unwrap();
        assert!(v.get("conditions").is_none(), "{v}");
        assert_eq!(
            v["initialization"],
            serde_json::json!({"provisioned": true})
        );
        assert_eq!(
            v["failureDomains"][0],
            serde_json::json!({"name": "z1", "controlPlane": true})
        );
    }
}
