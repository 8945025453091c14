//! Service-account credentials: a JSON key, from the identity Secret (`spec.identityRef`, key
//! `credentials.json`) or, for the controller's own identity, the file named by
//! `GOOGLE_APPLICATION_CREDENTIALS`.

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::identity::{self, Hidden, SecretIdentity};
use serde::Deserialize;

/// The key of the identity Secret holding the JSON key.
pub const SECRET_KEY: &str = "credentials.json";

/// A service-account key (what `gcloud iam service-accounts keys create` writes). Its `Debug`
/// never shows the private key.
#[derive(Clone, Debug, Deserialize)]
pub struct ServiceAccountKey {
    /// The key file as given.
    #[serde(skip)]
    json: Hidden<serde_json::Value>,
    /// `service_account`.
    #[serde(rename = "type")]
    kind: String,
    /// The account's project.
    pub project_id: String,
    /// The key's id.
    pub private_key_id: String,
    /// The private key, PKCS#8 PEM.
    private_key: Hidden<String>,
    /// The account.
    pub client_email: String,
    /// Where access tokens are exchanged (`https://oauth2.googleapis.com/token`).
    #[serde(default = "default_token_uri")]
    pub token_uri: String,
}

fn default_token_uri() -> String {
    "https://oauth2.googleapis.com/token".into()
}

impl PartialEq for ServiceAccountKey {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl ServiceAccountKey {
    /// Reads a JSON key; `source` names where it came from, for the error.
    ///
    /// # Errors
    /// Terminal `Unauthorized`, naming the source and what is wrong (never the key).
    pub fn parse(text: &str, source: &str) -> Result<Self, ProviderError> {
        let refuse = |why: String| {
            ProviderError::terminal(
                Reason::Unauthorized,
                format!("{source} is not a Google service-account key: {why}"),
            )
        };
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| refuse(format!("not JSON ({e})")))?;
        let mut key: Self =
            serde_json::from_value(json.clone()).map_err(|e| refuse(format!("{e}")))?;
        if key.kind != "service_account" {
            return Err(refuse(format!("its \"type\" is {:?}", key.kind)));
        }
        if !key.private_key.0.contains("PRIVATE KEY") {
            return Err(refuse("its private_key is not a PEM private key".into()));
        }
        key.json = Hidden(json);
        Ok(key)
    }

    /// The key as credentials for Google's clients.
    ///
    /// # Errors
    /// Terminal `Unauthorized` when Google's auth library refuses the key.
    pub fn credentials(
        &self,
    ) -> Result<google_cloud_auth::credentials::Credentials, ProviderError> {
        google_cloud_auth::credentials::service_account::Builder::new(self.json.0.clone())
            .build()
            .map_err(|e| {
                ProviderError::terminal(
                    Reason::Unauthorized,
                    format!(
                        "the service-account key of {} is refused: {e}",
                        self.client_email
                    ),
                )
            })
    }

    /// The private key, PKCS#8 PEM (for signing token assertions).
    pub(crate) fn private_key_pem(&self) -> &str {
        &self.private_key.0
    }

    /// A short id of the identity for the client cache: the account and key id.
    pub fn cache_id(&self) -> String {
        format!("{}#{}", self.client_email, self.private_key_id)
    }
}

impl identity::Credentials for ServiceAccountKey {
    /// A Secret's [`SECRET_KEY`] (`credentials.json`, a service-account key).
    fn from_secret(secret: &SecretIdentity) -> Result<Self, ProviderError> {
        let [text] = secret.require([SECRET_KEY])?;
        ServiceAccountKey::parse(text, &format!("{SECRET_KEY} of the identity Secret"))
    }

    /// The file `GOOGLE_APPLICATION_CREDENTIALS` names.
    async fn from_controller() -> Result<Self, ProviderError> {
        let path = std::env::var("GOOGLE_APPLICATION_CREDENTIALS").unwrap_or_default();
        if path.trim().is_empty() {
            return Err(ProviderError::terminal(
                Reason::Unauthorized,
                "no Google credentials: set spec.identityRef to a Secret holding credentials.json (a service-account key), or give the controller GOOGLE_APPLICATION_CREDENTIALS",
            ));
        }
        let text = tokio::fs::read_to_string(path.trim()).await.map_err(|e| {
            ProviderError::terminal(
                Reason::Unauthorized,
                format!(
                    "GOOGLE_APPLICATION_CREDENTIALS ({}) cannot be read: {e}",
                    path.trim()
                ),
            )
        })?;
        ServiceAccountKey::parse(&text, "GOOGLE_APPLICATION_CREDENTIALS")
    }
}
