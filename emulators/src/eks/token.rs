//! The EKS authentication token, as `aws eks get-token` and aws-iam-authenticator mint it, and its
//! verification as EKS performs it, without calling STS.
//!
//! A token is `k8s-aws-v1.` followed by the unpadded base64url encoding of a SigV4 presigned URL
//! for STS `GetCallerIdentity`:
//!
//! ```text
//! https://sts.<region>.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15
//!   &X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=<akid>%2F<yyyymmdd>%2F<region>%2Fsts%2Faws4_request
//!   &X-Amz-Date=<yyyymmddThhmmssZ>&X-Amz-Expires=<secs>&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id
//!   [&X-Amz-Security-Token=<session token>]&X-Amz-Signature=<hex>
//! ```
//!
//! The header `x-k8s-aws-id: <cluster name>` is signed but not carried in the URL: the verifier
//! supplies its own cluster name when it recomputes the signature, so a token minted for another
//! cluster fails exactly like a token signed with a wrong secret.
//!
//! Real EKS forwards the URL to STS, which checks the signature. This emulator recomputes the
//! signature itself from the secret of the access key (which the emulator's credential store knows)
//! and applies the same pre-checks as aws-iam-authenticator's server
//! (`kubernetes-sigs/aws-iam-authenticator`, `pkg/token/token.go`, `tokenVerifier.Verify`):
//! at most 4 KiB, the `k8s-aws-v1.` prefix, raw base64url, scheme `https`, an STS host of the
//! `aws` partition, path `/`, only the whitelisted query parameters and each once, action
//! `GetCallerIdentity`, `x-k8s-aws-id` among the signed headers, `X-Amz-Expires` an integer in
//! `0..=900`, and expiry 15 minutes after `X-Amz-Date` whatever `X-Amz-Expires` says.
//!
//! The canonical request STS verifies for such a URL (SigV4 query-string authentication):
//!
//! ```text
//! GET
//! /
//! <every query parameter but X-Amz-Signature: name and value RFC 3986-encoded, sorted, joined by &>
//! host:<host>
//! x-k8s-aws-id:<cluster name>
//!
//! host;x-k8s-aws-id
//! e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
//! ```
//!
//! The payload hash is the SHA-256 of the empty body, not `UNSIGNED-PAYLOAD`: `UNSIGNED-PAYLOAD` is
//! an S3 convention (botocore uses it only in `S3SigV4QueryAuth`; its generic `SigV4QueryAuth`, used
//! by `aws eks get-token`, and aws-sdk-go's presigner both hash the empty body), and STS rejects
//! presigned `GetCallerIdentity` URLs signed with `UNSIGNED-PAYLOAD` (rusoto/rusoto#1439). A signer
//! built on the Rust `aws-sigv4` crate must therefore pass `SignableBody::Bytes(&[])`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::{SignedDuration, Timestamp};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use ring::{digest, hmac};

/// The prefix of every EKS token.
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";

/// The signed header carrying the cluster name.
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";

/// How long a token is valid after its `X-Amz-Date`, whatever its `X-Amz-Expires` says
/// (aws-iam-authenticator `pkg/token/token.go`, `presignedURLExpiration`: presigned STS URLs are
/// valid for 15 minutes after the timestamp in `x-amz-date`).
pub const TOKEN_LIFETIME: SignedDuration = SignedDuration::from_mins(15);

/// How far in the future an `X-Amz-Date` may lie before the token is refused as not yet valid
/// (AWS refuses a signature "not yet current" beyond five minutes of clock skew).
pub const MAX_CLOCK_SKEW: SignedDuration = SignedDuration::from_mins(5);

/// The largest token accepted, in bytes (aws-iam-authenticator `maxTokenLenBytes`).
pub const MAX_TOKEN_LEN: usize = 4096;

/// The largest `X-Amz-Expires` accepted, in seconds (aws-iam-authenticator checks `0..=900`).
pub const MAX_EXPIRES_SECS: u64 = 900;

/// The account the emulator attributes every access key to (moto's default account as well).
pub const DEFAULT_ACCOUNT_ID: &str = "123456789012";

