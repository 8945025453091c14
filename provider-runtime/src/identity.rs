//! Where an object's cloud credentials come from, and the clients built from them, the same on
//! every cloud: `spec.identityRef` names a Secret in the object's namespace, or the controller's
//! own identity; clients are built once per (location, identity) and rebuilt when the credentials
//! behind an identity change.
//!
//! What the Secret's keys mean (an access key, a service-account key, a client secret, an API
//! signing key) is the cloud's: it reads them from [`SecretIdentity`].

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use contract::api::{IdentityKind, IdentityRef};
use contract::conditions::Reason;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::ProviderError;

/// The identity an object works as.
#[derive(Clone, PartialEq, Eq)]
pub enum Identity {
    /// The controller's own (its environment, workload identity, instance profile).
    Controller,
    /// A Secret's keys.
    Secret(SecretIdentity),
}

/// An identity Secret's non-empty values, trimmed. Its `Debug` names the Secret, never a value.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretIdentity {
    namespace: String,
    name: String,
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for SecretIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretIdentity")
            .field("secret", &format!("{}/{}", self.namespace, self.name))
            .field("keys", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Identity::Controller => f.write_str("Controller"),
            Identity::Secret(s) => s.fmt(f),
        }
    }
}

impl SecretIdentity {
    /// An identity from a Secret's data (values that are not UTF-8 or are blank are left out).
    pub fn from_secret(namespace: &str, name: &str, secret: &Secret) -> Self {
        let values = secret
            .data
            .iter()
            .flatten()
            .filter_map(|(k, v)| {
                let text = String::from_utf8(v.0.clone()).ok()?;
                let text = text.trim();
                (!text.is_empty()).then(|| (k.clone(), text.to_string()))
            })
            .collect();
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            values,
        }
    }

    /// `identity Secret <namespace>/<name>`, for messages.
    pub fn describe(&self) -> String {
        format!("identity Secret {}/{}", self.namespace, self.name)
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// The values of `keys`, all required: the error names the Secret and every key it needs.
    ///
    /// # Errors
    /// Terminal `Unauthorized` when any is missing.
    pub fn require<const N: usize>(&self, keys: [&str; N]) -> Result<[&str; N], ProviderError> {
        let mut out = [""; N];
        for (slot, key) in out.iter_mut().zip(keys) {
            match self.get(key) {
                Some(v) => *slot = v,
                None => {
                    return Err(ProviderError::terminal(
                        Reason::Unauthorized,
                        format!(
                            "{} must hold {} (non-empty UTF-8 text; {key} is missing, blank or not text)",
                            self.describe(),
                            and_list(&keys)
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }
}

fn and_list(keys: &[&str]) -> String {
    match keys {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Reads `identity_ref` for an object in `namespace`: none or kind `Controller` is the
/// controller's own; kind `Secret` reads that Secret by name in the object's namespace.
///
/// # Errors
/// Terminal `InvalidSpec` for a Secret reference without a name, terminal `Unauthorized` when
/// the Secret does not exist, Kube errors otherwise.
pub async fn identity(
    client: &kube::Client,
    namespace: &str,
    identity_ref: Option<&IdentityRef>,
) -> Result<Identity, ProviderError> {
    let name = match identity_ref {
        Some(IdentityRef {
            kind: IdentityKind::Secret,
            name: Some(name),
        }) => name,
        Some(IdentityRef {
            kind: IdentityKind::Secret,
            name: None,
        }) => {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "spec.identityRef of kind Secret needs a name",
            ));
        }
        _ => return Ok(Identity::Controller),
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let Some(secret) = secrets.get_opt(name).await? else {
        return Err(ProviderError::terminal(
            Reason::Unauthorized,
            format!("identity Secret {namespace}/{name} not found"),
        ));
    };
    Ok(Identity::Secret(SecretIdentity::from_secret(
        namespace, name, &secret,
    )))
}

/// A secret part of a credential (a key, a client secret, a token): its `Debug` is `<hidden>`,
/// so a credential derives `Debug` and can be logged without showing it. The value is `.0`.
#[derive(Clone, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(transparent)]
pub struct Hidden<T>(pub T);

impl<T> std::fmt::Debug for Hidden<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<hidden>")
    }
}

/// A cloud's credentials, as an identity Secret or the controller's own environment gives them.
pub trait Credentials: Sized {
    /// From an identity Secret's keys.
    ///
    /// # Errors
    /// Terminal `Unauthorized` naming what is missing or unreadable.
    fn from_secret(secret: &SecretIdentity) -> Result<Self, ProviderError>;

    /// The controller's own.
    ///
    /// # Errors
    /// Terminal `Unauthorized` saying what the controller lacks.
    fn from_controller() -> impl Future<Output = Result<Self, ProviderError>> + Send;
}

/// The credentials an object in `namespace` works as: the Secret `identity_ref` names
/// ([`identity`]), or the controller's own.
///
/// # Errors
/// As [`identity`]; the cloud's [`Credentials`] errors.
pub async fn credentials<C: Credentials>(
    client: &kube::Client,
    namespace: &str,
    identity_ref: Option<&IdentityRef>,
) -> Result<C, ProviderError> {
    match identity(client, namespace, identity_ref).await? {
        Identity::Controller => C::from_controller().await,
        Identity::Secret(secret) => C::from_secret(&secret),
    }
}

/// Clients `C` built from credentials `K`, cached per (location, identity): a pass does not
/// rebuild them, and a changed credential behind the same identity builds new ones.
pub struct ClientCache<K, C> {
    clients: Mutex<HashMap<(String, String), (K, C)>>,
}

impl<K, C> Default for ClientCache<K, C> {
    fn default() -> Self {
        Self {
            clients: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: PartialEq + Clone, C: Clone> ClientCache<K, C> {
    /// The clients for `location` (region, project/location, subscription, tenancy) and
    /// `identity` (an access key id, an account, a Secret's name: never a secret value), built
    /// with `build` when there are none for these `credentials` yet.
    pub async fn get<F, Fut>(&self, location: &str, identity: &str, credentials: &K, build: F) -> C
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = C>,
    {
        let key = (location.to_string(), identity.to_string());
        if let Some((_, c)) = self.lock().get(&key).filter(|(k, _)| k == credentials) {
            return c.clone();
        }
        let clients = build().await;
        self.lock()
            .insert(key, (credentials.clone(), clients.clone()));
        clients
    }

    /// [`ClientCache::get`] for a build that can fail: a failed build caches nothing.
    ///
    /// # Errors
    /// The build's error.
    pub async fn try_get<F, Fut, E>(
        &self,
        location: &str,
        identity: &str,
        credentials: &K,
        build: F,
    ) -> Result<C, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<C, E>>,
    {
        let key = (location.to_string(), identity.to_string());
        if let Some((_, c)) = self.lock().get(&key).filter(|(k, _)| k == credentials) {
            return Ok(c.clone());
        }
        let clients = build().await?;
        self.lock()
            .insert(key, (credentials.clone(), clients.clone()));
        Ok(clients)
    }

    /// How many (location, identity) pairs have clients.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), (K, C)>> {
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use k8s_openapi::ByteString;

    use super::*;

    fn secret(pairs: &[(&str, &str)]) -> Secret {
        Secret {
            data: Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn a_hidden_value_never_prints_and_reads_as_it_was_given() {
        #[derive(Debug, serde::Deserialize)]
        struct Key {
            id: String,
            secret: Hidden<String>,
        }
        let key: Key = serde_json::from_str(r#"{"id": "k1", "secret": "hunter2"}"#).unwrap();
        let printed = format!("{key:?}");
        assert!(
            printed.contains("k1") && printed.contains("<hidden>"),
            "{printed}"
        );
        assert!(!printed.contains("hunter2"), "{printed}");
        assert_eq!((key.id.as_str(), key.secret.0.as_str()), ("k1", "hunter2"));
    }

    #[test]
    fn required_keys_are_named_together_and_values_never_printed() {
        let id = SecretIdentity::from_secret(
            "ns",
            "creds",
            &secret(&[("KeyID", "AKID\n"), ("Blank", "  "), ("Secret", "s3cr3t")]),
        );
        assert_eq!(id.require(["KeyID", "Secret"]).unwrap(), ["AKID", "s3cr3t"]);
        let err = id.require(["KeyID", "Blank", "Other"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "identity Secret ns/creds must hold KeyID, Blank and Other (non-empty UTF-8 text; Blank is missing, blank or not text)"
        );
        let printed = format!("{:?}", Identity::Secret(id));
        assert!(
            printed.contains("ns/creds") && printed.contains("KeyID"),
            "{printed}"
        );
        assert!(
            !printed.contains("s3cr3t") && !printed.contains("AKID"),
            "{printed}"
        );
    }

    #[tokio::test]
    async fn clients_are_built_once_per_location_and_identity_and_again_when_credentials_change() {
        let cache: ClientCache<String, usize> = ClientCache::default();
        let builds = AtomicUsize::new(0);
        let build = || async { builds.fetch_add(1, Ordering::SeqCst) };
        assert_eq!(cache.get("us-west-2", "AKID", &"v1".into(), build).await, 0);
        assert_eq!(cache.get("us-west-2", "AKID", &"v1".into(), build).await, 0);
        assert_eq!(cache.get("eu-west-1", "AKID", &"v1".into(), build).await, 1);
        assert_eq!(
            cache.get("us-west-2", "OTHER", &"v1".into(), build).await,
            2
        );
        assert_eq!(
            cache
                .get("us-west-2", "AKID", &"rotated".into(), build)
                .await,
            3,
            "a rotated secret behind the same identity gets new clients"
        );
        assert_eq!(cache.len(), 3);
    }
}
