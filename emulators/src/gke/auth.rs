//! Google credentials as the emulated project sees them.
//!
//! A service account is a JSON key file (`"type": "service_account"`, `project_id`,
//! `private_key_id`, `private_key`, `client_email`, `token_uri`); the emulator is given the files
//! (or writes them, [`ServiceAccountKey::generate`]) and keeps each key's public half. Two kinds of
//! bearer token are accepted on the Kubernetes Engine and Compute Engine APIs:
//! - a **self-signed JWT** (RS256, `kid` = the key id, `iss` = `sub` = the account, a `scope` or an
//!   `aud`, at most an hour long), which is what Google's Rust auth library sends for a
//!   service-account key;
//! - an **access token** issued by the emulator's token endpoint (`POST <token_uri>`,
//!   `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` with a signed assertion whose `aud`
//!   is the token URI), RFC 7523 as Google's OAuth server does it; it expires after the
//!   configured lifetime.
//!
//! A cluster's workload API server accepts only access tokens issued for an account of the
//! cluster's project (GKE accepts OAuth access tokens; IAM's `container.admin` is emulated as
//! `system:masters`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{self, KeyPair as _, RsaKeyPair};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

/// The JWT-bearer grant type.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The scope every Google Cloud API accepts.
pub const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Seconds of clock skew allowed on `iat` and `exp`.
const SKEW: i64 = 60;

/// The longest a JWT may live (Google: one hour), plus the skew Google's clients add.
const MAX_JWT_LIFETIME: i64 = 3600 + 2 * SKEW;

/// One service-account key, as in the JSON key file. Its `Debug` never shows the private key.
#[derive(Clone, Deserialize)]
pub struct ServiceAccountKey {
    /// `service_account`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The project the account belongs to.
    pub project_id: String,
    /// The key's id (the JWT's `kid`).
    pub private_key_id: String,
    /// The private key, PKCS#8 PEM.
    pub private_key: String,
    /// The account's email.
    pub client_email: String,
    /// Where access tokens are exchanged.
    #[serde(default)]
    pub token_uri: String,
}

impl std::fmt::Debug for ServiceAccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountKey")
            .field("client_email", &self.client_email)
            .field("private_key_id", &self.private_key_id)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountKey {
    /// Reads a key file's JSON.
    ///
    /// # Errors
    /// When it is not a service-account key.
    pub fn parse(json: &str) -> Result<Self> {
        let key: Self = serde_json::from_str(json).context("a service-account key is JSON")?;
        if key.kind != "service_account" {
            bail!(
                "the key's \"type\" is {:?}, not \"service_account\"",
                key.kind
            );
        }
        key.public_key().context("reading the key's private_key")?;
        Ok(key)
    }

    /// A new 2048-bit key for `email` in `project` whose token URI is `token_uri` (generated with
    /// `openssl genpkey`; ring cannot generate RSA keys).
    ///
    /// # Errors
    /// When `openssl` is missing or fails.
    pub fn generate(project: &str, email: &str, token_uri: &str) -> Result<Self> {
        let key = Self {
            kind: "service_account".into(),
            project_id: project.into(),
            private_key_id: crate::kit::random_hex(20),
            private_key: crate::kit::rsa_private_key_pem()?,
            client_email: email.into(),
            token_uri: token_uri.into(),
        };
        key.public_key()?;
        Ok(key)
    }

    /// The key file's JSON, as Google's console writes it.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "service_account",
            "project_id": self.project_id,
            "private_key_id": self.private_key_id,
            "private_key": self.private_key,
            "client_email": self.client_email,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": self.token_uri,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "universe_domain": "googleapis.com",
        })
    }

    fn key_pair(&self) -> Result<RsaKeyPair> {
        let der = pem_body(&self.private_key).context("the private key is PEM")?;
        RsaKeyPair::from_pkcs8(&der).map_err(|e| anyhow::anyhow!("not an RSA PKCS#8 key: {e}"))
    }

    fn public_key(&self) -> Result<Vec<u8>> {
        Ok(self.key_pair()?.public_key().as_ref().to_vec())
    }

    /// A JWT with these claims signed by this key (RS256, `kid` set).
    ///
    /// # Errors
    /// When the key cannot sign.
    pub fn sign_jwt(&self, claims: &Value) -> Result<String> {
        let header = json!({ "alg": "RS256", "typ": "JWT", "kid": self.private_key_id });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let pair = self.key_pair()?;
        let mut sig = vec![0u8; pair.public().modulus_len()];
        pair.sign(
            &signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            input.as_bytes(),
            &mut sig,
        )
        .map_err(|_| anyhow::anyhow!("signing failed"))?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }
}

