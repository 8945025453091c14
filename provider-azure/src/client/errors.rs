//! ARM's error codes, for the shared classification of a REST cloud's answers
//! ([`provider_runtime::rest`]). ARM answers `{"error": {"code", "message"}}` with the HTTP
//! status; throttling is 429 with `Retry-After`.

use provider_runtime::rest::ErrorCodes;

/// What ARM's codes mean beyond the status.
pub const ARM_CODES: ErrorCodes = ErrorCodes {
    // Another operation runs on the resource, a group still being deleted, a subnet still used
    // by a cluster: wait and retry.
    in_use: &[
        (409, "OperationNotAllowed"),
        (409, "AnotherOperationInProgress"),
        (409, "ResourceGroupBeingDeleted"),
        (409, "Conflict"),
        (400, "InUseSubnetCannotBeDeleted"),
        (400, "AnotherOperationInProgress"),
    ],
    quota: &[
        "QuotaExceeded",
        "InsufficientVCPUQuota",
        "ErrCode_InsufficientVCPUQuota",
    ],
};

#[cfg(test)]
mod tests {
    use provider_runtime::CloudError;

    use super::*;

    #[test]
    fn arms_busy_and_limit_codes_are_waits_and_quotas() {
        let busy = ARM_CODES.classify(409, "OperationNotAllowed", "busy", None);
        assert!(matches!(busy, CloudError::InUse(_)));
        let subnet = ARM_CODES.classify(400, "InUseSubnetCannotBeDeleted", "used", None);
        assert!(matches!(subnet, CloudError::InUse(_)));
        let cores = ARM_CODES.classify(400, "InsufficientVCPUQuota", "cores", None);
        assert!(matches!(cores, CloudError::Quota(_)));
        let invalid = ARM_CODES.classify(400, "InvalidDnsPrefix", "bad prefix", None);
        assert_eq!(invalid.to_string(), "InvalidDnsPrefix: bad prefix");
    }
}
