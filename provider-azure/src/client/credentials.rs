//! Microsoft Entra ID credentials of a service principal, from the identity Secret
//! (`spec.identityRef`: keys `tenantID`, `clientID`, `clientSecret`) or, for the controller's
//! own identity, the variables `azure_identity` reads (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID` and
//! `AZURE_CLIENT_SECRET` or `AZURE_FEDERATED_TOKEN_FILE` for workload identity), and the tokens
//! they buy (client credentials at `<authority>/<tenant>/oauth2/v2.0/token`, through
//! [`super::identity`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use azure_core::credentials::TokenCredential;

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::identity::{self, Hidden, SecretIdentity};

/// Entra's public cloud authority.
pub const DEFAULT_AUTHORITY: &str = "https://login.microsoftonline.com";

/// Azure Resource Manager's token scope.
pub const ARM_SCOPE: &str = "https://management.azure.com/.default";

/// AKS's Entra server application: the audience of tokens for AKS-managed Entra clusters.
pub const AKS_SERVER_APP: &str = "6dae42f8-4368-4678-94ff-3960e28e3630";

/// The scope of workload-cluster tokens.
pub const AKS_SCOPE: &str = "6dae42f8-4368-4678-94ff-3960e28e3630/.default";

/// Keys of the identity Secret.
pub const TENANT_KEY: &str = "tenantID";
/// See [`TENANT_KEY`].
pub const CLIENT_KEY: &str = "clientID";
/// See [`TENANT_KEY`].
pub const SECRET_KEY: &str = "clientSecret";

/// How a service principal proves itself. `Debug` never shows the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// A client secret.
    Secret(Hidden<String>),
    /// A federated token (a Kubernetes service-account token) read from this file at each
    /// exchange (the kubelet rotates it).
    FederatedTokenFile(PathBuf),
}

/// A service principal's credentials. `Debug` never shows the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    /// The tenant.
    pub tenant: String,
    /// The application (client) id.
    pub client_id: String,
    /// The proof.
    pub proof: Proof,
    /// The authority host (`https://login.microsoftonline.com`).
    pub authority: String,
}

impl Credential {
    /// A short id for the client cache: tenant, client and a digest of the proof (a rotated
    /// secret is another identity).
    pub fn cache_id(&self) -> String {
        let proof = match &self.proof {
            Proof::Secret(s) => s.0.clone(),
            Proof::FederatedTokenFile(p) => p.display().to_string(),
        };
        let digest = ring::digest::digest(&ring::digest::SHA256, proof.as_bytes());
        let short: String = digest.as_ref()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{}/{}#{short}", self.tenant, self.client_id)
    }

    /// The token endpoint.
    pub fn token_url(&self) -> String {
        format!(
            "{}/{}/oauth2/v2.0/token",
            self.authority.trim_end_matches('/'),
            self.tenant
        )
    }
}

fn unauthorized(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::Unauthorized, message)
}

fn authority_from_env() -> String {
    std::env::var("AZURE_AUTHORITY_HOST")
        .ok()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| DEFAULT_AUTHORITY.into())
}

impl identity::Credentials for Credential {
    /// A Secret's [`TENANT_KEY`], [`CLIENT_KEY`] and [`SECRET_KEY`] (and optionally
    /// `authorityHost`).
    fn from_secret(secret: &SecretIdentity) -> Result<Self, ProviderError> {
        let [tenant, client_id, secret_value] =
            secret.require([TENANT_KEY, CLIENT_KEY, SECRET_KEY])?;
        Ok(Credential {
            tenant: tenant.trim().to_string(),
            client_id: client_id.trim().to_string(),
            proof: Proof::Secret(Hidden(secret_value.trim().to_string())),
            authority: secret
                .get("authorityHost")
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .unwrap_or_else(authority_from_env),
        })
    }

