//! The catalogue of contract checks (the provider contract's section 5) and their results.
//!
//! Every check has an ID ([`CheckId`]), a one-line statement and, after a run, one [`Outcome`].
//! A check that no scenario judged is reported as skipped with the reason, never silently
//! dropped.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Declares [`CheckId`]: one variant per check, named as the report names it.
macro_rules! check_ids {
    ($($id:ident),* $(,)?) => {
        /// The ID of one contract check. Its text ([`CheckId::as_str`], `Display`) is the
        /// variant's name, `C01` … `C65`, as every report shows it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum CheckId {
            $(
                #[doc = concat!("Check ", stringify!($id), ".")]
                $id,
            )*
        }

        impl CheckId {
            /// Every ID, in report order.
            pub const ALL: &'static [CheckId] = &[$(CheckId::$id),*];

            /// `C01` … `C65`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(CheckId::$id => stringify!($id),)*
                }
            }
        }
    };
}

check_ids!(
    C01, C02, C03, C04, C05, C06, C07, C08, C09, C11, C12, C13, C14, C15, C16, C17, C18, C19, C20,
    C21, C22, C23, C24, C25, C26, C27, C28, C29, C30, C31, C32, C33, C34, C35, C36, C37, C38, C39,
    C40, C41, C42, C43, C44, C46, C47, C48, C49, C50, C51, C52, C55, C56, C57, C58, C59, C60, C61,
    C62, C63, C64, C65,
);

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so that a width (`{:<4}`) applies as it does to a string.
        f.pad(self.as_str())
    }
}

/// A text that names no check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCheck(pub String);

impl fmt::Display for UnknownCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a check (C01…C65)", self.0)
    }
}

impl std::error::Error for UnknownCheck {}

impl FromStr for CheckId {
    type Err = UnknownCheck;

    /// The check named exactly `s` (`C07`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == s)
            .ok_or_else(|| UnknownCheck(s.to_string()))
    }
}

/// One contract check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// Its ID.
    pub id: CheckId,
    /// Group in the report.
    pub group: &'static str,
    /// What must hold.
    pub statement: &'static str,
}

const fn check(id: CheckId, group: &'static str, statement: &'static str) -> Check {
    Check {
        id,
        group,
        statement,
    }
}

