//! Idempotency tokens (EKS `clientRequestToken`, OCI `opc-retry-token`): a create repeated with the
//! same token returns the first result; the same token with different parameters is an error.

use std::collections::HashMap;
use std::sync::Mutex;

/// What a token lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// Not seen: carry out the request, then [`Tokens::remember`] it.
    New,
    /// Seen with the same parameters: answer with this resource again.
    Same(String),
    /// Seen with other parameters.
    Mismatch,
}

/// Tokens seen, per scope (an operation plus its parent resource).
#[derive(Debug, Default)]
pub struct Tokens {
    seen: Mutex<HashMap<(String, String), (String, String)>>,
}

impl Tokens {
    /// Looks `token` up in `scope`; `fingerprint` identifies the request's parameters
    /// (the canonical request body without the token).
    pub fn check(&self, scope: &str, token: &str, fingerprint: &str) -> Replay {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match seen.get(&(scope.to_string(), token.to_string())) {
            None => Replay::New,
            Some((fp, id)) if fp == fingerprint => Replay::Same(id.clone()),
            Some(_) => Replay::Mismatch,
        }
    }

    /// Records that `token` in `scope` created `resource`.
    pub fn remember(&self, scope: &str, token: &str, fingerprint: &str, resource: &str) {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                (scope.to_string(), token.to_string()),
                (fingerprint.to_string(), resource.to_string()),
            );
    }
}

/// A canonical fingerprint of a JSON request without the named token field.
pub fn fingerprint(body: &serde_json::Value, token_field: &str) -> String {
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        map.remove(token_field);
    }
    // serde_json's map is ordered (BTreeMap) without `preserve_order`, so this is canonical.
    body.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_token_and_parameters_replay_while_other_parameters_mismatch() {
        let tokens = Tokens::default();
        let a = fingerprint(
            &json!({"name": "x", "version": "1.31", "clientRequestToken": "t"}),
            "clientRequestToken",
        );
        let b = fingerprint(
            &json!({"version": "1.31", "name": "x", "clientRequestToken": "t"}),
            "clientRequestToken",
        );
        let c = fingerprint(
            &json!({"name": "x", "version": "1.32", "clientRequestToken": "t"}),
            "clientRequestToken",
        );
        assert_eq!(a, b);
        assert_eq!(tokens.check("CreateCluster", "t", &a), Replay::New);
        tokens.remember("CreateCluster", "t", &a, "x");
        assert_eq!(
            tokens.check("CreateCluster", "t", &b),
            Replay::Same("x".into())
        );
        assert_eq!(tokens.check("CreateCluster", "t", &c), Replay::Mismatch);
        assert_eq!(tokens.check("CreateNodegroup", "t", &a), Replay::New);
    }
}
