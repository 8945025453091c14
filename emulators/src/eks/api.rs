//! The EKS REST paths (as `operation/*.rs` of aws-sdk-eks builds them) and what every handler
//! does around its operation: fault injection and counting through the kit, SigV4 checking,
//! reading the JSON body, and answering JSON or the EKS error shape.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{EksError, REQUEST_ID_HEADER, fault_response};
use super::sigv4::{self, SigError};
use super::verifier::EksTokenVerifier;
use super::{Eks, request_id};
use crate::kit;

/// Largest request body accepted.
const MAX_BODY: usize = 1 << 20;

/// The EKS API plus the kit's control endpoint (`/_emulator/...`, `/metrics`).
pub fn router(eks: Arc<Eks>) -> Router {
    let verifier = Arc::new(EksTokenVerifier::new(&eks));
    let api = Router::new()
        .route("/_emulator/inventory", get(inventory))
        .route("/clusters", post(create_cluster).get(list_clusters))
        .route(
            "/clusters/{name}",
            get(describe_cluster).delete(delete_cluster),
        )
        .route(
            "/clusters/{name}/updates",
            post(update_cluster_version).get(list_updates),
        )
        .route("/clusters/{name}/updates/{update_id}", get(describe_update))
        .route(
            "/clusters/{name}/update-config",
            post(update_cluster_config),
        )
        .route(
            "/clusters/{name}/node-groups",
            post(create_nodegroup).get(list_nodegroups),
        )
        .route(
            "/clusters/{name}/node-groups/{ng}",
            get(describe_nodegroup).delete(delete_nodegroup),
        )
        .route(
            "/clusters/{name}/node-groups/{ng}/update-config",
            post(update_nodegroup_config),
        )
        .route(
            "/clusters/{name}/node-groups/{ng}/update-version",
            post(update_nodegroup_version),
        )
        .route(
            "/clusters/{name}/addons",
            post(create_addon).get(list_addons),
        )
        .route(
            "/clusters/{name}/addons/{addon}",
            get(describe_addon).delete(delete_addon),
        )
        .route("/clusters/{name}/addons/{addon}/update", post(update_addon))
        .route("/addons/supported-versions", get(describe_addon_versions))
        .route(
            "/clusters/{name}/access-entries",
            post(create_access_entry).get(list_access_entries),
        )
        .route(
            "/clusters/{name}/access-entries/{principal}",
            get(describe_access_entry).delete(delete_access_entry),
        )
        .route(
            "/clusters/{name}/access-entries/{principal}/access-policies",
            post(associate_access_policy).get(list_associated_access_policies),
        )
        .route(
            "/clusters/{name}/identity-provider-configs",
            get(list_identity_provider_configs),
        )
        .route(
            "/clusters/{name}/identity-provider-configs/associate",
            post(associate_identity_provider_config),
        )
        .route(
            "/clusters/{name}/identity-provider-configs/describe",
            post(describe_identity_provider_config),
        )
        .route(
            "/clusters/{name}/identity-provider-configs/disassociate",
            post(disassociate_identity_provider_config),
        )
        .route(
            "/tags/{arn}",
            get(list_tags_for_resource)
                .post(tag_resource)
                .delete(untag_resource),
        )
        .method_not_allowed_fallback(unknown_operation)
        .with_state(eks.clone());
    let instances = Arc::new(EksInstances(eks.clone()));
    api.merge(kit::control_router(eks.kit().clone(), verifier, instances))
        .fallback(unknown_operation)
}

/// `GET /_emulator/inventory`: `{"resources": [InventoryItem…]}`, EKS's and moto's.
async fn inventory(State(eks): State<Arc<Eks>>) -> Response {
    match eks.inventory().await {
        Ok(items) => axum::Json(serde_json::json!({ "resources": items })).into_response(),
        Err(e) => (
            axum::http::StatusCode::BAD_GATEWAY,
            format!("moto could not be read: {e}"),
        )
            .into_response(),
    }
}

/// The node instances of every nodegroup, for the control endpoint.
struct EksInstances(Arc<Eks>);

impl kit::NodeInstances for EksInstances {
    fn node_instances(&self) -> Vec<kit::NodeInstance> {
        self.0.instances()
    }
}

async fn unknown_operation(method: Method, uri: axum::http::Uri) -> Response {
    let mut e = EksError::not_found(format!("No EKS operation matches {method} {}", uri.path()));
    e.kind = "UnknownOperationException";
    e.into_response()
}