/// Every check the suite knows, in report order.
pub const CATALOGUE: &[Check] = &[
    check(
        CheckId::C01,
        "static",
        "every provider CRD core touches is Namespaced",
    ),
    check(
        CheckId::C02,
        "static",
        "CRD name = lowercase plural of kind + \".\" + group",
    ),
    check(
        CheckId::C03,
        "static",
        "CRDs carry cluster.x-k8s.io/v1beta2 and /v1beta1 labels whose values are served versions",
    ),
    check(
        CheckId::C04,
        "static",
        "the contract in the CRD labels equals metadata.yaml's release-series contract",
    ),
    check(
        CheckId::C05,
        "static",
        "status subresource enabled on every version",
    ),
    check(
        CheckId::C06,
        "static",
        "scale subresource correct wherever spec.replicas exists",
    ),
    check(
        CheckId::C07,
        "static",
        "core's manager ServiceAccount may get/list/watch/patch/update/delete every provider kind",
    ),
    check(
        CheckId::C08,
        "static",
        "template kinds exist with spec.template.spec for all three kinds",
    ),
    check(
        CheckId::C09,
        "ownership",
        "InfraCluster and ControlPlane get the Cluster owner ref and cluster-name label",
    ),
    check(
        CheckId::C11,
        "ownership",
        "an object without a Cluster owner gets no finalizer, no status, no cloud resources",
    ),
    check(
        CheckId::C12,
        "ownership",
        "the provider finalizer is present before any provisioned/initialized flag",
    ),
    check(
        CheckId::C13,
        "ownership",
        "the InfraMachinePool has the MachinePool as controller owner and the cluster-name label",
    ),
    check(
        CheckId::C14,
        "infrastructure",
        "InfraCluster reports provisioned; the Cluster then shows infrastructureProvisioned",
    ),
    check(
        CheckId::C15,
        "infrastructure",
        "InfraCluster never sets spec.controlPlaneEndpoint",
    ),
    check(
        CheckId::C16,
        "infrastructure",
        "once initialized, ControlPlane spec.controlPlaneEndpoint is valid and equals the Cluster's",
    ),
    check(
        CheckId::C17,
        "infrastructure",
        "a user-set Cluster endpoint is kept when the provider publishes a different one",
    ),
    check(
        CheckId::C18,
        "infrastructure",
        "Cluster InfrastructureReady follows the InfraCluster Ready condition",
    ),
    check(
        CheckId::C19,
        "infrastructure",
        "Cluster failure domains equal the InfraCluster's",
    ),
    check(
        CheckId::C20,
        "control plane",
        "ControlPlane reaches controlPlaneInitialized; the Cluster shows it with its condition",
    ),
    check(
        CheckId::C21,
        "control plane",
        "it initializes although the Cluster's endpoint was empty at creation",
    ),
    check(
        CheckId::C22,
        "control plane",
        "status.externalManagedControlPlane: true",
    ),
    check(
        CheckId::C23,
        "control plane",
        "status.version/status.versions hold a v-semver whose minor matches spec.version",
    ),
    check(
        CheckId::C24,
        "control plane",
        "a version without v is stored or reported with it, or rejected with a clear message",
    ),
    check(
        CheckId::C25,
        "control plane",
        "Cluster ControlPlaneAvailable follows the ControlPlane Available condition",
    ),
    check(
        CheckId::C26,
        "control plane",
        "every condition has type, status, reason, lastTransitionTime; observedGeneration = generation after success",
    ),
    check(
        CheckId::C27,
        "kubeconfig",
        "<cluster>-kubeconfig exists by the time the control plane is initialized",
    ),
    check(
        CheckId::C28,
        "kubeconfig",
        "its type and cluster-name label are right",
    ),
    check(
        CheckId::C29,
        "kubeconfig",
        "data.value is a kubeconfig whose server is the Cluster's endpoint",
    ),
    check(
        CheckId::C30,
        "kubeconfig",
        "a client built from it reaches the workload API server",
    ),
    check(
        CheckId::C31,
        "kubeconfig",
        "the Cluster's RemoteConnectionProbe becomes True",
    ),
    check(
        CheckId::C32,
        "kubeconfig",
        "the Secret is owned by the ControlPlane and is garbage-collected with it",
    ),
    check(
        CheckId::C33,
        "kubeconfig",
        "token credentials are refreshed: sampled over twice the token lifetime, never expired",
    ),
    check(
        CheckId::C34,
        "kubeconfig",
        "the user kubeconfig, if shipped, holds no static admin credential",
    ),
    check(
        CheckId::C35,
        "pause",
        "Cluster.spec.paused: spec edits cause no status change and no cloud call; Paused True",
    ),
    check(
        CheckId::C36,
        "pause",
        "the cluster.x-k8s.io/paused annotation alone does the same",
    ),
    check(
        CheckId::C37,
        "pause",
        "unpausing sets Paused False and applies the pending change",
    ),
    check(
        CheckId::C38,
        "filters",
        "with --watch-filter=x, unlabelled objects are never modified",
    ),
    check(
        CheckId::C39,
        "filters",
        "an InfraCluster annotated cluster.x-k8s.io/managed-by is not modified",
    ),
    check(
        CheckId::C40,
        "deletion",
        "the ControlPlane is deleted only after the MachinePools are gone",
    ),
    check(
        CheckId::C41,
        "deletion",
        "the InfraCluster is deleted after the ControlPlane; the Cluster goes last",
    ),
    check(
        CheckId::C42,
        "deletion",
        "each object keeps its finalizer until the cloud confirms deletion, then disappears on its own",
    ),
    check(
        CheckId::C43,
        "deletion",
        "with externalManagedControlPlane, deleting a worker Machine deletes its Node",
    ),
    check(
        CheckId::C44,
        "machine pools",
        "a MachinePool with dataSecretName \"\" is admitted and reaches bootstrapDataSecretCreated",
    ),
    check(
        CheckId::C46,
        "machine pools",
        "the InfraMachinePool sets both status.ready and status.initialization.provisioned",
    ),
    check(
        CheckId::C47,
        "machine pools",
        "settled: len(providerIDList) == status.replicas == MachinePool.spec.replicas",
    ),
    check(
        CheckId::C48,
        "machine pools",
        "every provider ID matches exactly one Node's spec.providerID; nodeRefs list them; phase Running",
    ),
    check(CheckId::C49, "machine pools", "a replica change converges"),
    check(
        CheckId::C50,
        "machine pools",
        "with replicas-managed-by, an outside scale change is written back to MachinePool.spec.replicas",
    ),
    check(
        CheckId::C51,
        "machine pools",
        "a provider ID leaves the list only after its instance is gone",
    ),
    check(
        CheckId::C52,
        "managed designs",
        "a Cluster with only controlPlaneRef reaches Provisioned",
    ),
    check(
        CheckId::C55,
        "clusterctl",
        "metadata.yaml decodes and covers the released version",
    ),
    check(
        CheckId::C56,
        "clusterctl",
        "the components YAML has one Namespace, every namespaced object in it, a container named manager that accepts --namespace and --watch-filter",
    ),
    check(
        CheckId::C57,
        "clusterctl",
        "clusterctl init --infrastructure <name> from a local repository installs everything with the clusterctl labels and a Provider inventory object",
    ),
    check(
        CheckId::C58,
        "clusterctl",
        "clusterctl generate cluster --flavor <f> --list-variables lists variables; missing required variables fail clearly; objects land in the target namespace",
    ),
    check(
        CheckId::C59,
        "clusterctl",
        "clusterctl move of a provisioned cluster succeeds; the target rebuilds status without creating anything new in the cloud",
    ),
    check(
        CheckId::C60,
        "deletion",
        "once its Clusters are deleted, nothing the provider made is left in the cloud: the emulator's inventory holds nothing that was not there before the provider started",
    ),
    check(
        CheckId::C61,
        "adoption",
        "a control plane asked to adopt a cloud cluster (spec.adoption, not accepted) reports the plan in status.adoption (phase Planned) and writes nothing in the cloud",
    ),
    check(
        CheckId::C62,
        "adoption",
        "accepting the plan (spec.adoption.accept: true) tags the cloud cluster as the Cluster's and brings the control plane to Ready (status.adoption.phase Adopted)",
    ),
    check(
        CheckId::C63,
        "adoption",
        "deleting a Cluster whose control plane has deletionPolicy: Orphan leaves every cloud resource it owned running and removes its ownership tag from each",
    ),
    check(
        CheckId::C64,
        "adoption",
        "a Cluster asking to adopt a cloud cluster another Cluster owns is refused (Ready False, AdoptionRefused or NameConflict) and nothing changes in the cloud",
    ),
    check(
        CheckId::C65,
        "adoption",
        "the cloud cluster an orphaned Cluster left is adopted again by another Cluster: the same cloud cluster, initialized, with its kubeconfig Secret",
    ),
];

