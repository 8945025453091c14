//! OCI errors, classified by what the reconciler should do (the shared
//! [`provider_runtime::CloudError`]). OCI answers `{"code", "message"}` with the HTTP status
//! (OCI's "API Errors" reference); throttling is 429 `TooManyRequests` with `Retry-After`.

use std::time::Duration;

use provider_runtime::CloudError;

/// Classifies an OCI error answer (pure; the unit tests use it).
pub fn classify(
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
    match (status, code) {
        (404, _) => CloudError::NotFound(said),
        (429, _) => CloudError::Throttled {
            message: said,
            retry_after,
        },
        // Another work request runs on the resource, a stale etag (read again), a lock, a
        // resource still in use (a subnet a cluster uses, a gateway a route names): wait, retry.
        (409, "IncorrectState" | "Conflict" | "LockConflict" | "ResourceLocked") | (412, _) => {
            CloudError::InUse(said)
        }
        (_, "LimitExceeded" | "QuotaExceeded") => CloudError::Quota(said),
        (401 | 403, _) => CloudError::Unauthorized(said),
        (s, _) if s >= 500 => CloudError::Transient(said),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oci_answers_map_to_what_the_reconciler_does_next() {
        assert!(matches!(
            classify(404, "NotAuthorizedOrNotFound", "gone", None),
            CloudError::NotFound(_)
        ));
        assert!(matches!(
            classify(409, "IncorrectState", "busy", None),
            CloudError::InUse(_)
        ));
        assert!(matches!(
            classify(412, "NoEtagMatch", "stale", None),
            CloudError::InUse(_)
        ));
        assert!(matches!(
            classify(429, "TooManyRequests", "slow", Some(Duration::from_secs(3))),
            CloudError::Throttled {
                retry_after: Some(_),
                ..
            }
        ));
        assert!(matches!(
            classify(400, "LimitExceeded", "ocpus", None),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            classify(401, "NotAuthenticated", "who", None),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(
            classify(503, "ServiceUnavailable", "down", None),
            CloudError::Transient(_)
        ));
        let invalid = classify(400, "InvalidParameter", "Invalid kubernetes version.", None);
        assert!(matches!(&invalid, CloudError::Invalid { code, .. } if code == "InvalidParameter"));
        assert_eq!(
            invalid.to_string(),
            "InvalidParameter: Invalid kubernetes version."
        );
    }
}
