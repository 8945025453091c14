//! AWS SDK errors, classified by what the reconciler should do.

use std::time::Duration;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::http::Response;
#[cfg(test)]
use contract::conditions::Reason;
pub use provider_runtime::CloudError;
#[cfg(test)]
use provider_runtime::ProviderError;

/// Classifies an SDK error from any AWS operation.
pub fn classify<E>(err: SdkError<E, Response>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error,
{
    match &err {
        SdkError::ServiceError(service) => {
            let raw = service.raw();
            let status = raw.status().as_u16();
            let retry_after = raw
                .headers()
                .get("retry-after")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let e = service.err();
            let code = e.code().unwrap_or("Unknown").to_string();
            let message = e.message().unwrap_or("no message").to_string();
            classify_code(status, &code, format!("{code}: {message}"), retry_after)
        }
        SdkError::TimeoutError(_) => CloudError::Transient("the AWS call timed out".into()),
        SdkError::DispatchFailure(d) => {
            CloudError::Transient(format!("could not reach AWS: {}", dispatch_reason(d)))
        }
        SdkError::ResponseError(_) => {
            CloudError::Transient("AWS's response could not be read (connection dropped?)".into())
        }
        SdkError::ConstructionFailure(_) => CloudError::Invalid {
            code: "ConstructionFailure".into(),
            message: "the request could not be built".into(),
        },
        _ => CloudError::Transient("unexpected AWS SDK error".into()),
    }
}

fn dispatch_reason(d: &aws_smithy_runtime_api::client::result::DispatchFailure) -> &'static str {
    if d.is_timeout() {
        "timeout"
    } else if d.is_io() {
        "connection error"
    } else {
        "dispatch failure"
    }
}

/// The classification by HTTP status and AWS error code (pure; the unit tests use it).
pub fn classify_code(
    status: u16,
    code: &str,
    message: String,
    retry_after: Option<Duration>,
) -> CloudError {
    match code {
        "ResourceNotFoundException" | "NotFoundException" => CloudError::NotFound(message),
        c if c.starts_with("InvalidVpcID.NotFound")
            || c.starts_with("InvalidSubnetID.NotFound")
            || c.starts_with("InvalidGroup.NotFound")
            || c.starts_with("InvalidInternetGatewayID.NotFound")
            || c.starts_with("InvalidRouteTableID.NotFound")
            || c.starts_with("InvalidAllocationID.NotFound")
            || c.starts_with("NatGatewayNotFound") =>
        {
            CloudError::NotFound(message)
        }
        "ResourceInUseException" | "DependencyViolation" | "IncorrectState" => {
            CloudError::InUse(message)
        }
        "ThrottlingException"
        | "Throttling"
        | "TooManyRequestsException"
        | "RequestLimitExceeded" => CloudError::Throttled {
            message,
            retry_after,
        },
        "ResourceLimitExceededException" | "VpcLimitExceeded" | "AddressLimitExceeded" => {
            CloudError::Quota(message)
        }
        "AccessDeniedException"
        | "UnauthorizedOperation"
        | "AuthFailure"
        | "UnrecognizedClientException"
        | "InvalidClientTokenId"
        | "ExpiredTokenException" => CloudError::Unauthorized(message),
        _ if status == 429 => CloudError::Throttled {
            message,
            retry_after,
        },
        _ if status >= 500 => CloudError::Transient(message),
        _ => CloudError::Invalid {
            code: code.to_string(),
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_keeps_the_retry_after_and_server_errors_are_transient() {
        let t = classify_code(
            429,
            "ThrottlingException",
            "slow down".into(),
            Some(Duration::from_secs(7)),
        );
        assert_eq!(
            t,
            CloudError::Throttled {
                message: "slow down".into(),
                retry_after: Some(Duration::from_secs(7))
            }
        );
        assert!(matches!(
            classify_code(503, "ServiceUnavailableException", "x".into(), None),
            CloudError::Transient(_)
        ));
        assert!(matches!(
            classify_code(400, "RequestLimitExceeded", "x".into(), None),
            CloudError::Throttled { .. }
        ));
    }

    #[test]
    fn not_found_in_use_and_invalid_map_to_what_the_reconciler_does_next() {
        assert!(
            classify_code(404, "ResourceNotFoundException", "gone".into(), None).is_not_found()
        );
        assert!(classify_code(400, "InvalidVpcID.NotFound", "gone".into(), None).is_not_found());
        assert!(matches!(
            classify_code(409, "ResourceInUseException", "busy".into(), None),
            CloudError::InUse(_)
        ));
        let invalid = classify_code(400, "InvalidParameterException", "bad version".into(), None);
        match ProviderError::from(invalid) {
            ProviderError::Terminal { reason, message } => {
                assert_eq!(reason, Reason::InvalidSpec);
                assert_eq!(message, "bad version");
            }
            other => panic!("expected terminal, got {other:?}"),
        }
    }
}