/// One call's inputs after the common steps.
#[derive(Debug)]
pub struct Call {
    /// Decoded query parameters, in order (repeats kept).
    pub query: Vec<(String, String)>,
    /// The JSON body (`Null` when empty).
    pub body: Value,
    /// The access key id that signed the call, if any.
    pub caller: Option<String>,
}

impl Call {
    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of query parameter `name`.
    pub fn params(&self, name: &str) -> Vec<String> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// The body as `T`.
    ///
    /// # Errors
    /// `InvalidParameterException` when the body does not fit `T`.
    pub fn parse<T: DeserializeOwned + Default>(&self) -> Result<T, EksError> {
        if self.body.is_null() {
            return Ok(T::default());
        }
        serde_json::from_value(self.body.clone())
            .map_err(|e| EksError::invalid_parameter(format!("The request body is not valid: {e}")))
    }
}

/// Enters `op` through the kit, reads the body and checks the signature. `Err` is the response
/// to send (an injected fault, or an authentication failure already counted).
async fn begin(eks: &Eks, op: &'static str, request: Request) -> Result<Call, Response> {
    let target = format!("{} {}", request.method(), request.uri().path());
    if let Err(fault) = eks.kit().enter(op, &target).await {
        return Err(fault_response(&fault));
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(e) => {
            eks.kit().finish(op, false);
            return Err(EksError::invalid_parameter(format!(
                "The request body could not be read: {e}"
            ))
            .into_response());
        }
    };
    let caller = if eks.config().credentials.is_empty() {
        sigv4::access_key_id(&parts.headers)
    } else {
        let secret_of = |k: &str| eks.secret_of(k);
        match sigv4::verify(
            parts.method.as_str(),
            parts.uri.path(),
            parts.uri.query(),
            &parts.headers,
            &bytes,
            &eks.config().region,
            "eks",
            &secret_of,
            jiff::Timestamp::now(),
        ) {
            Ok(k) => Some(k),
            Err(e) => {
                eks.kit().finish(op, false);
                return Err(auth_error(e).into_response());
            }
        }
    };
    let body = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                eks.kit().finish(op, false);
                return Err(EksError::invalid_parameter(format!(
                    "The request body is not valid JSON: {e}"
                ))
                .into_response());
            }
        }
    };
    Ok(Call {
        query: query_pairs(parts.uri.query()),
        body,
        caller,
    })
}

fn auth_error(e: SigError) -> EksError {
    let mut err = match e {
        SigError::Missing => {
            let mut e = EksError::unrecognized_client("Missing Authentication Token");
            e.kind = "MissingAuthenticationTokenException";
            e
        }
        SigError::UnknownKey(_) => {
            EksError::unrecognized_client("The security token included in the request is invalid.")
        }
        SigError::Invalid(why) => {
            let mut e = EksError::unrecognized_client(why);
            e.kind = "InvalidSignatureException";
            e
        }
    };
    err.status = StatusCode::FORBIDDEN;
    err
}

/// Counts the call's outcome and turns it into the response.
fn end(eks: &Eks, op: &'static str, result: Result<Value, EksError>) -> Response {
    eks.kit().finish(op, result.is_ok());
    match result {
        Ok(body) => {
            let mut response = (StatusCode::OK, body.to_string()).into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if let Ok(id) = HeaderValue::from_str(&request_id()) {
                headers.insert(REQUEST_ID_HEADER, id);
            }
            response
        }
        Err(e) => {
            tracing::debug!(operation = op, kind = e.kind, message = %e.message, "EKS error");
            e.into_response()
        }
    }
}

/// Decodes a query string into pairs (`+` stays `+`: the SDK encodes spaces as `%20`).
pub fn query_pairs(raw: Option<&str>) -> Vec<(String, String)> {
    raw.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// One page of `keys` (in the order given), starting at the offset `nextToken` carries, at most
/// `maxResults` long.
///
/// # Errors
/// `InvalidParameterException` for a `maxResults` outside 1–100 or an unreadable token.
pub fn paginate(keys: Vec<String>, call: &Call) -> Result<(Vec<String>, Option<String>), EksError> {
    let max = match call.param("maxResults") {
        None => 100,
        Some(m) => match m.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => {
                return Err(EksError::invalid_parameter(
                    "maxResults must be between 1 and 100",
                ));
            }
        },
    };
    let start = match call.param("nextToken").filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => URL_SAFE_NO_PAD
            .decode(t)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| {
                s.strip_prefix("offset:")
                    .and_then(|n| n.parse::<usize>().ok())
            })
            .ok_or_else(|| EksError::invalid_parameter("The nextToken provided is not valid"))?,
    };
    let total = keys.len();
    let page: Vec<String> = keys.into_iter().skip(start).take(max).collect();
    let end = start.saturating_add(max);
    let next = (end < total).then(|| URL_SAFE_NO_PAD.encode(format!("offset:{end}")));
    Ok((page, next))
}

