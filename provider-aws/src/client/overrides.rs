//! `spec.eks.requestOverrides` on the wire: the shared merge rule of
//! [`contract::overrides`], applied to the serialized body of an EKS request inside the SDK's
//! pipeline before signing, so the signature covers the patched body.

use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use serde_json::Value;

/// Rewrites the body of an SDK request with `patch` laid under the provider's fields (for an
/// operation's `customize().mutate_request` hook). A body that is not a JSON object goes out as
/// it is.
pub fn rewrite(request: &mut HttpRequest, patch: &Value) {
    let Some(patched) = request
        .body()
        .bytes()
        .and_then(|b| contract::overrides::apply_to_bytes(b, patch))
    else {
        return;
    };
    let len = patched.len();
    *request.body_mut() = patched.into();
    request
        .headers_mut()
        .insert("content-length", len.to_string());
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rewriting_a_request_replaces_body_and_length() {
        let mut req = HttpRequest::new(br#"{"name":"c1"}"#.to_vec().into());
        req.headers_mut().insert("content-length", "13");
        rewrite(
            &mut req,
            &json!({"deletionProtection": true, "name": "other"}),
        );
        let body: Value = serde_json::from_slice(req.body().bytes().unwrap()).unwrap();
        assert_eq!(body, json!({"name": "c1", "deletionProtection": true}));
        assert_eq!(
            req.headers().get("content-length"),
            Some(req.body().bytes().unwrap().len().to_string().as_str())
        );
    }
}
