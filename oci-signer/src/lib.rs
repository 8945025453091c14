//! OCI's request signatures (draft-cavage HTTP signatures, `rsa-sha256`, `version="1"`), as
//! Oracle's SDKs make them:
//!
//! - every request signs `date`, `(request-target)` (the method in lower case, a space, the path
//!   and query as sent) and `host` (with its port when not the scheme's);
//! - PUT, POST and PATCH also sign `content-length`, `content-type` and `x-content-sha256` (the
//!   base64 SHA-256 of the body, the empty body's for none);
//! - the signing string is `name: value` lines joined by `\n`, in that order; the signature is
//!   RSASSA-PKCS1-v1_5 with SHA-256, base64; it travels in `authorization` as
//!   `Signature algorithm="rsa-sha256",headers="…",keyId="<tenancy>/<user>/<fingerprint>",signature="…",version="1"`.
//!
//! PKCS#1 v1.5 signatures are deterministic, so `tests` compare whole headers with the golden
//! vectors of `testdata/signer-vectors.json`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};

/// Why a key or a request cannot be signed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignerError {
    /// The private key is not an RSA key in a PEM form OCI uses.
    #[error(
        "the API signing key is not an RSA private key in PEM (PKCS#8 \"PRIVATE KEY\" or PKCS#1 \"RSA PRIVATE KEY\"): {0}"
    )]
    Key(String),
    /// The URL has no host.
    #[error("cannot sign a request to {0:?}: not an http(s) URL with a host")]
    Url(String),
    /// The method is not one OCI signs.
    #[error("cannot sign a {0} request: OCI signs GET, HEAD, DELETE, PUT, POST and PATCH")]
    Method(String),
    /// ring refused to sign.
    #[error("signing failed")]
    Sign,
}

/// An API signing key: the user's RSA key, with the tenancy, user and fingerprint that name it.
/// `Debug` never shows the key.
pub struct ApiKey {
    tenancy: String,
    user: String,
    fingerprint: String,
    key: RsaKeyPair,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("key_id", &self.key_id())
            .finish_non_exhaustive()
    }
}

fn pem_der(pem: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin)? + begin.len();
    let stop = pem[start..].find(&end)? + start;
    let body: String = pem[start..stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    STANDARD.decode(body).ok()
}

impl ApiKey {
    /// The key in `pem` (PKCS#8 or PKCS#1, unencrypted) for `tenancy`'s `user`, whose public
    /// key has `fingerprint` (`aa:bb:…`, as the console shows it).
    ///
    /// # Errors
    /// [`SignerError::Key`] when it is not such a key.
    pub fn from_pem(
        pem: &str,
        tenancy: &str,
        user: &str,
        fingerprint: &str,
    ) -> Result<Self, SignerError> {
        if pem.contains("ENCRYPTED") {
            return Err(SignerError::Key(
                "it is encrypted; give the key without its pass phrase".into(),
            ));
        }
        let key = if let Some(der) = pem_der(pem, "PRIVATE KEY") {
            RsaKeyPair::from_pkcs8(&der).map_err(|e| SignerError::Key(e.to_string()))?
        } else if let Some(der) = pem_der(pem, "RSA PRIVATE KEY") {
            RsaKeyPair::from_der(&der).map_err(|e| SignerError::Key(e.to_string()))?
        } else {
            return Err(SignerError::Key("no PEM block found".into()));
        };
        Ok(Self {
            tenancy: tenancy.to_string(),
            user: user.to_string(),
            fingerprint: fingerprint.to_string(),
            key,
        })
    }

    /// `<tenancy>/<user>/<fingerprint>`.
    pub fn key_id(&self) -> String {
        format!("{}/{}/{}", self.tenancy, self.user, self.fingerprint)
    }
}

