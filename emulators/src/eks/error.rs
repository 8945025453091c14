//! EKS errors as the service sends them: an HTTP status, the exception name in the
//! `x-amzn-ErrorType` header, and a JSON body with `message` plus the resource names the
//! exception carries (`clusterName`, `nodegroupName`, `addonName`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::kit::{self, Fault};

/// The `x-amzn-ErrorType` header.
pub const ERROR_TYPE_HEADER: &str = "x-amzn-errortype";

/// The `x-amzn-RequestId` header every response carries.
pub const REQUEST_ID_HEADER: &str = "x-amzn-requestid";

/// One EKS error response (boxed: results stay small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EksError(Box<EksErrorDetail>);

impl std::ops::Deref for EksError {
    type Target = EksErrorDetail;
    fn deref(&self) -> &EksErrorDetail {
        &self.0
    }
}

impl std::ops::DerefMut for EksError {
    fn deref_mut(&mut self) -> &mut EksErrorDetail {
        &mut self.0
    }
}

/// What an [`EksError`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EksErrorDetail {
    /// HTTP status.
    pub status: StatusCode,
    /// Exception name (`ResourceNotFoundException`, …).
    pub kind: &'static str,
    /// Human-readable message, in EKS's words where known.
    pub message: String,
    /// `clusterName` in the body.
    pub cluster: Option<String>,
    /// `nodegroupName` in the body.
    pub nodegroup: Option<String>,
    /// `addonName` in the body.
    pub addon: Option<String>,
    /// `Retry-After`, seconds (throttling only).
    pub retry_after: Option<u64>,
}

impl EksError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self(Box::new(EksErrorDetail {
            status,
            kind,
            message: message.into(),
            cluster: None,
            nodegroup: None,
            addon: None,
            retry_after: None,
        }))
    }

    /// 400 `InvalidParameterException`: a parameter is wrong.
    pub fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "InvalidParameterException",
            message,
        )
    }

    /// 400 `InvalidRequestException`: the request is valid but not in the resource's state.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidRequestException", message)
    }

    /// 409 `ResourceInUseException`: the name is taken or the resource is busy.
    pub fn in_use(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "ResourceInUseException", message)
    }

    /// 400 `ResourceLimitExceededException`: an account or cluster quota is reached.
    pub fn limit_exceeded(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "ResourceLimitExceededException",
            message,
        )
    }

    /// 404 `ResourceNotFoundException`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "ResourceNotFoundException", message)
    }

    /// 404 `NotFoundException` (the tagging operations' not-found).
    pub fn tag_not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NotFoundException", message)
    }

    /// 400 `BadRequestException` (the tagging operations' bad request).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequestException", message)
    }

    /// 500 `ServerException`.
    pub fn server(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ServerException",
            message,
        )
    }

    /// 403 `UnrecognizedClientException`: the access key is not known.
    pub fn unrecognized_client(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "UnrecognizedClientException",
            message,
        )
    }

    /// Adds `clusterName` to the body.
    pub fn cluster(mut self, name: &str) -> Self {
        self.cluster = Some(name.to_string());
        self
    }

    /// Adds `nodegroupName` to the body.
    pub fn nodegroup(mut self, name: &str) -> Self {
        self.nodegroup = Some(name.to_string());
        self
    }

    /// Adds `addonName` to the body.
    pub fn addon(mut self, name: &str) -> Self {
        self.addon = Some(name.to_string());
        self
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        if let Some(c) = &self.cluster {
            body.insert("clusterName".into(), json!(c));
        }
        if let Some(n) = &self.nodegroup {
            body.insert("nodegroupName".into(), json!(n));
        }
        if let Some(a) = &self.addon {
            body.insert("addonName".into(), json!(a));
        }
        body.insert("message".into(), json!(self.message));
        Value::Object(body)
    }

    /// The error an injected fault turns into; `None` for a dropped connection or a latency
    /// (which the caller handles).
    pub fn from_fault(fault: &Fault) -> Option<Self> {
        match fault {
            Fault::Throttle(after) => {
                let mut e = Self::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "ThrottlingException",
                    "Rate exceeded",
                );
                e.retry_after = Some(after.as_secs().max(1));
                Some(e)
            }
            Fault::ServerError(503) => Some(Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailableException",
                "The service is unavailable. Try again later.",
            )),
            Fault::ServerError(status) => {
                let status = StatusCode::from_u16(*status)
                    .ok()
                    .filter(|s| s.is_server_error())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                Some(Self::new(
                    status,
                    "ServerException",
                    "An internal error occurred. Try again later.",
                ))
            }
            Fault::Latency(_) | Fault::Drop => None,
        }
    }
}

/// The response to an injected fault.
pub fn fault_response(fault: &Fault) -> Response {
    match EksError::from_fault(fault) {
        Some(e) => e.into_response(),
        None => kit::dropped_connection(),
    }
}

impl IntoResponse for EksError {
    fn into_response(self) -> Response {
        let body = self.body().to_string();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(ERROR_TYPE_HEADER, HeaderValue::from_static(self.kind));
        if let Ok(id) = HeaderValue::from_str(&super::request_id()) {
            headers.insert(REQUEST_ID_HEADER, id);
        }
        if let Some(after) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(after));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn faults_map_to_the_eks_exception_names_and_statuses() {
        let t = EksError::from_fault(&Fault::Throttle(Duration::from_secs(3))).unwrap();
        assert_eq!(
            (t.status.as_u16(), t.kind, t.retry_after),
            (429, "ThrottlingException", Some(3))
        );
        let u = EksError::from_fault(&Fault::ServerError(503)).unwrap();
        assert_eq!(
            (u.status.as_u16(), u.kind),
            (503, "ServiceUnavailableException")
        );
        let s = EksError::from_fault(&Fault::ServerError(502)).unwrap();
        assert_eq!((s.status.as_u16(), s.kind), (502, "ServerException"));
        let odd = EksError::from_fault(&Fault::ServerError(418)).unwrap();
        assert_eq!(odd.status.as_u16(), 500);
        assert!(EksError::from_fault(&Fault::Drop).is_none());
    }

    #[test]
    fn the_body_names_the_resources_and_the_message() {
        let e = EksError::not_found("No node group found for name: ng.")
            .cluster("c")
            .nodegroup("ng");
        assert_eq!(
            e.body(),
            json!({"clusterName": "c", "nodegroupName": "ng", "message": "No node group found for name: ng."})
        );
    }
}
