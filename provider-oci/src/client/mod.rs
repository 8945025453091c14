//! Our OCI REST client (no usable Rust SDK of OCI exists): JSON over reqwest with rustls on
//! ring, every request signed with the user's API key (`oci-signer`: `date (request-target)
//! host`, and `content-length content-type x-content-sha256` for bodies), each call counted,
//! OCI's errors classified, `opc-next-page` followed, and work requests read so a change is
//! tracked across passes instead of waited for.

pub mod answers;
pub mod credentials;
pub mod errors;
pub mod token;

use std::sync::Arc;
use std::time::Duration;

use contract::plan::OperationState;
use oci_signer::{ApiKey, Request, sign};
use provider_runtime::cloud_error::unexplained;
use provider_runtime::rest;
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;

use answers::{ErrorBody, WorkRequest, WorkRequestError};
pub use credentials::Credential;
use errors::OCI_CODES;
pub use provider_runtime::rest::Failure;

/// Installs ring as rustls's process-wide provider; a second call is harmless.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client for OCI.
pub fn http_client() -> reqwest::Client {
    install_crypto();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// The OCI services this provider calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// Container Engine for Kubernetes, `/20180222`.
    ContainerEngine,
    /// Core Services (networking, compute), `/20160918`.
    Core,
    /// Identity (availability domains), `/20160918`.
    Identity,
}

impl Service {
    fn base_path(self) -> &'static str {
        match self {
            Service::ContainerEngine => "/20180222",
            Service::Core | Service::Identity => "/20160918",
        }
    }
}

/// Where each service is for a region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Container Engine (`https://containerengine.<region>.oci.oraclecloud.com`).
    pub container_engine: String,
    /// Core Services (`https://iaas.<region>.oraclecloud.com`).
    pub core: String,
    /// Identity (`https://identity.<region>.oci.oraclecloud.com`).
    pub identity: String,
}

impl Endpoints {
    /// OCI's public endpoints of `region`, or every service at `single` (an emulator).
    pub fn of(region: &str, single: Option<&str>) -> Self {
        match single.map(str::trim).filter(|s| !s.is_empty()) {
            Some(url) => {
                let url = url.trim_end_matches('/').to_string();
                Self {
                    container_engine: url.clone(),
                    core: url.clone(),
                    identity: url,
                }
            }
            None => Self {
                container_engine: format!("https://containerengine.{region}.oci.oraclecloud.com"),
                core: format!("https://iaas.{region}.oraclecloud.com"),
                identity: format!("https://identity.{region}.oci.oraclecloud.com"),
            },
        }
    }

    fn of_service(&self, service: Service) -> &str {
        match service {
            Service::ContainerEngine => &self.container_engine,
            Service::Core => &self.core,
            Service::Identity => &self.identity,
        }
    }
}

/// One region's OCI, as one API key (whose `Debug` hides the private key).
#[derive(Clone, Debug)]
pub struct Oci {
    http: reqwest::Client,
    endpoints: Endpoints,
    region: String,
    key: Arc<ApiKey>,
}

/// What OCI answered a call that succeeded.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status (200, 202, 204).
    pub status: u16,
    /// The JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
    /// The body as text (a kubeconfig is YAML).
    pub text: String,
    /// `etag`.
    pub etag: Option<String>,
    /// `opc-work-request-id`.
    pub work_request: Option<String>,
    /// `opc-next-page`.
    pub next_page: Option<String>,
}

/// The service every OCI call is counted (and held after a 429) under: OCI throttles a
/// tenancy across its services.
const SERVICE: &str = "oci";

