//! The catalogue of contract checks (`shared/design/contract.md` section 5) and their results.
//!
//! Every check has an ID, a one-line statement and, after a run, one [`Outcome`]. A check that
//! no scenario judged is reported as skipped with the reason, never silently dropped.

use std::collections::BTreeMap;

/// One contract check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// `C01` … `C59`.
    pub id: &'static str,
    /// Group in the report.
    pub group: &'static str,
    /// What must hold.
    pub statement: &'static str,
}

const fn check(id: &'static str, group: &'static str, statement: &'static str) -> Check {
    Check {
        id,
        group,
        statement,
    }
}

/// Every check the suite knows, in report order.
pub const CATALOGUE: &[Check] = &[
    check(
        "C01",
        "static",
        "every provider CRD core touches is Namespaced",
    ),
    check(
        "C02",
        "static",
        "CRD name = lowercase plural of kind + \".\" + group",
    ),
    check(
        "C03",
        "static",
        "CRDs carry cluster.x-k8s.io/v1beta2 and /v1beta1 labels whose values are served versions",
    ),
    check(
        "C04",
        "static",
        "the contract in the CRD labels equals metadata.yaml's release-series contract",
    ),
    check(
        "C05",
        "static",
        "status subresource enabled on every version",
    ),
    check(
        "C06",
        "static",
        "scale subresource correct wherever spec.replicas exists",
    ),
    check(
        "C07",
        "static",
        "core's manager ServiceAccount may get/list/watch/patch/update/delete every provider kind",
    ),
    check(
        "C08",
        "static",
        "template kinds exist with spec.template.spec for all three kinds",
    ),
    check(
        "C09",
        "ownership",
        "InfraCluster and ControlPlane get the Cluster owner ref and cluster-name label",
    ),
    check(
        "C11",
        "ownership",
        "an object without a Cluster owner gets no finalizer, no status, no cloud resources",
    ),
    check(
        "C12",
        "ownership",
        "the provider finalizer is present before any provisioned/initialized flag",
    ),
    check(
        "C13",
        "ownership",
        "the InfraMachinePool has the MachinePool as controller owner and the cluster-name label",
    ),
    check(
        "C14",
        "infrastructure",
        "InfraCluster reports provisioned; the Cluster then shows infrastructureProvisioned",
    ),
    check(
        "C15",
        "infrastructure",
        "InfraCluster never sets spec.controlPlaneEndpoint",
    ),
    check(
        "C16",
        "infrastructure",
        "once initialized, ControlPlane spec.controlPlaneEndpoint is valid and equals the Cluster's",
    ),
    check(
        "C17",
        "infrastructure",
        "a user-set Cluster endpoint is kept when the provider publishes a different one",
    ),
    check(
        "C18",
        "infrastructure",
        "Cluster InfrastructureReady follows the InfraCluster Ready condition",
    ),
    check(
        "C19",
        "infrastructure",
        "Cluster failure domains equal the InfraCluster's",
    ),
    check(
        "C20",
        "control plane",
        "ControlPlane reaches controlPlaneInitialized; the Cluster shows it with its condition",
    ),
    check(
        "C21",
        "control plane",
        "it initializes although the Cluster's endpoint was empty at creation",
    ),
    check(
        "C22",
        "control plane",
        "status.externalManagedControlPlane: true",
    ),
    check(
        "C23",
        "control plane",
        "status.version/status.versions hold a v-semver whose minor matches spec.version",
    ),
    check(
        "C24",
        "control plane",
        "a version without v is stored or reported with it, or rejected with a clear message",
    ),
    check(
        "C25",
        "control plane",
        "Cluster ControlPlaneAvailable follows the ControlPlane Available condition",
    ),
    check(
        "C26",
        "control plane",
        "every condition has type, status, reason, lastTransitionTime; observedGeneration = generation after success",
    ),
    check(
        "C27",
        "kubeconfig",
        "<cluster>-kubeconfig exists by the time the control plane is initialized",
    ),
    check(
        "C28",
        "kubeconfig",
        "its type and cluster-name label are right",
    ),
    check(
        "C29",
        "kubeconfig",
        "data.value is a kubeconfig whose server is the Cluster's endpoint",
    ),
    check(
        "C30",
        "kubeconfig",
        "a client built from it reaches the workload API server",
    ),
    check(
        "C31",
        "kubeconfig",
        "the Cluster's RemoteConnectionProbe becomes True",
    ),
    check(
        "C32",
        "kubeconfig",
        "the Secret is owned by the ControlPlane and is garbage-collected with it",
    ),
    check(
        "C33",
        "kubeconfig",
        "token credentials are refreshed: sampled over twice the token lifetime, never expired",
    ),
    check(
        "C34",
        "kubeconfig",
        "the user kubeconfig, if shipped, holds no static admin credential",
    ),
    check(
        "C35",
        "pause",
        "Cluster.spec.paused: spec edits cause no status change and no cloud call; Paused True",
    ),
    check(
        "C36",
        "pause",
        "the cluster.x-k8s.io/paused annotation alone does the same",
    ),
    check(
        "C37",
        "pause",
        "unpausing sets Paused False and applies the pending change",
    ),
    check(
        "C38",
        "filters",
        "with --watch-filter=x, unlabelled objects are never modified",
    ),
    check(
        "C39",
        "filters",
        "an InfraCluster annotated cluster.x-k8s.io/managed-by is not modified",
    ),
    check(
        "C40",
        "deletion",
        "the ControlPlane is deleted only after the MachinePools are gone",
    ),
    check(
        "C41",
        "deletion",
        "the InfraCluster is deleted after the ControlPlane; the Cluster goes last",
    ),
    check(
        "C42",
        "deletion",
        "each object keeps its finalizer until the cloud confirms deletion, then disappears on its own",
    ),
    check(
        "C43",
        "deletion",
        "with externalManagedControlPlane, deleting a worker Machine deletes its Node",
    ),
    check(
        "C44",
        "machine pools",
        "a MachinePool with dataSecretName \"\" is admitted and reaches bootstrapDataSecretCreated",
    ),
    check(
        "C46",
        "machine pools",
        "the InfraMachinePool sets both status.ready and status.initialization.provisioned",
    ),
    check(
        "C47",
        "machine pools",
        "settled: len(providerIDList) == status.replicas == MachinePool.spec.replicas",
    ),
    check(
        "C48",
        "machine pools",
        "every provider ID matches exactly one Node's spec.providerID; nodeRefs list them; phase Running",
    ),
    check("C49", "machine pools", "a replica change converges"),
    check(
        "C50",
        "machine pools",
        "with replicas-managed-by, an outside scale change is written back to MachinePool.spec.replicas",
    ),
    check(
        "C51",
        "machine pools",
        "a provider ID leaves the list only after its instance is gone",
    ),
    check(
        "C52",
        "managed designs",
        "a Cluster with only controlPlaneRef reaches Provisioned",
    ),
    check(
        "C55",
        "clusterctl",
        "metadata.yaml decodes and covers the released version",
    ),
    check(
        "C56",
        "clusterctl",
        "the components YAML has one Namespace, every namespaced object in it, a container named manager that accepts --namespace and --watch-filter",
    ),
    check(
        "C57",
        "clusterctl",
        "clusterctl init --infrastructure <name> from a local repository installs everything with the clusterctl labels and a Provider inventory object",
    ),
    check(
        "C58",
        "clusterctl",
        "clusterctl generate cluster --flavor <f> --list-variables lists variables; missing required variables fail clearly; objects land in the target namespace",
    ),
    check(
        "C59",
        "clusterctl",
        "clusterctl move of a provisioned cluster succeeds; the target rebuilds status without creating anything new in the cloud",
    ),
];

