//! OCI's request signatures, checked as OCI's API gateway checks them (draft-cavage HTTP
//! signatures, `version="1"`, `algorithm="rsa-sha256"`), written apart from any signer so that a
//! wrong signer cannot pass its own check:
//!
//! - `authorization: Signature version="1",keyId="<tenancy>/<user>/<fingerprint>",algorithm="rsa-sha256",headers="…",signature="…"`
//!   (parameters in any order);
//! - the signed headers must include `date` (or `x-date`), `(request-target)` and `host`, and for
//!   PUT, POST and PATCH also `content-length`, `content-type` and `x-content-sha256`, whose
//!   values must match the body;
//! - the date must be within five minutes of now;
//! - the signing string is rebuilt from the request as received (the method in lower case, the
//!   path and query as sent) and the signature checked with the public key uploaded for the key
//!   id (RSASSA-PKCS1-v1_5, SHA-256).
//!
//! Every refusal is 401 `NotAuthenticated`; the reason goes to the emulator's log and, for the
//! caller, into OCI's own sentence.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::signature::{KeyPair as _, RSA_PKCS1_2048_8192_SHA256, RsaKeyPair, UnparsedPublicKey};

/// How a refusal for a stale date begins (OCI answers it in these words).
pub const SKEW_PREFIX: &str = "Date ";

/// How far a request's date may be from now.
pub const MAX_SKEW: Duration = Duration::from_secs(300);

/// Who signed a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The tenancy OCID.
    pub tenancy: String,
    /// The user OCID.
    pub user: String,
    /// The key's fingerprint.
    pub fingerprint: String,
}

impl Caller {
    /// The caller a signature's `keyId` (`<tenancy>/<user>/<fingerprint>`) names.
    ///
    /// # Errors
    /// When the key id is not of that form.
    pub fn of_key_id(key_id: &str) -> Result<Self, String> {
        let mut parts = key_id.split('/');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(tenancy), Some(user), Some(fingerprint), None) => Ok(Self {
                tenancy: tenancy.into(),
                user: user.into(),
                fingerprint: fingerprint.into(),
            }),
            _ => Err(format!(
                "keyId {key_id:?} is not <tenancy>/<user>/<fingerprint>"
            )),
        }
    }
}

/// An uploaded API signing key: its key id and its public key (PKCS#1 `RSAPublicKey`, DER).
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// `<tenancy>/<user>/<fingerprint>`.
    pub key_id: String,
    der: Vec<u8>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

