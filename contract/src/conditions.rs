//! Conditions, computed rather than poked.
//!
//! Every reconcile pass derives the *complete* set of conditions it wants to report as a list
//! of [`DesiredCondition`]s, and [`compute_conditions`] turns that list, together with the
//! conditions currently stored on the object, into the `status.conditions` to write. The
//! function owns the two fiddly rules of `metav1.Condition` so that no reconciler repeats them:
//!
//! - `lastTransitionTime` moves only when a condition's `status` flips (or when the condition
//!   first appears); a new `reason` or `message` alone keeps the old timestamp;
//! - `observedGeneration` is the `metadata.generation` the pass worked from.
//!
//! The clock is always an argument; nothing in this module reads it.
//!
//! The condition types and reasons are the same on every cloud (see `api.md`). Providers may
//! add their own types and reasons as plain strings, but should prefer the shared ones.

use std::fmt;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// The condition types shared by every provider (`api.md`, "Conditions").
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
    /// private-only cluster; informational, so it is left out of [`ready_summary`]: the pool
    /// itself is managed from the cloud API alone.
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
    /// polarity and are therefore left out of [`ready_summary`].
    pub const fn is_positive_polarity(self) -> bool {
        !matches!(self, ConditionType::Upgrading | ConditionType::Paused)
    }

    /// Whether [`ready_summary`] counts this type: the positive ones that report on what the
    /// provider manages (`NodesVisible` reports on what core can see, not on the pool).
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

