//! ARM errors, classified by what the reconciler should do (the shared
//! [`provider_runtime::CloudError`]). ARM answers `{"error": {"code", "message"}}` with the HTTP
//! status; throttling is 429 with `Retry-After`.

use std::time::Duration;

use provider_runtime::CloudError;

/// Classifies an ARM error answer (pure; the unit tests use it).
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
        // Another operation runs on the resource, a stale ETag (read again), a group still
        // being deleted, a subnet still used by a cluster: wait and retry.
        (
            409,
            "OperationNotAllowed"
            | "AnotherOperationInProgress"
            | "ResourceGroupBeingDeleted"
            | "Conflict",
        )
        | (412, _)
        | (400, "InUseSubnetCannotBeDeleted" | "AnotherOperationInProgress") => {
            CloudError::InUse(said)
        }
        (_, "QuotaExceeded" | "InsufficientVCPUQuota" | "ErrCode_InsufficientVCPUQuota") => {
            CloudError::Quota(said)
        }
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
    fn arm_answers_map_to_what_the_reconciler_does_next() {
        assert!(matches!(
            classify(404, "ResourceNotFound", "gone", None),
            CloudError::NotFound(_)
        ));
        assert!(matches!(
            classify(409, "OperationNotAllowed", "busy", None),
            CloudError::InUse(_)
        ));
        assert!(matches!(
            classify(412, "PreconditionFailed", "stale", None),
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
            classify(400, "QuotaExceeded", "cores", None),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            classify(401, "InvalidAuthenticationToken", "who", None),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(
            classify(503, "", "down", None),
            CloudError::Transient(_)
        ));
        let invalid = classify(400, "InvalidDnsPrefix", "bad prefix", None);
        assert!(matches!(&invalid, CloudError::Invalid { code, .. } if code == "InvalidDnsPrefix"));
        assert_eq!(invalid.to_string(), "InvalidDnsPrefix: bad prefix");
    }
}
