//! When resources reached a state, as the emulator's ticker completed their transitions: what a
//! benchmark needs to tell the cloud's time from the provider's (the benchmark's P5: from "the
//! cloud says ACTIVE" to "the control plane is initialized").

use std::sync::Mutex;

use serde::Serialize;

/// One completed transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Milestone {
    /// The resource, as the cloud names it (`cluster/<name>`).
    pub resource: String,
    /// The state it reached, as the cloud spells it (`ACTIVE`).
    pub state: String,
    /// When, Unix milliseconds.
    pub at_millis: u64,
}

/// The milestones seen, oldest first (bounded: the oldest go past [`Milestones::MAX`]).
#[derive(Debug, Default)]
pub struct Milestones {
    seen: Mutex<Vec<Milestone>>,
}

impl Milestones {
    /// How many are kept.
    pub const MAX: usize = 100_000;

    /// Records that `resource` reached `state` now.
    pub fn record(&self, resource: impl Into<String>, state: impl Into<String>) {
        let at_millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= Self::MAX {
            seen.remove(0);
        }
        seen.push(Milestone {
            resource: resource.into(),
            state: state.into(),
            at_millis,
        });
    }

    /// Every milestone kept, oldest first.
    pub fn all(&self) -> Vec<Milestone> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn milestones_keep_their_order_and_time() {
        let m = Milestones::default();
        m.record("cluster/a", "ACTIVE");
        m.record("cluster/b", "ACTIVE");
        let all = m.all();
        assert_eq!(
            all.iter().map(|x| x.resource.as_str()).collect::<Vec<_>>(),
            ["cluster/a", "cluster/b"]
        );
        assert!(all[0].at_millis > 0 && all[0].at_millis <= all[1].at_millis);
    }
}
