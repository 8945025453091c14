//! Google API errors as Kubernetes Engine and Compute Engine send them:
//! `{"error": {"code": <http>, "message": …, "status": "FAILED_PRECONDITION", "details": []}}`.
//! Google's Rust clients read the canonical code from `status` alone, so it is always sent;
//! Compute errors also carry the classic `errors[]` array with a `reason`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::kit::{self, Fault};

/// One error response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleError {
    /// HTTP status.
    pub http: StatusCode,
    /// Canonical status name (`INVALID_ARGUMENT`, …).
    pub status: &'static str,
    /// The message, in Google's words where known.
    pub message: String,
    /// Compute's `errors[].reason` (`notFound`, `alreadyExists`, …), for Compute errors.
    pub reason: Option<&'static str>,
    /// `Retry-After` seconds (throttling).
    pub retry_after: Option<u64>,
}

impl GoogleError {
    fn new(http: StatusCode, status: &'static str, message: impl Into<String>) -> Self {
        Self {
            http,
            status,
            message: message.into(),
            reason: None,
            retry_after: None,
        }
    }

    /// 400 INVALID_ARGUMENT.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", message).reason("invalid")
    }

    /// 400 FAILED_PRECONDITION (GKE answers a conflicting operation with 400, not 409).
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "FAILED_PRECONDITION", message)
            .reason("failedPrecondition")
    }

    /// 404 NOT_FOUND.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", message).reason("notFound")
    }

    /// 409 ALREADY_EXISTS.
    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "ALREADY_EXISTS", message).reason("alreadyExists")
    }

    /// 401 UNAUTHENTICATED, with Google's message.
    pub fn unauthenticated() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, \
             login cookie or other valid authentication credential. See \
             https://developers.google.com/identity/sign-in/web/devconsole-project.",
        )
        .reason("authError")
    }

    /// 403 PERMISSION_DENIED.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "PERMISSION_DENIED", message).reason("forbidden")
    }

    /// 501 UNIMPLEMENTED: a method Google has and the emulator does not.
    pub fn unimplemented(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_IMPLEMENTED,
            "UNIMPLEMENTED",
            format!("{what} is not emulated"),
        )
    }

    /// 429 RESOURCE_EXHAUSTED with `Retry-After`.
    pub fn throttled(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of \
             service 'container.googleapis.com'.",
        )
        .reason("rateLimitExceeded");
        e.retry_after = Some(retry_after);
        e
    }

    fn reason(mut self, reason: &'static str) -> Self {
        self.reason = Some(reason);
        self
    }

    /// The error an injected fault stands for; `None` for a dropped connection.
    pub fn from_fault(fault: &Fault) -> Option<Self> {
        match fault {
            Fault::Throttle(retry_after) => Some(Self::throttled(retry_after.as_secs().max(1))),
            Fault::ServerError(status) => {
                let http = StatusCode::from_u16(*status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
                let name = match http.as_u16() {
                    503 => "UNAVAILABLE",
                    504 => "DEADLINE_EXCEEDED",
                    _ => "INTERNAL",
                };
                Some(
                    Self::new(http, name, "The service is currently unavailable.")
                        .reason("backendError"),
                )
            }
            Fault::Latency(_) | Fault::Drop => None,
        }
    }

    /// The `google.rpc.Status` of an operation that ended with this error.
    pub fn rpc_status(&self) -> serde_json::Value {
        json!({ "code": canonical_code(self.status), "message": self.message })
    }
}

/// The numeric canonical code of a status name.
pub fn canonical_code(status: &str) -> i32 {
    match status {
        "CANCELLED" => 1,
        "INVALID_ARGUMENT" => 3,
        "DEADLINE_EXCEEDED" => 4,
        "NOT_FOUND" => 5,
        "ALREADY_EXISTS" => 6,
        "PERMISSION_DENIED" => 7,
        "RESOURCE_EXHAUSTED" => 8,
        "FAILED_PRECONDITION" => 9,
        "ABORTED" => 10,
        "UNIMPLEMENTED" => 12,
        "INTERNAL" => 13,
        "UNAVAILABLE" => 14,
        "UNAUTHENTICATED" => 16,
        _ => 2,
    }
}

impl IntoResponse for GoogleError {
    fn into_response(self) -> Response {
        let mut error = json!({
            "code": self.http.as_u16(),
            "message": self.message,
            "status": self.status,
            "details": [],
        });
        if let Some(reason) = self.reason {
            error["errors"] =
                json!([{ "message": self.message, "domain": "global", "reason": reason }]);
        }
        let mut response = (self.http, axum::Json(json!({ "error": error }))).into_response();
        if let Some(seconds) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}

/// A fault's response: the error it stands for, or a cut connection.
pub fn fault_response(fault: &Fault) -> Response {
    match GoogleError::from_fault(fault) {
        Some(e) => e.into_response(),
        None => kit::dropped_connection(),
    }
}
