//! Azure Resource Manager's plumbing, shared by every resource provider the emulator serves:
//! error bodies, `api-version` checks, the asynchronous-operation headers, ETags and the
//! subscription's request token buckets.
//!
//! ARM errors are `{"error": {"code", "message", "details": []}}` with the HTTP status; a
//! throttled call is 429 `TooManyRequests` with `Retry-After` seconds. ARM counts reads
//! (GET/HEAD) and writes (PUT/PATCH/POST/DELETE) in separate buckets per subscription and
//! principal: 250 reads refilling at 25 a second, 200 writes at 10 a second (as Azure documents
//! Resource Manager's throttling).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::kit::{self, Fault};

/// The `Microsoft.ContainerService` api-version whose shapes the emulator follows (Microsoft's REST
/// API specification,
/// `specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2026-08-01`):
/// the newest stable one.
pub const CONTAINER_API_VERSION: &str = "2026-08-01";

// The api-versions below are every stable version Microsoft's REST API specification publishes
// for the operations emulated (`specification/<service>/resource-manager/…/stable/<version>/`),
// as real ARM serves every one of them; a version that was never published is refused
// (`NoRegisteredProviderFound`, listing these). Older versions' bodies differ from the newest
// only in fields the emulator does not read, except where noted.

/// `Microsoft.ContainerService` api-versions accepted for managed clusters and agent pools: the
/// stable ones since 2023 (older ones lack fields the emulator's answers assume, such as the
/// overlay network plugin mode).
pub const CONTAINER_API_VERSIONS: &[&str] = &[
    "2023-01-01",
    "2023-02-01",
    "2023-03-01",
    "2023-04-01",
    "2023-05-01",
    "2023-06-01",
    "2023-07-01",
    "2023-08-01",
    "2023-09-01",
    "2023-10-01",
    "2023-11-01",
    "2024-01-01",
    "2024-02-01",
    "2024-05-01",
    "2024-07-01",
    "2024-08-01",
    "2024-09-01",
    "2024-10-01",
    "2025-01-01",
    "2025-02-01",
    "2025-03-01",
    "2025-04-01",
    "2025-05-01",
    "2025-06-01",
    "2025-07-01",
    "2025-08-01",
    "2025-09-01",
    "2025-10-01",
    "2026-01-01",
    "2026-02-01",
    "2026-03-01",
    "2026-04-01",
    "2026-05-01",
    "2026-06-01",
    "2026-07-01",
    "2026-08-01",
];

/// `Microsoft.Network` api-versions accepted for virtual networks and subnets.
pub const NETWORK_API_VERSIONS: &[&str] = &[
    "2015-06-15",
    "2016-03-30",
    "2016-06-01",
    "2016-09-01",
    "2016-12-01",
    "2017-03-01",
    "2017-06-01",
    "2017-08-01",
    "2017-09-01",
    "2017-10-01",
    "2017-11-01",
    "2018-01-01",
    "2018-02-01",
    "2018-04-01",
    "2018-06-01",
    "2018-07-01",
    "2018-08-01",
    "2018-10-01",
    "2018-11-01",
    "2018-12-01",
    "2019-02-01",
    "2019-04-01",
    "2019-06-01",
    "2019-07-01",
    "2019-08-01",
    "2019-09-01",
    "2019-11-01",
    "2019-12-01",
    "2020-03-01",
    "2020-04-01",
    "2020-05-01",
    "2020-06-01",
    "2020-07-01",
    "2020-08-01",
    "2020-11-01",
    "2021-02-01",
    "2021-03-01",
    "2021-05-01",
    "2021-08-01",
    "2022-01-01",
    "2022-05-01",
    "2022-07-01",
    "2022-09-01",
    "2022-11-01",
    "2023-02-01",
    "2023-04-01",
    "2023-05-01",
    "2023-06-01",
    "2023-09-01",
    "2023-11-01",
    "2024-01-01",
    "2024-03-01",
    "2024-05-01",
    "2024-07-01",
    "2024-10-01",
    "2025-01-01",
    "2025-03-01",
    "2025-05-01",
    "2025-07-01",
    "2025-09-01",
    "2026-01-01",
    "2026-03-01",
    "2026-07-01",
];