/// The condition reasons shared by every provider (`api.md`, "Conditions"), plus four this
/// library adds (marked below) because the shared list has no word for them.
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
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 19] = [
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

/// One condition as a reconcile pass wants it reported, without the bookkeeping fields
/// (`lastTransitionTime`, `observedGeneration`) that [`compute_conditions`] fills in.
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

/// Turns the desired set of a pass into the `status.conditions` to write.
///
/// Guarantees:
/// - **The desired set is complete for the pass.** The result holds exactly one condition per
///   type named in `desired`; a condition in `previous` whose type is not in `desired` is
///   dropped. (The runtime supplies every type the kind reports on every pass. Conditions owned
///   by another field manager are unaffected when status is written with server-side apply.)
/// - If `desired` names a type twice, the later entry wins.
/// - `lastTransitionTime` is kept from `previous` when the type existed there with the same
///   status; otherwise (new type, or the status flipped) it is `now`. A change of reason or
///   message alone does not move it.
/// - `now` is truncated to whole seconds, the precision `metav1.Time` is stored with, so a
///   result that is written and read back compares equal to itself.
/// - `observedGeneration` is `generation` on every condition.
/// - The output is sorted by type (byte order), so it does not depend on the order in which
///   the caller assembled `desired`.
/// - Idempotent: feeding the result back as `previous` with the same `desired` and
///   `generation` returns it unchanged, whatever `now` is.
pub fn compute_conditions(
    previous: &[Condition],
    desired: &[DesiredCondition],
    generation: Option<i64>,
    now: Timestamp,
) -> Vec<Condition> {
    let now = truncate_to_seconds(now);
    let mut wanted: Vec<&DesiredCondition> = Vec::with_capacity(desired.len());
    for d in desired {
        match wanted.iter_mut().find(|w| w.type_ == d.type_) {
            Some(slot) => *slot = d,
            None => wanted.push(d),
        }
    }
    let mut out: Vec<Condition> = wanted
        .into_iter()
        .map(|d| {
            let status = d.status.as_str();
            let last_transition_time = previous
                .iter()
                .find(|p| p.type_ == d.type_ && p.status == status)
                .map(|p| p.last_transition_time.clone())
                .unwrap_or_else(|| Time(now));
            Condition {
                type_: d.type_.clone(),
                status: status.to_owned(),
                reason: d.reason.clone(),
                message: d.message.clone(),
                last_transition_time,
                observed_generation: generation,
            }
        })
        .collect();
    out.sort_by(|a, b| a.type_.cmp(&b.type_));
    out
}

fn truncate_to_seconds(now: Timestamp) -> Timestamp {
    // `from_second` only fails outside jiff's supported range, which a value already held in a
    // `Timestamp` with its sub-second part removed cannot leave.
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// The `Paused` condition for a pass (`contract.md` §3): `True`/`Paused` when paused,
/// `False`/`NotPaused` otherwise.
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

impl DesiredCondition {
    /// The same condition with its message as a [`sentence`].
    pub fn in_sentences(mut self) -> Self {
        self.message = sentence(&self.message);
        self
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
/// being upgraded while nothing is done, and `NodesVisible` `Unknown` (no nodes yet to see). Because [`compute_conditions`] drops what a pass does
/// not name, a waiting pass must name every type, or a condition would vanish while it waits.
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

/// The condition of type `type_` in `conditions`, if any.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether `conditions` holds a condition of type `type_` with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == ConditionStatus::True.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ts(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn ready_true() -> DesiredCondition {
        DesiredCondition::true_(ConditionType::Ready, Reason::Ready, "")
    }

    #[test]
    fn a_new_condition_gets_now_as_its_transition_time_and_the_generation() {
        let out = compute_conditions(&[], &[ready_true()], Some(3), ts(100));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].type_, "Ready");
        assert_eq!(out[0].status, "True");
        assert_eq!(out[0].reason, "Ready");
        assert_eq!(out[0].last_transition_time, Time(ts(100)));
        assert_eq!(out[0].observed_generation, Some(3));
    }

    #[test]
    fn the_transition_time_stays_when_only_reason_and_message_change() {
        let first = compute_conditions(
            &[],
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::Creating,
                "creating",
            )],
            Some(1),
            ts(100),
        );
        let second = compute_conditions(
            &first,
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::WaitingForCloud,
                "still creating",
            )],
            Some(2),
            ts(200),
        );
        assert_eq!(second[0].last_transition_time, Time(ts(100)));
        assert_eq!(second[0].reason, "WaitingForCloud");
        assert_eq!(second[0].message, "still creating");
        assert_eq!(second[0].observed_generation, Some(2));
    }

    #[test]
    fn the_transition_time_moves_when_the_status_flips() {
        let first = compute_conditions(
            &[],
            &[DesiredCondition::false_(
                ConditionType::Ready,
                Reason::Creating,
                "",
            )],
            Some(1),
            ts(100),
        );
        let second = compute_conditions(&first, &[ready_true()], Some(1), ts(250));
        assert_eq!(second[0].last_transition_time, Time(ts(250)));
        assert_eq!(second[0].status, "True");
    }

    #[test]
    fn now_is_truncated_to_whole_seconds() {
        let now = Timestamp::from_millisecond(100_999).unwrap();
        let out = compute_conditions(&[], &[ready_true()], None, now);
        assert_eq!(out[0].last_transition_time, Time(ts(100)));
    }

    #[test]
    fn conditions_missing_from_the_desired_set_are_dropped() {
        let first = compute_conditions(
            &[],
            &[ready_true(), paused_condition(false)],
            Some(1),
            ts(1),
        );
        assert_eq!(first.len(), 2);
        let second = compute_conditions(&first, &[ready_true()], Some(1), ts(2));
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].type_, "Ready");
    }

    #[test]
    fn output_is_sorted_by_type_whatever_the_desired_order() {
        let desired = [
            paused_condition(false),
            ready_true(),
            DesiredCondition::true_(ConditionType::Available, Reason::Ready, ""),
        ];
        let out = compute_conditions(&[], &desired, None, ts(1));
        let types: Vec<&str> = out.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Available", "Paused", "Ready"]);
    }

    #[test]
    fn a_type_named_twice_keeps_the_later_entry() {
        let desired = [
            DesiredCondition::false_(ConditionType::Ready, Reason::Creating, "a"),
            ready_true(),
        ];
        let out = compute_conditions(&[], &desired, None, ts(1));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].status, "True");
    }

    #[test]
    fn provider_specific_types_and_reasons_pass_through() {
        let desired = [DesiredCondition::false_(
            "NodePoolHealthy",
            "NodesNotReady",
            "2 of 3",
        )];
        let out = compute_conditions(&[], &desired, Some(5), ts(1));
        assert_eq!(out[0].type_, "NodePoolHealthy");
        assert_eq!(out[0].reason, "NodesNotReady");
    }

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

    #[test]
    fn is_true_finds_a_true_condition_by_type() {
        let out = compute_conditions(&[], &[ready_true(), paused_condition(false)], None, ts(1));
        assert!(is_true(&out, "Ready"));
        assert!(!is_true(&out, "Paused"));
        assert!(!is_true(&out, "Available"));
    }

    fn arb_status() -> impl Strategy<Value = ConditionStatus> {
        prop_oneof![
            Just(ConditionStatus::True),
            Just(ConditionStatus::False),
            Just(ConditionStatus::Unknown)
        ]
    }

    fn arb_desired() -> impl Strategy<Value = DesiredCondition> {
        (
            prop::sample::select(ConditionType::ALL.to_vec()),
            arb_status(),
            prop::sample::select(Reason::ALL.to_vec()),
            "[a-z ]{0,12}",
        )
            .prop_map(|(t, s, r, m)| DesiredCondition::new(t, s, r, m))
    }

    proptest! {
        #[test]
        fn computing_twice_with_the_same_desired_set_at_a_later_time_changes_nothing(
            desired in prop::collection::vec(arb_desired(), 0..8),
            generation in prop::option::of(1i64..1000),
            t0 in 0i64..2_000_000_000,
            later in 0i64..1_000_000,
        ) {
            let first = compute_conditions(&[], &desired, generation, ts(t0));
            let second = compute_conditions(&first, &desired, generation, ts(t0 + later));
            prop_assert_eq!(first, second);
        }

        #[test]
        fn the_transition_time_moves_exactly_when_the_status_flips(
            before in prop::collection::vec(arb_desired(), 1..8),
            after in prop::collection::vec(arb_desired(), 1..8),
        ) {
            let first = compute_conditions(&[], &before, None, ts(10));
            let second = compute_conditions(&first, &after, None, ts(20));
            for c in &second {
                let flipped = find_condition(&first, &c.type_)
                    .is_none_or(|p| p.status != c.status);
                let expected = if flipped { ts(20) } else { ts(10) };
                prop_assert_eq!(&c.last_transition_time, &Time(expected));
            }
        }
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
