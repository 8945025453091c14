//! Kubernetes Engine (`google.container.v1.ClusterManager`) and IAM Credentials
//! (`google.iam.credentials.v1.IAMCredentials`) over gRPC, as Google's gRPC clients call them.
//!
//! The methods, their messages and their REST forms come from Google's published protos
//! (`emulators/proto/`, compiled at build time). A call is transcoded by the same mapping
//! Google's front ends apply (in the other direction, REST to gRPC): the binary request becomes
//! its JSON form, goes to the REST route its `google.api.http` rule names (so one state, one set
//! of rules, faults and counters serve both fronts), and the JSON answer becomes the binary
//! response. A REST error becomes the gRPC status its `error.status` names, with its message
//! (and `google.rpc.RetryInfo` when it said when to retry); a route the REST front does not
//! serve is UNIMPLEMENTED.

use std::future::Future;
use std::pin::Pin;

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MethodDescriptor, SerializeOptions,
};
use serde_json::{Map, Value};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};
use tower::ServiceExt;

/// The gRPC services served.
pub const SERVICES: [&str; 2] = [
    "google.container.v1.ClusterManager",
    "google.iam.credentials.v1.IAMCredentials",
];

/// The largest JSON answer read back from the REST front.
const MAX_ANSWER: usize = 16 << 20;

/// Google's protos, compiled (see `build.rs`).
const DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/google_apis.bin"));

/// The compiled descriptors of the protos served.
///
/// # Errors
/// The embedded descriptor set does not decode (a broken build).
pub fn descriptors() -> Result<DescriptorPool> {
    DescriptorPool::decode(DESCRIPTORS).context("decoding the embedded Google descriptors")
}

#[derive(Clone)]
struct Front {
    pool: DescriptorPool,
    rest: Router,
}

/// The gRPC routes of [`SERVICES`], each call answered through `rest`.
///
/// # Errors
/// The embedded descriptor set does not decode.
pub fn router(rest: Router) -> Result<Router> {
    let front = Front {
        pool: descriptors()?,
        rest,
    };
    let mut router = Router::new();
    for service in SERVICES {
        router = router.route(&format!("/{service}/{{method}}"), axum::routing::post(call));
    }
    Ok(router.with_state(front))
}

async fn call(State(front): State<Front>, request: Request) -> Response {
    let path = request.uri().path().trim_start_matches('/').to_string();
    let method = path.split_once('/').and_then(|(service, method)| {
        front
            .pool
            .get_service_by_name(service)?
            .methods()
            .find(|m| m.name() == method)
    });
    let Some(method) = method else {
        return Status::unimplemented(format!("Method not found: {path}"))
            .into_http::<Body>()
            .into_response();
    };
    let unary = Unary {
        rest: front.rest.clone(),
        pool: front.pool.clone(),
        method,
    };
    tonic::server::Grpc::new(Raw)
        .unary(unary, request)
        .await
        .map(Body::new)
}

/// One method, transcoded to its REST route.
struct Unary {
    rest: Router,
    pool: DescriptorPool,
    method: MethodDescriptor,
}

impl tonic::server::UnaryService<Bytes> for Unary {
    type Response = Bytes;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Bytes>, Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let authorization = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let (rest, pool, method) = (self.rest.clone(), self.pool.clone(), self.method.clone());
        Box::pin(async move {
            transcode(rest, &pool, &method, authorization, request.into_inner())
                .await
                .map(tonic::Response::new)
        })
    }
}

