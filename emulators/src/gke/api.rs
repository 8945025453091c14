//! The HTTP front: `/v1/…` (Kubernetes Engine), `/compute/v1/…` (Compute Engine) and
//! `POST /token` (OAuth 2.0), each call counted and open to injected faults under its RPC name,
//! every caller authenticated when keys are trusted, next to the kit's control endpoint.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::error::{GoogleError, fault_response};
use super::{Gke, GkeInstances, GkeTokenVerifier, compute, container};
use crate::kit;

/// The header on the 404 of a path no route serves (not a resource that does not exist).
pub const UNROUTED: &str = "x-emulator-unrouted";

/// The emulator's routes.
pub fn router(gke: Arc<Gke>) -> Router {
    let control = kit::control_router(
        gke.kit().clone(),
        Arc::new(GkeTokenVerifier(Arc::downgrade(&gke))),
        Arc::new(GkeInstances(Arc::downgrade(&gke))),
    );
    Router::new()
        .route("/_emulator/inventory", axum::routing::get(inventory))
        .fallback(dispatch)
        .with_state(gke)
        .merge(control)
}

/// `{"resources": [...]}`: every resource held ([`Gke::inventory`]).
async fn inventory(State(gke): State<Arc<Gke>>) -> Response {
    axum::Json(serde_json::json!({ "resources": gke.inventory() })).into_response()
}

enum Api {
    Container(container::Call, container::Target),
    Compute(compute::Call, compute::Target),
    /// IAM Credentials' `generateAccessToken` for the service account named.
    GenerateAccessToken(String),
}

async fn dispatch(
    State(gke): State<Arc<Gke>>,
    method: Method,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path();
    if path == "/token" && method == Method::POST {
        gke.kit.calls.record("Token", kit::Outcome::Ok);
        let (status, body) = gke
            .auth
            .exchange(&kit::form(&String::from_utf8_lossy(&body)));
        return (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            axum::Json(body),
        )
            .into_response();
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let api = match segs.as_slice() {
        ["v1", "projects", "-", "serviceAccounts", account] if method == Method::POST => account
            .strip_suffix(":generateAccessToken")
            .map(|email| Api::GenerateAccessToken(email.to_string())),
        ["v1", rest @ ..] => container::parse(&method, rest).map(|(c, t)| Api::Container(c, t)),
        ["compute", "v1", rest @ ..] => {
            compute::parse(&method, rest).map(|(c, t)| Api::Compute(c, t))
        }
        _ => None,
    };
    let Some(api) = api else {
        let mut response = GoogleError::not_found(format!(
            "The requested URL {path} was not found on this server."
        ))
        .into_response();
        // Not a missing resource but a route not emulated: the gRPC front answers UNIMPLEMENTED.
        response
            .headers_mut()
            .insert(UNROUTED, axum::http::HeaderValue::from_static("true"));
        return response;
    };
    let (rpc, permission, project) = match &api {
        Api::Container(c, t) => (
            c.rpc().to_string(),
            c.permission().to_string(),
            t.project.clone(),
        ),
        Api::Compute(c, t) => (c.rpc(), c.permission(), t.project.clone()),
        // An account of any project may be named; the caller's own project is checked below.
        Api::GenerateAccessToken(_) => (
            "GenerateAccessToken".to_string(),
            "iam.serviceAccounts.getAccessToken".to_string(),
            String::new(),
        ),
    };
    if let Err(fault) = gke.kit.enter(&rpc, &format!("{method} {path}")).await {
        return fault_response(&fault);
    }
    let result = async {
        let mut caller = None;
        if gke.auth.enabled() {
            let bearer = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .ok_or_else(GoogleError::unauthenticated)?;
            let principal = gke.auth.authenticate(bearer).map_err(|why| {
                tracing::info!(rpc, reason = %why, "request refused");
                GoogleError::unauthenticated()
            })?;
            if !project.is_empty() && principal.project != project {
                return Err(GoogleError::permission_denied(format!(
                    "Permission '{permission}' denied on resource 'projects/{project}' (or it may not exist)."
                )));
            }
            caller = Some(principal);
        }
        let body: Value = if body.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&body).map_err(|e| {
                GoogleError::invalid(format!("Invalid JSON payload received. {e}"))
            })?
        };
        match api {
            Api::Container(call, t) => gke.container_call(call, &t, body),
            Api::Compute(call, t) => gke.compute_call(call, &t, body, &query).await,
            Api::GenerateAccessToken(email) => {
                generate_access_token(&gke, caller.as_ref(), &email, &body)
            }
        }
    }
    .await;
    gke.kit.finish(&rpc, result.is_ok());
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => {
            tracing::debug!(rpc, status = e.status, message = %e.message, "error answered");
            e.into_response()
        }
    }
}

/// `POST /v1/projects/-/serviceAccounts/{email}:generateAccessToken` (IAM Credentials): an
/// access token the workload API servers accept, as IAM's are by GKE's.
fn generate_access_token(
    gke: &Gke,
    caller: Option<&super::auth::Principal>,
    email: &str,
    body: &Value,
) -> Result<Value, GoogleError> {
    if body["scope"].as_array().is_none_or(Vec::is_empty) {
        return Err(GoogleError::invalid("Scope required."));
    }
    let lifetime = match body["lifetime"].as_str() {
        None => None,
        Some(text) => Some(
            text.strip_suffix('s')
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(std::time::Duration::from_secs_f64)
                .ok_or_else(|| {
                    GoogleError::invalid(format!("Invalid value at 'lifetime' ({text})"))
                })?,
        ),
    };
    let (token, expires) = gke
        .auth
        .generate_access_token(caller, email, lifetime)
        .map_err(|(status, message)| match status {
            403 => GoogleError::permission_denied(message),
            _ => GoogleError::invalid(message),
        })?;
    Ok(serde_json::json!({ "accessToken": token, "expireTime": expires.to_string() }))
}
