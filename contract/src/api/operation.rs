//! The cloud work a provider has sent: the operation in flight (remembered in status so the next
//! pass picks it up instead of waiting), and when `requestOverrides` last went out with a request.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cloud operation in flight, remembered so the next pass picks it up instead of waiting.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// The cloud's identifier of the operation (update ID, operation name, work request OCID, …).
    #[schemars(length(max = 1024))]
    pub id: String,
    /// What the operation does: Create, Update, Upgrade or Delete.
    pub kind: OperationKind,
    /// When the provider started the operation.
    pub started: Time,
}

impl Operation {
    /// The operation `id` of `kind`, started at `now`.
    pub fn new(id: impl Into<String>, kind: OperationKind, now: jiff::Timestamp) -> Self {
        Self {
            id: id.into(),
            kind,
            started: Time(now),
        }
    }

    /// How long ago it started (zero if `now` is before that).
    pub fn age(&self, now: jiff::Timestamp) -> std::time::Duration {
        let nanos = now
            .as_nanosecond()
            .saturating_sub(self.started.0.as_nanosecond());
        std::time::Duration::from_nanos(u64::try_from(nanos).unwrap_or(0))
    }

    /// How soon to look again while the cloud works on it: after as long as it has run so far,
    /// no sooner than `first` and no later than `poll`. An operation the cloud finishes at once
    /// is seen within `first`; a long one (an EKS create takes ten minutes) costs a few reads
    /// more than polling at `poll` from the start (5, 5, 10, 20 s, then every `poll`).
    pub fn look_again_after(
        &self,
        now: jiff::Timestamp,
        first: std::time::Duration,
        poll: std::time::Duration,
    ) -> std::time::Duration {
        self.age(now).clamp(first.min(poll), poll)
    }
}

/// What a cloud operation does; the same four kinds on every cloud.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum OperationKind {
    /// Creates the resource.
    Create,
    /// Changes its configuration (endpoint access, logging, scaling, labels, …).
    Update,
    /// Moves it to another Kubernetes version.
    Upgrade,
    /// Deletes it.
    Delete,
}

impl OperationKind {
    /// The name in `status.operation.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Update => "Update",
            Self::Upgrade => "Upgrade",
            Self::Delete => "Delete",
        }
    }
}

impl std::fmt::Display for OperationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The last time `requestOverrides` went out with a cloud request (the same on every kind).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestOverridesStatus {
    /// The cloud operation whose request body was patched, e.g. CreateCluster.
    #[schemars(length(max = 64))]
    pub operation: String,
    /// When the patched request was sent.
    pub applied_at: Time,
    /// The object generation whose overrides were applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_is_looked_at_again_after_as_long_as_it_has_run_between_first_and_poll() {
        let start: jiff::Timestamp = "2026-12-04T00:00:00Z".parse().unwrap();
        let op = Operation::new("op-1", OperationKind::Create, start);
        use std::time::Duration;
        let (first, poll) = (Duration::from_secs(5), Duration::from_secs(30));
        let at = |secs: i64| start + jiff::SignedDuration::from_secs(secs);
        let after: Vec<u64> = [0, 5, 10, 20, 40, 600]
            .into_iter()
            .map(|s| op.look_again_after(at(s), first, poll).as_secs())
            .collect();
        assert_eq!(after, [5, 5, 10, 20, 30, 30]);
        // A poll interval below `first` wins; a clock behind the start looks again soon.
        assert_eq!(
            op.look_again_after(at(100), first, Duration::from_secs(2)),
            Duration::from_secs(2)
        );
        assert_eq!(op.look_again_after(at(-60), first, poll), first);
    }
}
