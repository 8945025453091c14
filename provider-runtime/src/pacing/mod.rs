//! Every timing rule of the kernel, in one place: when a pass looks at the cloud again, when
//! a cloud call may be sent, and what a pass may report without reading the cloud.
//!
//! | rule | where |
//! | --- | --- |
//! | a running operation is looked at soon after it starts, then later and later, and close together only where earlier ones of its kind finished | [`operations`] |
//! | a failed pass is tried again after what the cloud asked (a 429's `Retry-After`), at once after a conflict, and with exponential backoff only while one kind of failure repeats | [`retry`] |
//! | a throttled cluster's other objects wait for its `Retry-After` | [`retry::Holds`] |
//! | a call to a target answered 429 is not sent before its `Retry-After`, and for as long again one call at a time | [`admission`] |
//! | a control plane at rest plans from its last look; a network seen whole is not read again before its look-again time; a CA or a region's zones are read now and then | [`looks`] |
//!
//! Nothing here waits: a pass that may not call the cloud now ends and is requeued for when it
//! may ([`crate::CloudError::Held`]).

pub mod admission;
pub mod looks;
pub mod operations;
pub mod retry;

use std::time::Duration;

use crate::flags::{CommonArgs, DEFAULT_REST_INTERVAL};

/// How a provider paces its looks at the cloud: the same three settings on every cloud, from
/// its flags (`--poll-interval` and `--token-lifetime`, whose environment variables carry the
/// cloud's prefix, such as `AKS_POLL_INTERVAL`, and the shared `--rest-interval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// How soon to look again while the cloud works on something (creating, updating,
    /// deleting).
    pub poll: Duration,
    /// How long a resource at rest goes between two looks (drift detection).
    pub rest: Duration,
    /// How long the workload cluster accepts a token the kubeconfig Secret holds; the token is
    /// replaced when a third of it is left.
    pub token_lifetime: Duration,
}

impl Pacing {
    /// A cloud's defaults: `poll` while it is busy, its tokens' `token_lifetime`, and
    /// `--rest-interval`'s default at rest.
    pub const fn new(poll: Duration, token_lifetime: Duration) -> Self {
        Self {
            poll,
            rest: DEFAULT_REST_INTERVAL,
            token_lifetime,
        }
    }

    /// How a network walk paces its next look: at `poll` while the cloud works, `settle` (at
    /// most) after a write.
    pub fn timing(&self, settle: Duration) -> crate::walker::Timing {
        crate::walker::Timing::new(self.poll, settle)
    }

    /// From a provider's flags: its own `poll` and `token_lifetime`, and the shared
    /// `--rest-interval`.
    pub fn from_flags(poll: Duration, common: &CommonArgs, token_lifetime: Duration) -> Self {
        Self {
            poll,
            rest: common.rest_interval,
            token_lifetime,
        }
    }
}