/// SHA-256 of the empty string: the payload hash of a presigned STS request.
const EMPTY_PAYLOAD_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The query parameters a token may carry, lower-cased (aws-iam-authenticator
/// `parameterWhitelist`).
const ALLOWED_PARAMETERS: [&str; 9] = [
    "action",
    "version",
    "x-amz-algorithm",
    "x-amz-credential",
    "x-amz-date",
    "x-amz-expires",
    "x-amz-security-token",
    "x-amz-signature",
    "x-amz-signedheaders",
];

/// RFC 3986 unreserved characters stay; everything else is percent-encoded (upper-case hex).
const SIGV4_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Who signed a verified token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerIdentity {
    /// The access key id that signed the token.
    pub access_key_id: String,
    /// The account the key belongs to ([`DEFAULT_ACCOUNT_ID`]).
    pub account_id: String,
    /// The caller's ARN, `arn:aws:iam::<account>:user/<access key id>`.
    pub arn: String,
    /// Whether the token carried a session token (temporary credentials).
    pub has_session_token: bool,
}

/// Why a token was refused. Messages never include the secret, the signature or the token itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Longer than [`MAX_TOKEN_LEN`].
    #[error("token is too large ({0} bytes, at most {MAX_TOKEN_LEN})")]
    TooLong(usize),
    /// Does not start with `k8s-aws-v1.`.
    #[error("token is missing the expected \"k8s-aws-v1.\" prefix")]
    MissingPrefix,
    /// The part after the prefix is not unpadded base64url of UTF-8 text.
    #[error("token is not base64url-encoded (unpadded) UTF-8")]
    NotBase64,
    /// The decoded text is not an `https://<host>/?<query>` URL.
    #[error("pre-signed URL is malformed: {0}")]
    MalformedUrl(&'static str),
    /// The URL's host is not an STS endpoint of the `aws` partition.
    #[error("unexpected hostname {0:?} in pre-signed URL")]
    NotSts(String),
    /// A query parameter outside the whitelist.
    #[error("non-whitelisted query parameter {0:?}")]
    UnexpectedParameter(String),
    /// A query parameter given twice (names compared case-insensitively).
    #[error("duplicate query parameter {0:?}")]
    DuplicateParameter(String),
    /// A required query parameter is missing.
    #[error("missing query parameter {0}")]
    MissingParameter(&'static str),
    /// `Action` is not `GetCallerIdentity`.
    #[error("unexpected action parameter in pre-signed URL")]
    WrongAction,
    /// `X-Amz-Algorithm` is not `AWS4-HMAC-SHA256`.
    #[error("unsupported signing algorithm (want AWS4-HMAC-SHA256)")]
    UnsupportedAlgorithm,
    /// `x-k8s-aws-id` is not among the signed headers.
    #[error("client did not sign the x-k8s-aws-id header in the pre-signed URL")]
    ClusterIdNotSigned,
    /// Headers other than `host` and `x-k8s-aws-id` are signed; the verifier cannot reproduce them.
    #[error("unsupported signed headers {0:?} (only host and x-k8s-aws-id)")]
    UnsupportedSignedHeaders(String),
    /// `X-Amz-Credential` is not `<akid>/<date>/<region>/sts/aws4_request` for this host and date.
    #[error("invalid credential scope: {0}")]
    BadCredentialScope(&'static str),
    /// `X-Amz-Date` is not `yyyymmddThhmmssZ`.
    #[error("invalid X-Amz-Date parameter in pre-signed URL")]
    BadDate,
    /// `X-Amz-Expires` is not an integer in `0..=900`.
    #[error("invalid X-Amz-Expires parameter in pre-signed URL (want 0..=900 seconds)")]
    BadExpires,
    /// `X-Amz-Date` lies further in the future than [`MAX_CLOCK_SKEW`].
    #[error("X-Amz-Date {date} is in the future (now {now})")]
    NotYetValid {
        /// The token's `X-Amz-Date`.
        date: Timestamp,
        /// The verifier's clock.
        now: Timestamp,
    },
    /// More than the token lifetime ([`TOKEN_LIFETIME`] unless configured) has passed since
    /// `X-Amz-Date`.
    #[error("token expired at {expired_at} ({lifetime:#} after X-Amz-Date; now {now})")]
    Expired {
        /// `X-Amz-Date` plus the lifetime.
        expired_at: Timestamp,
        /// The lifetime in force.
        lifetime: SignedDuration,
        /// The verifier's clock.
        now: Timestamp,
    },
    /// The access key id is not known to the emulator.
    #[error("the access key id {0:?} is not known")]
    UnknownAccessKey(String),
    /// The signature does not match: wrong secret, a tampered URL, or a token minted for another
    /// cluster (the cluster name is signed but not carried).
    #[error("signature does not match (wrong secret, altered URL, or a token for another cluster)")]
    SignatureMismatch,
}

/// Verifies an EKS token for `expected_cluster` at time `now`, looking the secret of the signing
/// access key up through `credentials`; tokens live [`TOKEN_LIFETIME`], as on EKS.
///
/// # Errors
/// A [`TokenError`] naming the first check that failed, in aws-iam-authenticator's order, then the
/// credential lookup and the signature.
pub fn verify(
    token: &str,
    expected_cluster: &str,
    credentials: &dyn Fn(&str) -> Option<String>,
    now: Timestamp,
) -> Result<CallerIdentity, TokenError> {
    verify_within(
        token,
        expected_cluster,
        credentials,
        now,
        TOKEN_LIFETIME,
        &[],
    )
}

/// [`verify`] with tokens living `lifetime` after their `X-Amz-Date` instead of EKS's fifteen
/// minutes (tests shorten it to watch a provider refresh its tokens), and presigned for the STS
/// endpoints `sts_endpoints` (`http://127.0.0.1:5000`: scheme and authority, as a client whose
/// STS calls go to a local STS presigns) besides AWS's own hosts. A token for such an endpoint
/// is checked like any other, its signature over that authority and its region taken from its
/// credential scope.
///
/// # Errors
/// As [`verify`]; [`TokenError::Expired`] once `lifetime` has passed.
pub fn verify_within(
    token: &str,
    expected_cluster: &str,
    credentials: &dyn Fn(&str) -> Option<String>,
    now: Timestamp,
    lifetime: SignedDuration,
    sts_endpoints: &[String],
) -> Result<CallerIdentity, TokenError> {
    let presigned = PresignedUrl::decode(token, sts_endpoints)?;
    let p = presigned.check_params()?;

    if p.expires > MAX_EXPIRES_SECS {
        return Err(TokenError::BadExpires);
    }
    if p.date > now + MAX_CLOCK_SKEW {
        return Err(TokenError::NotYetValid { date: p.date, now });
    }
    let expired_at = p.date.checked_add(lifetime).unwrap_or(Timestamp::MAX);
    if now > expired_at {
        return Err(TokenError::Expired {
            expired_at,
            lifetime,
            now,
        });
    }

    let secret = credentials(&p.scope.access_key_id)
        .ok_or_else(|| TokenError::UnknownAccessKey(p.scope.access_key_id.clone()))?;
    let canonical = canonical_request(
        "GET",
        "/",
        &presigned.canonical_query(),
        &[
            ("host", presigned.host.as_str()),
            (CLUSTER_ID_HEADER, expected_cluster),
        ],
        EMPTY_PAYLOAD_SHA256,
    );
    let to_sign = string_to_sign(&p.amz_date, &p.scope.scope(), &canonical);
    let key = signing_key(&secret, &p.scope.date, &p.scope.region, &p.scope.service);
    let signature = hex::decode(&p.signature).map_err(|_| TokenError::SignatureMismatch)?;
    // ring's verify compares in constant time.
    hmac::verify(&key, to_sign.as_bytes(), &signature)
        .map_err(|_| TokenError::SignatureMismatch)?;

    Ok(CallerIdentity {
        arn: format!(
            "arn:aws:iam::{DEFAULT_ACCOUNT_ID}:user/{}",
            p.scope.access_key_id
        ),
        account_id: DEFAULT_ACCOUNT_ID.to_string(),
        access_key_id: p.scope.access_key_id,
        has_session_token: p.has_session_token,
    })
}

/// When the token stops being accepted: its `X-Amz-Date` plus [`TOKEN_LIFETIME`]. `None` if the
/// token cannot be decoded. The signature is not checked.
pub fn expires_at(token: &str) -> Option<Timestamp> {
    let presigned = PresignedUrl::decode(token, &[]).ok()?;
    let date = presigned.param("x-amz-date")?;
    Some(parse_amz_date(date).ok()? + TOKEN_LIFETIME)
}

/// A decoded token: the URL's host and its query parameters, decoded, in their original order.
struct PresignedUrl {
    host: String,
    params: Vec<(String, String)>,
    /// Whether the host is one of the configured STS endpoints (not an AWS host).
    configured: bool,
}

/// The checked parameters of a token.
struct Params {
    amz_date: String,
    date: Timestamp,
    expires: u64,
    scope: Scope,
    signature: String,
    has_session_token: bool,
}

/// `X-Amz-Credential`: `<akid>/<yyyymmdd>/<region>/<service>/aws4_request`.
struct Scope {
    access_key_id: String,
    date: String,
    region: String,
    service: String,
}

impl Scope {
    fn scope(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.date, self.region, self.service
        )
    }
}

impl PresignedUrl {
    fn decode(token: &str, sts_endpoints: &[String]) -> Result<Self, TokenError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::TooLong(token.len()));
        }
        let encoded = token
            .strip_prefix(TOKEN_PREFIX)
            .ok_or(TokenError::MissingPrefix)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| TokenError::NotBase64)?;
        let url = String::from_utf8(bytes).map_err(|_| TokenError::NotBase64)?;
        Self::parse(&url, sts_endpoints)
    }

    fn parse(url: &str, sts_endpoints: &[String]) -> Result<Self, TokenError> {
        // A configured endpoint: its exact scheme and authority, then the path.
        let configured = sts_endpoints.iter().any(|e| {
            let e = e.trim_end_matches('/');
            e.contains("://")
                && url
                    .strip_prefix(e)
                    .is_some_and(|rest| rest.starts_with(['/', '?']))
        });
        let rest = if configured {
            url.split_once("://").map(|(_, rest)| rest).unwrap_or(url)
        } else {
            url.strip_prefix("https://")
                .ok_or(TokenError::MalformedUrl("scheme is not https"))?
        };
        if rest.contains('#') {
            return Err(TokenError::MalformedUrl("unexpected fragment"));
        }
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path_and_query) = rest.split_at(authority_end);
        if authority.contains('@') {
            return Err(TokenError::MalformedUrl("unexpected user information"));
        }
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        if path != "/" {
            return Err(TokenError::MalformedUrl("unexpected path"));
        }
        if !configured {
            check_sts_host(authority)?;
        }

        let mut params = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            params.push((form_decode(name)?, form_decode(value)?));
        }
        Ok(Self {
            host: authority.to_string(),
            params,
            configured,
        })
    }

    /// The value of a parameter, its name compared case-insensitively.
    fn param(&self, lower_name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(lower_name))
            .map(|(_, v)| v.as_str())
    }

    fn check_params(&self) -> Result<Params, TokenError> {
        let mut seen = BTreeSet::new();
        for (name, _) in &self.params {
            let lower = name.to_ascii_lowercase();
            if !ALLOWED_PARAMETERS.contains(&lower.as_str()) {
                return Err(TokenError::UnexpectedParameter(name.clone()));
            }
            if !seen.insert(lower) {
                return Err(TokenError::DuplicateParameter(name.clone()));
            }
        }
        if self.param("action") != Some("GetCallerIdentity") {
            return Err(TokenError::WrongAction);
        }
        let signed_headers = self
            .param("x-amz-signedheaders")
            .ok_or(TokenError::MissingParameter("X-Amz-SignedHeaders"))?;
        let signed: BTreeSet<String> = signed_headers
            .split(';')
            .map(str::to_ascii_lowercase)
            .collect();
        if !signed.contains(CLUSTER_ID_HEADER) {
            return Err(TokenError::ClusterIdNotSigned);
        }
        if signed.len() != 2 || !signed.contains("host") {
            return Err(TokenError::UnsupportedSignedHeaders(
                signed_headers.to_string(),
            ));
        }
        let expires = self
            .param("x-amz-expires")
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or(TokenError::BadExpires)?;
        let amz_date = self
            .param("x-amz-date")
            .ok_or(TokenError::MissingParameter("X-Amz-Date"))?;
        let date = parse_amz_date(amz_date)?;
        if self.param("x-amz-algorithm") != Some(ALGORITHM) {
            return Err(TokenError::UnsupportedAlgorithm);
        }
        let credential = self
            .param("x-amz-credential")
            .ok_or(TokenError::MissingParameter("X-Amz-Credential"))?;
        let scope = parse_scope(credential)?;
        if scope.date != amz_date[..8] {
            return Err(TokenError::BadCredentialScope(
                "date does not match X-Amz-Date",
            ));
        }
        if scope.service != "sts" {
            return Err(TokenError::BadCredentialScope("service is not sts"));
        }
        if !self.configured && scope.region != host_region(&self.host) {
            return Err(TokenError::BadCredentialScope(
                "region does not match the STS endpoint",
            ));
        }
        let signature = self
            .param("x-amz-signature")
            .ok_or(TokenError::MissingParameter("X-Amz-Signature"))?;
        Ok(Params {
            amz_date: amz_date.to_string(),
            date,
            expires,
            scope,
            signature: signature.to_string(),
            has_session_token: self.param("x-amz-security-token").is_some(),
        })
    }

    /// Every parameter but `X-Amz-Signature`, name and value SigV4-encoded, sorted by name then
    /// value, joined with `&`.
    fn canonical_query(&self) -> String {
        let mut pairs: Vec<(String, String)> = self
            .params
            .iter()
            .filter(|(n, _)| n != "X-Amz-Signature")
            .map(|(n, v)| (sigv4_encode(n), sigv4_encode(v)))
            .collect();
        pairs.sort();
        let mut out = String::new();
        for (i, (n, v)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            let _ = write!(out, "{n}={v}");
        }
        out
    }
}