async fn transcode(
    rest: Router,
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    authorization: Option<String>,
    body: Bytes,
) -> Result<Bytes, Status> {
    let input = DynamicMessage::decode(method.input(), body)
        .map_err(|e| Status::invalid_argument(format!("Invalid request message: {e}")))?;
    let json = input
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| Status::internal(format!("transcoding the request: {e}")))?;
    let Value::Object(fields) = json else {
        return Err(Status::internal("a request message is not a JSON object"));
    };
    let bound = bind(&rules(pool, method), fields)?;
    let mut http = axum::http::Request::builder()
        .method(bound.verb)
        .uri(bound.uri)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(authorization) = authorization {
        http = http.header(header::AUTHORIZATION, authorization);
    }
    let http = http
        .body(Body::from(bound.body))
        .map_err(|e| Status::internal(format!("building the REST request: {e}")))?;
    let Ok(answer) = rest.oneshot(http).await;
    let status = answer.status();
    let unrouted = answer.headers().contains_key(super::api::UNROUTED);
    let retry_after = answer
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // A connection the fault kit drops mid-answer: what a client sees as the stream reset.
    let bytes = axum::body::to_bytes(answer.into_body(), MAX_ANSWER)
        .await
        .map_err(|e| Status::unavailable(format!("the connection was reset: {e}")))?;
    if unrouted {
        return Err(Status::unimplemented(format!(
            "{} is not emulated",
            method.full_name()
        )));
    }
    if !status.is_success() {
        return Err(with_retry_info(status_of(status, &bytes), retry_after));
    }
    let mut json = serde_json::Deserializer::from_slice(&bytes);
    let output = DynamicMessage::deserialize_with_options(
        method.output(),
        &mut json,
        &DeserializeOptions::new().deny_unknown_fields(false),
    )
    .map_err(|e| Status::internal(format!("transcoding the answer: {e}")))?;
    Ok(output.encode_to_vec().into())
}

/// One `google.api.http` binding: verb, path template, body field (`*`, a field, or none).
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    verb: Method,
    template: String,
    body: String,
}

/// A method's bindings, its main one first, then its `additional_bindings`.
fn rules(pool: &DescriptorPool, method: &MethodDescriptor) -> Vec<Rule> {
    let Some(extension) = pool.get_extension_by_name("google.api.http") else {
        return Vec::new();
    };
    let options = method.options();
    let value = options.get_extension(&extension);
    let Some(rule) = value.as_message() else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    collect_rules(rule, &mut rules);
    rules
}

fn collect_rules(rule: &DynamicMessage, into: &mut Vec<Rule>) {
    let text = |name: &str| {
        rule.get_field_by_name(name)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let verbs = [
        ("get", Method::GET),
        ("put", Method::PUT),
        ("post", Method::POST),
        ("delete", Method::DELETE),
        ("patch", Method::PATCH),
    ];
    if let Some((name, verb)) = verbs.into_iter().find(|(name, _)| !text(name).is_empty()) {
        into.push(Rule {
            verb,
            template: text(name),
            body: text("body"),
        });
    }
    if let Some(more) = rule.get_field_by_name("additional_bindings")
        && let Some(list) = more.as_list()
    {
        for binding in list.iter().filter_map(|v| v.as_message()) {
            collect_rules(binding, into);
        }
    }
}

/// A request bound to its REST route.
#[derive(Debug)]
struct Bound {
    verb: Method,
    uri: String,
    body: Vec<u8>,
}

/// Binds the request's fields to the first rule whose path variables are all set and match
/// their patterns: those fill the path (each segment percent-encoded), the body field (or every
/// other field for `*`) the body, the rest the query.
fn bind(rules: &[Rule], fields: Map<String, Value>) -> Result<Bound, Status> {
    'rules: for rule in rules {
        let mut fields = fields.clone();
        let mut path = String::new();
        let mut rest = rule.template.as_str();
        while let Some(open) = rest.find('{') {
            path.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                continue 'rules;
            };
            let variable = &rest[open + 1..open + close];
            let (field, pattern) = variable.split_once('=').unwrap_or((variable, "*"));
            match take(&mut fields, field) {
                Some(Value::String(value)) if matches(pattern, &value) => {
                    let segments: Vec<String> = value.split('/').map(encode).collect();
                    path.push_str(&segments.join("/"));
                }
                _ => continue 'rules,
            }
            rest = &rest[open + close + 1..];
        }
        path.push_str(rest);
        let body = match rule.body.as_str() {
            "" => None,
            "*" => Some(Value::Object(std::mem::take(&mut fields))),
            field => Some(take(&mut fields, field).unwrap_or_else(|| Value::Object(Map::new()))),
        };
        let query: Vec<String> = fields
            .iter()
            .filter_map(|(key, value)| {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return None,
                };
                Some(format!("{key}={}", encode(&text)))
            })
            .collect();
        let uri = if query.is_empty() {
            path
        } else {
            format!("{path}?{}", query.join("&"))
        };
        let body = body.map(|b| serde_json::to_vec(&b)).transpose();
        return Ok(Bound {
            verb: rule.verb.clone(),
            uri,
            body: body
                .map_err(|e| Status::internal(format!("encoding the body: {e}")))?
                .unwrap_or_default(),
        });
    }
    Err(Status::invalid_argument(
        "the request names no resource of this method: set its name (or parent) as the method's \
         resource pattern has it",
    ))
}

