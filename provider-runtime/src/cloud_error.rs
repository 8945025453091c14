//! A cloud call's failure, classified once for every cloud.

use std::time::Duration;

use contract::conditions::Reason;

use crate::{CallOutcome, ProviderError};

/// A cloud call's failure, by what it means for the reconciler; each cloud classifies its
/// SDK's errors into it, and the kernel maps it to a [`ProviderError`] the same way everywhere.
#[derive(Debug, Clone, PartialEq)]
pub enum CloudError {
    /// The resource does not exist (for deletes: it is gone).
    NotFound(String),
    /// The resource is busy or still has dependents (EKS `ResourceInUseException`, GKE's
    /// FAILED_PRECONDITION for a cluster running another operation); retry.
    InUse(String),
    /// The request was invalid (a spec the cloud refuses); wait for a spec change.
    Invalid {
        /// The cloud's error code.
        code: String,
        /// The cloud's message.
        message: String,
    },
    /// A limit was reached.
    Quota(String),
    /// Throttled; no sooner than `retry_after` if given.
    Throttled {
        /// The cloud's message.
        message: String,
        /// From the `Retry-After` header.
        retry_after: Option<Duration>,
    },
    /// Not sent: the call's target was answered 429 with a `Retry-After` that is not over yet,
    /// so [`crate::CloudCalls::admit`] held the call back. Nothing failed; the pass waits `left`.
    Held {
        /// Which target is held and for how much longer.
        message: String,
        /// What is left of the target's `Retry-After`.
        left: Duration,
    },
    /// The credentials were refused.
    Unauthorized(String),
    /// Anything transient: 5xx, timeouts, dropped connections.
    Transient(String),
}

impl std::fmt::Display for CloudError {
    /// The cloud's message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloudError::NotFound(m)
            | CloudError::InUse(m)
            | CloudError::Quota(m)
            | CloudError::Unauthorized(m)
            | CloudError::Transient(m)
            | CloudError::Invalid { message: m, .. }
            | CloudError::Throttled { message: m, .. }
            | CloudError::Held { message: m, .. } => f.write_str(m),
        }
    }
}

impl CloudError {
    /// Whether this is a not-found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, CloudError::NotFound(_))
    }

    /// How the call counters count a call that failed so.
    pub fn call_outcome(&self) -> CallOutcome {
        match self {
            CloudError::NotFound(_) => CallOutcome::NotFound,
            CloudError::Throttled { .. } | CloudError::Held { .. } => CallOutcome::Throttled,
            _ => CallOutcome::Error,
        }
    }
}

/// What to say of an error answer whose body carries no message of the cloud's (a proxy's HTML
/// page, an empty body): its status and the start of what it did say.
pub fn unexplained(status: u16, text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    let start: String = text.chars().take(200).collect();
    let cut = if start.len() < text.len() { "…" } else { "" };
    format!("HTTP {status}: {start}{cut}")
}

/// Reads a cloud's answer into its typed shape. An answer that lacks a field the type needs, or
/// holds one of another type, is refused with the operation and the field's path ("GetCluster:
/// the answer's `properties.agentPoolProfiles[0].count` is missing"), never filled with a
/// default: a malformed answer must not look like a change to make. It counts as transient (the
/// next look may read a whole answer), so it backs off if it keeps coming.
pub fn read_answer<T: serde::de::DeserializeOwned>(
    operation: &str,
    body: serde_json::Value,
) -> Result<T, CloudError> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = match inner.strip_prefix("missing field ") {
            Some(field) => {
                let field = field.trim_matches('`');
                let at = if path == "." || path.is_empty() {
                    field.to_string()
                } else {
                    format!("{path}.{field}")
                };
                format!("{operation}: the answer has no `{at}`")
            }
            None => {
                // What serde expected, never the value it found: an answer may carry a
                // credential, and this message becomes a condition and a log line.
                let expected = inner
                    .split_once(", expected ")
                    .map_or("another shape".to_string(), |(_, e)| e.to_string());
                if path == "." || path.is_empty() {
                    format!("{operation}: the answer is malformed (expected {expected})")
                } else {
                    format!("{operation}: the answer's `{path}` is malformed (expected {expected})")
                }
            }
        };
        CloudError::Transient(message)
    })
}

impl From<CloudError> for ProviderError {
    fn from(e: CloudError) -> Self {
        match e {
            CloudError::Throttled {
                message,
                retry_after,
            } => ProviderError::throttled(message, retry_after),
            CloudError::Held { message, left } => ProviderError::held(message, left),
            CloudError::Transient(message) => ProviderError::cloud("cloud_transient", message),
            CloudError::InUse(message) => ProviderError::Transient {
                reason: Reason::WaitingForCloud,
                category: "cloud_busy",
                message,
                retry_after: Some(Duration::from_secs(15)),
            },
            CloudError::NotFound(message) => ProviderError::cloud("cloud_not_found", message),
            CloudError::Invalid { message, .. } => {
                ProviderError::terminal(Reason::InvalidSpec, message)
            }
            CloudError::Quota(message) => ProviderError::terminal(Reason::QuotaExceeded, message),
            CloudError::Unauthorized(message) => {
                ProviderError::terminal(Reason::Unauthorized, message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Pool {
        name: String,
        properties: PoolProperties,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct PoolProperties {
        min_count: u32,
    }

    #[test]
    fn a_malformed_answer_names_the_operation_and_the_field() {
        let missing = read_answer::<Pool>(
            "GetAgentPool",
            serde_json::json!({"name": "p", "properties": {}}),
        )
        .unwrap_err();
        assert_eq!(
            missing,
            CloudError::Transient("GetAgentPool: the answer has no `properties.minCount`".into())
        );
        let top = read_answer::<Pool>(
            "GetAgentPool",
            serde_json::json!({"properties": {"minCount": 1}}),
        )
        .unwrap_err();
        assert_eq!(
            top,
            CloudError::Transient("GetAgentPool: the answer has no `name`".into())
        );
        let wrong = read_answer::<Pool>(
            "GetAgentPool",
            serde_json::json!({"name": "p", "properties": {"minCount": "three"}}),
        )
        .unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "GetAgentPool: the answer's `properties.minCount` is malformed (expected u32)"
        );
        let wrong_type = read_answer::<Pool>(
            "ListCredentials",
            serde_json::json!({"name": 7, "properties": {"minCount": 1}}),
        )
        .unwrap_err()
        .to_string();
        let leaked = read_answer::<Pool>(
            "ListCredentials",
            serde_json::json!({"name": "p", "properties": {"minCount": "token-abc123"}}),
        )
        .unwrap_err()
        .to_string();
        assert!(!leaked.contains("token-abc123"), "{leaked}");
        assert_eq!(
            wrong_type,
            "ListCredentials: the answer's `name` is malformed (expected a string)"
        );
        let read: Pool = read_answer(
            "GetAgentPool",
            serde_json::json!({"name": "p", "properties": {"minCount": 2}, "extra": true}),
        )
        .unwrap();
        assert_eq!(read.properties.min_count, 2);
    }

    #[test]
    fn an_unexplained_answer_shows_its_status_and_the_start_of_its_body() {
        assert_eq!(unexplained(502, " \n"), "HTTP 502 with an empty body");
        assert_eq!(
            unexplained(502, "<html>Bad Gateway</html>"),
            "HTTP 502: <html>Bad Gateway</html>"
        );
        let long = "x".repeat(300);
        let said = unexplained(400, &long);
        assert!(said.ends_with('…') && said.len() < 220, "{said}");
    }
}