/// One call: its operation id, service, method, path (after the service's version, with any
/// query) and what it sends.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The operation's id, for counting (`CreateCluster`).
    pub operation: &'static str,
    /// The service.
    pub service: Service,
    /// The method.
    pub method: &'a Method,
    /// The path after the version (`/clusters/ocid…?x=y`).
    pub path: &'a str,
    /// The JSON body.
    pub body: Option<&'a Value>,
    /// `opc-retry-token`.
    pub retry_token: Option<&'a str>,
    /// `if-match`.
    pub if_match: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A GET of `path`.
    pub fn get(operation: &'static str, service: Service, path: &'a str) -> Self {
        Self {
            operation,
            service,
            method: &Method::GET,
            path,
            body: None,
            retry_token: None,
            if_match: None,
        }
    }

    /// A call of `method` with `body`.
    pub fn send(
        operation: &'static str,
        service: Service,
        method: &'a Method,
        path: &'a str,
        body: Option<&'a Value>,
    ) -> Self {
        Self {
            operation,
            service,
            method,
            path,
            body,
            retry_token: None,
            if_match: None,
        }
    }

    /// With `opc-retry-token`.
    pub fn retry_token(mut self, token: &'a str) -> Self {
        self.retry_token = Some(token);
        self
    }

    /// With `if-match`.
    pub fn if_match(mut self, etag: Option<&'a str>) -> Self {
        self.if_match = etag;
        self
    }
}

/// The form of an HTTP `date` (RFC 7231's IMF-fixdate).
pub const HTTP_DATE: &str = "%a, %d %b %Y %H:%M:%S GMT";

/// `date` as HTTP writes it.
pub fn http_date(t: jiff::Timestamp) -> String {
    t.strftime(HTTP_DATE).to_string()
}