/// Whether a path value matches a variable's pattern: `*` is one non-empty segment, `**` the
/// rest, anything else itself (`projects/*/locations/*/clusters/*`).
fn matches(pattern: &str, value: &str) -> bool {
    let mut segments = value.split('/');
    for part in pattern.split('/') {
        if part == "**" {
            return segments.all(|s| !s.is_empty());
        }
        match segments.next() {
            Some(s) if !s.is_empty() && (part == "*" || part == s) => {}
            _ => return false,
        }
    }
    segments.next().is_none()
}

/// Removes the field at a dotted path (`name`, `cluster.name`, in proto or JSON spelling).
fn take(fields: &mut Map<String, Value>, path: &str) -> Option<Value> {
    match path.split_once('.') {
        None => fields.remove(&camel(path)),
        Some((head, tail)) => match fields.get_mut(&camel(head)) {
            Some(Value::Object(inner)) => take(inner, tail),
            _ => None,
        },
    }
}

/// A proto field name in its JSON spelling (`node_pool_id` → `nodePoolId`).
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Percent-encodes a path segment or query value, keeping what names use (`-._~@`).
fn encode(text: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~')
        .remove(b'@');
    percent_encoding::utf8_percent_encode(text, KEEP).to_string()
}

/// The gRPC status of a REST error answer: the code its `error.status` names (Google's
/// canonical codes), else the one its HTTP status maps to, with its message.
fn status_of(http: StatusCode, body: &[u8]) -> Status {
    let error: Value = serde_json::from_slice(body).unwrap_or_default();
    let message = error["error"]["message"].as_str().map_or_else(
        || String::from_utf8_lossy(body).into_owned(),
        str::to_string,
    );
    let code = match error["error"]["status"].as_str() {
        Some(name) => Code::from_i32(super::error::canonical_code(name)),
        None => match http.as_u16() {
            400 => Code::InvalidArgument,
            401 => Code::Unauthenticated,
            403 => Code::PermissionDenied,
            404 => Code::NotFound,
            409 => Code::Aborted,
            429 => Code::ResourceExhausted,
            500 => Code::Internal,
            501 => Code::Unimplemented,
            502 | 503 => Code::Unavailable,
            504 => Code::DeadlineExceeded,
            _ => Code::Unknown,
        },
    };
    Status::new(code, message)
}

/// `status` with `google.rpc.RetryInfo` in its details when the REST answer said how long to
/// wait (`Retry-After`), as Google's gRPC fronts tell a throttled caller.
fn with_retry_info(status: Status, retry_after: Option<u64>) -> Status {
    use prost::encoding::{WireType, encode_key, encode_varint};
    let Some(seconds) = retry_after else {
        return status;
    };
    let message = |field: u32, bytes: &[u8], out: &mut Vec<u8>| {
        encode_key(field, WireType::LengthDelimited, out);
        encode_varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    };
    // google.protobuf.Duration { seconds }
    let mut duration = Vec::new();
    encode_key(1, WireType::Varint, &mut duration);
    encode_varint(seconds, &mut duration);
    // google.rpc.RetryInfo { retry_delay }
    let mut retry_info = Vec::new();
    message(1, &duration, &mut retry_info);
    // google.protobuf.Any { type_url, value }
    let mut any = Vec::new();
    message(1, b"type.googleapis.com/google.rpc.RetryInfo", &mut any);
    message(2, &retry_info, &mut any);
    // google.rpc.Status { code, message, details }
    let mut details = Vec::new();
    encode_key(1, WireType::Varint, &mut details);
    encode_varint(status.code() as u64, &mut details);
    message(2, status.message().as_bytes(), &mut details);
    message(3, &any, &mut details);
    Status::with_details(status.code(), status.message(), details.into())
}

