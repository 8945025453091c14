//! Switches that break the toy on purpose, one contract rule at a time.
//!
//! Each break is named after what it does wrong; [`Break::check`] names the conformance check it
//! is meant to make fail. With no break set the toy follows the contract.

use std::collections::BTreeSet;

use anyhow::{Result, bail};

/// One deliberate defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Break {
    // Release (static) breaks.
    /// ToyCluster CRD is cluster-scoped.
    CrdClusterScoped,
    /// ToyMachinePool CRD uses the plural `toympools`.
    CrdBadPlural,
    /// ToyControlPlane CRD lacks the `cluster.x-k8s.io/v1beta2` label.
    CrdNoContractLabel,
    /// metadata.yaml declares contract v1beta1.
    MetadataContractV1beta1,
    /// ToyMachinePool CRD has no status subresource.
    CrdNoStatus,
    /// No ClusterRole aggregated into core's manager role.
    NoAggregatedRole,
    /// No ToyMachinePoolTemplate kind.
    NoPoolTemplate,
    /// metadata.yaml's release series does not cover v0.1.0.
    MetadataOldVersion,
    /// The controller container is named `controller`.
    NoManagerContainer,
    /// ToyMachinePool's schema has spec.replicas but the CRD has no scale subresource.
    CrdReplicasNoScale,
    /// ToyControlPlane's spec.version has no rule requiring the `v`.
    NoVersionRule,

    // Behaviour breaks.
    /// Kubeconfig Secret without the cluster-name label.
    SecretNoLabel,
    /// Kubeconfig Secret without an owner reference.
    SecretNoOwner,
    /// Kubeconfig server differs from the published endpoint.
    SecretWrongServer,
    /// Kubeconfig Secret written ~3 s after controlPlaneInitialized.
    SecretLate,
    /// ToyCluster sets spec.controlPlaneEndpoint.
    EndpointOnInfra,
    /// Finalizer added only after the status flags.
    LateFinalizer,
    /// Objects without a Cluster owner are reconciled.
    NoOwnerGate,
    /// `--watch-filter` is ignored.
    IgnoreWatchFilter,
    /// `cluster.x-k8s.io/managed-by` on the ToyCluster is ignored.
    IgnoreManagedBy,
    /// Paused objects are still reconciled (and the cloud called).
    IgnorePause,
    /// The Paused condition is never set.
    NoPausedCondition,
    /// status.externalManagedControlPlane is not set.
    NoExternalManaged,
    /// status.version is reported without its `v`.
    VersionNoV,
    /// Ready conditions carry an empty reason.
    ConditionNoReason,
    /// ToyCluster reports no failure domains.
    NoFailureDomains,
    /// ToyMachinePool never sets status.ready.
    NoPoolReady,
    /// providerIDList carries one bogus extra ID.
    ExtraProviderId,
    /// `cluster.x-k8s.io/replicas-managed-by` is ignored.
    NoWriteback,
    /// The finalizer goes right after the cloud delete call, before the cloud confirms.
    EarlyFinalizerRemoval,
    /// Never looks an existing cloud cluster up: creates a new one whenever status is empty.
    RecreateOnMove,
    /// Patches Cluster.spec.controlPlaneEndpoint itself.
    OverrideClusterEndpoint,
    /// Does not initialize until the Cluster has an endpoint.
    WaitForClusterEndpoint,
    /// On scale down, drops an ID from providerIDList before its instance is gone.
    DropIdEarly,
    /// ToyCluster never reports provisioned.
    InfraNotProvisioned,
    /// ToyCluster reports provisioned but no Ready condition.
    NoInfraReadyCondition,
    /// ToyControlPlane never publishes spec.controlPlaneEndpoint.
    CpNoEndpoint,
    /// ToyControlPlane reports no Available condition.
    NoAvailableCondition,
    /// The kubeconfig Secret's credential is a bogus token.
    SecretBadCredentials,
    /// Pools keep the size they were created with.
    NoScaling,
    /// The user kubeconfig Secret carries the static admin credential instead of an exec plugin.
    UserKubeconfigStatic,
    /// The ToyCluster goes without deleting its cloud network.
    LeaveNetwork,
    /// An adoption tags the cloud cluster at once, before its plan is accepted.
    PlanWrites,
    /// An accepted adoption is never carried out: the cluster is never tagged.
    AcceptIgnored,
    /// `deletionPolicy: Orphan` is ignored: the cloud cluster is deleted.
    OrphanDeletes,
    /// A cloud cluster another Cluster owns is adopted when asked.
    AdoptsSiblings,
    /// `deletionPolicy: Orphan` leaves the cluster with its ownership tag.
    OrphanKeepsTag,
}

