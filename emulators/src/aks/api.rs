//! The HTTP front: Entra's token endpoint (`POST /{tenant}/oauth2/v2.0/token`) and Azure
//! Resource Manager (`/subscriptions/…?api-version=`), each ARM call authenticated with an
//! Entra token for ARM, held to the subscription's request buckets, counted and open to injected
//! faults under its operation id (`ManagedClusters_CreateOrUpdate`, …), next to the kit's
//! control endpoint.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::arm::{self, ArmError};
use super::entra::ARM_RESOURCE;
use super::{Aks, AksInstances, AksTokenVerifier};
use crate::kit;

/// One ARM request, parsed.
pub struct Req<'a> {
    /// `http://<host>`: the base of the URLs the answer names.
    pub base: String,
    /// The subscription of the path.
    pub subscription: String,
    /// `?api-version=`.
    pub api_version: String,
    /// The request's headers (`If-Match`).
    pub headers: &'a HeaderMap,
    /// The JSON body (`{}` when empty).
    pub body: Value,
    /// The caller's object id ("" when callers are not checked).
    pub caller: String,
}

/// The emulator's routes.
pub fn router(aks: Arc<Aks>) -> Router {
    let control = kit::control_router(
        aks.kit().clone(),
        Arc::new(AksTokenVerifier(Arc::downgrade(&aks))),
        Arc::new(AksInstances(Arc::downgrade(&aks))),
    );
    Router::new()
        .route("/_emulator/inventory", axum::routing::get(inventory))
        .fallback(dispatch)
        .with_state(aks)
        .merge(control)
}

/// `{"resources": [...]}`: every resource held ([`Aks::inventory`]).
async fn inventory(State(aks): State<Arc<Aks>>) -> Response {
    axum::Json(serde_json::json!({ "resources": aks.inventory() })).into_response()
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Group(String),
    GroupResult(String),
    ClustersInSubscription,
    ClustersInGroup(String),
    Cluster(String, String),
    Credentials(String, String, bool),
    UpgradeProfile(String, String),
    Pools(String, String),
    Pool(String, String, String),
    PoolUpgradeProfile(String, String, String),
    Vnet(String, String),
    Subnet(String, String, String, String),
    ScaleSets(String),
    ScaleSetVms(String, String),
    OperationStatus(String, String, String),
    OperationResult(String, String, String),
}