/// Passes messages through as bytes: [`Unary`] decodes them against the method's descriptor.
#[derive(Debug, Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules_of(method: &str) -> Vec<Rule> {
        let pool = descriptors().unwrap();
        let (service, name) = method.rsplit_once('/').unwrap();
        let method = pool
            .get_service_by_name(service)
            .unwrap()
            .methods()
            .find(|m| m.name() == name)
            .unwrap();
        rules(&pool, &method)
    }

    #[test]
    fn the_published_rules_bind_calls_to_their_rest_routes() {
        let name = "projects/p/locations/us-central1/clusters/c/nodePools/np";
        let set_size = rules_of("google.container.v1.ClusterManager/SetNodePoolSize");
        assert!(
            set_size.len() > 1,
            "the zonal form is an additional binding: {set_size:?}"
        );
        let bound = bind(
            &set_size,
            serde_json::json!({"name": name, "nodeCount": 2})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(bound.verb, Method::POST);
        assert_eq!(bound.uri, format!("/v1/{name}:setSize"));
        assert_eq!(
            serde_json::from_slice::<Value>(&bound.body).unwrap(),
            serde_json::json!({"nodeCount": 2})
        );

        let get = rules_of("google.container.v1.ClusterManager/GetCluster");
        let bound = bind(
            &get,
            serde_json::json!({"name": "projects/p/locations/l/clusters/c"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(
            (bound.verb, bound.uri.as_str(), bound.body.len()),
            (Method::GET, "/v1/projects/p/locations/l/clusters/c", 0)
        );
        // The deprecated zonal fields bind the zonal route.
        let bound = bind(
            &get,
            serde_json::json!({"projectId": "p", "zone": "z", "clusterId": "c"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(bound.uri, "/v1/projects/p/zones/z/clusters/c");

        let token = rules_of("google.iam.credentials.v1.IAMCredentials/GenerateAccessToken");
        let bound = bind(
            &token,
            serde_json::json!({"name": "projects/-/serviceAccounts/a@p.iam.gserviceaccount.com", "scope": ["s"]})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(
            bound.uri,
            "/v1/projects/-/serviceAccounts/a@p.iam.gserviceaccount.com:generateAccessToken"
        );
        assert!(bind(&get, Map::new()).is_err(), "no name, no route");
        // A name of another resource's pattern binds no route of this method.
        let pool = "projects/p/locations/l/clusters/c/nodePools/np";
        assert!(bind(&get, json!({ "name": pool }).as_object().unwrap().clone()).is_err());
        assert!(matches("projects/*/locations/*", "projects/p/locations/l"));
        assert!(!matches("projects/*/locations/*", "projects/p/locations/"));
        assert!(!matches("projects/*", "projects/p/extra"));
        assert!(matches("projects/**", "projects/p/extra"));
    }

    #[test]
    fn rest_errors_become_the_grpc_codes_google_names() {
        let body = br#"{"error":{"code":404,"message":"Not found: c.","status":"NOT_FOUND"}}"#;
        let status = status_of(StatusCode::NOT_FOUND, body);
        assert_eq!(
            (status.code(), status.message()),
            (Code::NotFound, "Not found: c.")
        );
        let body = br#"{"error":{"code":400,"message":"busy","status":"FAILED_PRECONDITION"}}"#;
        assert_eq!(
            status_of(StatusCode::BAD_REQUEST, body).code(),
            Code::FailedPrecondition
        );
        assert_eq!(
            status_of(StatusCode::TOO_MANY_REQUESTS, b"slow down").code(),
            Code::ResourceExhausted
        );
    }
}
