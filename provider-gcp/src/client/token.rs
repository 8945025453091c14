//! The OAuth 2.0 access token of `<cluster>-kubeconfig`: a JWT assertion signed with the
//! service-account key (RS256), exchanged at the key's `token_uri` (RFC 7523, as Google's OAuth
//! clients do). GKE's API servers accept such access tokens; they live an hour.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use provider_runtime::ProviderError;
use provider_runtime::kubeconfig::MintedToken;
use ring::signature::RsaKeyPair;
use serde::Deserialize;
use serde_json::json;

use super::ServiceAccountKey;

/// The scope of the token.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long Google issues access tokens for.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// The signed assertion for `key` at `now` (pure but for the signature's randomness-free RSA).
///
/// # Errors
/// When the private key is not an RSA PKCS#8 key.
pub fn assertion(key: &ServiceAccountKey, now: jiff::Timestamp) -> Result<String, String> {
    let header = json!({ "alg": "RS256", "typ": "JWT", "kid": key.private_key_id });
    let iat = now.as_second();
    let claims = json!({
        "iss": key.client_email,
        "scope": SCOPE,
        "aud": key.token_uri,
        "iat": iat,
        "exp": iat + 3600,
    });
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let der: String = key
        .private_key_pem()
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let der = STANDARD
        .decode(der)
        .map_err(|_| "the private key is not PEM".to_string())?;
    let pair = RsaKeyPair::from_pkcs8(&der).map_err(|e| format!("not an RSA key: {e}"))?;
    let mut sig = vec![0u8; pair.public().modulus_len()];
    pair.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        input.as_bytes(),
        &mut sig,
    )
    .map_err(|_| "signing failed".to_string())?;
    Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct Refusal {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

/// Exchanges an assertion for an access token at the key's token URI.
///
/// # Errors
/// Transient when the endpoint cannot be reached or answers 5xx; terminal `Unauthorized` when it
/// refuses the key (its `error` and `error_description` quoted).
pub async fn mint(
    http: &reqwest::Client,
    key: &ServiceAccountKey,
    now: jiff::Timestamp,
) -> Result<MintedToken, ProviderError> {
    let assertion = assertion(key, now).map_err(|e| {
        ProviderError::terminal(
            contract::conditions::Reason::Unauthorized,
            format!(
                "the service-account key of {} cannot sign: {e}",
                key.client_email
            ),
        )
    })?;
    let response = http
        .post(&key.token_uri)
        .form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion.as_str()),
        ])
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| {
            ProviderError::cloud(
                "token",
                format!(
                    "could not reach the token endpoint {}: {}",
                    key.token_uri,
                    e.without_url()
                ),
            )
        })?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| {
        ProviderError::cloud("token", format!("the token endpoint's answer was cut: {e}"))
    })?;
    if status.is_server_error() {
        return Err(ProviderError::cloud(
            "token",
            format!("the token endpoint {} answered {status}", key.token_uri),
        ));
    }
    if !status.is_success() {
        let refusal: Refusal = serde_json::from_slice(&body).unwrap_or(Refusal {
            error: status.to_string(),
            error_description: String::new(),
        });
        return Err(ProviderError::terminal(
            contract::conditions::Reason::Unauthorized,
            format!(
                "the token endpoint refused {}: {} {}",
                key.client_email, refusal.error, refusal.error_description
            )
            .trim_end()
            .to_string(),
        ));
    }
    let answer: Answer = serde_json::from_slice(&body).map_err(|e| {
        ProviderError::cloud(
            "token",
            format!("the token endpoint's answer is not a token: {e}"),
        )
    })?;
    let lifetime = answer
        .expires_in
        .map_or(TOKEN_LIFETIME, Duration::from_secs);
    Ok(MintedToken {
        token: answer.access_token,
        expires_at: now + lifetime,
    })
}
