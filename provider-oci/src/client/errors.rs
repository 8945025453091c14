//! OCI's error codes, for the shared classification of a REST cloud's answers
//! ([`provider_runtime::rest`]). OCI answers `{"code", "message"}` with the HTTP status (OCI's
//! "API Errors" reference); throttling is 429 `TooManyRequests` with `Retry-After`.

use provider_runtime::rest::ErrorCodes;

/// What OCI's codes mean beyond the status.
pub const OCI_CODES: ErrorCodes = ErrorCodes {
    // Another work request runs on the resource, a lock, a resource still in use (a subnet a
    // cluster uses, a gateway a route names): wait and retry.
    in_use: &[
        (409, "IncorrectState"),
        (409, "Conflict"),
        (409, "LockConflict"),
        (409, "ResourceLocked"),
    ],
    quota: &["LimitExceeded", "QuotaExceeded"],
};

#[cfg(test)]
mod tests {
    use provider_runtime::CloudError;

    use super::*;

    #[test]
    fn ocis_busy_and_limit_codes_are_waits_and_quotas() {
        let busy = OCI_CODES.classify(409, "IncorrectState", "busy", None);
        assert!(matches!(busy, CloudError::InUse(_)));
        let ocpus = OCI_CODES.classify(400, "LimitExceeded", "ocpus", None);
        assert!(matches!(ocpus, CloudError::Quota(_)));
        let gone = OCI_CODES.classify(404, "NotAuthorizedOrNotFound", "gone", None);
        assert!(matches!(gone, CloudError::NotFound(_)));
        let invalid = OCI_CODES.classify(400, "InvalidParameter", "Invalid version.", None);
        assert_eq!(invalid.to_string(), "InvalidParameter: Invalid version.");
    }
}
