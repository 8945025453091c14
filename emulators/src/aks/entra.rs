//! Microsoft Entra ID's token endpoint, `POST /{tenant}/oauth2/v2.0/token`, as MSAL and
//! `azure_identity` call it: the client-credentials grant with a client secret, and with a
//! federated assertion (workload identity: `client_assertion_type=
//! urn:ietf:params:oauth:client-assertion-type:jwt-bearer`). Tokens are JWTs with Entra's
//! claims (`aud`, `iss`, `tid`, `oid`, `appid`, `exp`) for the resource the `scope` names
//! (`<resource>/.default`): Azure Resource Manager, or AKS's Entra server application for
//! workload clusters.
//!
//! The emulator signs with an ECDSA P-256 key made at start (ES256; Entra signs RS256, which no
//! client of a bearer token checks) and verifies its own tokens on every ARM call and every
//! workload token review. A federated assertion's issuer, subject, audience and expiry are
//! checked against the principal's federated credential; its signature is not (Entra fetches the
//! issuer's keys from its OIDC discovery document, which a local management cluster does not
//! publish).

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};

/// Azure Resource Manager's resource id (what ARM tokens' `aud` holds).
pub const ARM_RESOURCE: &str = "https://management.azure.com/";

/// AKS's Entra server application: the audience of tokens for AKS-managed Entra clusters
/// (`kubelogin --server-id`).
pub const AKS_SERVER_APP: &str = "6dae42f8-4368-4678-94ff-3960e28e3630";

/// The audience a federated assertion must carry.
pub const FEDERATION_AUDIENCE: &str = "api://AzureADTokenExchange";

/// One service principal (an app registration's identity in the tenant).
#[derive(Clone)]
pub struct Principal {
    /// The application (client) id.
    pub client_id: String,
    /// Its client secret, if it has one.
    pub secret: Option<String>,
    /// A federated credential: issuer and subject of assertions it accepts.
    pub federated: Option<(String, String)>,
    /// The service principal's object id (`oid`).
    pub object_id: String,
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Principal")
            .field("client_id", &self.client_id)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("federated", &self.federated)
            .field("object_id", &self.object_id)
            .finish()
    }
}

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `oid`.
    pub object_id: String,
    /// `appid`.
    pub client_id: String,
    /// `tid`.
    pub tenant: String,
    /// `aud`.
    pub audience: String,
}

/// The tenant's directory and signing key.
pub struct Entra {
    tenant: String,
    principals: Vec<Principal>,
    lifetime: Duration,
    key: EcdsaKeyPair,
    public: Vec<u8>,
    kid: String,
}

impl std::fmt::Debug for Entra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entra")
            .field("tenant", &self.tenant)
            .field("principals", &self.principals)
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

/// An Entra error body: `{"error", "error_description": "AADSTS…: …", "error_codes": [n]}`.
fn aad_error(status: u16, error: &str, code: u32, text: &str) -> (u16, Value) {
    (
        status,
        json!({
            "error": error,
            "error_description": format!("AADSTS{code}: {text}"),
            "error_codes": [code],
            "timestamp": jiff::Timestamp::now().to_string(),
            "trace_id": uuid_like(),
            "correlation_id": uuid_like(),
        }),
    )
}

