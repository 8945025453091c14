//! What a reconcile pass wants reported, before the bookkeeping fields: [`DesiredCondition`], its
//! message as a sentence, and the sets every provider builds the same way (the `Paused`
//! condition, the whole set of a pass that waits, the `Ready` summary of the others).

use super::{ConditionStatus, ConditionType, Reason};

/// One condition as a reconcile pass wants it reported, without the bookkeeping fields
/// (`lastTransitionTime`, `observedGeneration`) that
/// [`compute_conditions`](super::compute_conditions) fills in.
///
/// `type_` and `reason` are strings so providers can report their own types and reasons; build
/// shared ones with [`ConditionType`] and [`Reason`] through the constructors, e.g.
/// `DesiredCondition::false_(ConditionType::Ready, Reason::QuotaExceeded, "…")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesiredCondition {
    /// The condition type (`condition.type`), CamelCase.
    pub type_: String,
    /// The condition status.
    pub status: ConditionStatus,
    /// The reason (`condition.reason`), CamelCase, never empty.
    pub reason: String,
    /// What happened, in the user's terms, and what to do; may be empty.
    pub message: String,
}

impl DesiredCondition {
    /// A condition of any status.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        DesiredCondition {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// A `True` condition.
    pub fn true_(
        type_: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(type_, ConditionStatus::True, reason, message)
    }

    /// A `False` condition.
    pub fn false_(
        type_: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(type_, ConditionStatus::False, reason, message)
    }

    /// An `Unknown` condition.
    pub fn unknown(
        type_: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(type_, ConditionStatus::Unknown, reason, message)
    }

    /// Whether this condition's type is `type_`.
    pub fn is_type(&self, type_: ConditionType) -> bool {
        self.type_ == type_.as_str()
    }
}

impl DesiredCondition {
    /// The same condition with its message as a [`sentence`].
    pub fn in_sentences(mut self) -> Self {
        self.message = sentence(&self.message);
        self
    }
}

/// `message` as a sentence, the form every condition message takes: the first letter in upper
/// case (unless the first word is a field path or name such as `spec.version`), and a full stop
/// at the end. An empty message stays empty.
pub fn sentence(message: &str) -> String {
    let message = message.trim();
    if message.is_empty() {
        return String::new();
    }
    let first_word = message.split_whitespace().next().unwrap_or_default();
    let literal = first_word.contains(['.', '/', '_', ':', '=']);
    let mut out = String::with_capacity(message.len() + 1);
    let mut chars = message.chars();
    match chars.next() {
        Some(c) if !literal => out.extend(c.to_uppercase()),
        Some(c) => out.push(c),
        None => {}
    }
    out.extend(chars);
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

/// The `Paused` condition every kind reports on every pass, as the Cluster API contract asks:
/// `True`/`Paused` when paused, `False`/`NotPaused` otherwise.
pub fn paused_condition(paused: bool) -> DesiredCondition {
    if paused {
        DesiredCondition::true_(
            ConditionType::Paused,
            Reason::Paused,
            "Reconciliation is paused by Cluster.spec.paused or the cluster.x-k8s.io/paused \
             annotation; no change and no cloud call is made until it is removed.",
        )
    } else {
        DesiredCondition::false_(ConditionType::Paused, Reason::NotPaused, "")
    }
}

/// The provider roles, for the condition types each reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionRole {
    /// The `XCluster`: `Ready`, `NetworkReady`.
    InfraCluster,
    /// The `XControlPlane`: `Ready`, `Available`, `KubeconfigReady`, `Upgrading`.
    ControlPlane,
    /// The `XMachinePool`: `Ready`, `Upgrading`, `NodesVisible`.
    MachinePool,
}

impl ConditionRole {
    /// The types a pass of this role reports, every pass (the runtime adds `Paused`).
    pub const fn types(self) -> &'static [ConditionType] {
        match self {
            ConditionRole::InfraCluster => &[ConditionType::Ready, ConditionType::NetworkReady],
            ConditionRole::ControlPlane => &[
                ConditionType::Ready,
                ConditionType::Available,
                ConditionType::KubeconfigReady,
                ConditionType::Upgrading,
            ],
            ConditionRole::MachinePool => &[
                ConditionType::Ready,
                ConditionType::Upgrading,
                ConditionType::NodesVisible,
            ],
        }
    }
}

/// The whole condition set of a pass that stops before reaching the cloud (waiting for the
/// infrastructure, for the MachinePool, for the control plane): every positive type of the role
/// `False` with `reason` and `message`, `Upgrading` `False`/`UpToDate`, since nothing is
/// being upgraded while nothing is done, and `NodesVisible` `Unknown` (no nodes yet to see).
/// Because [`compute_conditions`](super::compute_conditions) drops what a pass does not name, a
/// waiting pass must name every type, or a condition would vanish while it waits.
pub fn waiting_set(
    role: ConditionRole,
    reason: Reason,
    message: impl Into<String>,
) -> Vec<DesiredCondition> {
    let message = message.into();
    role.types()
        .iter()
        .map(|t| match t {
            ConditionType::Upgrading => {
                DesiredCondition::false_(*t, Reason::UpToDate, "No upgrade is in progress")
            }
            ConditionType::NodesVisible => DesiredCondition::unknown(*t, reason, message.clone()),
            _ => DesiredCondition::false_(*t, reason, message.clone()),
        })
        .collect()
}

