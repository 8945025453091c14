//! Errors a provider returns from a pass, typed by what the runtime should do next.

use std::time::Duration;

use contract::conditions::Reason;

/// Why a provider's pass failed, and therefore what happens next.
///
/// - [`Transient`](Self::Transient): retried with jittered exponential backoff per object, never
///   sooner than the cloud's `Retry-After`; `Ready` becomes False with the reason
///   (`Throttled` or `CloudError`) and the cloud's message.
/// - [`Terminal`](Self::Terminal): the spec cannot be satisfied as it is (bad input the cloud
///   rejected, a name owned by someone else, quota). `Ready` becomes False with the documented
///   reason and the message; the object is retried only on its next change or after the resync
///   period, never in a loop.
/// - [`Kube`](Self::Kube): the management API failed; retried with backoff, conditions untouched.
///
/// Messages end up in conditions, events and logs: they must never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Retry later: throttling, a 5xx, a timeout, a dropped connection.
    #[error("{message}")]
    Transient {
        /// `Throttled`, `CloudError` or `WaitingForCloud`; becomes the `Ready` reason.
        reason: Reason,
        /// Short metric label naming the failure class, e.g. `throttled`, `cloud_5xx`, `timeout`.
        category: &'static str,
        /// What happened, in the user's terms (the cloud's message is fine; secrets are not).
        message: String,
        /// The cloud's `Retry-After`, a lower bound for the next attempt.
        retry_after: Option<Duration>,
    },
    /// Wait for a spec change: the reason is one of the documented condition reasons.
    #[error("{message}")]
    Terminal {
        /// e.g. `InvalidSpec`, `NameConflict`, `QuotaExceeded`, `Unauthorized`.
        reason: Reason,
        /// What happened and what the user should do.
        message: String,
    },
    /// A management-cluster API call failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// The metric category of a pass held back by another's `Retry-After`.
const HELD: &str = "held";

impl ProviderError {
    /// The cloud throttled us; retry no sooner than `retry_after` when it said so.
    pub fn throttled(message: impl Into<String>, retry_after: Option<Duration>) -> Self {
        Self::Transient {
            reason: Reason::Throttled,
            category: "throttled",
            message: message.into(),
            retry_after,
        }
    }

    /// A pass that sent nothing because its cloud service's `Retry-After` is not over (another
    /// pass was answered 429): it waits `left`, and its backoff does not grow, since nothing it
    /// sent was refused.
    pub fn held(message: impl Into<String>, left: Duration) -> Self {
        Self::Transient {
            reason: Reason::Throttled,
            category: HELD,
            message: message.into(),
            retry_after: Some(left),
        }
    }

    /// Whether this is a pass held back by another's `Retry-After` ([`ProviderError::held`]).
    pub fn is_held(&self) -> bool {
        matches!(self, Self::Transient { category, .. } if *category == HELD)
    }

    /// A retryable cloud failure (5xx, timeout, connection); `category` is its metric label.
    pub fn cloud(category: &'static str, message: impl Into<String>) -> Self {
        Self::Transient {
            reason: Reason::CloudError,
            category,
            message: message.into(),
            retry_after: None,
        }
    }

    /// A failure only a spec change can fix.
    pub fn terminal(reason: Reason, message: impl Into<String>) -> Self {
        Self::Terminal {
            reason,
            message: message.into(),
        }
    }

    /// A short, bounded name for metrics and logs; never a `Debug` string.
    pub fn category(&self) -> &'static str {
        match self {
            Self::Transient { category, .. } => category,
            Self::Terminal { reason, .. } => terminal_category(*reason),
            Self::Kube(e) => kube_category(e),
        }
    }
}

fn terminal_category(reason: Reason) -> &'static str {
    match reason {
        Reason::InvalidSpec => "invalid_spec",
        Reason::NameConflict => "name_conflict",
        Reason::QuotaExceeded => "quota_exceeded",
        Reason::Unauthorized => "unauthorized",
        Reason::NotFound => "not_found",
        Reason::AdoptionRefused => "adoption_refused",
        _ => "terminal",
    }
}

/// The metric category of a management-API error.
pub fn kube_category(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(status) => match status.code {
            404 => "kube_not_found",
            409 => "kube_conflict",
            422 => "kube_invalid",
            429 => "kube_throttled",
            401 | 403 => "kube_forbidden",
            500..=599 => "kube_server",
            _ => "kube_api",
        },
        _ => "kube_transport",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: "m".into(),
            reason: "r".into(),
            ..Default::default()
        }))
    }

    #[test]
    fn categories_are_short_static_names() {
        assert_eq!(
            ProviderError::throttled("slow down", None).category(),
            "throttled"
        );
        assert_eq!(
            ProviderError::cloud("cloud_5xx", "oops").category(),
            "cloud_5xx"
        );
        assert_eq!(
            ProviderError::terminal(Reason::NameConflict, "taken").category(),
            "name_conflict"
        );
        assert_eq!(
            ProviderError::terminal(Reason::Creating, "?").category(),
            "terminal"
        );
        assert_eq!(
            ProviderError::Kube(api_error(409)).category(),
            "kube_conflict"
        );
        assert_eq!(
            ProviderError::Kube(api_error(503)).category(),
            "kube_server"
        );
    }

    #[test]
    fn display_is_the_message_only() {
        let e = ProviderError::throttled("DescribeCluster throttled", Some(Duration::from_secs(3)));
        assert_eq!(e.to_string(), "DescribeCluster throttled");
    }
}