/// `Microsoft.Compute` api-versions accepted for listing scale sets and their instances.
pub const COMPUTE_API_VERSIONS: &[&str] = &[
    "2015-06-15",
    "2016-03-30",
    "2017-03-30",
    "2017-12-01",
    "2018-04-01",
    "2018-06-01",
    "2018-10-01",
    "2019-03-01",
    "2019-07-01",
    "2019-12-01",
    "2020-06-01",
    "2020-12-01",
    "2021-03-01",
    "2021-04-01",
    "2021-07-01",
    "2021-11-01",
    "2022-03-01",
    "2022-08-01",
    "2022-11-01",
    "2023-03-01",
    "2023-07-01",
    "2023-09-01",
    "2024-03-01",
    "2024-07-01",
    "2024-11-01",
    "2025-04-01",
    "2025-11-01",
    "2026-03-01",
    "2026-04-01",
];

/// `Microsoft.Resources` (resource groups) api-versions accepted.
pub const RESOURCES_API_VERSIONS: &[&str] = &[
    "2015-11-01",
    "2016-02-01",
    "2016-07-01",
    "2016-09-01",
    "2017-05-10",
    "2018-02-01",
    "2018-05-01",
    "2019-03-01",
    "2019-05-01",
    "2019-05-10",
    "2019-07-01",
    "2019-08-01",
    "2019-10-01",
    "2020-06-01",
    "2020-08-01",
    "2020-10-01",
    "2021-01-01",
    "2021-04-01",
    "2022-09-01",
    "2023-07-01",
    "2024-03-01",
    "2024-07-01",
    "2024-11-01",
    "2025-03-01",
    "2025-04-01",
];

/// The newest of `versions` (each list above is oldest first).
pub fn newest(versions: &'static [&'static str]) -> &'static str {
    versions.last().copied().unwrap_or_default()
}

/// One ARM error response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmError {
    /// HTTP status.
    pub http: StatusCode,
    /// ARM's or the resource provider's code (`ResourceNotFound`, `OperationNotAllowed`, …).
    pub code: String,
    /// The message, in the service's words where known.
    pub message: String,
    /// `Retry-After` seconds (throttling).
    pub retry_after: Option<u64>,
}

impl ArmError {
    /// An error with this status, code and message.
    pub fn new(http: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            http,
            code: code.to_string(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400 with `code`.
    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 400 `InvalidParameter`, naming the field.
    pub fn invalid_parameter(field: &str, message: impl std::fmt::Display) -> Self {
        Self::bad_request(
            "InvalidParameter",
            format!("The value of parameter {field} is invalid. {message}"),
        )
    }

    /// 404 `ResourceNotFound`, in ARM's words.
    pub fn not_found(kind: &str, name: &str, group: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "ResourceNotFound",
            format!(
                "The Resource '{kind}/{name}' under resource group '{group}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"
            ),
        )
    }

    /// 404 `ResourceGroupNotFound`.
    pub fn group_not_found(group: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "ResourceGroupNotFound",
            format!("Resource group '{group}' could not be found."),
        )
    }

    /// 409 `OperationNotAllowed`: another operation runs on the resource.
    pub fn busy(what: &str, running: &str) -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "OperationNotAllowed",
            format!(
                "Operation is not allowed because there's an in progress {running} operation on {what}. Please wait for it to finish before starting a new operation."
            ),
        )
    }

    /// 412 `PreconditionFailed`: a stale `If-Match`.
    pub fn stale_etag(given: &str, current: &str) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailed",
            format!(
                "Operation is not allowed since the provided If-Match header '{given}' does not match the resource's current eTag '{current}'. Read the resource again and retry."
            ),
        )
    }

    /// 401 with ARM's code for a missing or bad bearer token.
    pub fn unauthenticated(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 429 `TooManyRequests` with `Retry-After`.
    pub fn throttled(bucket: &str, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "TooManyRequests",
                format!(
                    "The request is being throttled as the limit of subscription {bucket} requests has been reached. Please try again after {retry_after} seconds."
                ),
            )
        }
    }

    /// The body ARM sends (also the `error` of a failed async operation, without the wrapper).
    pub fn body(&self) -> Value {
        json!({ "code": self.code, "message": self.message, "details": [] })
    }
}