fn eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Parses the path after `/subscriptions/{sub}/`.
fn parse(segs: &[&str]) -> Option<Route> {
    let s = |x: &&str| (*x).to_string();
    let route = match segs {
        [rg, g] if eq(rg, "resourcegroups") => Route::Group(s(g)),
        [o, t] if eq(o, "operationresults") => Route::GroupResult(s(t)),
        [p, ns, mc]
            if eq(p, "providers")
                && eq(ns, "Microsoft.ContainerService")
                && eq(mc, "managedClusters") =>
        {
            Route::ClustersInSubscription
        }
        [p, ns, l, loc, o, id]
            if eq(p, "providers") && eq(l, "locations") && eq(o, "operations") =>
        {
            Route::OperationStatus(s(ns), s(loc), s(id))
        }
        [p, ns, l, loc, o, id]
            if eq(p, "providers") && eq(l, "locations") && eq(o, "operationresults") =>
        {
            Route::OperationResult(s(ns), s(loc), s(id))
        }
        [rg, g, p, ns, rest @ ..] if eq(rg, "resourcegroups") && eq(p, "providers") => {
            let g = s(g);
            if eq(ns, "Microsoft.ContainerService") {
                match rest {
                    [mc] if eq(mc, "managedClusters") => Route::ClustersInGroup(g),
                    [mc, n] if eq(mc, "managedClusters") => Route::Cluster(g, s(n)),
                    [mc, n, c]
                        if eq(mc, "managedClusters") && eq(c, "listClusterUserCredential") =>
                    {
                        Route::Credentials(g, s(n), false)
                    }
                    [mc, n, c]
                        if eq(mc, "managedClusters") && eq(c, "listClusterAdminCredential") =>
                    {
                        Route::Credentials(g, s(n), true)
                    }
                    [mc, n, u, d]
                        if eq(mc, "managedClusters")
                            && eq(u, "upgradeProfiles")
                            && eq(d, "default") =>
                    {
                        Route::UpgradeProfile(g, s(n))
                    }
                    [mc, n, a] if eq(mc, "managedClusters") && eq(a, "agentPools") => {
                        Route::Pools(g, s(n))
                    }
                    [mc, n, a, p] if eq(mc, "managedClusters") && eq(a, "agentPools") => {
                        Route::Pool(g, s(n), s(p))
                    }
                    [mc, n, a, p, u, d]
                        if eq(mc, "managedClusters")
                            && eq(a, "agentPools")
                            && eq(u, "upgradeProfiles")
                            && eq(d, "default") =>
                    {
                        Route::PoolUpgradeProfile(g, s(n), s(p))
                    }
                    _ => return None,
                }
            } else if eq(ns, "Microsoft.Network") {
                match rest {
                    [v, n] if eq(v, "virtualNetworks") => Route::Vnet(g, s(n)),
                    [v, n, sn, sub] if eq(v, "virtualNetworks") && eq(sn, "subnets") => {
                        Route::Subnet(g, s(n), s(sub), String::new())
                    }
                    _ => return None,
                }
            } else if eq(ns, "Microsoft.Compute") {
                match rest {
                    [v] if eq(v, "virtualMachineScaleSets") => Route::ScaleSets(g),
                    [v, n, vm] if eq(v, "virtualMachineScaleSets") && eq(vm, "virtualMachines") => {
                        Route::ScaleSetVms(g, s(n))
                    }
                    _ => return None,
                }
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(route)
}

/// The operation id of a call (what counters and fault rules name), whether it writes, and the
/// api-versions its resource provider serves.
fn operation(route: &Route, method: &Method) -> Option<(&'static str, &'static [&'static str])> {
    use Method as M;
    let cs = arm::CONTAINER_API_VERSIONS;
    let op = match (route, method.clone()) {
        (Route::Group(_), M::PUT) => ("ResourceGroups_CreateOrUpdate", arm::RESOURCES_API_VERSIONS),
        (Route::Group(_), M::GET | M::HEAD) => ("ResourceGroups_Get", arm::RESOURCES_API_VERSIONS),
        (Route::Group(_), M::DELETE) => ("ResourceGroups_Delete", arm::RESOURCES_API_VERSIONS),
        (Route::GroupResult(_), M::GET) => (
            "ResourceGroups_OperationResult",
            arm::RESOURCES_API_VERSIONS,
        ),
        (Route::ClustersInSubscription, M::GET) => ("ManagedClusters_List", cs),
        (Route::ClustersInGroup(_), M::GET) => ("ManagedClusters_ListByResourceGroup", cs),
        (Route::Cluster(..), M::PUT) => ("ManagedClusters_CreateOrUpdate", cs),
        (Route::Cluster(..), M::GET) => ("ManagedClusters_Get", cs),
        (Route::Cluster(..), M::DELETE) => ("ManagedClusters_Delete", cs),
        (Route::Cluster(..), M::PATCH) => ("ManagedClusters_UpdateTags", cs),
        (Route::Credentials(_, _, false), M::POST) => {
            ("ManagedClusters_ListClusterUserCredentials", cs)
        }
        (Route::Credentials(_, _, true), M::POST) => {
            ("ManagedClusters_ListClusterAdminCredentials", cs)
        }
        (Route::UpgradeProfile(..), M::GET) => ("ManagedClusters_GetUpgradeProfile", cs),
        (Route::Pools(..), M::GET) => ("AgentPools_List", cs),
        (Route::Pool(..), M::PUT) => ("AgentPools_CreateOrUpdate", cs),
        (Route::Pool(..), M::GET) => ("AgentPools_Get", cs),
        (Route::Pool(..), M::DELETE) => ("AgentPools_Delete", cs),
        (Route::PoolUpgradeProfile(..), M::GET) => ("AgentPools_GetUpgradeProfile", cs),
        (Route::Vnet(..), M::PUT) => ("VirtualNetworks_CreateOrUpdate", arm::NETWORK_API_VERSIONS),
        (Route::Vnet(..), M::GET) => ("VirtualNetworks_Get", arm::NETWORK_API_VERSIONS),
        (Route::Vnet(..), M::DELETE) => ("VirtualNetworks_Delete", arm::NETWORK_API_VERSIONS),
        (Route::Subnet(..), M::PUT) => ("Subnets_CreateOrUpdate", arm::NETWORK_API_VERSIONS),
        (Route::Subnet(..), M::GET) => ("Subnets_Get", arm::NETWORK_API_VERSIONS),
        (Route::Subnet(..), M::DELETE) => ("Subnets_Delete", arm::NETWORK_API_VERSIONS),
        (Route::ScaleSets(_), M::GET) => {
            ("VirtualMachineScaleSets_List", arm::COMPUTE_API_VERSIONS)
        }
        (Route::ScaleSetVms(..), M::GET) => {
            ("VirtualMachineScaleSetVMs_List", arm::COMPUTE_API_VERSIONS)
        }
        (Route::OperationStatus(ns, ..), M::GET) => (
            "Operations_Get",
            if eq(ns, "Microsoft.Network") {
                arm::NETWORK_API_VERSIONS
            } else {
                cs
            },
        ),
        (Route::OperationResult(ns, ..), M::GET) => (
            "OperationResults_Get",
            if eq(ns, "Microsoft.Network") {
                arm::NETWORK_API_VERSIONS
            } else {
                cs
            },
        ),
        _ => return None,
    };
    Some(op)
}

async fn dispatch(
    State(aks): State<Arc<Aks>>,
    method: Method,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    if let [tenant, "oauth2", "v2.0", "token"] = segs.as_slice()
        && method == Method::POST
    {
        aks.kit.calls.record("Token", kit::Outcome::Ok);
        let (status, body) = aks
            .entra
            .token(tenant, &kit::form(&String::from_utf8_lossy(&body)));
        return (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            axum::Json(body),
        )
            .into_response();
    }
    let (subscription, rest) = match segs.as_slice() {
        [s, sub, rest @ ..] if eq(s, "subscriptions") => ((*sub).to_string(), rest),
        _ => {
            return ArmError::new(
                StatusCode::NOT_FOUND,
                "InvalidResourceType",
                format!("The resource type could not be found for the path {path}."),
            )
            .into_response();
        }
    };
    let Some(route) = parse(rest) else {
        return ArmError::bad_request("InvalidResourceType", format!("The resource type of {path} could not be found in the namespace, or it is not emulated.")).into_response();
    };
    let Some((op, versions)) = operation(&route, &method) else {
        return ArmError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("The method {method} is not allowed on {path}."),
        )
        .into_response();
    };
    if let Err(fault) = aks.kit.enter(op, &format!("{method} {path}")).await {
        return arm::fault_response(&fault);
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let result = async {
        let api_version = query.get("api-version").cloned();
        arm::check_api_version(api_version.as_deref(), versions, op)?;
        let caller = aks.authenticate_arm(&headers)?;
        if !subscription.eq_ignore_ascii_case(&aks.config.subscription) {
            return Err(ArmError::new(
                StatusCode::NOT_FOUND,
                "SubscriptionNotFound",
                format!("The subscription '{subscription}' could not be found."),
            ));
        }
        let write = !matches!(method, Method::GET | Method::HEAD);
        let remaining = aks.throttle.take(&caller, write)?;
        let body: Value = if body.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&body).map_err(|e| {
                ArmError::bad_request(
                    "InvalidRequestContent",
                    format!(
                        "The request content was invalid and could not be deserialized: '{e}'."
                    ),
                )
            })?
        };
        let req = Req {
            base: format!("http://{host}"),
            subscription: aks.config.subscription.clone(),
            api_version: api_version.unwrap_or_default(),
            headers: &headers,
            body,
            caller,
        };
        let mut response = aks.call(&route, &method, &req, &query)?;
        let name = if write {
            "x-ms-ratelimit-remaining-subscription-writes"
        } else {
            "x-ms-ratelimit-remaining-subscription-reads"
        };
        if let Ok(v) = HeaderValue::from_str(&remaining.to_string()) {
            response.headers_mut().insert(name, v);
        }
        Ok::<_, ArmError>(response)
    }
    .await;
    aks.kit.finish(op, result.is_ok());
    match result {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(op, code = %e.code, message = %e.message, "error answered");
            e.into_response()
        }
    }
}

impl Aks {
    /// The caller of an ARM request: an Entra token for ARM of this tenant.
    fn authenticate_arm(&self, headers: &HeaderMap) -> Result<String, ArmError> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let Some(token) = bearer.and_then(|b| b.strip_prefix("Bearer ")) else {
            return Err(ArmError::unauthenticated(
                "AuthenticationFailed",
                "Authentication failed. The 'Authorization' header is missing.",
            ));
        };
        let caller = self.entra.verify(token).map_err(|why| {
            tracing::info!(reason = %why, "ARM request refused");
            ArmError::unauthenticated(
                "InvalidAuthenticationToken",
                format!("The access token is invalid: {why}."),
            )
        })?;
        if caller.audience.trim_end_matches('/') != ARM_RESOURCE.trim_end_matches('/') {
            return Err(ArmError::unauthenticated(
                "InvalidAuthenticationTokenAudience",
                format!(
                    "The access token has been obtained for wrong audience or resource '{}'. It should exactly match with one of the allowed audiences '{ARM_RESOURCE}'.",
                    caller.audience
                ),
            ));
        }
        Ok(caller.object_id)
    }

    fn call(
        &self,
        route: &Route,
        method: &Method,
        req: &Req,
        query: &HashMap<String, String>,
    ) -> Result<Response, ArmError> {
        use Method as M;
        match (route, method.clone()) {
            (Route::Group(g), M::PUT) => self.put_group(req, g),
            (Route::Group(g), M::GET | M::HEAD) => self.get_group(req, g),
            (Route::Group(g), _) => self.delete_group(req, g),
            (Route::GroupResult(t), _) => self.group_result(req, t),
            (Route::ClustersInSubscription, _) => self.list_clusters(req, None),
            (Route::ClustersInGroup(g), _) => self.list_clusters(req, Some(g)),
            (Route::Cluster(g, n), M::PUT) => self.put_cluster(req, g, n),
            (Route::Cluster(g, n), M::GET) => self.get_cluster(req, g, n),
            (Route::Cluster(g, n), M::DELETE) => self.delete_cluster(req, g, n),
            (Route::Cluster(g, n), _) => self.patch_tags(req, g, n),
            (Route::Credentials(g, n, admin), _) => self.credentials(req, g, n, *admin),
            (Route::UpgradeProfile(g, n), _) => self.upgrade_profile(req, g, n),
            (Route::Pools(g, n), _) => self.list_pools(req, g, n),
            (Route::Pool(g, n, p), M::PUT) => self.put_pool(req, g, n, p),
            (Route::Pool(g, n, p), M::GET) => self.get_pool(req, g, n, p),
            (Route::Pool(g, n, p), _) => self.delete_pool(req, g, n, p),
            (Route::PoolUpgradeProfile(g, n, p), _) => self.pool_upgrade_profile(req, g, n, p),
            (Route::Vnet(g, n), M::PUT) => self.put_vnet(req, g, n),
            (Route::Vnet(g, n), M::GET) => self.get_vnet(req, g, n),
            (Route::Vnet(g, n), _) => self.delete_vnet(req, g, n),
            (Route::Subnet(g, n, s, _), M::PUT) => self.put_subnet(req, g, n, s),
            (Route::Subnet(g, n, s, _), M::GET) => self.get_subnet(req, g, n, s),
            (Route::Subnet(g, n, s, _), _) => self.delete_subnet(req, g, n, s),
            (Route::ScaleSets(g), _) => self.list_scale_sets(req, g),
            (Route::ScaleSetVms(g, v), _) => {
                let skip = query
                    .get("$skiptoken")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                self.list_scale_set_vms(req, g, v, skip)
            }
            (Route::OperationStatus(ns, loc, id), _) => self.operation_status(req, ns, loc, id),
            (Route::OperationResult(ns, loc, id), _) => self.operation_result(req, ns, loc, id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_paths_parse_case_insensitively() {
        let p = |s: &str| parse(&s.split('/').collect::<Vec<_>>());
        assert_eq!(p("resourcegroups/rg1"), Some(Route::Group("rg1".into())));
        assert_eq!(
            p(
                "resourceGroups/rg1/providers/microsoft.containerservice/managedclusters/c1/agentPools/pool1"
            ),
            Some(Route::Pool("rg1".into(), "c1".into(), "pool1".into()))
        );
        assert_eq!(
            p("providers/Microsoft.ContainerService/locations/eastus/operations/abc"),
            Some(Route::OperationStatus(
                "Microsoft.ContainerService".into(),
                "eastus".into(),
                "abc".into()
            ))
        );
        assert_eq!(
            p("resourceGroups/rg1/providers/Microsoft.Storage/storageAccounts/x"),
            None
        );
    }
}