/// The DER inside a PEM block.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    STANDARD.decode(body).ok()
}

/// A trusted account: its project and public key.
#[derive(Debug, Clone)]
struct Account {
    email: String,
    project: String,
    key_id: String,
    public_key: Vec<u8>,
    token_uri: String,
}

/// Who a verified token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The service account's email.
    pub email: String,
    /// Its project.
    pub project: String,
    /// Whether this is an access token from the token endpoint (not a self-signed JWT).
    pub access_token: bool,
}

#[derive(Debug)]
struct Issued {
    principal: Principal,
    expires: Instant,
}

/// The trusted keys and the access tokens issued. Its `Debug` shows neither keys nor tokens.
pub struct Auth {
    accounts: Vec<Account>,
    lifetime: Duration,
    issued: Mutex<HashMap<String, Issued>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let issued = self.issued.lock().map_or(0, |i| i.len());
        f.debug_struct("Auth")
            .field(
                "accounts",
                &self
                    .accounts
                    .iter()
                    .map(|a| a.email.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("issued_tokens", &issued)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// Trusts `keys`; access tokens live `lifetime`.
    ///
    /// # Errors
    /// When a key's private key cannot be read.
    pub fn new(keys: &[ServiceAccountKey], lifetime: Duration) -> Result<Self> {
        let accounts = keys
            .iter()
            .map(|k| {
                Ok(Account {
                    email: k.client_email.clone(),
                    project: k.project_id.clone(),
                    key_id: k.private_key_id.clone(),
                    public_key: k.public_key()?,
                    token_uri: k.token_uri.clone(),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            accounts,
            lifetime,
            issued: Mutex::new(HashMap::new()),
        })
    }

    /// Whether any key is trusted (without one, callers are not checked).
    pub fn enabled(&self) -> bool {
        !self.accounts.is_empty()
    }

    /// How long an issued access token lives.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// Verifies a JWT signed by a trusted key; returns the account and the claims.
    fn verify_jwt(&self, jwt: &str) -> Result<(&Account, Value), String> {
        let mut parts = jwt.split('.');
        let (Some(h), Some(c), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("not a JWT".into());
        };
        let decode = |p: &str| -> Result<Value, String> {
            let bytes = URL_SAFE_NO_PAD
                .decode(p)
                .map_err(|_| "a JWT part is not base64url")?;
            serde_json::from_slice(&bytes).map_err(|_| "a JWT part is not JSON".to_string())
        };
        let header = decode(h)?;
        let claims = decode(c)?;
        if header["alg"] != "RS256" {
            return Err(format!("JWT algorithm {} is not RS256", header["alg"]));
        }
        let iss = claims["iss"].as_str().unwrap_or_default();
        let account = self
            .accounts
            .iter()
            .find(|a| a.email == iss && header["kid"].as_str().is_none_or(|kid| kid == a.key_id))
            .ok_or_else(|| format!("no trusted key for issuer {iss:?}"))?;
        let sig = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| "the signature is not base64url")?;
        signature::UnparsedPublicKey::new(
            &signature::RSA_PKCS1_2048_8192_SHA256,
            &account.public_key,
        )
        .verify(format!("{h}.{c}").as_bytes(), &sig)
        .map_err(|_| "Invalid JWT Signature.".to_string())?;
        let now = jiff::Timestamp::now().as_second();
        let iat = claims["iat"].as_i64().ok_or("the JWT has no iat")?;
        let exp = claims["exp"].as_i64().ok_or("the JWT has no exp")?;
        if iat > now + SKEW {
            return Err("the JWT is issued in the future".into());
        }
        if exp <= now - SKEW {
            return Err("the JWT has expired".into());
        }
        if exp - iat > MAX_JWT_LIFETIME {
            return Err("the JWT lives longer than an hour".into());
        }
        Ok((account, claims))
    }

    /// The principal behind `Authorization: Bearer <token>` on a Google API call.
    ///
    /// # Errors
    /// Why the token is not accepted (never echoing it).
    pub fn authenticate(&self, bearer: &str) -> Result<Principal, String> {
        if bearer.matches('.').count() == 2 && !bearer.starts_with("ya29.") {
            let (account, claims) = self.verify_jwt(bearer)?;
            let scoped = claims["scope"]
                .as_str()
                .is_some_and(|s| s.split(' ').any(|s| s == CLOUD_PLATFORM));
            let aud = claims["aud"].as_str().unwrap_or_default();
            let audienced = aud.starts_with("https://container.googleapis.com")
                || aud.starts_with("https://compute.googleapis.com");
            if !scoped && !audienced {
                return Err("the self-signed JWT has neither the cloud-platform scope nor a Google API audience".into());
            }
            return Ok(Principal {
                email: account.email.clone(),
                project: account.project.clone(),
                access_token: false,
            });
        }
        self.access_token(bearer)
    }

    /// The principal of an access token the token endpoint issued, while it lives.
    ///
    /// # Errors
    /// When it was never issued or has expired.
    pub fn access_token(&self, token: &str) -> Result<Principal, String> {
        let mut issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        issued.retain(|_, t| t.expires > now);
        issued
            .get(token)
            .map(|t| t.principal.clone())
            .ok_or_else(|| "the access token is unknown or expired".to_string())
    }

    /// The token endpoint: exchanges a signed assertion for an access token (RFC 7523). The
    /// answer is `(status, body)` as Google's OAuth server gives it.
    pub fn exchange(&self, form: &HashMap<String, String>) -> (u16, Value) {
        let refuse = |error: &str, description: &str| {
            (
                400,
                json!({ "error": error, "error_description": description }),
            )
        };
        if form.get("grant_type").map(String::as_str) != Some(JWT_BEARER) {
            return refuse("unsupported_grant_type", "Invalid grant_type.");
        }
        let Some(assertion) = form.get("assertion") else {
            return refuse("invalid_request", "Missing required parameter: assertion");
        };
        let (account, claims) = match self.verify_jwt(assertion) {
            Ok(v) => v,
            Err(why) => return refuse("invalid_grant", &why),
        };
        if claims["aud"].as_str() != Some(account.token_uri.as_str()) {
            return refuse(
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim, and the aud claim is the token URI.",
            );
        }
        if claims["scope"].as_str().is_none_or(str::is_empty) {
            return refuse(
                "invalid_scope",
                "Invalid OAuth scope or ID token audience provided.",
            );
        }
        let token = self.issue(&account.email, &account.project, self.lifetime);
        (
            200,
            json!({
                "access_token": token,
                "expires_in": self.lifetime.as_secs(),
                "token_type": "Bearer",
            }),
        )
    }

    /// IAM Credentials' `generateAccessToken`: an access token for the service account `email`,
    /// living `lifetime` (IAM's most: an hour; its default, the emulator's token lifetime, an
    /// hour unless set shorter), and when it expires. IAM lets an
    /// account with the Token Creator role mint for another; here an account mints for itself
    /// (what a controller holding one key does), and with no key trusted anyone mints for anyone.
    ///
    /// # Errors
    /// IAM's refusal, with its HTTP status: the caller may not mint for `email` (403), or the
    /// lifetime is out of range (400).
    pub fn generate_access_token(
        &self,
        caller: Option<&Principal>,
        email: &str,
        lifetime: Option<Duration>,
    ) -> Result<(String, jiff::Timestamp), (u16, String)> {
        let lifetime = lifetime.unwrap_or(self.lifetime.min(Duration::from_secs(3600)));
        if lifetime < Duration::from_secs(1) || lifetime > Duration::from_secs(3600) {
            return Err((
                400,
                "The lifetime must be between 1 second and 3600 seconds.".into(),
            ));
        }
        let project = match caller {
            Some(caller) if caller.email == email => caller.project.clone(),
            Some(_) => {
                return Err((
                    403,
                    "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).".into(),
                ));
            }
            None => email
                .split_once('@')
                .and_then(|(_, domain)| domain.strip_suffix(".iam.gserviceaccount.com"))
                .unwrap_or_default()
                .to_string(),
        };
        let token = self.issue(email, &project, lifetime);
        let expires = jiff::Timestamp::now()
            + jiff::SignedDuration::try_from(lifetime).unwrap_or(jiff::SignedDuration::ZERO);
        Ok((token, expires))
    }

    /// A new access token for `email` of `project`, accepted until `lifetime` has passed.
    fn issue(&self, email: &str, project: &str, lifetime: Duration) -> String {
        let token = format!("ya29.emu-{}", crate::kit::random_hex(32));
        let principal = Principal {
            email: email.to_string(),
            project: project.to_string(),
            access_token: true,
        };
        self.issued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                token.clone(),
                Issued {
                    principal,
                    expires: Instant::now() + lifetime,
                },
            );
        token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_key() -> ServiceAccountKey {
        ServiceAccountKey::generate(
            "proj-1",
            "capg@proj-1.iam.gserviceaccount.com",
            "http://127.0.0.1:1/token",
        )
        .unwrap()
    }

    fn claims(extra: Value) -> Value {
        let now = jiff::Timestamp::now().as_second();
        let mut c = json!({ "iss": "capg@proj-1.iam.gserviceaccount.com", "sub": "capg@proj-1.iam.gserviceaccount.com", "iat": now, "exp": now + 3600 });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }

    #[tokio::test]
    async fn self_signed_jwts_and_exchanged_tokens_are_accepted_and_others_are_not() {
        let key = new_key();
        let auth = Auth::new(std::slice::from_ref(&key), Duration::from_secs(60)).unwrap();
        let jwt = key
            .sign_jwt(&claims(json!({ "scope": CLOUD_PLATFORM })))
            .unwrap();
        let who = auth.authenticate(&jwt).unwrap();
        assert_eq!(who.project, "proj-1");
        assert!(
            !format!("{key:?}").contains("PRIVATE KEY"),
            "no key in Debug"
        );
        assert!(!who.access_token);

        // Another key with the same email is not trusted.
        let mut other = new_key();
        other.private_key_id.clone_from(&key.private_key_id);
        let forged = other
            .sign_jwt(&claims(json!({ "scope": CLOUD_PLATFORM })))
            .unwrap();
        assert!(
            auth.authenticate(&forged)
                .unwrap_err()
                .contains("Signature")
        );
        let stale = key
            .sign_jwt(&claims(
                json!({ "scope": CLOUD_PLATFORM, "iat": 1_000, "exp": 4_600 }),
            ))
            .unwrap();
        assert!(auth.authenticate(&stale).unwrap_err().contains("expired"));
        let unscoped = key.sign_jwt(&claims(json!({}))).unwrap();
        assert!(auth.authenticate(&unscoped).is_err());

        // The exchange wants the token URI as audience.
        let assertion = key
            .sign_jwt(&claims(
                json!({ "scope": CLOUD_PLATFORM, "aud": key.token_uri }),
            ))
            .unwrap();
        let form = |a: &str| {
            HashMap::from([
                ("grant_type".to_string(), JWT_BEARER.to_string()),
                ("assertion".to_string(), a.to_string()),
            ])
        };
        let (status, body) = auth.exchange(&form(&assertion));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["expires_in"], 60);
        let token = body["access_token"].as_str().unwrap();
        assert!(auth.authenticate(token).unwrap().access_token);
        let (status, body) = auth.exchange(&form(&jwt));
        assert_eq!(status, 400);
        assert_eq!(body["error"], "invalid_grant");
        assert!(auth.access_token("ya29.never-issued").is_err());
    }
}