/// The check with this ID.
pub fn find(id: &str) -> Option<&'static Check> {
    CATALOGUE.iter().find(|c| c.id == id)
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It holds; what was observed.
    Pass(String),
    /// It does not hold; the observed values.
    Fail(String),
    /// Not judged; why.
    Skip(String),
}

impl Outcome {
    /// `pass`, `FAIL` or `skip`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass(_) => "pass",
            Outcome::Fail(_) => "FAIL",
            Outcome::Skip(_) => "skip",
        }
    }

    /// The observation or reason.
    pub fn detail(&self) -> &str {
        match self {
            Outcome::Pass(d) | Outcome::Fail(d) | Outcome::Skip(d) => d,
        }
    }

    /// Whether this is a failure.
    pub fn is_fail(&self) -> bool {
        matches!(self, Outcome::Fail(_))
    }
}

/// Pass with `detail` when `ok`, else fail with it.
pub fn verdict(ok: bool, detail: impl Into<String>) -> Outcome {
    if ok {
        Outcome::Pass(detail.into())
    } else {
        Outcome::Fail(detail.into())
    }
}

/// The results of one run, by check ID. The first result recorded for a check that fails wins
/// over later passes: a check judged twice (for example on two clusters) passes only if both pass.
#[derive(Debug, Default, Clone)]
pub struct Results {
    by_id: BTreeMap<&'static str, Outcome>,
}