impl Break {
    /// Every break, release breaks first.
    pub const ALL: [Break; 47] = [
        Break::CrdClusterScoped,
        Break::CrdBadPlural,
        Break::CrdNoContractLabel,
        Break::MetadataContractV1beta1,
        Break::CrdNoStatus,
        Break::NoAggregatedRole,
        Break::NoPoolTemplate,
        Break::MetadataOldVersion,
        Break::NoManagerContainer,
        Break::CrdReplicasNoScale,
        Break::NoVersionRule,
        Break::SecretNoLabel,
        Break::SecretNoOwner,
        Break::SecretWrongServer,
        Break::SecretLate,
        Break::EndpointOnInfra,
        Break::LateFinalizer,
        Break::NoOwnerGate,
        Break::IgnoreWatchFilter,
        Break::IgnoreManagedBy,
        Break::IgnorePause,
        Break::NoPausedCondition,
        Break::NoExternalManaged,
        Break::VersionNoV,
        Break::ConditionNoReason,
        Break::NoFailureDomains,
        Break::NoPoolReady,
        Break::ExtraProviderId,
        Break::NoWriteback,
        Break::EarlyFinalizerRemoval,
        Break::RecreateOnMove,
        Break::OverrideClusterEndpoint,
        Break::WaitForClusterEndpoint,
        Break::DropIdEarly,
        Break::InfraNotProvisioned,
        Break::NoInfraReadyCondition,
        Break::CpNoEndpoint,
        Break::NoAvailableCondition,
        Break::SecretBadCredentials,
        Break::NoScaling,
        Break::UserKubeconfigStatic,
        Break::LeaveNetwork,
        Break::PlanWrites,
        Break::AcceptIgnored,
        Break::OrphanDeletes,
        Break::AdoptsSiblings,
        Break::OrphanKeepsTag,
    ];

