//! The words every provider's conditions use: the shared condition types (with their polarity),
//! the shared reasons, and the three statuses, each with the string written into the condition.

use std::fmt;

/// The condition types shared by every provider.
///
/// `Ready`, `Available`, `NetworkReady` and `KubeconfigReady` have positive polarity (`True`
/// is the healthy state); `Upgrading` and `Paused` have negative polarity (`True` reports an
/// activity or a hold, not a fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConditionType {
    /// Summary of the object's other positive conditions; reported by every kind.
    Ready,
    /// The managed control plane serves requests (ControlPlane; core mirrors it into the
    /// Cluster's `ControlPlaneAvailable`).
    Available,
    /// The network the cluster uses exists and is usable (XCluster).
    NetworkReady,
    /// The `<cluster>-kubeconfig` Secret exists and holds an unexpired credential (ControlPlane).
    KubeconfigReady,
    /// A version upgrade is in progress (ControlPlane, MachinePool).
    Upgrading,
    /// Reconciliation is paused by `Cluster.spec.paused` or the `cluster.x-k8s.io/paused`
    /// annotation (every kind).
    Paused,
    /// Added here: Cluster API core reaches the workload API server, where it matches the
    /// pool's Nodes to its instances (MachinePool). `False` says what core cannot see of a
    /// private-only cluster; informational, so it is left out of
    /// [`ready_summary`](super::ready_summary): the pool itself is managed from the cloud API
    /// alone.
    NodesVisible,
}

impl ConditionType {
    /// Every shared condition type, in declaration order.
    pub const ALL: [ConditionType; 7] = [
        ConditionType::Ready,
        ConditionType::Available,
        ConditionType::NetworkReady,
        ConditionType::KubeconfigReady,
        ConditionType::Upgrading,
        ConditionType::Paused,
        ConditionType::NodesVisible,
    ];

    /// The value written into `condition.type`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConditionType::Ready => "Ready",
            ConditionType::Available => "Available",
            ConditionType::NetworkReady => "NetworkReady",
            ConditionType::KubeconfigReady => "KubeconfigReady",
            ConditionType::Upgrading => "Upgrading",
            ConditionType::Paused => "Paused",
            ConditionType::NodesVisible => "NodesVisible",
        }
    }

    /// Parses a `condition.type` value; `None` for a type that is not one of the shared ones.
    pub fn parse(value: &str) -> Option<ConditionType> {
        ConditionType::ALL.into_iter().find(|t| t.as_str() == value)
    }

    /// Whether `True` is the healthy state of this type. `Upgrading` and `Paused` are negative
    /// polarity and are therefore left out of [`ready_summary`](super::ready_summary).
    pub const fn is_positive_polarity(self) -> bool {
        !matches!(self, ConditionType::Upgrading | ConditionType::Paused)
    }

    /// Whether [`ready_summary`](super::ready_summary) counts this type: the positive ones that
    /// report on what the provider manages (`NodesVisible` reports on what core can see, not on
    /// the pool).
    pub const fn counts_toward_ready(self) -> bool {
        self.is_positive_polarity()
            && !matches!(self, ConditionType::Ready | ConditionType::NodesVisible)
    }
}

impl fmt::Display for ConditionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ConditionType> for String {
    fn from(value: ConditionType) -> Self {
        value.as_str().to_owned()
    }
}

