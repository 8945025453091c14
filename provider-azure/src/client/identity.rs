//! Where Entra tokens come from, behind `azure_core`'s `TokenCredential` trait: in production
//! `azure_identity`'s own credentials (`ClientSecretCredential`, and `WorkloadIdentityCredential`
//! for a federated token file), which speak only to https authorities; against a loopback
//! authority (an emulator on 127.0.0.1 or `localhost`, which has no certificate),
//! [`LoopbackEntra`], the same client-credentials request made by us. An `http://` authority
//! anywhere else is refused: a client secret never travels in clear text.

use std::sync::Arc;

use azure_core::credentials::{AccessToken, Secret, TokenCredential, TokenRequestOptions};
use azure_core::error::{Error, ErrorKind};
use azure_core::http::ClientOptions;
use azure_core::time::OffsetDateTime;
use contract::conditions::Reason;
use provider_runtime::ProviderError;
use serde::Deserialize;

use super::credentials::{Credential, Proof};

/// Whether `authority` is plain http on the loopback interface.
pub fn is_loopback_http(authority: &str) -> bool {
    let Some(rest) = authority.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

/// A credential for `c`: `azure_identity`'s for an https authority, [`LoopbackEntra`] for a
/// loopback one.
///
/// # Errors
/// Terminal `Unauthorized` for an http authority off loopback or one `azure_identity` refuses.
pub fn credential(
    http: &reqwest::Client,
    c: &Credential,
) -> Result<Arc<dyn TokenCredential>, ProviderError> {
    if is_loopback_http(&c.authority) {
        return Ok(Arc::new(LoopbackEntra {
            http: http.clone(),
            credential: c.clone(),
        }));
    }
    if !c.authority.starts_with("https://") {
        return Err(ProviderError::terminal(
            Reason::Unauthorized,
            format!(
                "the Entra authority {} is not https (AZURE_AUTHORITY_HOST or the identity Secret's authorityHost): a client secret is never sent in clear text",
                c.authority
            ),
        ));
    }
    let mut custom = azure_core::cloud::CustomConfiguration::default();
    custom.authority_host = c.authority.trim_end_matches('/').to_string();
    let client_options = ClientOptions {
        cloud: Some(Arc::new(custom.into())),
        ..ClientOptions::default()
    };
    let refused = |e: Error| {
        ProviderError::terminal(
            Reason::Unauthorized,
            format!(
                "azure_identity refused the credential of {}: {e}",
                c.client_id
            ),
        )
    };
    match &c.proof {
        Proof::Secret(s) => {
            let options = azure_identity::ClientSecretCredentialOptions { client_options };
            let cred = azure_identity::ClientSecretCredential::new(
                &c.tenant,
                c.client_id.clone(),
                Secret::new(s.0.clone()),
                Some(options),
            )
            .map_err(refused)?;
            Ok(cred)
        }
        Proof::FederatedTokenFile(path) => {
            let options = azure_identity::WorkloadIdentityCredentialOptions {
                credential_options: azure_identity::ClientAssertionCredentialOptions {
                    client_options,
                },
                client_id: Some(c.client_id.clone()),
                tenant_id: Some(c.tenant.clone()),
                token_file_path: Some(path.clone()),
            };
            let cred =
                azure_identity::WorkloadIdentityCredential::new(Some(options)).map_err(refused)?;
            Ok(cred)
        }
    }
}

/// What a failed `get_token` means for the reconciler: an answer from Entra refusing the
/// principal is terminal `Unauthorized`; anything else (unreachable, a server error) is
/// transient.
pub fn classify(e: &Error, c: &Credential) -> ProviderError {
    let refused = match e.kind() {
        ErrorKind::HttpResponse { status, .. } => u16::from(*status) < 500,
        ErrorKind::Credential => !e.to_string().to_ascii_lowercase().contains("connect"),
        _ => false,
    };
    if refused {
        ProviderError::terminal(
            Reason::Unauthorized,
            format!(
                "Microsoft Entra ID refused the service principal {} of tenant {}: {e}",
                c.client_id, c.tenant
            ),
        )
    } else {
        ProviderError::cloud(
            "token",
            format!(
                "could not get a token from Microsoft Entra ID at {}: {e}",
                c.authority
            ),
        )
    }
}

/// The client-credentials request against a loopback authority (an emulator), as
/// `azure_identity` makes it against Entra.
#[derive(Debug)]
pub struct LoopbackEntra {
    http: reqwest::Client,
    credential: Credential,
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    expires_in: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct Refusal {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

fn encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let enc = |s: &str| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            format!("{}={}", enc(k), enc(v))
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[async_trait::async_trait]
impl TokenCredential for LoopbackEntra {
    async fn get_token(
        &self,
        scopes: &[&str],
        _options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        let c = &self.credential;
        let scope = scopes.join(" ");
        let assertion;
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("client_id", c.client_id.as_str()),
            ("scope", scope.as_str()),
        ];
        match &c.proof {
            Proof::Secret(s) => form.push(("client_secret", s.0.as_str())),
            Proof::FederatedTokenFile(path) => {
                assertion = tokio::fs::read_to_string(path).await.map_err(|e| {
                    Error::with_message(
                        ErrorKind::Credential,
                        format!(
                            "the federated token file {} cannot be read: {e}",
                            path.display()
                        ),
                    )
                })?;
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ));
                form.push(("client_assertion", assertion.trim()));
            }
        }
        let response = self
            .http
            .post(c.token_url())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(&form))
            .timeout(std::time::Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| {
                Error::with_message(
                    ErrorKind::Io,
                    format!("could not reach {}: {}", c.token_url(), e.without_url()),
                )
            })?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| {
            Error::with_message(
                ErrorKind::Io,
                format!("the token endpoint's answer was cut: {e}"),
            )
        })?;
        if !status.is_success() {
            let refusal: Refusal = serde_json::from_slice(&bytes).unwrap_or_default();
            let message = format!("{} {}", refusal.error, refusal.error_description)
                .trim()
                .to_string();
            return Err(Error::with_message(
                ErrorKind::HttpResponse {
                    status: status.as_u16().into(),
                    error_code: Some(refusal.error),
                    raw_response: None,
                },
                message,
            ));
        }
        let answer: Answer = serde_json::from_slice(&bytes).map_err(|e| {
            Error::with_message(
                ErrorKind::DataConversion,
                format!("the token endpoint's answer is not a token: {e}"),
            )
        })?;
        // Entra sends expires_in as a number (v2) or a string (v1).
        let secs = match &answer.expires_in {
            Some(serde_json::Value::Number(n)) => n.as_i64(),
            Some(serde_json::Value::String(s)) => s.parse().ok(),
            _ => None,
        }
        .unwrap_or(3600);
        let expires_on = OffsetDateTime::now_utc() + azure_core::time::Duration::seconds(secs);
        Ok(AccessToken::new(
            Secret::new(answer.access_token),
            expires_on,
        ))
    }
}

#[cfg(test)]
mod tests {
    use provider_runtime::identity::Hidden;

    use super::*;

    #[test]
    fn only_loopback_may_be_plain_http() {
        assert!(is_loopback_http("http://127.0.0.1:4321"));
        assert!(is_loopback_http("http://localhost"));
        assert!(!is_loopback_http("http://login.example.com"));
        assert!(!is_loopback_http("https://login.microsoftonline.com"));
        let c = |authority: &str| Credential {
            tenant: "72f988bf-0000-4000-8000-00000000cafe".into(),
            client_id: "app".into(),
            proof: Proof::Secret(Hidden("s".into())),
            authority: authority.into(),
        };
        let http = crate::client::http_client();
        assert!(credential(&http, &c("http://10.0.0.1")).is_err());
        assert!(credential(&http, &c("http://127.0.0.1:1")).is_ok());
        assert!(
            credential(&http, &c("https://login.microsoftonline.com")).is_ok(),
            "azure_identity takes Entra's own authority"
        );
    }
}
