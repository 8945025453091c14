//! OCI's error answers: a status, a JSON body `{"code", "message"}` and the `opc-request-id`
//! header every answer carries; the codes and statuses OCI documents for its APIs
//! ("API Errors" in OCI's documentation).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::kit::Fault;

/// An OCI error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciError {
    /// The HTTP status.
    pub status: StatusCode,
    /// `code`.
    pub code: &'static str,
    /// `message`.
    pub message: String,
    /// Seconds to wait, for 429.
    pub retry_after: Option<u64>,
}

impl OciError {
    /// An error of `status` and `code`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400 `InvalidParameter`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidParameter", message)
    }

    /// 400 `MissingParameter`.
    pub fn missing(field: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            format!("Missing required parameter: {field}"),
        )
    }

    /// 400 `CannotParseRequest`.
    pub fn unparsable(why: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "CannotParseRequest",
            format!("Incorrectly formatted request: {why}"),
        )
    }

    /// 400 `LimitExceeded`: a service limit.
    pub fn limit(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "LimitExceeded", message)
    }

    /// 401 `NotAuthenticated`: OCI's sentence, and why (never the signature itself), so a
    /// developer can tell a missing header from a key that is not uploaded.
    pub fn not_authenticated(why: &str) -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "NotAuthenticated",
            format!(
                "The required information to complete authentication was not provided or was incorrect. (emulator: {why})"
            ),
        )
    }

    /// 404 `NotAuthorizedOrNotFound`: OCI does not tell a missing resource from a forbidden one.
    pub fn not_found(what: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotAuthorizedOrNotFound",
            format!("Authorization failed or requested resource not found: {what}."),
        )
    }

    /// 404 `NotFound`: no such API.
    pub fn no_route(method: &str, path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("No API matches {method} {path}"),
        )
    }

    /// 405 `MethodNotAllowed`.
    pub fn method(method: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("The method {method} is not allowed on this resource"),
        )
    }

    /// 409 `Conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "Conflict", message)
    }

    /// 409 `IncorrectState`: the resource is busy or in a state that forbids the request.
    pub fn incorrect_state(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "IncorrectState", message)
    }

    /// 412 `NoEtagMatch`.
    pub fn etag(given: &str) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "NoEtagMatch",
            format!("The if-match value {given} does not match the resource's current etag"),
        )
    }

    /// 429 `TooManyRequests`.
    pub fn throttled(retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "TooManyRequests",
                "Too many requests for the tenancy.",
            )
        }
    }

    /// 500 `InternalServerError`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            message,
        )
    }

    /// The answer to an injected fault (a dropped connection is the caller's to make).
    pub fn from_fault(fault: &Fault) -> Option<Self> {
        match fault {
            Fault::Throttle(after) => Some(Self::throttled(after.as_secs().max(1))),
            Fault::ServerError(status) => {
                let status =
                    StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let code = if status == StatusCode::SERVICE_UNAVAILABLE {
                    "ServiceUnavailable"
                } else {
                    "InternalServerError"
                };
                Some(Self::new(status, code, "Injected server error."))
            }
            Fault::Latency(_) | Fault::Drop => None,
        }
    }

    /// The answer, with `opc-request-id`.
    pub fn respond(&self, request_id: &str) -> Response {
        let mut response = (
            self.status,
            axum::Json(json!({ "code": self.code, "message": self.message })),
        )
            .into_response();
        let headers = response.headers_mut();
        if let Ok(v) = HeaderValue::from_str(request_id) {
            headers.insert("opc-request-id", v);
        }
        if let Some(s) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        response
    }
}