/// Accepts the hosts aws-iam-authenticator accepts for the `aws` partition: the global endpoint
/// `sts.amazonaws.com` and the regional ones `sts.<region>.amazonaws.com`, their FIPS variants
/// `sts-fips.<region>.amazonaws.com` and the dual-stack `sts.<region>.api.aws`. No port.
fn check_sts_host(host: &str) -> Result<(), TokenError> {
    let bad = || TokenError::NotSts(host.to_string());
    if host == "sts.amazonaws.com" {
        return Ok(());
    }
    let (service, rest) = host.split_once('.').ok_or_else(bad)?;
    let (region, domain) = rest.split_once('.').ok_or_else(bad)?;
    let service_ok = service == "sts" || (service == "sts-fips" && domain == "amazonaws.com");
    let domain_ok = domain == "amazonaws.com" || domain == "api.aws";
    if service_ok && domain_ok && valid_region(region) {
        Ok(())
    } else {
        Err(bad())
    }
}

/// The signing region an STS host implies (`us-east-1` for the global endpoint).
fn host_region(host: &str) -> &str {
    if host == "sts.amazonaws.com" {
        return "us-east-1";
    }
    host.split('.').nth(1).unwrap_or_default()
}

/// Letters, digits and inner hyphens, as the AWS SDK validates region identifiers.
fn valid_region(region: &str) -> bool {
    !region.is_empty()
        && !region.starts_with('-')
        && !region.ends_with('-')
        && region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn parse_scope(credential: &str) -> Result<Scope, TokenError> {
    let parts: Vec<&str> = credential.split('/').collect();
    let [akid, date, region, service, terminator] = parts[..] else {
        return Err(TokenError::BadCredentialScope(
            "want <access key id>/<date>/<region>/<service>/aws4_request",
        ));
    };
    if akid.is_empty() || terminator != "aws4_request" {
        return Err(TokenError::BadCredentialScope(
            "want <access key id>/<date>/<region>/<service>/aws4_request",
        ));
    }
    Ok(Scope {
        access_key_id: akid.to_string(),
        date: date.to_string(),
        region: region.to_string(),
        service: service.to_string(),
    })
}

/// Parses `yyyymmddThhmmssZ` (UTC).
fn parse_amz_date(s: &str) -> Result<Timestamp, TokenError> {
    if s.len() != 16 || !s.is_ascii() {
        return Err(TokenError::BadDate);
    }
    jiff::civil::DateTime::strptime("%Y%m%dT%H%M%SZ", s)
        .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC))
        .map(|z| z.timestamp())
        .map_err(|_| TokenError::BadDate)
}

