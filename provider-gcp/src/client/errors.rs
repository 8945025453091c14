//! Google API errors, classified by what the reconciler should do (the shared
//! [`provider_runtime::CloudError`]). Google's clients read the canonical code from the error's
//! `status`; the HTTP status and `Retry-After` come with it.

use std::time::Duration;

use google_cloud_gax::error::rpc::Code;
use provider_runtime::CloudError;

/// Classifies a Kubernetes Engine or Compute Engine call's error.
pub fn classify(err: &google_cloud_gax::error::Error) -> CloudError {
    if let Some(status) = err.status() {
        let retry_after = err
            .http_headers()
            .and_then(|h| h.get("retry-after"))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        return classify_status(
            status.code,
            err.http_status_code(),
            status.message.clone(),
            retry_after,
        );
    }
    if err.is_timeout() {
        return CloudError::Transient("the Google Cloud call timed out".into());
    }
    if err.is_authentication() {
        return CloudError::Unauthorized(format!("Google Cloud credentials failed: {err}"));
    }
    if let Some(code) = err.http_status_code() {
        return classify_status(Code::Unknown, Some(code), format!("HTTP {code}"), None);
    }
    CloudError::Transient(format!("could not reach Google Cloud: {err}"))
}

/// The classification by canonical code (pure; the unit tests use it).
pub fn classify_status(
    code: Code,
    http: Option<u16>,
    message: String,
    retry_after: Option<Duration>,
) -> CloudError {
    let lower = message.to_ascii_lowercase();
    match code {
        Code::NotFound => CloudError::NotFound(message),
        // GKE's answer to a change while the cluster runs another operation.
        Code::FailedPrecondition
            if lower.contains("incompatible operation")
                || lower.contains("currently")
                || lower.contains("please wait")
                // A label write raced another: read again and retry.
                || lower.contains("fingerprint") =>
        {
            CloudError::InUse(message)
        }
        Code::Aborted => CloudError::InUse(message),
        Code::ResourceExhausted if retry_after.is_some() || lower.contains("rate") => {
            CloudError::Throttled {
                message,
                retry_after,
            }
        }
        Code::ResourceExhausted => CloudError::Quota(message),
        Code::PermissionDenied if lower.contains("quota") => CloudError::Quota(message),
        Code::Unauthenticated | Code::PermissionDenied => CloudError::Unauthorized(message),
        Code::Unavailable | Code::Internal | Code::DeadlineExceeded | Code::Unknown
            if http.is_none_or(|h| h >= 500) =>
        {
            CloudError::Transient(message)
        }
        _ if http == Some(429) => CloudError::Throttled {
            message,
            retry_after,
        },
        _ if http.is_some_and(|h| h >= 500) => CloudError::Transient(message),
        _ => CloudError::Invalid {
            code: format!("{code:?}"),
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn googles_codes_map_to_what_the_reconciler_does_next() {
        let busy = classify_status(
            Code::FailedPrecondition,
            Some(400),
            "Cluster is running incompatible operation operation-1-a.".into(),
            None,
        );
        assert!(matches!(busy, CloudError::InUse(_)));
        let fingerprint = classify_status(
            Code::FailedPrecondition,
            Some(400),
            "Labels could not be set due to fingerprint mismatch".into(),
            None,
        );
        assert!(matches!(fingerprint, CloudError::InUse(_)));
        assert!(matches!(
            classify_status(Code::NotFound, Some(404), "x".into(), None),
            CloudError::NotFound(_)
        ));
        assert!(matches!(
            classify_status(
                Code::ResourceExhausted,
                Some(429),
                "slow".into(),
                Some(Duration::from_secs(2))
            ),
            CloudError::Throttled {
                retry_after: Some(_),
                ..
            }
        ));
        assert!(matches!(
            classify_status(
                Code::ResourceExhausted,
                Some(403),
                "Quota 'CPUS' exceeded".into(),
                None
            ),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            classify_status(Code::Unavailable, Some(503), "down".into(), None),
            CloudError::Transient(_)
        ));
        assert!(matches!(
            classify_status(Code::Unauthenticated, Some(401), "who".into(), None),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(
            classify_status(Code::InvalidArgument, Some(400), "bad".into(), None),
            CloudError::Invalid { .. }
        ));
    }
}
