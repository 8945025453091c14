//! Our Azure Resource Manager client (no maintained Rust client of AKS exists): JSON over
//! reqwest with rustls on ring, a bearer token per call from Microsoft Entra ID, each call
//! counted, ARM's errors classified, and the asynchronous-operation headers read so a change is
//! tracked across passes instead of waited for.

pub mod answers;
pub mod credentials;
pub mod errors;
pub mod identity;

use std::sync::Arc;
use std::time::Duration;

use contract::plan::OperationState;
use provider_runtime::rest;
use provider_runtime::{CloudCalls, CloudError, ProviderError, read_answer};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;

use answers::{ErrorAnswer, OperationStatus, Page};
use errors::ARM_CODES;
pub use provider_runtime::rest::Failure;

pub use credentials::{AccessToken, Credential, Tokens};

/// Azure Resource Manager's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://management.azure.com";

/// The `Microsoft.ContainerService` api-version spoken.
pub const CONTAINER: &str = "2026-08-01";
/// The `Microsoft.Network` api-version spoken.
pub const NETWORK: &str = "2024-05-01";
/// The `Microsoft.Compute` api-version spoken.
pub const COMPUTE: &str = "2024-07-01";
/// The `Microsoft.Resources` api-version spoken.
pub const RESOURCES: &str = "2021-04-01";

/// Installs ring as rustls's process-wide provider; a second call is harmless.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client for ARM and Entra.
pub fn http_client() -> reqwest::Client {
    install_crypto();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// One subscription's ARM, as one identity (whose `Debug` hides its secrets).
#[derive(Clone, Debug)]
pub struct Arm {
    http: reqwest::Client,
    endpoint: String,
    subscription: String,
    tokens: Arc<Tokens>,
}

/// What ARM answered a call that succeeded.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status (200, 201, 202, 204).
    pub status: u16,
    /// The JSON body (`Null` when there is none).
    pub body: Value,
    /// The `Azure-AsyncOperation` status resource, as a path and query under the endpoint.
    pub async_operation: Option<String>,
    /// The `Location` result resource, likewise.
    pub location: Option<String>,
}

/// The service every ARM call is counted (and held after a 429) under.
const SERVICE: &str = "arm";

impl Answer {
    /// The body read as `T`, the answer of `operation`.
    ///
    /// # Errors
    /// A transient error naming `operation` and the missing or malformed field.
    pub fn read<T: DeserializeOwned>(&self, operation: &str) -> Result<T, CloudError> {
        read_answer(operation, self.body.clone())
    }
}

impl Arm {
    /// ARM at `endpoint` for `subscription`, authenticating with `tokens`.
    pub fn new(
        http: reqwest::Client,
        endpoint: &str,
        subscription: &str,
        tokens: Arc<Tokens>,
    ) -> Self {
        Self {
            http,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            subscription: subscription.to_string(),
            tokens,
        }
    }

    /// The subscription.
    pub fn subscription(&self) -> &str {
        &self.subscription
    }

    /// The identity's tokens.
    pub fn tokens(&self) -> &Arc<Tokens> {
        &self.tokens
    }

