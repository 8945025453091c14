//! The HTTP front: Container Engine for Kubernetes (`/20180222/…`) and the Core Services subset
//! (`/20160918/…`) on one listener, as the regional endpoints `containerengine.<region>.oci.…`
//! and `iaas.<region>.…` serve them. Every call is authenticated by its OCI request signature,
//! counted and open to injected faults under its operation id (`CreateCluster`, `GetVcn`, …),
//! next to the kit's control endpoint. Every answer carries `opc-request-id` (the caller's, or a
//! new one).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::error::OciError;
use super::signature::{self, Caller, Received};
use super::state::CoreKind;
use super::{Oke, OkeInstances, OkeTokenVerifier};
use crate::kit;

/// One API request, parsed.
pub struct Req<'a> {
    /// The query parameters, in order, repeats kept.
    pub query: Vec<(String, String)>,
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The JSON body (`{}` when empty).
    pub body: Value,
    /// Who signed it (`None` when no key is uploaded).
    pub caller: Option<Caller>,
}

impl Req<'_> {
    /// A query parameter (the last, when repeated).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `value` passes the list filter `name`: the filter is not given, or one of its
    /// values is `value` (OCI takes a filter such as `lifecycleState` repeated).
    pub fn passes(&self, name: &str, value: &str) -> bool {
        let mut given = self.query.iter().filter(|(k, _)| k == name).peekable();
        given.peek().is_none() || given.any(|(_, v)| v == value)
    }

    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    /// `opc-retry-token`.
    pub fn retry_token(&self) -> Option<String> {
        self.header("opc-retry-token")
    }

    /// The request's `if-match`, held to the resource's current ETag.
    ///
    /// # Errors
    /// 412 `NoEtagMatch` when it names another.
    pub fn check_etag(&self, current: &str) -> Result<(), OciError> {
        match self.header("if-match") {
            Some(want) if want != current => Err(OciError::etag(&want)),
            _ => Ok(()),
        }
    }

    /// The caller's user OCID ("" when callers are not checked).
    pub fn user(&self) -> String {
        self.caller
            .as_ref()
            .map(|c| c.user.clone())
            .unwrap_or_default()
    }

    /// One page of `items` (`limit`, `page`), with `opc-next-page` when more follow.
    ///
    /// # Errors
    /// A `limit` or `page` that is not a number OCI takes.
    pub fn page(&self, items: Vec<Value>) -> Result<Answer, OciError> {
        let limit = match self.param("limit") {
            None => 1000,
            Some(l) => match l.parse::<usize>() {
                Ok(n @ 1..=1000) => n,
                _ => return Err(OciError::invalid(format!("limit {l:?} must be 1 to 1000"))),
            },
        };
        let start = match self.param("page") {
            None => 0,
            Some(p) => p
                .parse::<usize>()
                .map_err(|_| OciError::invalid(format!("page {p:?} is not a page token")))?,
        };
        let total = items.len();
        let page: Vec<Value> = items.into_iter().skip(start).take(limit).collect();
        let mut answer = Answer::json(200, Value::Array(page));
        let next = start.saturating_add(limit);
        if next < total {
            answer = answer.header("opc-next-page", next.to_string());
        }
        Ok(answer)
    }
}

/// A string field of a request body, when set and not empty.
pub(super) fn str_field<'a>(body: &'a Value, field: &str) -> Option<&'a str> {
    body[field].as_str().filter(|s| !s.is_empty())
}

/// A required string field of a request body.
pub(super) fn required<'a>(body: &'a Value, field: &str) -> Result<&'a str, OciError> {
    str_field(body, field).ok_or_else(|| OciError::missing(field))
}

/// A tags field of a request body (`freeformTags`, `definedTags`), within OCI's limits.
pub(super) fn tags(body: &Value, field: &str) -> Result<Value, OciError> {
    match &body[field] {
        Value::Null => Ok(json!({})),
        Value::Object(map) => {
            if map.len() > 64 {
                return Err(OciError::invalid(format!(
                    "{field} has {} entries; at most 64 are allowed",
                    map.len()
                )));
            }
            for (k, v) in map {
                if field == "freeformTags" && (k.is_empty() || k.len() > 100 || !v.is_string()) {
                    return Err(OciError::invalid(format!(
                        "freeformTags key {k:?} must be 1 to 100 characters with a string value"
                    )));
                }
            }
            Ok(Value::Object(map.clone()))
        }
        _ => Err(OciError::invalid(format!("{field} must be an object"))),
    }
}