impl IntoResponse for ArmError {
    fn into_response(self) -> Response {
        let mut response = (self.http, axum::Json(json!({ "error": self.body() }))).into_response();
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}

/// The ARM answer to an injected fault.
pub fn fault_response(fault: &Fault) -> Response {
    match fault {
        Fault::Throttle(after) => ArmError::throttled("writes", after.as_secs().max(1)).into_response(),
        Fault::ServerError(status) => ArmError::new(
            StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "InternalServerError",
            "Encountered internal server error. Diagnostic information: timestamp '', subscription id '', tracking id ''.",
        )
        .into_response(),
        Fault::Drop => kit::dropped_connection(),
        Fault::Latency(_) => StatusCode::OK.into_response(),
    }
}

/// Checks `?api-version=` against what the resource provider serves.
///
/// # Errors
/// 400 `MissingApiVersionParameter` or `NoRegisteredProviderFound`, in ARM's words.
pub fn check_api_version(given: Option<&str>, served: &[&str], kind: &str) -> Result<(), ArmError> {
    match given {
        None | Some("") => Err(ArmError::bad_request(
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        )),
        Some(v) if served.contains(&v) => Ok(()),
        Some(v) => Err(ArmError::bad_request(
            "NoRegisteredProviderFound",
            format!(
                "No registered resource provider found for API version '{v}' and type '{kind}'. The supported api-versions are '{}'.",
                served.join(", ")
            ),
        )),
    }
}

/// A new ETag: 8 random lowercase letters, as AKS's look (`beywbwei`).
pub fn new_etag() -> String {
    kit::random_hex(8)
        .bytes()
        .take(8)
        .map(|b| char::from(b'a' + (b % 26)))
        .collect()
}

/// Checks `If-Match` (`*` matches anything that exists; quotes and `W/` are ignored).
///
/// # Errors
/// 412 when the resource's ETag differs.
pub fn check_if_match(headers: &HeaderMap, current: Option<&str>) -> Result<(), ArmError> {
    let Some(given) = headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let clean = |s: &str| {
        s.trim()
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_string()
    };
    let given = clean(given);
    match current {
        Some(_) if given == "*" => Ok(()),
        Some(c) if clean(c) == given => Ok(()),
        Some(c) => Err(ArmError::stale_etag(&given, c)),
        None => Err(ArmError::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailed",
            format!(
                "Operation is not allowed since the provided If-Match header '{given}' names a resource that does not exist."
            ),
        )),
    }
}

/// Where an asynchronous operation is polled.
#[derive(Debug, Clone)]
pub struct AsyncHeaders {
    /// `Azure-AsyncOperation`: the operation status resource.
    pub async_operation: String,
    /// `Location`: the operation result.
    pub location: String,
}

impl AsyncHeaders {
    /// The headers of operation `id` of resource provider `namespace` in `location`.
    pub fn new(
        base: &str,
        subscription: &str,
        namespace: &str,
        location: &str,
        id: &str,
        api_version: &str,
    ) -> Self {
        let root = format!(
            "{base}/subscriptions/{subscription}/providers/{namespace}/locations/{location}"
        );
        Self {
            async_operation: format!("{root}/operations/{id}?api-version={api_version}"),
            location: format!("{root}/operationresults/{id}?api-version={api_version}"),
        }
    }

    /// A response with `status`, `body` and both headers, `Retry-After: 1`.
    pub fn respond(&self, status: StatusCode, body: Option<Value>) -> Response {
        let mut response = match body {
            Some(b) => (status, axum::Json(b)).into_response(),
            None => status.into_response(),
        };
        let h = response.headers_mut();
        for (name, value) in [
            ("azure-asyncoperation", self.async_operation.as_str()),
            ("location", self.location.as_str()),
            ("retry-after", "1"),
        ] {
            if let Ok(v) = HeaderValue::from_str(value) {
                h.insert(name, v);
            }
        }
        response
    }
}