    /// `AZURE_TENANT_ID` and `AZURE_CLIENT_ID`, with `AZURE_CLIENT_SECRET` or
    /// `AZURE_FEDERATED_TOKEN_FILE`.
    async fn from_controller() -> Result<Self, ProviderError> {
        let var = |k: &str| {
            std::env::var(k)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let (Some(tenant), Some(client_id)) = (var("AZURE_TENANT_ID"), var("AZURE_CLIENT_ID"))
        else {
            return Err(unauthorized(
                "no Azure credentials: set spec.identityRef to a Secret holding tenantID, clientID and clientSecret, or give the controller AZURE_TENANT_ID and AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE",
            ));
        };
        let proof = match (
            var("AZURE_CLIENT_SECRET"),
            var("AZURE_FEDERATED_TOKEN_FILE"),
        ) {
            (Some(s), _) => Proof::Secret(Hidden(s)),
            (None, Some(f)) => Proof::FederatedTokenFile(PathBuf::from(f)),
            (None, None) => {
                return Err(unauthorized(
                    "the controller has AZURE_CLIENT_ID but neither AZURE_CLIENT_SECRET nor AZURE_FEDERATED_TOKEN_FILE",
                ));
            }
        };
        Ok(Credential {
            tenant,
            client_id,
            proof,
            authority: authority_from_env(),
        })
    }
}

/// A bearer token and when it stops being accepted. `Debug` never shows the token.
#[derive(Clone, Debug)]
pub struct AccessToken {
    /// The token.
    pub token: Hidden<String>,
    /// Its expiry.
    pub expires_at: jiff::Timestamp,
}

/// Tokens of one credential, per scope, reused until five minutes before they expire. They come
/// from [`super::identity::credential`]: `azure_identity`'s credentials for Entra, our loopback
/// client for an emulator.
#[derive(Debug)]
pub struct Tokens {
    http: reqwest::Client,
    credential: Credential,
    source: Result<Arc<dyn TokenCredential>, String>,
    cache: Mutex<HashMap<String, AccessToken>>,
}

/// How long before expiry a cached token is replaced.
const EARLY: Duration = Duration::from_secs(300);

fn ours(token: &azure_core::credentials::AccessToken) -> AccessToken {
    AccessToken {
        token: Hidden(token.token.secret().to_string()),
        expires_at: jiff::Timestamp::from_second(token.expires_on.unix_timestamp())
            .unwrap_or_else(|_| jiff::Timestamp::now()),
    }
}

impl Tokens {
    /// Tokens of `credential`, exchanged over `http` (loopback authorities only).
    pub fn new(http: reqwest::Client, credential: Credential) -> Self {
        let source = super::identity::credential(&http, &credential).map_err(|e| e.to_string());
        Self {
            http,
            credential,
            source,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The credential.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// A token for `scope`, from the cache or a new exchange.
    ///
    /// # Errors
    /// Transient when Entra cannot be reached; terminal `Unauthorized` when it refuses.
    pub async fn get(&self, scope: &str) -> Result<AccessToken, ProviderError> {
        let now = jiff::Timestamp::now();
        if let Some(t) = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(scope)
            .filter(|t| t.expires_at > now + EARLY)
        {
            return Ok(t.clone());
        }
        let source = self.source.as_ref().map_err(|e| unauthorized(e.clone()))?;
        let token = source
            .get_token(&[scope], None)
            .await
            .map(|t| ours(&t))
            .map_err(|e| super::identity::classify(&e, &self.credential))?;
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(scope.to_string(), token.clone());
        Ok(token)
    }

    /// A new token for `scope` from a new credential, never from a cache (the kubeconfig
    /// Secret's: refreshed when a third of its life is left, which a cache would not renew).
    ///
    /// # Errors
    /// As [`Tokens::get`].
    pub async fn exchange(
        &self,
        scope: &str,
        _now: jiff::Timestamp,
    ) -> Result<AccessToken, ProviderError> {
        let source = super::identity::credential(&self.http, &self.credential)?;
        source
            .get_token(&[scope], None)
            .await
            .map(|t| ours(&t))
            .map_err(|e| super::identity::classify(&e, &self.credential))
    }
}

/// The `exp` claim of a JWT, if it has one (tokens are not verified here: the API server does).
pub fn jwt_expiry(token: &str) -> Option<jiff::Timestamp> {
    use base64::Engine as _;
    let claims = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims.trim_end_matches('='))
        .ok()?;
    let claims: Expiry = serde_json::from_slice(&bytes).ok()?;
    jiff::Timestamp::from_second(claims.exp?).ok()
}

/// The one claim of a token read here.
#[derive(serde::Deserialize)]
struct Expiry {
    /// When the token expires, in seconds since the epoch.
    exp: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_never_shows_its_secret_and_a_rotated_one_is_another_identity() {
        let c = Credential {
            tenant: "t".into(),
            client_id: "app".into(),
            proof: Proof::Secret(Hidden("hunter2".into())),
            authority: DEFAULT_AUTHORITY.into(),
        };
        assert!(!format!("{c:?}").contains("hunter2"));
        let rotated = Credential {
            proof: Proof::Secret(Hidden("hunter3".into())),
            ..c.clone()
        };
        assert_ne!(c.cache_id(), rotated.cache_id());
        assert_eq!(
            c.token_url(),
            "https://login.microsoftonline.com/t/oauth2/v2.0/token"
        );
    }

    #[test]
    fn a_jwts_expiry_is_read_from_its_claims() {
        use base64::Engine as _;
        let claims =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"exp":1900000000}"#);
        assert_eq!(
            jwt_expiry(&format!("e30.{claims}.sig")).map(|t| t.as_second()),
            Some(1_900_000_000)
        );
        assert_eq!(jwt_expiry("opaque"), None);
    }
}