/// What a handler answers.
#[derive(Debug)]
pub struct Answer {
    status: u16,
    body: Option<Body>,
    headers: Vec<(&'static str, String)>,
    gone: bool,
}

#[derive(Debug)]
enum Body {
    Json(Value),
    Text(String),
}

impl Answer {
    /// A JSON answer.
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            body: Some(Body::Json(body)),
            headers: Vec::new(),
            gone: false,
        }
    }

    /// A plain-text answer (a kubeconfig).
    pub fn text(status: u16, body: String) -> Self {
        Self {
            status,
            body: Some(Body::Text(body)),
            headers: Vec::new(),
            gone: false,
        }
    }

    /// An answer without a body.
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            body: None,
            headers: Vec::new(),
            gone: false,
        }
    }

    /// With a header.
    pub fn header(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Counted as answering a deleted resource when `gone` (the call counters' `gone`).
    pub fn gone_if(mut self, gone: bool) -> Self {
        self.gone = gone;
        self
    }

    /// With `etag`.
    pub fn etag(self, etag: &str) -> Self {
        self.header("etag", etag.to_string())
    }

    /// `202 Accepted` naming the work request.
    pub fn accepted(work_request: &str) -> Self {
        Self::empty(202).header("opc-work-request-id", work_request.to_string())
    }

    fn into_response(self, request_id: &str) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK);
        let mut response = match self.body {
            Some(Body::Json(v)) => (status, axum::Json(v)).into_response(),
            Some(Body::Text(t)) => {
                (status, [(header::CONTENT_TYPE, "application/x-yaml")], t).into_response()
            }
            None => status.into_response(),
        };
        let headers = response.headers_mut();
        for (name, value) in self.headers {
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(name, v);
            }
        }
        if let Ok(v) = HeaderValue::from_str(request_id) {
            headers.insert("opc-request-id", v);
        }
        response
    }
}

/// The emulator's routes.
pub fn router(oke: Arc<Oke>) -> Router {
    let control = kit::control_router(
        oke.kit().clone(),
        Arc::new(OkeTokenVerifier(Arc::downgrade(&oke))),
        Arc::new(OkeInstances(Arc::downgrade(&oke))),
    );
    Router::new()
        .route("/_emulator/inventory", axum::routing::get(inventory))
        .fallback(dispatch)
        .with_state(oke)
        .merge(control)
}

/// `{"resources": [...]}`: every resource held ([`Oke::inventory`]).
async fn inventory(State(oke): State<Arc<Oke>>) -> Response {
    axum::Json(serde_json::json!({ "resources": oke.inventory() })).into_response()
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Clusters,
    Cluster(String),
    ClusterEndpointConfig(String),
    Kubeconfig(String),
    ClusterOptions(String),
    NodePools,
    NodePool(String),
    NodePoolOptions(String),
    WorkRequests,
    WorkRequest(String),
    WorkRequestErrors(String),
    WorkRequestLogs(String),
    CoreCollection(CoreKind),
    CoreResource(CoreKind, String),
    Services,
    AvailabilityDomains,
    FaultDomains,
    Regions,
    Instances,
    Instance(String),
}

fn parse(segs: &[&str]) -> Option<Route> {
    let s = |x: &&str| (*x).to_string();
    Some(match segs {
        ["20180222", "clusters"] => Route::Clusters,
        ["20180222", "clusters", id] => Route::Cluster(s(id)),
        [
            "20180222",
            "clusters",
            id,
            "actions",
            "updateEndpointConfig",
        ] => Route::ClusterEndpointConfig(s(id)),
        ["20180222", "clusters", id, "kubeconfig", "content"] => Route::Kubeconfig(s(id)),
        ["20180222", "clusterOptions", id] => Route::ClusterOptions(s(id)),
        ["20180222", "nodePools"] => Route::NodePools,
        ["20180222", "nodePools", id] => Route::NodePool(s(id)),
        ["20180222", "nodePoolOptions", id] => Route::NodePoolOptions(s(id)),
        ["20180222", "workRequests"] => Route::WorkRequests,
        ["20180222", "workRequests", id] => Route::WorkRequest(s(id)),
        ["20180222", "workRequests", id, "errors"] => Route::WorkRequestErrors(s(id)),
        ["20180222", "workRequests", id, "logs"] => Route::WorkRequestLogs(s(id)),
        ["20160918", "services"] => Route::Services,
        ["20160918", "availabilityDomains"] => Route::AvailabilityDomains,
        ["20160918", "faultDomains"] => Route::FaultDomains,
        ["20160918", "regions"] => Route::Regions,
        ["20160918", "instances"] => Route::Instances,
        ["20160918", "instances", id] => Route::Instance(s(id)),
        ["20160918", c] => Route::CoreCollection(CoreKind::of_collection(c)?),
        ["20160918", c, id] => Route::CoreResource(CoreKind::of_collection(c)?, s(id)),
        _ => return None,
    })
}