fn pem_block(pem: &str, label: &str) -> Option<Vec<u8>> {
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

/// One DER element: `(tag, contents, rest)`.
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The DER of rsaEncryption's algorithm identifier.
const RSA_ALGORITHM: &[u8] = &[
    0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];

/// The `RSAPublicKey` inside a `SubjectPublicKeyInfo` of an RSA key.
fn spki_rsa(spki: &[u8]) -> Option<Vec<u8>> {
    let (0x30, body, _) = der(spki)? else {
        return None;
    };
    let (0x30, algorithm, rest) = der(body)? else {
        return None;
    };
    let (0x06, oid, _) = der(algorithm)? else {
        return None;
    };
    if oid != &RSA_ALGORITHM[4..13] {
        return None;
    }
    let (0x03, bits, _) = der(rest)? else {
        return None;
    };
    let (&0, key) = bits.split_first()? else {
        return None;
    };
    Some(key.to_vec())
}

fn der_len(len: usize) -> Vec<u8> {
    if len < 0x80 {
        return vec![len as u8];
    }
    let bytes: Vec<u8> = len
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

/// The `SubjectPublicKeyInfo` DER of a PKCS#1 RSA public key (what `openssl rsa -pubout`
/// writes and OCI fingerprints).
pub fn spki_of(pkcs1: &[u8]) -> Vec<u8> {
    let mut bits = vec![0x03];
    bits.extend(der_len(pkcs1.len() + 1));
    bits.push(0);
    bits.extend_from_slice(pkcs1);
    let mut body = RSA_ALGORITHM.to_vec();
    body.extend(bits);
    let mut out = vec![0x30];
    out.extend(der_len(body.len()));
    out.extend(body);
    out
}

/// OCI's fingerprint of a key: MD5 of its `SubjectPublicKeyInfo`, colon-separated hex.
pub fn fingerprint(pkcs1: &[u8]) -> String {
    use md5::Digest as _;
    let digest = md5::Md5::digest(spki_of(pkcs1));
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

impl PublicKey {
    /// A key from PEM: a public key (`PUBLIC KEY` or `RSA PUBLIC KEY`), or a private key
    /// (`PRIVATE KEY` or `RSA PRIVATE KEY`) whose public half is taken.
    ///
    /// # Errors
    /// When the PEM holds no RSA key.
    pub fn from_pem(key_id: &str, pem: &str) -> anyhow::Result<Self> {
        let der = if let Some(spki) = pem_block(pem, "PUBLIC KEY") {
            spki_rsa(&spki).ok_or_else(|| anyhow::anyhow!("not an RSA public key"))?
        } else if let Some(pkcs1) = pem_block(pem, "RSA PUBLIC KEY") {
            pkcs1
        } else if let Some(pkcs8) = pem_block(pem, "PRIVATE KEY") {
            RsaKeyPair::from_pkcs8(&pkcs8)
                .map_err(|e| anyhow::anyhow!("not an RSA private key: {e}"))?
                .public_key()
                .as_ref()
                .to_vec()
        } else if let Some(pkcs1) = pem_block(pem, "RSA PRIVATE KEY") {
            RsaKeyPair::from_der(&pkcs1)
                .map_err(|e| anyhow::anyhow!("not an RSA private key: {e}"))?
                .public_key()
                .as_ref()
                .to_vec()
        } else {
            anyhow::bail!("no PEM key found");
        };
        Ok(Self {
            key_id: key_id.to_string(),
            der,
        })
    }

    /// The key's OCI fingerprint.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.der)
    }
}

/// The keys the emulated tenancy has uploaded, by key id.
#[derive(Debug, Clone, Default)]
pub struct KeyRing {
    keys: BTreeMap<String, PublicKey>,
}

impl KeyRing {
    /// A ring of `keys`.
    pub fn new(keys: impl IntoIterator<Item = PublicKey>) -> Self {
        Self {
            keys: keys.into_iter().map(|k| (k.key_id.clone(), k)).collect(),
        }
    }

    /// Whether no key is uploaded (signatures are then checked in form only).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A request as received, for the check.
pub struct Received<'a> {
    /// The method.
    pub method: &'a str,
    /// The path and query, as sent.
    pub target: &'a str,
    /// A header's value by lower-case name.
    pub header: &'a dyn Fn(&str) -> Option<String>,
    /// The body.
    pub body: &'a [u8],
}

/// The parameters of a `Signature` authorization.
pub(super) fn parameters(authorization: &str) -> Result<BTreeMap<String, String>, String> {
    let rest = authorization
        .trim()
        .strip_prefix("Signature ")
        .ok_or("the authorization header is not an OCI Signature")?;
    let mut out = BTreeMap::new();
    let mut s = rest.trim();
    while !s.is_empty() {
        let (name, after) = s.split_once('=').ok_or("a malformed signature parameter")?;
        let after = after
            .strip_prefix('"')
            .ok_or("a signature parameter is not quoted")?;
        let end = after
            .find('"')
            .ok_or("an unterminated signature parameter")?;
        out.insert(name.trim().to_ascii_lowercase(), after[..end].to_string());
        s = after[end + 1..].trim_start_matches([',', ' ']);
    }
    Ok(out)
}

/// A `date` header (`Tue, 01 Dec 2026 21:00:00 GMT`) as a timestamp.
pub fn parse_http_date(text: &str) -> Option<jiff::Timestamp> {
    let dt = jiff::civil::DateTime::strptime("%a, %d %b %Y %H:%M:%S GMT", text.trim()).ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// Checks a request's signature; `Ok(None)` when no key is uploaded (the signature's form,
/// signed headers, date and body digest are checked; no key is).
///
/// # Errors
/// Why the request is not authenticated (for the log; never echoing the signature).
pub fn verify(
    keys: &KeyRing,
    request: &Received<'_>,
    now: jiff::Timestamp,
    max_age: Duration,
) -> Result<Option<Caller>, String> {
    let authorization =
        (request.header)("authorization").ok_or("no authorization header was sent")?;
    let params = parameters(&authorization)?;
    if let Some(v) = params.get("version").filter(|v| *v != "1") {
        return Err(format!("signature version {v:?} is not supported"));
    }
    match params.get("algorithm").map(String::as_str) {
        Some("rsa-sha256") => {}
        other => return Err(format!("algorithm {other:?} is not rsa-sha256")),
    }
    let key_id = params.get("keyid").ok_or("the signature has no keyId")?;
    let caller = Caller::of_key_id(key_id)?;
    let names: Vec<String> = params
        .get("headers")
        .map_or("date", String::as_str)
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let method = request.method.to_ascii_lowercase();
    let mut required = vec!["(request-target)", "host"];
    if matches!(method.as_str(), "put" | "post" | "patch") {
        required.extend(["content-length", "content-type", "x-content-sha256"]);
    }
    for name in required {
        if !names.iter().any(|n| n == name) {
            return Err(format!("the signed headers do not include {name}"));
        }
    }
    let date_name = if names.iter().any(|n| n == "x-date") {
        "x-date"
    } else if names.iter().any(|n| n == "date") {
        "date"
    } else {
        return Err("the signed headers include neither date nor x-date".into());
    };
    let date = (request.header)(date_name).ok_or(format!("no {date_name} header was sent"))?;
    let signed_at =
        parse_http_date(&date).ok_or(format!("the {date_name} header {date:?} is not a date"))?;
    let skew = now.duration_since(signed_at).unsigned_abs();
    if skew > max_age {
        let utc = |t: jiff::Timestamp| t.strftime("%a, %d %b %Y %H:%M:%S UTC").to_string();
        let span = jiff::SignedDuration::try_from(max_age).unwrap_or_default();
        return Err(format!(
            "{SKEW_PREFIX}'{date}' is not within allowed clock skew. Current '{}', valid datetime range: ['{}', '{}']",
            utc(now),
            utc(now - span),
            utc(now + span + jiff::SignedDuration::from_secs(1))
        ));
    }
    if names.iter().any(|n| n == "x-content-sha256") {
        let digest = ring::digest::digest(&ring::digest::SHA256, request.body);
        if (request.header)("x-content-sha256").as_deref()
            != Some(STANDARD.encode(digest.as_ref()).as_str())
        {
            return Err("x-content-sha256 does not match the body".into());
        }
    }
    if names.iter().any(|n| n == "content-length")
        && (request.header)("content-length").as_deref()
            != Some(request.body.len().to_string().as_str())
    {
        return Err("content-length does not match the body".into());
    }
    let mut lines = Vec::with_capacity(names.len());
    for name in &names {
        let value = if name == "(request-target)" {
            format!("{method} {}", request.target)
        } else {
            (request.header)(name).ok_or(format!("the signed header {name} was not sent"))?
        };
        lines.push(format!("{name}: {value}"));
    }
    if keys.is_empty() {
        return Ok(None);
    }
    let key = keys
        .keys
        .get(key_id)
        .ok_or(format!("no API key {key_id} is uploaded"))?;
    let signature = STANDARD
        .decode(params.get("signature").ok_or("the signature is missing")?)
        .map_err(|_| "the signature is not base64")?;
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &key.der)
        .verify(lines.join("\n").as_bytes(), &signature)
        .map_err(|_| format!("the signature does not verify with API key {key_id}"))?;
    Ok(Some(caller))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn spki_round_trips_and_dates_parse() {
        let pkcs1 = vec![0x30, 0x03, 0x02, 0x01, 0x05];
        assert_eq!(spki_rsa(&spki_of(&pkcs1)), Some(pkcs1));
        let t = parse_http_date("Tue, 01 Dec 2026 21:00:00 GMT").unwrap();
        assert_eq!(t.to_string(), "2026-12-01T21:00:00Z");
        assert!(parse_http_date("2026-12-01").is_none());
    }

    #[test]
    fn authorization_parameters_parse_in_any_order() {
        let p = parameters(r#"Signature version="1",headers="date (request-target) host",keyId="t/u/f",algorithm="rsa-sha256",signature="YWJj""#).unwrap();
        assert_eq!(p["keyid"], "t/u/f");
        assert_eq!(p["headers"], "date (request-target) host");
        assert!(parameters("Bearer x").is_err());
    }
}