/// Decodes a query component as Go's `url.ParseQuery` does: `+` is a space, `%XX` a byte.
fn form_decode(s: &str) -> Result<String, TokenError> {
    // A '%' not followed by two hex digits is kept as is by percent_decode; Go refuses it.
    if has_bad_escape(s) {
        return Err(TokenError::MalformedUrl("malformed query parameter"));
    }
    let spaced = s.replace('+', " ");
    let bytes: Vec<u8> = percent_decode_str(&spaced).collect();
    String::from_utf8(bytes).map_err(|_| TokenError::MalformedUrl("malformed query parameter"))
}

fn has_bad_escape(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(hex(i + 1) && hex(i + 2)) {
                return true;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    false
}

fn sigv4_encode(s: &str) -> String {
    utf8_percent_encode(s, SIGV4_ENCODE).to_string()
}

/// The SigV4 canonical request. `headers` are (lower-case name, value) pairs; they are sorted and
/// their values trimmed with inner runs of spaces collapsed.
fn canonical_request(
    method: &str,
    path: &str,
    canonical_query: &str,
    headers: &[(&str, &str)],
    payload_hash: &str,
) -> String {
    let mut sorted: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| {
            (
                n.to_ascii_lowercase(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    sorted.sort();
    let mut out = format!("{method}\n{path}\n{canonical_query}\n");
    for (n, v) in &sorted {
        let _ = writeln!(out, "{n}:{v}");
    }
    out.push('\n');
    let names: Vec<&str> = sorted.iter().map(|(n, _)| n.as_str()).collect();
    out.push_str(&names.join(";"));
    out.push('\n');
    out.push_str(payload_hash);
    out
}

fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    let hash = digest::digest(&digest::SHA256, canonical_request.as_bytes());
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex::encode(hash.as_ref())
    )
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> hmac::Key {
    let step = |key: &[u8], data: &str| {
        hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
    };
    let k_date = step(format!("AWS4{secret}").as_bytes(), date);
    let k_region = step(k_date.as_ref(), region);
    let k_service = step(k_region.as_ref(), service);
    let k_signing = step(k_service.as_ref(), "aws4_request");
    hmac::Key::new(hmac::HMAC_SHA256, k_signing.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AKID: &str = "AKIDEXAMPLE";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    /// Our own presigner, for unit tests only (the integration tests sign with `aws-sigv4`).
    fn mint(host: &str, region: &str, cluster: &str, at: &str, extra: &[(&str, &str)]) -> String {
        mint_for(&format!("https://{host}"), region, cluster, at, extra)
    }

    /// [`mint`] for an endpoint given as `scheme://authority`.
    fn mint_for(
        origin: &str,
        region: &str,
        cluster: &str,
        at: &str,
        extra: &[(&str, &str)],
    ) -> String {
        let host = origin.split_once("://").map_or(origin, |(_, a)| a);
        let mut params: Vec<(String, String)> = vec![
            ("Action".into(), "GetCallerIdentity".into()),
            ("Version".into(), "2011-06-15".into()),
            ("X-Amz-Algorithm".into(), ALGORITHM.into()),
            (
                "X-Amz-Credential".into(),
                format!("{AKID}/{}/{region}/sts/aws4_request", &at[..8]),
            ),
            ("X-Amz-Date".into(), at.into()),
            ("X-Amz-Expires".into(), "60".into()),
            ("X-Amz-SignedHeaders".into(), "host;x-k8s-aws-id".into()),
        ];
        for (n, v) in extra {
            params.push(((*n).into(), (*v).into()));
        }
        let url = PresignedUrl {
            host: host.into(),
            params: params.clone(),
            configured: false,
        };
        let canonical = canonical_request(
            "GET",
            "/",
            &url.canonical_query(),
            &[("host", host), (CLUSTER_ID_HEADER, cluster)],
            EMPTY_PAYLOAD_SHA256,
        );
        let scope = format!("{}/{region}/sts/aws4_request", &at[..8]);
        let key = signing_key(SECRET, &at[..8], region, "sts");
        let sig = hmac::sign(&key, string_to_sign(at, &scope, &canonical).as_bytes());
        let query: Vec<String> = params
            .iter()
            .map(|(n, v)| format!("{}={}", sigv4_encode(n), sigv4_encode(v)))
            .collect();
        let url = format!(
            "{origin}/?{}&X-Amz-Signature={}",
            query.join("&"),
            hex::encode(sig.as_ref())
        );
        format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(url))
    }

    fn creds(akid: &str) -> Option<String> {
        (akid == AKID).then(|| SECRET.to_string())
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_published_presigned_url_example_signs_to_the_published_signature() {
        // The worked example of SigV4 query-string authentication in the Amazon S3 API reference
        // ("Authenticating Requests: Using Query Parameters"), which uses UNSIGNED-PAYLOAD.
        let url = PresignedUrl {
            host: "examplebucket.s3.amazonaws.com".into(),
            params: vec![
                ("X-Amz-Algorithm".into(), ALGORITHM.into()),
                (
                    "X-Amz-Credential".into(),
                    "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request".into(),
                ),
                ("X-Amz-Date".into(), "20130524T000000Z".into()),
                ("X-Amz-Expires".into(), "86400".into()),
                ("X-Amz-SignedHeaders".into(), "host".into()),
            ],
            configured: false,
        };
        let canonical = canonical_request(
            "GET",
            "/test.txt",
            &url.canonical_query(),
            &[("host", "examplebucket.s3.amazonaws.com")],
            "UNSIGNED-PAYLOAD",
        );
        let to_sign = string_to_sign(
            "20130524T000000Z",
            "20130524/us-east-1/s3/aws4_request",
            &canonical,
        );
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "20130524",
            "us-east-1",
            "s3",
        );
        assert_eq!(
            hex::encode(hmac::sign(&key, to_sign.as_bytes()).as_ref()),
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        );
    }

    #[test]
    fn a_token_for_a_configured_sts_endpoint_verifies_only_when_configured() {
        let at = "20250102T030405Z";
        let now = ts("2025-01-02T03:10:00Z");
        let local = vec!["http://127.0.0.1:5000".to_string()];
        // A client whose STS is moto signs over moto's authority, port included, with the
        // region of its session (no region in the host).
        let token = mint_for("http://127.0.0.1:5000", "us-west-2", "demo", at, &[]);
        let id = verify_within(&token, "demo", &creds, now, TOKEN_LIFETIME, &local).unwrap();
        assert_eq!(id.access_key_id, AKID);
        assert!(matches!(
            verify(&token, "demo", &creds, now),
            Err(TokenError::MalformedUrl(_))
        ));
        // Another port is another endpoint; the signature still binds the cluster.
        let other = mint_for("http://127.0.0.1:5001", "us-west-2", "demo", at, &[]);
        assert!(verify_within(&other, "demo", &creds, now, TOKEN_LIFETIME, &local).is_err());
        assert!(matches!(
            verify_within(&token, "other", &creds, now, TOKEN_LIFETIME, &local),
            Err(TokenError::SignatureMismatch)
        ));
        // A prefix of the authority is not the endpoint.
        let longer = mint_for("http://127.0.0.1:50001", "us-west-2", "demo", at, &[]);
        assert!(verify_within(&longer, "demo", &creds, now, TOKEN_LIFETIME, &local).is_err());
    }

    #[test]
    fn a_well_formed_token_verifies_and_names_its_access_key() {
        let token = mint(
            "sts.us-west-2.amazonaws.com",
            "us-west-2",
            "demo",
            "20250102T030405Z",
            &[],
        );
        let id = verify(&token, "demo", &creds, ts("2025-01-02T03:10:00Z")).unwrap();
        assert_eq!(id.access_key_id, AKID);
        assert_eq!(id.arn, "arn:aws:iam::123456789012:user/AKIDEXAMPLE");
        assert!(!id.has_session_token);
        assert_eq!(expires_at(&token), Some(ts("2025-01-02T03:19:05Z")));
    }

    #[test]
    fn a_session_token_with_reserved_characters_is_part_of_the_signature() {
        let token = mint(
            "sts.amazonaws.com",
            "us-east-1",
            "demo",
            "20250102T030405Z",
            &[("X-Amz-Security-Token", "FQo/Dd+x==")],
        );
        let id = verify(&token, "demo", &creds, ts("2025-01-02T03:04:05Z")).unwrap();
        assert!(id.has_session_token);
    }

    #[test]
    fn the_lifetime_is_fifteen_minutes_from_the_date_and_the_future_is_bounded() {
        let token = mint(
            "sts.us-west-2.amazonaws.com",
            "us-west-2",
            "demo",
            "20250102T030405Z",
            &[],
        );
        assert!(verify(&token, "demo", &creds, ts("2025-01-02T03:19:05Z")).is_ok());
        assert!(matches!(
            verify(&token, "demo", &creds, ts("2025-01-02T03:19:06Z")),
            Err(TokenError::Expired { .. })
        ));
        assert!(verify(&token, "demo", &creds, ts("2025-01-02T02:59:05Z")).is_ok());
        assert!(matches!(
            verify(&token, "demo", &creds, ts("2025-01-02T02:59:04Z")),
            Err(TokenError::NotYetValid { .. })
        ));
    }

    #[test]
    fn hosts_follow_the_aws_partition() {
        for ok in [
            "sts.amazonaws.com",
            "sts.eu-central-1.amazonaws.com",
            "sts-fips.us-east-2.amazonaws.com",
            "sts.us-west-2.api.aws",
        ] {
            assert!(check_sts_host(ok).is_ok(), "{ok}");
        }
        for bad in [
            "sts.amazonaws.com:443",
            "sts.us-west-2.amazonaws.com.evil.test",
            "evil.test",
            "s3.us-west-2.amazonaws.com",
            "sts.cn-north-1.amazonaws.com.cn",
            "sts..amazonaws.com",
            "127.0.0.1",
        ] {
            assert!(check_sts_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_credential_region_must_be_the_endpoint_region() {
        let token = mint(
            "sts.us-west-2.amazonaws.com",
            "us-east-1",
            "demo",
            "20250102T030405Z",
            &[],
        );
        assert!(matches!(
            verify(&token, "demo", &creds, ts("2025-01-02T03:05:00Z")),
            Err(TokenError::BadCredentialScope(_))
        ));
    }

    #[test]
    fn malformed_parts_are_named() {
        let now = ts("2025-01-02T03:05:00Z");
        let check = |url: &str| {
            verify(
                &format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(url)),
                "demo",
                &creds,
                now,
            )
        };
        assert_eq!(
            check("http://sts.amazonaws.com/?Action=GetCallerIdentity").unwrap_err(),
            TokenError::MalformedUrl("scheme is not https")
        );
        assert_eq!(
            check("https://sts.amazonaws.com/x?Action=GetCallerIdentity").unwrap_err(),
            TokenError::MalformedUrl("unexpected path")
        );
        assert_eq!(
            check("https://sts.amazonaws.com/?Action=AssumeRole").unwrap_err(),
            TokenError::WrongAction
        );
        assert_eq!(
            check("https://sts.amazonaws.com/?Action=GetCallerIdentity&Foo=1").unwrap_err(),
            TokenError::UnexpectedParameter("Foo".into())
        );
        assert_eq!(
            check("https://sts.amazonaws.com/?Action=GetCallerIdentity&action=GetCallerIdentity")
                .unwrap_err(),
            TokenError::DuplicateParameter("action".into())
        );
        assert_eq!(
            check("https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-SignedHeaders=host")
                .unwrap_err(),
            TokenError::ClusterIdNotSigned
        );
        assert_eq!(
            check("https://sts.amazonaws.com/?Action=%zz").unwrap_err(),
            TokenError::MalformedUrl("malformed query parameter")
        );
        assert_eq!(
            verify("k8s-aws-v1.***", "demo", &creds, now).unwrap_err(),
            TokenError::NotBase64
        );
        assert_eq!(
            verify("k8s-aws-v2.abc", "demo", &creds, now).unwrap_err(),
            TokenError::MissingPrefix
        );
        assert!(matches!(
            verify(&"k".repeat(MAX_TOKEN_LEN + 1), "demo", &creds, now),
            Err(TokenError::TooLong(_))
        ));
    }

    #[test]
    fn expires_over_fifteen_minutes_is_refused() {
        let token = mint(
            "sts.amazonaws.com",
            "us-east-1",
            "demo",
            "20250102T030405Z",
            &[],
        );
        let url = String::from_utf8(
            URL_SAFE_NO_PAD
                .decode(token.strip_prefix(TOKEN_PREFIX).unwrap())
                .unwrap(),
        )
        .unwrap()
        .replace("X-Amz-Expires=60", "X-Amz-Expires=901");
        let token = format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(url));
        assert_eq!(
            verify(&token, "demo", &creds, ts("2025-01-02T03:05:00Z")).unwrap_err(),
            TokenError::BadExpires
        );
    }

    #[test]
    fn error_messages_never_carry_the_secret_or_the_token() {
        let token = mint(
            "sts.amazonaws.com",
            "us-east-1",
            "demo",
            "20250102T030405Z",
            &[],
        );
        let wrong = |_: &str| Some("another-secret".to_string());
        let err = verify(&token, "demo", &wrong, ts("2025-01-02T03:05:00Z")).unwrap_err();
        assert_eq!(err, TokenError::SignatureMismatch);
        let text = err.to_string();
        assert!(!text.contains("another-secret") && !text.contains(SECRET));
        assert!(!text.contains(&token[TOKEN_PREFIX.len()..TOKEN_PREFIX.len() + 20]));
    }
}