/// Whether `name` is 1–`max` characters matching `^[0-9A-Za-z][A-Za-z0-9\-_]*$`.
pub fn valid_name(name: &str, max: usize) -> bool {
    let mut chars = name.chars();
    !name.is_empty()
        && name.len() <= max
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

macro_rules! handler {
    ($name:ident, $op:literal, |$eks:ident, $call:ident| $body:expr) => {
        async fn $name(State($eks): State<Arc<Eks>>, request: Request) -> Response {
            let $call = match begin(&$eks, $op, request).await {
                Ok(c) => c,
                Err(r) => return r,
            };
            let result = $body;
            end(&$eks, $op, result)
        }
    };
    ($name:ident, $op:literal, $path:ty, |$eks:ident, $p:pat, $call:ident| $body:expr) => {
        async fn $name(
            State($eks): State<Arc<Eks>>,
            Path($p): Path<$path>,
            request: Request,
        ) -> Response {
            let $call = match begin(&$eks, $op, request).await {
                Ok(c) => c,
                Err(r) => return r,
            };
            let result = $body;
            end(&$eks, $op, result)
        }
    };
}

handler!(create_cluster, "CreateCluster", |eks, call| eks
    .create_cluster(&call)
    .await);
handler!(list_clusters, "ListClusters", |eks, call| eks
    .list_clusters(&call));
handler!(
    describe_cluster,
    "DescribeCluster",
    String,
    |eks, name, call| {
        let _ = &call;
        eks.describe_cluster(&name)
    }
);
handler!(
    delete_cluster,
    "DeleteCluster",
    String,
    |eks, name, call| {
        let _ = &call;
        eks.delete_cluster(&name)
    }
);
handler!(
    update_cluster_version,
    "UpdateClusterVersion",
    String,
    |eks, name, call| eks.update_cluster_version(&name, &call)
);
handler!(
    update_cluster_config,
    "UpdateClusterConfig",
    String,
    |eks, name, call| eks.update_cluster_config(&name, &call)
);
handler!(list_updates, "ListUpdates", String, |eks, name, call| eks
    .list_updates(&name, &call));
handler!(
    describe_update,
    "DescribeUpdate",
    (String, String),
    |eks, (name, id), call| eks.describe_update(&name, &id, &call)
);
handler!(
    create_nodegroup,
    "CreateNodegroup",
    String,
    |eks, name, call| eks.create_nodegroup(&name, &call)
);
handler!(
    list_nodegroups,
    "ListNodegroups",
    String,
    |eks, name, call| eks.list_nodegroups(&name, &call)
);
handler!(
    describe_nodegroup,
    "DescribeNodegroup",
    (String, String),
    |eks, (name, ng), call| {
        let _ = &call;
        eks.describe_nodegroup(&name, &ng)
    }
);
handler!(
    delete_nodegroup,
    "DeleteNodegroup",
    (String, String),
    |eks, (name, ng), call| {
        let _ = &call;
        eks.delete_nodegroup(&name, &ng)
    }
);
handler!(
    update_nodegroup_config,
    "UpdateNodegroupConfig",
    (String, String),
    |eks, (name, ng), call| eks.update_nodegroup_config(&name, &ng, &call)
);
handler!(
    update_nodegroup_version,
    "UpdateNodegroupVersion",
    (String, String),
    |eks, (name, ng), call| eks.update_nodegroup_version(&name, &ng, &call)
);
handler!(create_addon, "CreateAddon", String, |eks, name, call| eks
    .create_addon(&name, &call));
handler!(list_addons, "ListAddons", String, |eks, name, call| eks
    .list_addons(&name, &call));
handler!(
    describe_addon,
    "DescribeAddon",
    (String, String),
    |eks, (name, addon), call| {
        let _ = &call;
        eks.describe_addon(&name, &addon)
    }
);
handler!(
    delete_addon,
    "DeleteAddon",
    (String, String),
    |eks, (name, addon), call| {
        let _ = &call;
        eks.delete_addon(&name, &addon)
    }
);
handler!(
    update_addon,
    "UpdateAddon",
    (String, String),
    |eks, (name, addon), call| eks.update_addon(&name, &addon, &call)
);
handler!(
    describe_addon_versions,
    "DescribeAddonVersions",
    |eks, call| eks.describe_addon_versions(&call)
);
handler!(
    create_access_entry,
    "CreateAccessEntry",
    String,
    |eks, name, call| eks.create_access_entry(&name, &call)
);
handler!(
    list_access_entries,
    "ListAccessEntries",
    String,
    |eks, name, call| eks.list_access_entries(&name, &call)
);
handler!(
    describe_access_entry,
    "DescribeAccessEntry",
    (String, String),
    |eks, (name, principal), call| {
        let _ = &call;
        eks.describe_access_entry(&name, &principal)
    }
);
handler!(
    delete_access_entry,
    "DeleteAccessEntry",
    (String, String),
    |eks, (name, principal), call| {
        let _ = &call;
        eks.delete_access_entry(&name, &principal)
    }
);
handler!(
    associate_access_policy,
    "AssociateAccessPolicy",
    (String, String),
    |eks, (name, principal), call| eks.associate_access_policy(&name, &principal, &call)
);
handler!(
    list_associated_access_policies,
    "ListAssociatedAccessPolicies",
    (String, String),
    |eks, (name, principal), call| eks.list_associated_access_policies(&name, &principal, &call)
);
handler!(
    list_identity_provider_configs,
    "ListIdentityProviderConfigs",
    String,
    |eks, name, call| eks.list_identity_provider_configs(&name, &call)
);
handler!(
    associate_identity_provider_config,
    "AssociateIdentityProviderConfig",
    String,
    |eks, name, call| eks.associate_identity_provider_config(&name, &call)
);
handler!(
    describe_identity_provider_config,
    "DescribeIdentityProviderConfig",
    String,
    |eks, name, call| eks.describe_identity_provider_config(&name, &call)
);
handler!(
    disassociate_identity_provider_config,
    "DisassociateIdentityProviderConfig",
    String,
    |eks, name, call| eks.disassociate_identity_provider_config(&name, &call)
);
handler!(
    list_tags_for_resource,
    "ListTagsForResource",
    String,
    |eks, arn, call| {
        let _ = &call;
        eks.list_tags(&arn)
    }
);
handler!(tag_resource, "TagResource", String, |eks, arn, call| eks
    .tag_resource(&arn, &call));
handler!(untag_resource, "UntagResource", String, |eks, arn, call| {
    eks.untag_resource(&arn, &call)
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_eks_pattern() {
        assert!(valid_name("a", 100));
        assert!(valid_name("9-cluster_x", 100));
        assert!(!valid_name("", 100));
        assert!(!valid_name("-a", 100));
        assert!(!valid_name("a.b", 100));
        assert!(!valid_name(&"a".repeat(101), 100));
        assert!(valid_name(&"a".repeat(63), 63));
        assert!(!valid_name(&"a".repeat(64), 63));
    }

    #[test]
    fn pages_continue_after_the_token() {
        let call = |q: &str| Call {
            query: query_pairs(Some(q)),
            body: Value::Null,
            caller: None,
        };
        let keys: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let (page, next) = paginate(keys.clone(), &call("maxResults=2")).unwrap();
        assert_eq!(page, ["a", "b"]);
        let next = next.unwrap();
        let (page, none) = paginate(
            keys.clone(),
            &call(&format!("maxResults=2&nextToken={next}")),
        )
        .unwrap();
        assert_eq!((page, none), (vec!["c".to_string()], None));
        assert!(paginate(keys.clone(), &call("maxResults=0")).is_err());
        assert!(paginate(keys, &call("nextToken=%%%")).is_err());
    }

    #[test]
    fn query_values_are_decoded_and_repeats_kept() {
        let q = query_pairs(Some("tagKeys=a%20b&tagKeys=c&x"));
        assert_eq!(
            q,
            vec![
                ("tagKeys".into(), "a b".into()),
                ("tagKeys".into(), "c".into()),
                ("x".into(), String::new())
            ]
        );
    }
}