/// The `Ready` summary of the other conditions of a pass.
///
/// Guarantees:
/// - Parts whose type is a negative-polarity shared type (`Paused`, `Upgrading`), the
///   informational `NodesVisible` or `Ready` itself are ignored; every other part counts,
///   provider-specific types included.
/// - `True`/`Ready` (empty message) when every counted part is `True`, including when there is
///   none.
/// - Otherwise `False` when any counted part is `False`, else `Unknown`; reason and message are
///   those of the first counted part (in the order given) with that status, so put the part
///   that explains the most first.
pub fn ready_summary(parts: &[DesiredCondition]) -> DesiredCondition {
    let counted: Vec<&DesiredCondition> = parts
        .iter()
        .filter(|p| ConditionType::parse(&p.type_).is_none_or(ConditionType::counts_toward_ready))
        .collect();
    let first_with = |status: ConditionStatus| counted.iter().find(|p| p.status == status);
    match first_with(ConditionStatus::False).or_else(|| first_with(ConditionStatus::Unknown)) {
        Some(worst) => DesiredCondition::new(
            ConditionType::Ready,
            worst.status,
            worst.reason.clone(),
            worst.message.clone(),
        ),
        None => DesiredCondition::true_(ConditionType::Ready, Reason::Ready, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_condition_is_true_with_reason_paused_when_paused() {
        let c = paused_condition(true);
        assert_eq!(
            (c.type_.as_str(), c.status, c.reason.as_str()),
            ("Paused", ConditionStatus::True, "Paused")
        );
        assert!(!c.message.is_empty());
    }

    #[test]
    fn paused_condition_is_false_with_reason_not_paused_when_not_paused() {
        let c = paused_condition(false);
        assert_eq!(
            (c.type_.as_str(), c.status, c.reason.as_str()),
            ("Paused", ConditionStatus::False, "NotPaused")
        );
    }

    #[test]
    fn ready_summary_is_true_when_every_part_is_true() {
        let parts = [
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
            DesiredCondition::true_(ConditionType::KubeconfigReady, Reason::Ready, ""),
        ];
        let s = ready_summary(&parts);
        assert_eq!(s.type_, "Ready");
        assert_eq!(s.status, ConditionStatus::True);
        assert_eq!(s.reason, "Ready");
    }

    #[test]
    fn ready_summary_takes_reason_and_message_of_the_first_false_part() {
        let parts = [
            DesiredCondition::unknown(ConditionType::NetworkReady, Reason::WaitingForCloud, "u"),
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
            DesiredCondition::false_(ConditionType::KubeconfigReady, Reason::CloudError, "boom"),
            DesiredCondition::false_(ConditionType::Available, Reason::QuotaExceeded, "later"),
        ];
        let s = ready_summary(&parts);
        assert_eq!(s.status, ConditionStatus::False);
        assert_eq!(s.reason, "CloudError");
        assert_eq!(s.message, "boom");
    }

    #[test]
    fn ready_summary_is_unknown_when_nothing_is_false_but_something_is_unknown() {
        let parts = [
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
            DesiredCondition::unknown(ConditionType::NetworkReady, Reason::WaitingForCloud, "w"),
        ];
        let s = ready_summary(&parts);
        assert_eq!(s.status, ConditionStatus::Unknown);
        assert_eq!(s.reason, "WaitingForCloud");
        assert_eq!(s.message, "w");
    }

    #[test]
    fn ready_summary_ignores_paused_and_upgrading() {
        let parts = [
            paused_condition(false),
            DesiredCondition::true_(
                ConditionType::Upgrading,
                Reason::Upgrading,
                "v1.31 to v1.32",
            ),
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
        ];
        assert_eq!(ready_summary(&parts).status, ConditionStatus::True);
    }

    #[test]
    fn a_waiting_pass_names_every_type_of_its_role() {
        for role in [
            ConditionRole::InfraCluster,
            ConditionRole::ControlPlane,
            ConditionRole::MachinePool,
        ] {
            let set = waiting_set(
                role,
                Reason::WaitingForControlPlane,
                "Waiting for the control plane.",
            );
            let types: Vec<&str> = set.iter().map(|c| c.type_.as_str()).collect();
            let want: Vec<&str> = role.types().iter().map(|t| t.as_str()).collect();
            assert_eq!(types, want, "{role:?}");
            for c in &set {
                let want = if c.type_ == "NodesVisible" {
                    ConditionStatus::Unknown
                } else {
                    ConditionStatus::False
                };
                assert_eq!(c.status, want, "{role:?} {}", c.type_);
            }
        }
        let pool = waiting_set(
            ConditionRole::MachinePool,
            Reason::WaitingForControlPlane,
            "m",
        );
        assert_eq!(pool[0].reason, "WaitingForControlPlane");
        assert_eq!(pool[1].type_, "Upgrading");
        assert_eq!(pool[1].reason, "UpToDate");
    }

    #[test]
    fn messages_become_sentences_without_touching_field_names() {
        assert_eq!(
            sentence("creating node group ng"),
            "Creating node group ng."
        );
        assert_eq!(
            sentence("EKS is creating cluster c1."),
            "EKS is creating cluster c1."
        );
        assert_eq!(
            sentence("spec.version cannot go down"),
            "spec.version cannot go down."
        );
        assert_eq!(sentence("  "), "");
        assert_eq!(sentence("done?"), "Done?");
    }
}
