//! `requestOverrides`: a JSON merge patch (RFC 7386) the user lays over the body of a cloud
//! request, for features no typed field covers yet. One meaning on every cloud and every kind:
//!
//! 1. the patch is merged into the body the provider built ([`json_patch::merge`]);
//! 2. every value the provider itself set is laid back on top, object by object, so the user can
//!    add fields (and keys inside objects the provider sends) but never change, replace or remove
//!    one the provider manages;
//! 3. the object's status records which request carried it and when
//!    ([`crate::api::RequestOverridesStatus`]).
//!
//! The patch is the user's responsibility: the cloud judges what it adds.

use serde_json::Value;

/// The patch to apply, if there is one: `None` for no patch, `null`, or `{}`.
pub fn effective(patch: Option<&Value>) -> Option<&Value> {
    patch.filter(|p| match p {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        _ => true,
    })
}

/// `body` with `patch` merged in under the provider's own fields.
pub fn apply(body: &Value, patch: &Value) -> Value {
    let mut merged = body.clone();
    json_patch::merge(&mut merged, patch);
    overlay(&mut merged, body);
    merged
}

/// [`apply`] on a serialized request body; `None` when the body is not a JSON object (then it
/// goes out as it is).
pub fn apply_to_bytes(body: &[u8], patch: &Value) -> Option<Vec<u8>> {
    let ours: Value = serde_json::from_slice(body).ok()?;
    if !ours.is_object() {
        return None;
    }
    serde_json::to_vec(&apply(&ours, patch)).ok()
}

/// Lays `ours` over `target`: objects merge key by key, any other value of `ours` wins.
fn overlay(target: &mut Value, ours: &Value) {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_fields_are_added_and_provider_fields_win_at_every_depth() {
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
        let out = apply(&ours, &patch);
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
    fn a_patch_replacing_a_provider_object_with_a_scalar_loses() {
        let ours = json!({"scalingConfig": {"minSize": 1, "maxSize": 3}});
        let out = apply(&ours, &json!({"scalingConfig": 7}));
        assert_eq!(out, ours);
    }

    #[test]
    fn empty_patches_are_no_patch() {
        assert_eq!(effective(None), None);
        assert_eq!(effective(Some(&json!(null))), None);
        assert_eq!(effective(Some(&json!({}))), None);
        assert!(effective(Some(&json!({"a": 1}))).is_some());
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_left_alone() {
        assert_eq!(apply_to_bytes(b"", &json!({"a": 1})), None);
        assert_eq!(apply_to_bytes(b"[1]", &json!({"a": 1})), None);
        let out = apply_to_bytes(br#"{"name":"c1"}"#, &json!({"deletionProtection": true}));
        let out: Value = serde_json::from_slice(&out.unwrap()).unwrap();
        assert_eq!(out, json!({"name": "c1", "deletionProtection": true}));
    }
}
