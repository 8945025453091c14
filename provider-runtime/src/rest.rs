//! What every REST cloud's client (ARM, OCI, and any cloud whose API is JSON over HTTP) makes of
//! an answer that is not a success, written once: the [`Failure`] a call returns, and the
//! cloud's error codes classified into the shared [`CloudError`] by a table of the cloud's own
//! ([`ErrorCodes`]). The HTTP status decides first (404, 429, 412, 401/403, 5xx); the codes
//! decide what the status alone does not (a 409 or a 400 that means "busy, retry", a limit).

use std::time::Duration;

use crate::cloud_error::unexplained;
use crate::{CloudError, ProviderError};

/// A call that failed: what it means for the reconciler, with the cloud's code and the HTTP
/// status, which a provider's own rules may read (ARM's `Conflict` on a resource group).
#[derive(Debug, Clone)]
pub struct Failure {
    /// What it means for the reconciler.
    pub error: CloudError,
    /// The cloud's error code (empty when it gave none).
    pub code: String,
    /// The HTTP status (0 when the call got no answer).
    pub status: u16,
}

impl Failure {
    /// A call not sent: the cloud asked to wait ([`crate::CloudCalls::admit`]).
    pub fn held(error: CloudError) -> Self {
        Self::with_code(error, "RetryAfterNotOver", 0)
    }

    /// A failure the cloud did not answer with a code of its own: no answer at all, an answer
    /// cut short, one that is not in the operation's shape.
    pub fn transient(message: impl Into<String>, status: u16) -> Self {
        Self::with_code(CloudError::Transient(message.into()), "", status)
    }

    /// `error`, under `code` (the provider's own name for what went wrong before the cloud
    /// answered: `Signing`, `Token`).
    pub fn with_code(error: CloudError, code: &str, status: u16) -> Self {
        Self {
            error,
            code: code.to_string(),
            status,
        }
    }
}

impl From<Failure> for ProviderError {
    fn from(f: Failure) -> Self {
        f.error.into()
    }
}

/// What a REST cloud's error codes mean beyond the HTTP status.
#[derive(Debug, Clone, Copy)]
pub struct ErrorCodes {
    /// The (status, code) answers that mean the resource is busy or still used (another
    /// operation runs on it, a subnet a cluster still uses): wait and retry. A 412 (a stale
    /// etag: read again) always is.
    pub in_use: &'static [(u16, &'static str)],
    /// The codes that mean a limit was reached, whatever the status.
    pub quota: &'static [&'static str],
}

impl ErrorCodes {
    /// Classifies an error answer: its status, the cloud's code and message, and the
    /// `Retry-After` it carried. Pure.
    pub fn classify(
        &self,
        status: u16,
        code: &str,
        message: &str,
        retry_after: Option<Duration>,
    ) -> CloudError {
        let said = if code.is_empty() {
            message.to_string()
        } else {
            format!("{code}: {message}")
        };
        let in_use = status == 412 || self.in_use.contains(&(status, code));
        match status {
            404 => CloudError::NotFound(said),
            429 => CloudError::Throttled {
                message: said,
                retry_after,
            },
            _ if in_use => CloudError::InUse(said),
            _ if self.quota.contains(&code) => CloudError::Quota(said),
            401 | 403 => CloudError::Unauthorized(said),
            s if s >= 500 => CloudError::Transient(said),
            _ => CloudError::Invalid {
                code: if code.is_empty() {
                    status.to_string()
                } else {
                    code.to_string()
                },
                message: said,
            },
        }
    }

    /// The failure of an answer with `status` whose body said `code` and `message` (either may
    /// be missing: a proxy's page, an empty body; then its status and `text` say it).
    pub fn failure(
        &self,
        status: u16,
        code: Option<String>,
        message: Option<String>,
        text: &str,
        retry_after: Option<Duration>,
    ) -> Failure {
        let code = code.unwrap_or_default();
        let message = message.unwrap_or_else(|| unexplained(status, text));
        Failure {
            error: self.classify(status, &code, &message, retry_after),
            code,
            status,
        }
    }
}

/// A `Retry-After` header's value in seconds, as the clouds send it.
pub fn retry_after(value: Option<&str>) -> Option<Duration> {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODES: ErrorCodes = ErrorCodes {
        in_use: &[(409, "Busy"), (400, "StillUsed")],
        quota: &["OverLimit"],
    };

    #[test]
    fn the_status_decides_before_the_code() {
        let kind = |status, code| match CODES.classify(status, code, "said", None) {
            CloudError::NotFound(_) => "not found",
            CloudError::Throttled { .. } => "throttled",
            CloudError::InUse(_) => "in use",
            CloudError::Quota(_) => "quota",
            CloudError::Unauthorized(_) => "unauthorized",
            CloudError::Transient(_) => "transient",
            CloudError::Invalid { .. } => "invalid",
            CloudError::Held { .. } => "held",
        };
        assert_eq!(kind(404, "Busy"), "not found");
        assert_eq!(kind(429, "OverLimit"), "throttled");
        assert_eq!(kind(409, "Busy"), "in use");
        assert_eq!(kind(400, "StillUsed"), "in use");
        assert_eq!(kind(412, "Whatever"), "in use");
        assert_eq!(kind(409, "Other"), "invalid");
        assert_eq!(kind(400, "Busy"), "invalid");
        assert_eq!(kind(400, "OverLimit"), "quota");
        assert_eq!(kind(403, ""), "unauthorized");
        assert_eq!(kind(503, ""), "transient");
    }

    #[test]
    fn a_throttle_keeps_its_retry_after_and_an_invalid_answer_its_code() {
        let wait = Some(Duration::from_secs(3));
        assert!(matches!(
            CODES.classify(429, "TooMany", "slow", wait),
            CloudError::Throttled { retry_after, .. } if retry_after == wait
        ));
        let invalid = CODES.classify(400, "BadName", "bad name", None);
        assert!(matches!(&invalid, CloudError::Invalid { code, .. } if code == "BadName"));
        assert_eq!(invalid.to_string(), "BadName: bad name");
        let bare = CODES.classify(400, "", "no code", None);
        assert!(matches!(&bare, CloudError::Invalid { code, .. } if code == "400"));
    }

    #[test]
    fn an_answer_without_the_clouds_shape_is_said_by_its_status_and_text() {
        let f = CODES.failure(502, None, None, "<html>bad gateway</html>", None);
        assert_eq!((f.status, f.code.as_str()), (502, ""));
        assert!(matches!(&f.error, CloudError::Transient(m) if m.contains("HTTP 502: <html>")));
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        assert_eq!(retry_after(Some(" 7 ")), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2026 07:28:00 GMT")), None);
        assert_eq!(retry_after(None), None);
    }
}
