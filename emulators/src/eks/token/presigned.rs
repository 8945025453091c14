//! The presigned URL inside a token: decoded, its host and query parameters checked as
//! aws-iam-authenticator checks them, and the SigV4 canonical request, string to sign and signing
//! key STS would compute for it.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use ring::{digest, hmac};

use super::{ALGORITHM, CLUSTER_ID_HEADER, MAX_TOKEN_LEN, TOKEN_PREFIX, TokenError};

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

/// A decoded token: the URL's host and its query parameters, decoded, in their original order.
pub(super) struct PresignedUrl {
    pub(super) host: String,
    pub(super) params: Vec<(String, String)>,
    /// Whether the host is one of the configured STS endpoints (not an AWS host).
    pub(super) configured: bool,
}

/// The checked parameters of a token.
pub(super) struct Params {
    pub(super) amz_date: String,
    pub(super) date: Timestamp,
    pub(super) expires: u64,
    pub(super) scope: Scope,
    pub(super) signature: String,
    pub(super) has_session_token: bool,
}

/// `X-Amz-Credential`: `<akid>/<yyyymmdd>/<region>/<service>/aws4_request`.
pub(super) struct Scope {
    pub(super) access_key_id: String,
    pub(super) date: String,
    pub(super) region: String,
    pub(super) service: String,
}

impl Scope {
    pub(super) fn scope(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.date, self.region, self.service
        )
    }
}

impl PresignedUrl {
    pub(super) fn decode(token: &str, sts_endpoints: &[String]) -> Result<Self, TokenError> {
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
    pub(super) fn param(&self, lower_name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(lower_name))
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn check_params(&self) -> Result<Params, TokenError> {
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
    pub(super) fn canonical_query(&self) -> String {
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
pub(super) fn check_sts_host(host: &str) -> Result<(), TokenError> {
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
pub(super) fn parse_amz_date(s: &str) -> Result<Timestamp, TokenError> {
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

pub(super) fn sigv4_encode(s: &str) -> String {
    utf8_percent_encode(s, SIGV4_ENCODE).to_string()
}

/// The SigV4 canonical request. `headers` are (lower-case name, value) pairs; they are sorted and
/// their values trimmed with inner runs of spaces collapsed.
pub(super) fn canonical_request(
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

pub(super) fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    let hash = digest::digest(&digest::SHA256, canonical_request.as_bytes());
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex::encode(hash.as_ref())
    )
}

/// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
pub(super) fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> hmac::Key {
    let step = |key: &[u8], data: &str| {
        hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
    };
    let k_date = step(format!("AWS4{secret}").as_bytes(), date);
    let k_region = step(k_date.as_ref(), region);
    let k_service = step(k_region.as_ref(), service);
    let k_signing = step(k_service.as_ref(), "aws4_request");
    hmac::Key::new(hmac::HMAC_SHA256, k_signing.as_ref())
}