/// The operation id of a call (what counters and fault rules name).
fn operation(route: &Route, method: &Method) -> Option<String> {
    use Method as M;
    let fixed = |s: &str| Some(s.to_string());
    match (route, method.clone()) {
        (Route::Clusters, M::POST) => fixed("CreateCluster"),
        (Route::Clusters, M::GET) => fixed("ListClusters"),
        (Route::Cluster(_), M::GET) => fixed("GetCluster"),
        (Route::Cluster(_), M::PUT) => fixed("UpdateCluster"),
        (Route::Cluster(_), M::DELETE) => fixed("DeleteCluster"),
        (Route::ClusterEndpointConfig(_), M::POST) => fixed("UpdateClusterEndpointConfig"),
        (Route::Kubeconfig(_), M::POST) => fixed("CreateKubeconfig"),
        (Route::ClusterOptions(_), M::GET) => fixed("GetClusterOptions"),
        (Route::NodePools, M::POST) => fixed("CreateNodePool"),
        (Route::NodePools, M::GET) => fixed("ListNodePools"),
        (Route::NodePool(_), M::GET) => fixed("GetNodePool"),
        (Route::NodePool(_), M::PUT) => fixed("UpdateNodePool"),
        (Route::NodePool(_), M::DELETE) => fixed("DeleteNodePool"),
        (Route::NodePoolOptions(_), M::GET) => fixed("GetNodePoolOptions"),
        (Route::WorkRequests, M::GET) => fixed("ListWorkRequests"),
        (Route::WorkRequest(_), M::GET) => fixed("GetWorkRequest"),
        (Route::WorkRequestErrors(_), M::GET) => fixed("ListWorkRequestErrors"),
        (Route::WorkRequestLogs(_), M::GET) => fixed("ListWorkRequestLogs"),
        (Route::Services, M::GET) => fixed("ListServices"),
        (Route::AvailabilityDomains, M::GET) => fixed("ListAvailabilityDomains"),
        (Route::FaultDomains, M::GET) => fixed("ListFaultDomains"),
        (Route::Regions, M::GET) => fixed("ListRegions"),
        (Route::Instances, M::GET) => fixed("ListInstances"),
        (Route::Instance(_), M::GET) => fixed("GetInstance"),
        (Route::CoreCollection(k), M::POST) => Some(format!("Create{}", k.name())),
        (Route::CoreCollection(k), M::GET) => Some(format!("List{}s", k.name())),
        (Route::CoreResource(k, _), M::GET) => Some(format!("Get{}", k.name())),
        (Route::CoreResource(k, _), M::PUT) => Some(format!("Update{}", k.name())),
        (Route::CoreResource(k, _), M::DELETE) => Some(format!("Delete{}", k.name())),
        _ => None,
    }
}

async fn dispatch(
    State(oke): State<Arc<Oke>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request_id = headers
        .get("opc-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 98)
        .map_or_else(|| kit::random_hex(16).to_uppercase(), String::from);
    let path = uri.path().to_string();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let Some(route) = parse(&segs) else {
        return OciError::no_route(method.as_str(), &path).respond(&request_id);
    };
    let Some(op) = operation(&route, &method) else {
        return OciError::method(method.as_str()).respond(&request_id);
    };
    if let Err(fault) = oke.kit.enter(&op, &format!("{method} {path}")).await {
        return match OciError::from_fault(&fault) {
            Some(e) => e.respond(&request_id),
            None => kit::dropped_connection(),
        };
    }
    let target = uri
        .path_and_query()
        .map_or_else(|| path.clone(), |p| p.as_str().to_string());
    let result = async {
        let lookup = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let received = Received {
            method: method.as_str(),
            target: &target,
            header: &lookup,
            body: &body,
        };
        let caller = signature::verify(
            &oke.keys,
            &received,
            jiff::Timestamp::now(),
            signature::MAX_SKEW,
        )
        .map_err(|why| {
            tracing::info!(op, reason = %why, "request not authenticated");
            if why.starts_with(signature::SKEW_PREFIX) {
                OciError::new(StatusCode::UNAUTHORIZED, "NotAuthenticated", why)
            } else {
                OciError::not_authenticated(&why)
            }
        })?;
        if let Some(c) = &caller
            && c.tenancy != oke.config.tenancy
        {
            tracing::info!(op, tenancy = %c.tenancy, "a key of another tenancy");
            return Err(OciError::not_authenticated(&format!(
                "the key's tenancy {} is not this tenancy, {}",
                c.tenancy, oke.config.tenancy
            )));
        }
        let json: Value = if body.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&body).map_err(OciError::unparsable)?
        };
        let req = Req {
            query: kit::form_pairs(uri.query().unwrap_or_default()),
            headers: &headers,
            body: json,
            caller,
        };
        oke.call(&route, &method, &req)
    }
    .await;
    match &result {
        Ok(a) if a.gone => oke.kit.finish_gone(&op),
        other => oke.kit.finish(&op, other.is_ok()),
    }
    match result {
        Ok(a) => a.into_response(&request_id),
        Err(e) => {
            tracing::debug!(op, code = %e.code, message = %e.message, "error answered");
            e.respond(&request_id)
        }
    }
}