/// What a request to sign is.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The method (any case).
    pub method: &'a str,
    /// The whole URL, its path and query as they will be sent.
    pub url: &'a str,
    /// The body (PUT, POST, PATCH; `None` is the empty body).
    pub body: Option<&'a [u8]>,
    /// `content-type` (the SDKs send `application/json`).
    pub content_type: &'a str,
    /// `date`, as HTTP writes it (`Tue, 01 Dec 2026 21:00:00 GMT`).
    pub date: &'a str,
}

/// The host (with a port other than the scheme's) and the path and query of `url`.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let (host, path) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = host
        .strip_suffix(":443")
        .filter(|_| url.starts_with("https://"))
        .or_else(|| {
            host.strip_suffix(":80")
                .filter(|_| url.starts_with("http://"))
        })
        .unwrap_or(host);
    (!host.is_empty()).then_some((host, path))
}

/// The headers a signed request carries: `date`, `host`, for PUT/POST/PATCH
/// `content-length`, `content-type` and `x-content-sha256`, and `authorization`, in that order.
///
/// # Errors
/// A URL without a host, a method OCI does not sign, a key ring refuses.
pub fn sign(
    key: &ApiKey,
    request: &Request<'_>,
) -> Result<Vec<(&'static str, String)>, SignerError> {
    let method = request.method.to_ascii_lowercase();
    let with_body = match method.as_str() {
        "get" | "head" | "delete" => false,
        "put" | "post" | "patch" => true,
        _ => return Err(SignerError::Method(request.method.to_string())),
    };
    let (host, path) =
        split_url(request.url).ok_or_else(|| SignerError::Url(request.url.into()))?;
    let mut headers: Vec<(&'static str, String)> = vec![
        ("date", request.date.to_string()),
        ("(request-target)", format!("{method} {path}")),
        ("host", host.to_string()),
    ];
    if with_body {
        let body = request.body.unwrap_or_default();
        let digest = ring::digest::digest(&ring::digest::SHA256, body);
        headers.push(("content-length", body.len().to_string()));
        headers.push(("content-type", request.content_type.to_string()));
        headers.push(("x-content-sha256", STANDARD.encode(digest.as_ref())));
    }
    let signing_string = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut signature = vec![0u8; key.key.public().modulus_len()];
    key.key
        .sign(
            &RSA_PKCS1_SHA256,
            &SystemRandom::new(),
            signing_string.as_bytes(),
            &mut signature,
        )
        .map_err(|_| SignerError::Sign)?;
    let names: Vec<&str> = headers.iter().map(|(k, _)| *k).collect();
    let authorization = format!(
        "Signature algorithm=\"rsa-sha256\",headers=\"{}\",keyId=\"{}\",signature=\"{}\",version=\"1\"",
        names.join(" "),
        key.key_id(),
        STANDARD.encode(&signature)
    );
    headers.retain(|(k, _)| *k != "(request-target)");
    headers.push(("authorization", authorization));
    Ok(headers)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_as_the_sdk_reads_them() {
        assert_eq!(
            split_url("https://h.example.com/20180222/clusters?a=1"),
            Some(("h.example.com", "/20180222/clusters?a=1"))
        );
        assert_eq!(
            split_url("https://h.example.com"),
            Some(("h.example.com", "/"))
        );
        assert_eq!(
            split_url("http://127.0.0.1:8080/x"),
            Some(("127.0.0.1:8080", "/x"))
        );
        assert_eq!(split_url("https://h:443/x"), Some(("h", "/x")));
        assert_eq!(split_url("ftp://h/x"), None);
    }

    #[test]
    fn a_bad_key_or_method_is_refused_with_a_reason() {
        assert!(matches!(
            ApiKey::from_pem("not a key", "t", "u", "f"),
            Err(SignerError::Key(_))
        ));
        assert!(matches!(
            ApiKey::from_pem(
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAA\n-----END ENCRYPTED PRIVATE KEY-----",
                "t",
                "u",
                "f"
            ),
            Err(SignerError::Key(_))
        ));
    }
}