/// ARM's request token buckets, per subscription and principal, reads and writes apart.
#[derive(Debug)]
pub struct Throttle {
    enabled: bool,
    buckets: Mutex<HashMap<(String, bool), Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// ARM's read bucket: size and refill per second.
pub const READS: (f64, f64) = (250.0, 25.0);
/// ARM's write bucket.
pub const WRITES: (f64, f64) = (200.0, 10.0);

impl Throttle {
    /// Buckets that throttle (`enabled`) or only count.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `principal`'s read or write; the remaining count, or the 429.
    ///
    /// # Errors
    /// 429 with the seconds until a token is back.
    pub fn take(&self, principal: &str, write: bool) -> Result<u64, ArmError> {
        let (size, rate) = if write { WRITES } else { READS };
        let now = Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let b = buckets
            .entry((principal.to_string(), write))
            .or_insert(Bucket {
                tokens: size,
                at: now,
            });
        b.tokens = (b.tokens + now.duration_since(b.at).as_secs_f64() * rate).min(size);
        b.at = now;
        if b.tokens < 1.0 {
            if !self.enabled {
                return Ok(0);
            }
            let wait = Duration::from_secs_f64((1.0 - b.tokens) / rate);
            return Err(ArmError::throttled(
                if write { "writes" } else { "reads" },
                wait.as_secs().max(1),
            ));
        }
        b.tokens -= 1.0;
        Ok(b.tokens as u64)
    }
}

/// `Value`'s string at `key`, or "".
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_are_checked_in_arms_words() {
        assert!(
            check_api_version(
                Some(CONTAINER_API_VERSION),
                &[CONTAINER_API_VERSION],
                "managedClusters"
            )
            .is_ok()
        );
        let missing =
            check_api_version(None, &[CONTAINER_API_VERSION], "managedClusters").unwrap_err();
        assert_eq!(missing.code, "MissingApiVersionParameter");
        let old = check_api_version(
            Some("2019-01-01"),
            &[CONTAINER_API_VERSION],
            "managedClusters",
        )
        .unwrap_err();
        assert_eq!(old.code, "NoRegisteredProviderFound");
        assert!(
            old.message.contains(CONTAINER_API_VERSION),
            "{}",
            old.message
        );
        // What Microsoft's current SDKs send is served; a version never published is not.
        for (version, served) in [
            ("2025-04-01", RESOURCES_API_VERSIONS),
            ("2026-03-01", NETWORK_API_VERSIONS),
            ("2025-10-01", CONTAINER_API_VERSIONS),
        ] {
            assert!(
                check_api_version(Some(version), served, "x").is_ok(),
                "{version}"
            );
        }
        assert!(check_api_version(Some("2025-04-02"), RESOURCES_API_VERSIONS, "x").is_err());
        assert!(check_api_version(Some("2026-02-01"), NETWORK_API_VERSIONS, "x").is_err());
        for list in [
            CONTAINER_API_VERSIONS,
            NETWORK_API_VERSIONS,
            COMPUTE_API_VERSIONS,
            RESOURCES_API_VERSIONS,
        ] {
            assert!(
                list.windows(2).all(|w| w[0] < w[1]),
                "oldest first, once each"
            );
        }
        assert_eq!(newest(CONTAINER_API_VERSIONS), CONTAINER_API_VERSION);
    }

    #[test]
    fn if_match_refuses_a_stale_etag_and_takes_a_star() {
        let mut h = HeaderMap::new();
        assert!(check_if_match(&h, Some("abc")).is_ok());
        h.insert(header::IF_MATCH, HeaderValue::from_static("\"abc\""));
        assert!(check_if_match(&h, Some("abc")).is_ok());
        assert_eq!(
            check_if_match(&h, Some("xyz")).unwrap_err().http,
            StatusCode::PRECONDITION_FAILED
        );
        h.insert(header::IF_MATCH, HeaderValue::from_static("*"));
        assert!(check_if_match(&h, Some("xyz")).is_ok());
        assert!(check_if_match(&h, None).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn the_write_bucket_empties_and_refills_at_arms_rate() {
        let t = Throttle::new(true);
        for _ in 0..200 {
            t.take("p", true).unwrap();
        }
        let e = t.take("p", true).unwrap_err();
        assert_eq!(e.http, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(e.retry_after, Some(1));
        // Reads are a separate bucket.
        assert!(t.take("p", false).is_ok());
        tokio::time::advance(Duration::from_millis(250)).await;
        assert!(t.take("p", true).is_ok(), "10 writes a second refill");
    }
}