/// A query value, percent-encoded.
pub fn q(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Oci {
    /// OCI at `endpoints` for `region`, signing with `key`.
    pub fn new(
        http: reqwest::Client,
        endpoints: Endpoints,
        region: &str,
        key: Arc<ApiKey>,
    ) -> Self {
        Self {
            http,
            endpoints,
            region: region.to_string(),
            key,
        }
    }

    /// The region.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The API key.
    pub fn key(&self) -> &ApiKey {
        &self.key
    }

    /// One call, counted.
    ///
    /// # Errors
    /// The classified failure.
    pub async fn call(&self, calls: &CloudCalls, call: Call<'_>) -> Result<Answer, Failure> {
        // A `Retry-After` holds the request it answered: this method on this path, whatever
        // the query (a list's filters and pages are the same request to the cloud's limiter).
        let path = call
            .path
            .split_once('?')
            .map_or(call.path, |(path, _)| path);
        let sent = calls
            .admit(SERVICE, format!("{} {path}", call.method))
            .map_err(Failure::held)?;
        let result = self.send(&call).await;
        sent.answered(
            call.operation,
            result.as_ref().map(|_| ()).map_err(|f| &f.error),
        );
        result
    }

    async fn send(&self, call: &Call<'_>) -> Result<Answer, Failure> {
        let url = format!(
            "{}{}{}",
            self.endpoints.of_service(call.service),
            call.service.base_path(),
            call.path
        );
        let body = call.body.map(Value::to_string);
        let date = http_date(jiff::Timestamp::now());
        let signed = sign(
            &self.key,
            &Request {
                method: call.method.as_str(),
                url: &url,
                body: body.as_deref().map(str::as_bytes),
                content_type: "application/json",
                date: &date,
            },
        )
        .map_err(|e| {
            let error = CloudError::Unauthorized(format!("the request could not be signed: {e}"));
            Failure::with_code(error, "Signing", 0)
        })?;
        let mut request = self
            .http
            .request(call.method.clone(), &url)
            .header("accept", "application/json")
            .header("opc-request-id", request_id());
        // reqwest writes `host` and `content-length` itself, equal to what was signed.
        for (name, value) in signed {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        if let Some(t) = call.retry_token {
            request = request.header("opc-retry-token", t);
        }
        if let Some(e) = call.if_match {
            request = request.header("if-match", e);
        }
        if let Some(b) = body {
            request = request.body(b);
        } else if matches!(*call.method, Method::POST | Method::PUT) {
            request = request.body("");
        }
        let response = request.send().await.map_err(|e| {
            Failure::transient(format!("could not reach OCI: {}", e.without_url()), 0)
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
        let etag = header("etag");
        let work_request = header("opc-work-request-id");
        let next_page = header("opc-next-page").filter(|p| !p.is_empty());
        let text = response
            .text()
            .await
            .map_err(|e| Failure::transient(format!("OCI's answer was cut: {e}"), status))?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(Answer {
                status,
                body,
                text,
                etag,
                work_request,
                next_page,
            });
        }
        // An error is an error whatever its body: one that is not OCI's shape is said by its
        // status and text.
        let said: ErrorBody = serde_json::from_value(body).unwrap_or_default();
        Err(OCI_CODES.failure(status, said.code, said.message, &text, retry_after))
    }

    /// A GET of one resource, read as `T`, with its etag; `Ok(None)` for a 404.
    ///
    /// # Errors
    /// The classified failure; a transient one naming the operation and the field when the
    /// answer is not a `T`.
    pub async fn get<T: DeserializeOwned>(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        service: Service,
        path: &str,
    ) -> Result<Option<(T, Option<String>)>, Failure> {
        match self.call(calls, Call::get(operation, service, path)).await {
            Ok(a) => Ok(Some((read(operation, a.status, a.body)?, a.etag))),
            Err(f) if f.error.is_not_found() => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// Every item of a list (`path` with its query), following `opc-next-page`, each read as
    /// `T`.
    ///
    /// # Errors
    /// The classified failure; a transient one naming the operation and the item's field when
    /// an item is not a `T`.
    pub async fn list_of<T: DeserializeOwned>(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        service: Service,
        path: &str,
    ) -> Result<Vec<T>, Failure> {
        let items = self.list(calls, operation, service, path).await?;
        read(operation, 200, Value::Array(items))
    }

    /// Every item of a list (`path` with its query), following `opc-next-page`, as JSON; a
    /// caller that reads the items uses [`Oci::list_of`].
    ///
    /// # Errors
    /// The classified failure.
    async fn list(
        &self,
        calls: &CloudCalls,
        operation: &'static str,
        service: Service,
        path: &str,
    ) -> Result<Vec<Value>, Failure> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut items = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..1000 {
            let paged = match &page {
                None => path.to_string(),
                Some(p) => format!("{path}{sep}page={}", q(p)),
            };
            let answer = self
                .call(calls, Call::get(operation, service, &paged))
                .await?;
            // A list that is not one is not taken as empty: that would read as "none there".
            let Value::Array(page_items) = answer.body else {
                let said = unexplained(answer.status, &answer.text);
                return Err(Failure::transient(
                    format!("{operation} answered something other than a list: {said}"),
                    answer.status,
                ));
            };
            items.extend(page_items);
            match answer.next_page {
                Some(next) => page = Some(next),
                None => return Ok(items),
            }
        }
        Err(Failure::transient(
            format!("{operation} gave more than 1000 pages; not taking a partial list"),
            200,
        ))
    }

    /// The state of a work request; `None` when OCI no longer knows it.
    ///
    /// # Errors
    /// The classified failure.
    pub async fn work_request_state(
        &self,
        calls: &CloudCalls,
        id: &str,
    ) -> Result<Option<OperationState>, ProviderError> {
        // OCI answered the change without a work request: there is nothing to follow.
        if id.is_empty() {
            return Ok(None);
        }
        let path = format!("/workRequests/{id}");
        let Some((w, _)) = self
            .get::<WorkRequest>(calls, "GetWorkRequest", Service::ContainerEngine, &path)
            .await?
        else {
            return Ok(None);
        };
        match w.status.as_str() {
            "SUCCEEDED" => Ok(Some(OperationState::Succeeded)),
            status @ ("FAILED" | "CANCELED") => {
                let errors = self.work_request_errors(calls, id, &w).await;
                Ok(Some(work_request_failed(status, &errors)))
            }
            _ => Ok(Some(OperationState::Running)),
        }
    }

    /// The errors of the failed work request `w` (`id`), as far as OCI says them: none when it
    /// names no compartment to list them in, or the list cannot be read (the failure is
    /// reported either way).
    async fn work_request_errors(
        &self,
        calls: &CloudCalls,
        id: &str,
        w: &WorkRequest,
    ) -> Vec<WorkRequestError> {
        let Some(compartment) = &w.compartment_id else {
            return Vec::new();
        };
        let path = format!("/workRequests/{id}/errors?compartmentId={}", q(compartment));
        self.list_of(
            calls,
            "ListWorkRequestErrors",
            Service::ContainerEngine,
            &path,
        )
        .await
        .unwrap_or_default()
    }
}

/// `body` read as `T` for `operation` ([`provider_runtime::read_answer`]), as a failure of the
/// call when it is not one.
fn read<T: DeserializeOwned>(operation: &str, status: u16, body: Value) -> Result<T, Failure> {
    provider_runtime::read_answer(operation, body).map_err(|e| Failure::with_code(e, "", status))
}

/// A failed work request in the shared terms, with OCI's errors.
pub fn work_request_failed(status: &str, errors: &[WorkRequestError]) -> OperationState {
    let said: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.code, e.message))
        .collect();
    OperationState::Failed(format!(
        "{} ({})",
        status.to_ascii_lowercase(),
        if said.is_empty() {
            "no error given".to_string()
        } else {
            said.join("; ")
        }
    ))
}

/// A new `opc-request-id`: 32 upper-case hex digits, as Oracle's SDKs make them.
fn request_id() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_oci_s_or_one_emulator() {
        let real = Endpoints::of("us-ashburn-1", None);
        assert_eq!(
            real.container_engine,
            "https://containerengine.us-ashburn-1.oci.oraclecloud.com"
        );
        assert_eq!(real.core, "https://iaas.us-ashburn-1.oraclecloud.com");
        let local = Endpoints::of("us-ashburn-1", Some("http://127.0.0.1:9/"));
        assert_eq!(local.identity, "http://127.0.0.1:9");
    }

    #[test]
    fn a_failed_work_request_carries_oci_s_errors() {
        assert_eq!(
            work_request_failed(
                "FAILED",
                &[WorkRequestError {
                    code: "LimitExceeded".into(),
                    message: "ocpus".into(),
                    timestamp: "t".into()
                }]
            ),
            OperationState::Failed("failed (LimitExceeded: ocpus)".into())
        );
        assert_eq!(request_id().len(), 32);
        assert_eq!(q("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn an_answer_without_a_needed_field_is_a_transient_failure_naming_it_not_a_default() {
        let pool = serde_json::json!({
            "id": "ocid1.nodepool.oc1.iad.a",
            "lifecycleState": "ACTIVE",
            "nodeShape": "VM.Standard.E4.Flex",
            "nodeConfigDetails": { "placementConfigs": [] },
        });
        let refused = read::<answers::NodePool>("GetNodePool", 200, pool).unwrap_err();
        assert_eq!(
            refused.error,
            CloudError::Transient("GetNodePool: the answer has no `nodeConfigDetails.size`".into())
        );
        // Transient: the pass backs off and looks again; nothing is changed on its account.
        assert!(matches!(
            ProviderError::from(refused),
            ProviderError::Transient { .. }
        ));
        let wrong = serde_json::json!({ "status": 3 });
        let refused = read::<WorkRequest>("GetWorkRequest", 200, wrong).unwrap_err();
        assert!(
            refused
                .error
                .to_string()
                .starts_with("GetWorkRequest: the answer's `status` is malformed"),
            "{}",
            refused.error
        );
    }

    #[test]
    fn an_error_body_is_read_when_it_is_oci_s_and_left_aside_when_not() {
        let said: ErrorBody = serde_json::from_value(
            serde_json::json!({"code": "NotAuthorizedOrNotFound", "message": "m", "x": 1}),
        )
        .unwrap_or_default();
        assert_eq!(said.code.as_deref(), Some("NotAuthorizedOrNotFound"));
        let said: ErrorBody = serde_json::from_value(Value::Null).unwrap_or_default();
        assert_eq!(said, ErrorBody::default());
    }
}
