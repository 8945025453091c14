//! A cloud request with the user's `requestOverrides` laid under it: the shared merge rule of
//! [`contract::overrides`] applied to a request body of any type, and, when the result is no
//! longer a request, the terminal error that names the field the user can fix.

use contract::conditions::Reason;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ProviderError;

/// `body` with `patch` (the user's `spec.<provider>.requestOverrides`) merged under the
/// provider's own fields, for the cloud whose provider is named `provider` (`aks`).
///
/// # Errors
/// Terminal `InvalidSpec` when the merged body no longer reads as the request `T`. (A body that
/// is a JSON object stays one: the provider's fields are laid back over whatever the patch is.)
pub fn overridden<T: Serialize + DeserializeOwned>(
    body: &T,
    patch: &Value,
    provider: &str,
) -> Result<T, ProviderError> {
    let invalid = |why: &str| {
        ProviderError::terminal(
            Reason::InvalidSpec,
            format!(
                "spec.{provider}.requestOverrides does not make a valid {} request: {why}",
                provider.to_uppercase()
            ),
        )
    };
    let ours =
        serde_json::to_value(body).map_err(|e| ProviderError::cloud("overrides", e.to_string()))?;
    let merged = contract::overrides::apply(&ours, patch);
    serde_json::from_value(merged).map_err(|e| invalid(&e.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Pool {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u32>,
    }

    #[test]
    fn a_patch_adds_fields_under_the_providers_own() {
        let body = json!({"name": "p", "tags": {"a": "1"}});
        let patch = json!({"name": "theirs", "tags": {"b": "2"}, "extra": true});
        let merged = overridden(&body, &patch, "aks").unwrap();
        assert_eq!(
            merged,
            json!({"name": "p", "tags": {"a": "1", "b": "2"}, "extra": true})
        );
        let pool = Pool {
            name: "p".into(),
            size: None,
        };
        let sized = overridden(&pool, &json!({"name": "q", "size": 3}), "gke").unwrap();
        assert_eq!((sized.name.as_str(), sized.size), ("p", Some(3)));
    }

    #[test]
    fn a_patch_that_leaves_no_request_is_the_users_to_fix_and_a_body_stays_an_object() {
        let kept = overridden(&json!({"name": "p"}), &json!("not an object"), "oke").unwrap();
        assert_eq!(kept, json!({"name": "p"}));
        let pool = Pool {
            name: "p".into(),
            size: None,
        };
        let err = overridden(&pool, &json!({"size": "big"}), "gke").unwrap_err();
        assert!(
            err.to_string().contains(
                "spec.gke.requestOverrides does not make a valid GKE request: invalid type"
            ),
            "{err}"
        );
    }
}