impl Oke {
    /// The handler of a route and method [`operation`] named; any other method is refused
    /// here too, so the two tables cannot drift into a wrong handler.
    fn call(&self, route: &Route, method: &Method, req: &Req) -> Result<Answer, OciError> {
        use Method as M;
        match (route, method.clone()) {
            (Route::Clusters, M::POST) => self.create_cluster(req),
            (Route::Clusters, M::GET) => self.list_clusters(req),
            (Route::Cluster(id), M::GET) => self.get_cluster(id),
            (Route::Cluster(id), M::PUT) => self.update_cluster(id, req),
            (Route::Cluster(id), M::DELETE) => self.delete_cluster(id, req),
            (Route::ClusterEndpointConfig(id), M::POST) => self.update_endpoint_config(id, req),
            (Route::Kubeconfig(id), M::POST) => self.kubeconfig(id, req),
            (Route::ClusterOptions(id), M::GET) => self.cluster_options(id),
            (Route::NodePools, M::POST) => self.create_pool(req),
            (Route::NodePools, M::GET) => self.list_pools(req),
            (Route::NodePool(id), M::GET) => self.get_pool(id),
            (Route::NodePool(id), M::PUT) => self.update_pool(id, req),
            (Route::NodePool(id), M::DELETE) => self.delete_pool(id, req),
            (Route::NodePoolOptions(id), M::GET) => self.pool_options(id),
            (Route::WorkRequests, M::GET) => self.list_work_requests(req),
            (Route::WorkRequest(id), M::GET) => self.get_work_request(id),
            (Route::WorkRequestErrors(id), M::GET) => self.work_request_errors(id, req),
            (Route::WorkRequestLogs(id), M::GET) => self.work_request_logs(id, req),
            (Route::Services, M::GET) => self.list_services(req),
            (Route::AvailabilityDomains, M::GET) => self.list_availability_domains(req),
            (Route::FaultDomains, M::GET) => self.list_fault_domains(req),
            (Route::Regions, M::GET) => Ok(list_regions()),
            (Route::Instances, M::GET) => self.list_instances(req),
            (Route::Instance(id), M::GET) => self.get_instance(id),
            (Route::CoreCollection(k), M::POST) => self.core_create(*k, req),
            (Route::CoreCollection(k), M::GET) => self.core_list(*k, req),
            (Route::CoreResource(k, id), M::GET) => self.core_get(*k, id),
            (Route::CoreResource(k, id), M::PUT) => self.core_update(*k, id, req),
            (Route::CoreResource(k, id), M::DELETE) => self.core_delete(*k, id, req),
            _ => Err(OciError::method(method.as_str())),
        }
    }
}

/// `GET /20160918/regions` (Identity): every region of the realm, keys in upper case as OCI
/// writes them (one page, no parameters).
fn list_regions() -> Answer {
    let items = crate::oke::catalog::REGIONS
        .iter()
        .map(|(name, key)| json!({"key": key.to_ascii_uppercase(), "name": name}))
        .collect();
    Answer::json(200, Value::Array(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_operations() {
        let op = |m: Method, p: &str| {
            let segs: Vec<&str> = p.trim_matches('/').split('/').collect();
            parse(&segs).and_then(|r| operation(&r, &m))
        };
        assert_eq!(
            op(Method::POST, "/20180222/clusters").as_deref(),
            Some("CreateCluster")
        );
        assert_eq!(
            op(Method::POST, "/20180222/clusters/x/kubeconfig/content").as_deref(),
            Some("CreateKubeconfig")
        );
        assert_eq!(
            op(Method::DELETE, "/20160918/natGateways/x").as_deref(),
            Some("DeleteNatGateway")
        );
        assert_eq!(
            op(Method::GET, "/20160918/vcns").as_deref(),
            Some("ListVcns")
        );
        assert_eq!(op(Method::PATCH, "/20180222/clusters/x"), None);
        assert_eq!(op(Method::GET, "/20160918/loadBalancers"), None);
    }
}
