//! `spec.eks.requestOverrides`: a JSON merge patch (RFC 7386) over the serialized body of the
//! CreateCluster request, for features no typed field covers yet.
//!
//! The patch goes in first, then every value the provider itself serialized is laid back on top,
//! so the user can add fields (or keys inside objects the provider sends) but never change,
//! replace or remove one the provider manages. It runs inside the SDK's pipeline before signing,
//! so the signature covers the patched body.

use serde_json::Value;

/// RFC 7386: `null` removes, objects merge key by key, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// Lays `ours` over `target`: objects merge key by key, every other value of `ours` wins.
pub fn overlay(target: &mut Value, ours: &Value) {
    match (target, ours) {
        (Value::Object(target), Value::Object(ours)) => {
            for (key, value) in ours {
                match target.get_mut(key) {
                    Some(existing) => overlay(existing, value),
                    None => {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (target, ours) => *target = ours.clone(),
    }
}

/// The request body with `patch` applied under the provider's own fields; `None` when the body
/// is not a JSON object (then it is sent as it is).
pub fn apply(body: &[u8], patch: &Value) -> Option<Vec<u8>> {
    let ours: Value = serde_json::from_slice(body).ok()?;
    if !ours.is_object() {
        return None;
    }
    let mut merged = ours.clone();
    merge_patch(&mut merged, patch);
    overlay(&mut merged, &ours);
    serde_json::to_vec(&merged).ok()
}

/// Rewrites the body of an SDK request (an operation's `mutate_request` hook).
pub fn rewrite(
    request: &mut aws_smithy_runtime_api::client::orchestrator::HttpRequest,
    patch: &Value,
) {
    let Some(patched) = request.body().bytes().and_then(|b| apply(b, patch)) else {
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
    fn merge_patch_follows_rfc_7386() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut doc, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}}));
        let mut doc = json!({"a": [1, 2]});
        merge_patch(&mut doc, &json!({"a": [3]}));
        assert_eq!(doc, json!({"a": [3]}));
        let mut doc = json!("scalar");
        merge_patch(&mut doc, &json!({"x": 1}));
        assert_eq!(doc, json!({"x": 1}));
    }

    #[test]
    fn user_fields_are_added_and_provider_fields_win() {
        let ours = json!({
            "name": "c1",
            "version": "1.31",
            "resourcesVpcConfig": {"subnetIds": ["s1", "s2"], "endpointPublicAccess": true},
            "tags": {"capi-managed-eks": "ns_c1"},
        });
        let patch = json!({
            "name": "hijacked",
            "upgradePolicy": {"supportType": "STANDARD"},
            "resourcesVpcConfig": {"subnetIds": null, "securityGroupIds": ["sg-1"]},
            "tags": {"capi-managed-eks": null, "cost-center": "42"},
            "version": null,
        });
        let out: Value =
            serde_json::from_slice(&apply(&serde_json::to_vec(&ours).unwrap(), &patch).unwrap())
                .unwrap();
        assert_eq!(out["name"], "c1");
        assert_eq!(out["version"], "1.31");
        assert_eq!(out["upgradePolicy"]["supportType"], "STANDARD");
        assert_eq!(out["resourcesVpcConfig"]["subnetIds"], json!(["s1", "s2"]));
        assert_eq!(
            out["resourcesVpcConfig"]["securityGroupIds"],
            json!(["sg-1"])
        );
        assert_eq!(out["tags"]["capi-managed-eks"], "ns_c1");
        assert_eq!(out["tags"]["cost-center"], "42");
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_left_alone() {
        assert_eq!(apply(b"", &json!({"a": 1})), None);
        assert_eq!(apply(b"[1]", &json!({"a": 1})), None);
    }

    #[test]
    fn rewriting_a_request_replaces_body_and_length() {
        let mut req = aws_smithy_runtime_api::client::orchestrator::HttpRequest::new(
            br#"{"name":"c1"}"#.to_vec().into(),
        );
        req.headers_mut().insert("content-length", "13");
        rewrite(&mut req, &json!({"deletionProtection": true}));
        let body: Value = serde_json::from_slice(req.body().bytes().unwrap()).unwrap();
        assert_eq!(body, json!({"name": "c1", "deletionProtection": true}));
        assert_eq!(
            req.headers().get("content-length"),
            Some(req.body().bytes().unwrap().len().to_string().as_str())
        );
    }
}