impl Results {
    /// Records an outcome for `id` (an unknown ID is a bug in the suite and panics in tests only
    /// via the debug assertion; in release it is recorded anyway).
    pub fn record(&mut self, id: &'static str, outcome: Outcome) {
        debug_assert!(find(id).is_some(), "unknown check {id}");
        match (self.by_id.get(id), &outcome) {
            (Some(Outcome::Fail(_)), _) => {}
            (Some(Outcome::Pass(_)), Outcome::Skip(_)) => {}
            _ => {
                self.by_id.insert(id, outcome);
            }
        }
    }

    /// Records the same outcome for several checks.
    pub fn record_all(&mut self, ids: &[&'static str], outcome: &Outcome) {
        for id in ids {
            self.record(id, outcome.clone());
        }
    }

    /// Skips every check in `ids` that has no result yet.
    pub fn skip_unjudged(&mut self, ids: &[&'static str], reason: &str) {
        for id in ids {
            if !self.by_id.contains_key(id) {
                self.by_id.insert(id, Outcome::Skip(reason.to_string()));
            }
        }
    }

    /// The outcome of `id`, if judged.
    pub fn get(&self, id: &str) -> Option<&Outcome> {
        self.by_id.get(id)
    }

    /// Every catalogue check with its outcome (unjudged ones as skipped), in report order,
    /// limited to `only` when given.
    pub fn rows(&self, only: Option<&[String]>) -> Vec<(&'static Check, Outcome)> {
        CATALOGUE
            .iter()
            .filter(|c| only.is_none_or(|o| o.iter().any(|id| id == c.id)))
            .map(|c| {
                let outcome = self.by_id.get(c.id).cloned().unwrap_or_else(|| {
                    Outcome::Skip("not judged: its scenario did not run".to_string())
                });
                (c, outcome)
            })
            .collect()
    }

    /// Every judged check and its outcome.
    pub fn into_entries(self) -> Vec<(&'static str, Outcome)> {
        self.by_id.into_iter().collect()
    }

    /// IDs of the failed checks.
    pub fn failed(&self) -> Vec<&'static str> {
        self.by_id
            .iter()
            .filter(|(_, o)| o.is_fail())
            .map(|(id, _)| *id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_ordered() {
        let ids: Vec<_> = CATALOGUE.iter().map(|c| c.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn a_failure_is_never_overwritten_by_a_later_pass() {
        let mut r = Results::default();
        r.record("C16", Outcome::Fail("a".into()));
        r.record("C16", Outcome::Pass("b".into()));
        assert_eq!(r.get("C16"), Some(&Outcome::Fail("a".into())));
        r.record("C17", Outcome::Pass("x".into()));
        r.record("C17", Outcome::Skip("y".into()));
        assert_eq!(r.get("C17"), Some(&Outcome::Pass("x".into())));
        r.record("C17", Outcome::Fail("z".into()));
        assert_eq!(r.failed(), vec!["C16", "C17"]);
    }

    #[test]
    fn unjudged_checks_are_reported_as_skipped() {
        let r = Results::default();
        let rows = r.rows(Some(&["C01".to_string()]));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.label(), "skip");
    }
}