/// The check with this ID.
pub fn find(id: CheckId) -> Option<&'static Check> {
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
    by_id: BTreeMap<CheckId, Outcome>,
}

impl Results {
    /// Records an outcome for `id`.
    pub fn record(&mut self, id: CheckId, outcome: Outcome) {
        match (self.by_id.get(&id), &outcome) {
            (Some(Outcome::Fail(_)), _) => {}
            (Some(Outcome::Pass(_)), Outcome::Skip(_)) => {}
            _ => {
                self.by_id.insert(id, outcome);
            }
        }
    }

    /// Records the same outcome for several checks.
    pub fn record_all(&mut self, ids: &[CheckId], outcome: &Outcome) {
        for id in ids {
            self.record(*id, outcome.clone());
        }
    }

    /// Skips every check in `ids` that has no result yet.
    pub fn skip_unjudged(&mut self, ids: &[CheckId], reason: &str) {
        for id in ids {
            self.by_id
                .entry(*id)
                .or_insert_with(|| Outcome::Skip(reason.to_string()));
        }
    }

    /// The outcome of `id`, if judged.
    pub fn get(&self, id: CheckId) -> Option<&Outcome> {
        self.by_id.get(&id)
    }

    /// Every catalogue check with its outcome (unjudged ones as skipped), in report order,
    /// limited to `only` when given.
    pub fn rows(&self, only: Option<&[CheckId]>) -> Vec<(&'static Check, Outcome)> {
        CATALOGUE
            .iter()
            .filter(|c| only.is_none_or(|o| o.contains(&c.id)))
            .map(|c| {
                let outcome = self.by_id.get(&c.id).cloned().unwrap_or_else(|| {
                    Outcome::Skip("not judged: its scenario did not run".to_string())
                });
                (c, outcome)
            })
            .collect()
    }