/// A random id in the 8-4-4-4-12 shape.
pub fn uuid_like() -> String {
    let h = crate::kit::random_hex(16);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn decode_part(part: &str) -> Option<Value> {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok()
}

impl Entra {
    /// A directory for `tenant` with `principals` (none: every client id is accepted with any
    /// secret), issuing tokens that live `lifetime`.
    ///
    /// # Errors
    /// When the signing key cannot be made.
    pub fn new(
        tenant: &str,
        principals: Vec<Principal>,
        lifetime: Duration,
    ) -> anyhow::Result<Self> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| anyhow::anyhow!("generating the token signing key failed"))?;
        let key = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .map_err(|_| anyhow::anyhow!("reading the token signing key failed"))?;
        let public = key.public_key().as_ref().to_vec();
        Ok(Self {
            tenant: tenant.to_string(),
            principals,
            lifetime,
            key,
            public,
            kid: crate::kit::random_hex(8),
        })
    }

    /// The tenant id.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// Whether callers are checked against known principals.
    pub fn checks_principals(&self) -> bool {
        !self.principals.is_empty()
    }

    /// How long an issued token lives.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// A signed token for `principal` and `audience`, valid from `now` for the lifetime.
    fn issue(&self, client_id: &str, object_id: &str, audience: &str, now: i64) -> Option<String> {
        let exp = now + self.lifetime.as_secs() as i64;
        let header = json!({ "typ": "JWT", "alg": "ES256", "kid": self.kid });
        let claims = json!({
            "aud": audience,
            "iss": format!("https://sts.windows.net/{}/", self.tenant),
            "iat": now, "nbf": now, "exp": exp,
            "appid": client_id, "oid": object_id, "sub": object_id,
            "tid": self.tenant, "idtyp": "app", "ver": "1.0",
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self.key.sign(&SystemRandom::new(), input.as_bytes()).ok()?;
        Some(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref())))
    }

    /// Verifies a token this directory issued: signature, expiry, tenant; the audience is
    /// returned for the caller to judge.
    ///
    /// # Errors
    /// Why not, without echoing the token.
    pub fn verify(&self, token: &str) -> Result<Caller, String> {
        let mut parts = token.split('.');
        let (Some(h), Some(c), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("the token is not a JWT".into());
        };
        let sig = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| "the token's signature is not base64url")?;
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &self.public)
            .verify(format!("{h}.{c}").as_bytes(), &sig)
            .map_err(|_| "the token's signature does not verify: it was not issued by this tenant's token endpoint")?;
        let claims = decode_part(c).ok_or("the token's claims are not JSON")?;
        let now = jiff::Timestamp::now().as_second();
        let exp = claims["exp"].as_i64().unwrap_or(0);
        if exp <= now {
            return Err(format!("the token expired {} s ago", now - exp));
        }
        let tenant = claims["tid"].as_str().unwrap_or_default().to_string();
        if tenant != self.tenant {
            return Err(format!(
                "the token is for tenant {tenant:?}, not {:?}",
                self.tenant
            ));
        }
        Ok(Caller {
            object_id: claims["oid"].as_str().unwrap_or_default().to_string(),
            client_id: claims["appid"].as_str().unwrap_or_default().to_string(),
            tenant,
            audience: claims["aud"].as_str().unwrap_or_default().to_string(),
        })
    }

    /// The resource a `scope` asks for (`https://management.azure.com/.default` →
    /// [`ARM_RESOURCE`]), if it is one this tenant issues tokens for.
    fn resource(scope: &str) -> Option<&'static str> {
        let resource = scope
            .split_whitespace()
            .find(|s| s.ends_with("/.default"))?
            .trim_end_matches("/.default")
            .trim_end_matches('/');
        match resource {
            "https://management.azure.com" | "https://management.core.windows.net" => {
                Some(ARM_RESOURCE)
            }
            AKS_SERVER_APP => Some(AKS_SERVER_APP),
            _ => None,
        }
    }

    /// Serves one token request for `tenant` (the path's), form-encoded; the HTTP status and
    /// the JSON body.
    pub fn token(&self, tenant: &str, form: &HashMap<String, String>) -> (u16, Value) {
        if tenant != self.tenant && tenant != "organizations" {
            return aad_error(
                400,
                "invalid_request",
                90002,
                &format!(
                    "Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud."
                ),
            );
        }
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
        if get("grant_type") != "client_credentials" {
            return aad_error(
                400,
                "unsupported_grant_type",
                70003,
                "The app requested an unsupported grant type. Only client_credentials is emulated.",
            );
        }
        let client_id = get("client_id");
        let Some(resource) = Self::resource(get("scope")) else {
            return aad_error(
                400,
                "invalid_resource",
                500011,
                &format!(
                    "The resource principal named {} was not found in the tenant named {}.",
                    get("scope"),
                    self.tenant
                ),
            );
        };
        let principal = self.principals.iter().find(|p| p.client_id == client_id);
        let object_id = match (principal, self.principals.is_empty()) {
            (None, true) => format!("oid-{client_id}"),
            (None, false) => {
                return aad_error(
                    400,
                    "unauthorized_client",
                    700016,
                    &format!(
                        "Application with identifier '{client_id}' was not found in the directory '{}'.",
                        self.tenant
                    ),
                );
            }
            (Some(p), _) => {
                if let Err(e) = self.authenticate(
                    p,
                    get("client_secret"),
                    get("client_assertion_type"),
                    get("client_assertion"),
                ) {
                    return e;
                }
                p.object_id.clone()
            }
        };
        let now = jiff::Timestamp::now().as_second();
        let Some(token) = self.issue(client_id, &object_id, resource, now) else {
            return aad_error(
                500,
                "temporarily_unavailable",
                90033,
                "A transient error has occurred. Please try again.",
            );
        };
        let secs = self.lifetime.as_secs();
        (
            200,
            json!({ "token_type": "Bearer", "expires_in": secs, "ext_expires_in": secs, "access_token": token }),
        )
    }

    fn authenticate(
        &self,
        p: &Principal,
        secret: &str,
        assertion_type: &str,
        assertion: &str,
    ) -> Result<(), (u16, Value)> {
        if !assertion.is_empty() {
            if assertion_type != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
                return Err(aad_error(
                    400,
                    "invalid_request",
                    50027,
                    "Invalid client_assertion_type.",
                ));
            }
            let claims = assertion
                .split('.')
                .nth(1)
                .and_then(decode_part)
                .ok_or_else(|| {
                    aad_error(
                        400,
                        "invalid_client",
                        50027,
                        "JWT token is invalid or malformed.",
                    )
                })?;
            let now = jiff::Timestamp::now().as_second();
            if claims["exp"].as_i64().unwrap_or(0) <= now {
                return Err(aad_error(
                    400,
                    "invalid_client",
                    700024,
                    "Client assertion is not within its valid time range.",
                ));
            }
            let aud_ok = match &claims["aud"] {
                Value::String(a) => a == FEDERATION_AUDIENCE,
                Value::Array(a) => a.iter().any(|x| x == FEDERATION_AUDIENCE),
                _ => false,
            };
            let (iss, sub) = (
                claims["iss"].as_str().unwrap_or_default(),
                claims["sub"].as_str().unwrap_or_default(),
            );
            let matches = p
                .federated
                .as_ref()
                .is_some_and(|(i, s)| i == iss && s == sub);
            if !aud_ok || !matches {
                return Err(aad_error(
                    400,
                    "invalid_client",
                    70021,
                    &format!(
                        "No matching federated identity record found for presented assertion. Assertion Issuer: '{iss}'. Assertion Subject: '{sub}'. Assertion Audience: '{}'.",
                        claims["aud"]
                    ),
                ));
            }
            return Ok(());
        }
        match &p.secret {
            Some(s) if !secret.is_empty() && super::same_secret(s, secret) => Ok(()),
            _ => Err(aad_error(
                401,
                "invalid_client",
                7000215,
                &format!(
                    "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '{}'.",
                    p.client_id
                ),
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn directory() -> Entra {
        Entra::new(
            "tenant-1",
            vec![Principal {
                client_id: "app-1".into(),
                secret: Some("s3cret".into()),
                federated: Some((
                    "https://issuer.example".into(),
                    "system:serviceaccount:capi:provider".into(),
                )),
                object_id: "oid-1".into(),
            }],
            Duration::from_secs(600),
        )
        .unwrap()
    }

    #[test]
    fn a_client_secret_buys_a_token_arm_then_verifies_and_a_wrong_one_does_not() {
        let e = directory();
        let (status, body) = e.token(
            "tenant-1",
            &form(&[
                ("grant_type", "client_credentials"),
                ("client_id", "app-1"),
                ("client_secret", "s3cret"),
                ("scope", "https://management.azure.com/.default"),
            ]),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["expires_in"], 600);
        let caller = e.verify(body["access_token"].as_str().unwrap()).unwrap();
        assert_eq!(
            (caller.object_id.as_str(), caller.audience.as_str()),
            ("oid-1", ARM_RESOURCE)
        );
        let (status, body) = e.token(
            "tenant-1",
            &form(&[
                ("grant_type", "client_credentials"),
                ("client_id", "app-1"),
                ("client_secret", "nope"),
                ("scope", "https://management.azure.com/.default"),
            ]),
        );
        assert_eq!(status, 401);
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .starts_with("AADSTS7000215")
        );
        let (status, _) = e.token("other", &form(&[("grant_type", "client_credentials")]));
        assert_eq!(status, 400);
        assert!(e.verify("a.b.c").is_err());
    }

    #[test]
    fn a_federated_assertion_must_match_the_credential() {
        let e = directory();
        let now = jiff::Timestamp::now().as_second();
        let assertion = |iss: &str, sub: &str| {
            format!(
                "e30.{}.c2ln",
                URL_SAFE_NO_PAD.encode(
                    json!({"iss": iss, "sub": sub, "aud": [FEDERATION_AUDIENCE], "exp": now + 60})
                        .to_string()
                )
            )
        };
        let ask = |a: String| {
            e.token(
                "tenant-1",
                &form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", "app-1"),
                    (
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                    ),
                    ("client_assertion", &a),
                    ("scope", &format!("{AKS_SERVER_APP}/.default")),
                ]),
            )
        };
        let (status, body) = ask(assertion(
            "https://issuer.example",
            "system:serviceaccount:capi:provider",
        ));
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            e.verify(body["access_token"].as_str().unwrap())
                .unwrap()
                .audience,
            AKS_SERVER_APP
        );
        let (status, body) = ask(assertion(
            "https://issuer.example",
            "system:serviceaccount:other:sa",
        ));
        assert_eq!(status, 400);
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .starts_with("AADSTS70021")
        );
    }
}