    /// `/subscriptions/<sub>/resourceGroups/<group>`.
    pub fn group_path(&self, group: &str) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{group}",
            self.subscription
        )
    }

    /// `path` relative to the endpoint when it is a URL on it; `None` for any other host (a
    /// header naming elsewhere is not followed).
    fn relative(&self, url: &str) -> Option<String> {
        url.strip_prefix(&self.endpoint)
            .filter(|p| p.starts_with('/'))
            .map(String::from)
            .or_else(|| url.starts_with("/subscriptions/").then(|| url.to_string()))
    }

    /// One call: `path` (from `/subscriptions/…`, without `api-version`), counted as
    /// `operation`.
    ///
    /// # Errors
    /// The classified failure.
    #[allow(clippy::too_many_arguments)] // one call's every part
    pub async fn call(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        method: Method,
        path: &str,
        api_version: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
    ) -> Result<Answer, Failure> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = format!("{}{path}{sep}api-version={api_version}", self.endpoint);
        // A `Retry-After` holds the request it answered: this method on this path.
        let sent = calls
            .admit(SERVICE, format!("{method} {path}"))
            .map_err(Failure::held)?;
        let result = self.send(method, &url, body, if_match).await;
        sent.answered(operation, result.as_ref().map(|_| ()).map_err(|f| &f.error));
        result
    }

    /// A GET of a URL ARM handed out (`nextLink`, an operation's status), counted.
    ///
    /// # Errors
    /// The classified failure; `Invalid` for a URL off the endpoint.
    pub async fn follow(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        url: &str,
    ) -> Result<Answer, Failure> {
        let Some(path) = self.relative(url) else {
            let message = format!(
                "ARM handed out a URL off its endpoint {}: not followed",
                self.endpoint
            );
            let code = "UnexpectedUrl".to_string();
            let error = CloudError::Invalid { code, message };
            return Err(Failure::with_code(error, "UnexpectedUrl", 0));
        };
        let sent = calls
            .admit(SERVICE, format!("GET {path}"))
            .map_err(Failure::held)?;
        let result = self
            .send(Method::GET, &format!("{}{path}", self.endpoint), None, None)
            .await;
        sent.answered(operation, result.as_ref().map(|_| ()).map_err(|f| &f.error));
        result
    }

    async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
    ) -> Result<Answer, Failure> {
        let token = self.tokens.get(credentials::ARM_SCOPE).await.map_err(|e| {
            let error = match &e {
                ProviderError::Terminal { .. } => CloudError::Unauthorized(e.to_string()),
                _ => CloudError::Transient(e.to_string()),
            };
            Failure::with_code(error, "Token", 0)
        })?;
        let mut request = self.http.request(method, url).bearer_auth(&token.token.0);
        if let Some(b) = body {
            request = request
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        if let Some(e) = if_match {
            request = request.header("if-match", e);
        }
        let response = request.send().await.map_err(|e| {
            let said = format!(
                "could not reach Azure Resource Manager: {}",
                e.without_url()
            );
            Failure::transient(said, 0)
        })?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let retry_after = rest::retry_after(header("retry-after").as_deref());
        let async_operation = header("azure-asyncoperation").and_then(|u| self.relative(&u));
        let location = header("location").and_then(|u| self.relative(&u));
        let text = response.text().await.map_err(|e| {
            Failure::transient(
                format!("Azure Resource Manager's answer was cut: {e}"),
                status,
            )
        })?;
        let body: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::Null)
        };
        if (200..300).contains(&status) {
            return Ok(Answer {
                status,
                body,
                async_operation,
                location,
            });
        }
        let said = serde_json::from_value::<ErrorAnswer>(body)
            .ok()
            .and_then(|a| a.error)
            .unwrap_or_default();
        Err(ARM_CODES.failure(status, said.code, said.message, &text, retry_after))
    }

    /// GET of a resource, read as `T` (`Value` keeps it whole); `Ok(None)` for a 404.
    ///
    /// # Errors
    /// The classified failure; a transient one naming the field when the answer is not a `T`.
    pub async fn get<T: DeserializeOwned>(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        path: &str,
        api_version: &str,
    ) -> Result<Option<T>, Failure> {
        match self
            .call(calls, operation, Method::GET, path, api_version, None, None)
            .await
        {
            Ok(a) => a
                .read(operation)
                .map(Some)
                .map_err(|e| Failure::with_code(e, "MalformedAnswer", a.status)),
            Err(f) if f.error.is_not_found() => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// Every item of a list, each read as `T`, following `nextLink`.
    ///
    /// # Errors
    /// The classified failure; a transient one naming the field when a page is not a page of
    /// `T`.
    pub async fn list<T: DeserializeOwned>(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        path: &str,
        api_version: &str,
    ) -> Result<Vec<T>, Failure> {
        let mut answer = self
            .call(calls, operation, Method::GET, path, api_version, None, None)
            .await?;
        let mut items = Vec::new();
        for _ in 0..1000 {
            let page: Page<T> = answer
                .read(operation)
                .map_err(|e| Failure::with_code(e, "MalformedAnswer", answer.status))?;
            items.extend(page.value);
            let Some(next) = page.next_link.filter(|n| !n.is_empty()) else {
                return Ok(items);
            };
            answer = self.follow(calls, operation, &next).await?;
        }
        Ok(items)
    }

    /// The state of the asynchronous operation at `path` (an `Azure-AsyncOperation` status
    /// resource); `None` when ARM no longer knows it.
    ///
    /// # Errors
    /// The classified failure.
    pub async fn operation_state(
        &self,
        calls: &CloudCalls,
        path: &str,
    ) -> Result<Option<OperationState>, ProviderError> {
        match self.follow(calls, OPERATIONS_GET, path).await {
            // Accepted, or nothing said yet (an operation result still running): running.
            Ok(a) if a.status == 202 || a.body.is_null() => Ok(Some(OperationState::Running)),
            Ok(a) => Ok(Some(operation_state(&a.read(OPERATIONS_GET)?))),
            Err(f) if f.error.is_not_found() => Ok(None),
            Err(f) => Err(f.into()),
        }
    }
}

/// The name an operation status resource's read is counted and refused under.
pub const OPERATIONS_GET: &str = "Operations_Get";

/// An operation status resource in the shared terms.
pub fn operation_state(status: &OperationStatus) -> OperationState {
    match status.status.as_str() {
        "Succeeded" => OperationState::Succeeded,
        "Failed" | "Canceled" => {
            let e = status.error.clone().unwrap_or_default();
            let message = match (e.code, e.message) {
                (Some(c), Some(m)) => format!("{c}: {m}"),
                (None, Some(m)) => m,
                _ => "no message given".into(),
            };
            OperationState::Failed(format!(
                "{} ({message})",
                status.status.to_ascii_lowercase()
            ))
        }
        _ => OperationState::Running,
    }
}

/// The operation to track after a PUT or DELETE: its `Azure-AsyncOperation`, else its
/// `Location`.
pub fn tracked(answer: &Answer) -> Option<String> {
    answer
        .async_operation
        .clone()
        .or_else(|| answer.location.clone())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(body: Value) -> OperationState {
        operation_state(&read_answer(OPERATIONS_GET, body).unwrap())
    }

    #[test]
    fn operation_status_resources_read_as_the_kernel_tracks_them() {
        assert_eq!(
            state(json!({"status": "InProgress"})),
            OperationState::Running
        );
        assert_eq!(
            state(json!({"status": "Succeeded"})),
            OperationState::Succeeded
        );
        assert_eq!(
            state(
                json!({"status": "Failed", "error": {"code": "QuotaExceeded", "message": "cores"}})
            ),
            OperationState::Failed("failed (QuotaExceeded: cores)".into())
        );
    }

    #[test]
    fn a_status_resource_without_a_status_is_refused_naming_it() {
        let e = read_answer::<OperationStatus>(OPERATIONS_GET, json!({"id": "x"})).unwrap_err();
        assert!(e.to_string().contains("`status`"), "{e}");
    }
}