    /// Every judged check and its outcome.
    pub fn into_entries(self) -> Vec<(CheckId, Outcome)> {
        self.by_id.into_iter().collect()
    }

    /// IDs of the failed checks.
    pub fn failed(&self) -> Vec<CheckId> {
        self.by_id
            .iter()
            .filter(|(_, o)| o.is_fail())
            .map(|(id, _)| *id)
            .collect()
    }
}

/// Records each outcome in turn, as [`Results::record`] does.
impl Extend<(CheckId, Outcome)> for Results {
    fn extend<I: IntoIterator<Item = (CheckId, Outcome)>>(&mut self, outcomes: I) {
        for (id, outcome) in outcomes {
            self.record(id, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_every_id_once_in_order() {
        let ids: Vec<_> = CATALOGUE.iter().map(|c| c.id).collect();
        assert_eq!(ids, CheckId::ALL);
        assert!(
            CheckId::ALL
                .windows(2)
                .all(|w| w[0].as_str() < w[1].as_str())
        );
    }

    #[test]
    fn ids_read_and_print_as_before() {
        for id in CheckId::ALL {
            assert_eq!(id.as_str().parse::<CheckId>(), Ok(*id));
            assert_eq!(id.to_string(), id.as_str());
        }
        assert_eq!(CheckId::C07.as_str(), "C07");
        assert_eq!(format!("{:<4}|", CheckId::C07), "C07 |");
        assert_eq!(
            "C10".parse::<CheckId>(),
            Err(UnknownCheck("C10".to_string()))
        );
        assert!("c07".parse::<CheckId>().is_err());
    }

    #[test]
    fn a_failure_is_never_overwritten_by_a_later_pass() {
        let mut r = Results::default();
        r.record(CheckId::C16, Outcome::Fail("a".into()));
        r.record(CheckId::C16, Outcome::Pass("b".into()));
        assert_eq!(r.get(CheckId::C16), Some(&Outcome::Fail("a".into())));
        r.record(CheckId::C17, Outcome::Pass("x".into()));
        r.record(CheckId::C17, Outcome::Skip("y".into()));
        assert_eq!(r.get(CheckId::C17), Some(&Outcome::Pass("x".into())));
        r.record(CheckId::C17, Outcome::Fail("z".into()));
        assert_eq!(r.failed(), vec![CheckId::C16, CheckId::C17]);
    }

    #[test]
    fn unjudged_checks_are_reported_as_skipped() {
        let r = Results::default();
        let rows = r.rows(Some(&[CheckId::C01]));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.label(), "skip");
    }
}