    /// The switch's name on the command line and in `TOY_BREAK`.
    pub fn name(self) -> &'static str {
        match self {
            Break::CrdClusterScoped => "crd-cluster-scoped",
            Break::CrdBadPlural => "crd-bad-plural",
            Break::CrdNoContractLabel => "crd-no-contract-label",
            Break::MetadataContractV1beta1 => "metadata-contract-v1beta1",
            Break::CrdNoStatus => "crd-no-status",
            Break::NoAggregatedRole => "no-aggregated-role",
            Break::NoPoolTemplate => "no-pool-template",
            Break::MetadataOldVersion => "metadata-old-version",
            Break::NoManagerContainer => "no-manager-container",
            Break::CrdReplicasNoScale => "crd-replicas-no-scale",
            Break::NoVersionRule => "no-version-rule",
            Break::SecretNoLabel => "secret-no-label",
            Break::SecretNoOwner => "secret-no-owner",
            Break::SecretWrongServer => "secret-wrong-server",
            Break::SecretLate => "secret-late",
            Break::EndpointOnInfra => "endpoint-on-infra",
            Break::LateFinalizer => "late-finalizer",
            Break::NoOwnerGate => "no-owner-gate",
            Break::IgnoreWatchFilter => "ignore-watch-filter",
            Break::IgnoreManagedBy => "ignore-managed-by",
            Break::IgnorePause => "ignore-pause",
            Break::NoPausedCondition => "no-paused-condition",
            Break::NoExternalManaged => "no-external-managed",
            Break::VersionNoV => "version-no-v",
            Break::ConditionNoReason => "condition-no-reason",
            Break::NoFailureDomains => "no-failure-domains",
            Break::NoPoolReady => "no-pool-ready",
            Break::ExtraProviderId => "extra-provider-id",
            Break::NoWriteback => "no-writeback",
            Break::EarlyFinalizerRemoval => "early-finalizer-removal",
            Break::RecreateOnMove => "recreate-on-move",
            Break::OverrideClusterEndpoint => "override-cluster-endpoint",
            Break::WaitForClusterEndpoint => "wait-for-cluster-endpoint",
            Break::DropIdEarly => "drop-id-early",
            Break::InfraNotProvisioned => "infra-not-provisioned",
            Break::NoInfraReadyCondition => "no-infra-ready-condition",
            Break::CpNoEndpoint => "cp-no-endpoint",
            Break::NoAvailableCondition => "no-available-condition",
            Break::SecretBadCredentials => "secret-bad-credentials",
            Break::NoScaling => "no-scaling",
            Break::UserKubeconfigStatic => "user-kubeconfig-static",
            Break::LeaveNetwork => "leave-network",
            Break::PlanWrites => "plan-writes",
            Break::AcceptIgnored => "accept-ignored",
            Break::OrphanDeletes => "orphan-deletes",
            Break::AdoptsSiblings => "adopts-siblings",
            Break::OrphanKeepsTag => "orphan-keeps-tag",
        }
    }

    /// The conformance checks this break is meant to make fail.
    pub fn checks(self) -> &'static str {
        match self {
            Break::CrdClusterScoped => "C01",
            Break::CrdBadPlural => "C02",
            Break::CrdNoContractLabel => "C03",
            Break::MetadataContractV1beta1 => "C04",
            Break::CrdNoStatus => "C05",
            Break::NoAggregatedRole => "C07",
            Break::NoPoolTemplate => "C08",
            Break::MetadataOldVersion => "C55",
            Break::NoManagerContainer => "C56",
            Break::CrdReplicasNoScale => "C06",
            Break::NoVersionRule => "C24",
            Break::SecretNoLabel => "C28",
            Break::SecretNoOwner => "C32",
            Break::SecretWrongServer => "C29",
            Break::SecretLate => "C27",
            Break::EndpointOnInfra => "C15",
            Break::LateFinalizer => "C12",
            Break::NoOwnerGate => "C11",
            Break::IgnoreWatchFilter => "C38",
            Break::IgnoreManagedBy => "C39",
            Break::IgnorePause => "C35,C36",
            Break::NoPausedCondition => "C35,C36,C37",
            Break::NoExternalManaged => "C22",
            Break::VersionNoV => "C23",
            Break::ConditionNoReason => "C26",
            Break::NoFailureDomains => "C19",
            Break::NoPoolReady => "C46",
            Break::ExtraProviderId => "C47,C48",
            Break::NoWriteback => "C50",
            Break::EarlyFinalizerRemoval => "C42",
            Break::RecreateOnMove => "C59",
            Break::OverrideClusterEndpoint => "C17",
            Break::WaitForClusterEndpoint => "C21",
            Break::DropIdEarly => "C51",
            Break::InfraNotProvisioned => "C14",
            Break::NoInfraReadyCondition => "C18",
            Break::CpNoEndpoint => "C16",
            Break::NoAvailableCondition => "C25",
            Break::SecretBadCredentials => "C30,C31",
            Break::NoScaling => "C49",
            Break::UserKubeconfigStatic => "C34",
            Break::LeaveNetwork => "C60",
            Break::PlanWrites => "C61",
            Break::AcceptIgnored => "C62",
            Break::OrphanDeletes => "C63",
            Break::AdoptsSiblings => "C64",
            Break::OrphanKeepsTag => "C65",
        }
    }

    /// Whether the break changes the release files (else it changes the controller).
    pub fn is_release(self) -> bool {
        matches!(
            self,
            Break::CrdClusterScoped
                | Break::CrdBadPlural
                | Break::CrdNoContractLabel
                | Break::MetadataContractV1beta1
                | Break::CrdNoStatus
                | Break::NoAggregatedRole
                | Break::NoPoolTemplate
                | Break::MetadataOldVersion
                | Break::NoManagerContainer
                | Break::CrdReplicasNoScale
                | Break::NoVersionRule
        )
    }

    /// The break with this name.
    pub fn from_name(name: &str) -> Option<Break> {
        Break::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The set of breaks in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breaks(BTreeSet<Break>);

impl Breaks {
    /// No break: the toy follows the contract.
    pub fn none() -> Self {
        Self::default()
    }

    /// Parses names; each item may itself be a comma-separated list. Blank items are ignored.
    ///
    /// # Errors
    /// On an unknown name (a typo must not silently test the unbroken toy).
    pub fn parse<I, S>(items: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set = BTreeSet::new();
        for item in items {
            for name in item.as_ref().split(',').map(str::trim) {
                if name.is_empty() {
                    continue;
                }
                match Break::from_name(name) {
                    Some(b) => {
                        set.insert(b);
                    }
                    None => {
                        let known: Vec<&str> = Break::ALL.iter().map(|b| b.name()).collect();
                        bail!("unknown break {name:?}; known: {}", known.join(", "));
                    }
                }
            }
        }
        Ok(Self(set))
    }

    /// Whether `b` is in force.
    pub fn has(&self, b: Break) -> bool {
        self.0.contains(&b)
    }

    /// The breaks in force.
    pub fn iter(&self) -> impl Iterator<Item = Break> + '_ {
        self.0.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_break() {
        for b in Break::ALL {
            assert_eq!(Break::from_name(b.name()), Some(b));
        }
    }

    #[test]
    fn comma_lists_and_blanks_are_accepted() {
        let breaks = Breaks::parse(["secret-late, ,no-owner-gate", ""]).unwrap();
        assert!(breaks.has(Break::SecretLate));
        assert!(breaks.has(Break::NoOwnerGate));
        assert_eq!(breaks.iter().count(), 2);
    }

    #[test]
    fn an_unknown_name_is_an_error() {
        assert!(Breaks::parse(["secret-lat"]).is_err());
    }
}