/// The condition reasons shared by every provider; those marked "Added here" are this library's
/// own, for cases the common list has no word for.
///
/// A reason is a machine-readable CamelCase word; the condition's message says what happened
/// in the user's terms and what to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// The cloud resource is being created.
    Creating,
    /// The cloud resource is being changed to match the spec (not a version change).
    Updating,
    /// A Kubernetes version upgrade is in progress.
    Upgrading,
    /// The cloud resource is being deleted.
    Deleting,
    /// The condition holds: used with `True` on every positive-polarity condition.
    Ready,
    /// Waiting for the Cluster's infrastructure (`status.initialization.infrastructureProvisioned`).
    WaitingForInfrastructure,
    /// A cloud operation is in flight; the provider will look again later.
    WaitingForCloud,
    /// The spec cannot be honoured; nothing is retried until the spec changes.
    InvalidSpec,
    /// A cloud resource with the wanted name exists and is not ours (and adoption was not asked for).
    NameConflict,
    /// The cloud refused the request for lack of quota.
    QuotaExceeded,
    /// The cloud throttled the provider (HTTP 429 or equivalent); retried after the advised delay.
    Throttled,
    /// The cloud returned an error not covered by a more specific reason; its message is quoted.
    CloudError,
    /// Used with `Paused` `True`: reconciliation is paused.
    Paused,
    /// Used with `Paused` `False`: reconciliation is active.
    NotPaused,
    /// Added here: a pool waits for the control plane (to be initialized, or to reach the minor
    /// version the pool is asked to run, since a pool never runs ahead of the control plane).
    WaitingForControlPlane,
    /// Added here: used with `Upgrading` `False`: the running version is the desired version.
    UpToDate,
    /// Added here: the cloud resource recorded in status no longer exists (deleted outside the
    /// provider); it is recreated or reported, per the spec.
    NotFound,
    /// Added here: the cloud rejected the credentials (HTTP 401/403 or equivalent), or the
    /// credentials named by `identityRef` could not be read.
    Unauthorized,
    /// Added here: used with `NodesVisible` `False`: Cluster API core cannot reach the workload
    /// API server (the Cluster's `RemoteConnectionProbe` is `False`).
    WorkloadUnreachable,
    /// Added here: `spec.adoption` asks to adopt a cloud resource; the plan of what adopting
    /// changes is in `status.adoption` and nothing is written until it is accepted.
    AdoptionPlanned,
    /// Added here: `spec.adoption` names nothing this provider can adopt (no resource of that
    /// name, or one with another identity than `spec.adoption.id`); nothing was written.
    AdoptionRefused,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 21] = [
        Reason::Creating,
        Reason::Updating,
        Reason::Upgrading,
        Reason::Deleting,
        Reason::Ready,
        Reason::WaitingForInfrastructure,
        Reason::WaitingForCloud,
        Reason::InvalidSpec,
        Reason::NameConflict,
        Reason::QuotaExceeded,
        Reason::Throttled,
        Reason::CloudError,
        Reason::Paused,
        Reason::NotPaused,
        Reason::WaitingForControlPlane,
        Reason::UpToDate,
        Reason::NotFound,
        Reason::Unauthorized,
        Reason::WorkloadUnreachable,
        Reason::AdoptionPlanned,
        Reason::AdoptionRefused,
    ];

    /// The value written into `condition.reason`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::Creating => "Creating",
            Reason::Updating => "Updating",
            Reason::Upgrading => "Upgrading",
            Reason::Deleting => "Deleting",
            Reason::Ready => "Ready",
            Reason::WaitingForInfrastructure => "WaitingForInfrastructure",
            Reason::WaitingForCloud => "WaitingForCloud",
            Reason::InvalidSpec => "InvalidSpec",
            Reason::NameConflict => "NameConflict",
            Reason::QuotaExceeded => "QuotaExceeded",
            Reason::Throttled => "Throttled",
            Reason::CloudError => "CloudError",
            Reason::Paused => "Paused",
            Reason::NotPaused => "NotPaused",
            Reason::WaitingForControlPlane => "WaitingForControlPlane",
            Reason::UpToDate => "UpToDate",
            Reason::NotFound => "NotFound",
            Reason::Unauthorized => "Unauthorized",
            Reason::WorkloadUnreachable => "WorkloadUnreachable",
            Reason::AdoptionPlanned => "AdoptionPlanned",
            Reason::AdoptionRefused => "AdoptionRefused",
        }
    }

    /// Parses a `condition.reason` value; `None` for a reason that is not one of these.
    pub fn parse(value: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == value)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Reason> for String {
    fn from(value: Reason) -> Self {
        value.as_str().to_owned()
    }
}

/// The `status` of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// The provider cannot tell (yet).
    Unknown,
}

impl ConditionStatus {
    /// The value written into `condition.status`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }

    /// Parses a `condition.status` value; anything other than `True`/`False`/`Unknown` is `None`.
    pub fn parse(value: &str) -> Option<ConditionStatus> {
        match value {
            "True" => Some(ConditionStatus::True),
            "False" => Some(ConditionStatus::False),
            "Unknown" => Some(ConditionStatus::Unknown),
            _ => None,
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(value: bool) -> Self {
        if value {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_and_type_round_trips_through_its_string() {
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.as_str()), Some(r));
        }
        for t in ConditionType::ALL {
            assert_eq!(ConditionType::parse(t.as_str()), Some(t));
        }
        for s in [
            ConditionStatus::True,
            ConditionStatus::False,
            ConditionStatus::Unknown,
        ] {
            assert_eq!(ConditionStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(Reason::parse("Nope"), None);
    }
}
