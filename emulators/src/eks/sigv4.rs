//! SigV4 verification of EKS API requests (`Authorization: AWS4-HMAC-SHA256 Credential=…`), as
//! AWS checks every call: the access key must be known, the scope must be for `eks` in this
//! region, the date recent, and the signature must match the one recomputed with the key's secret.
//!
//! The canonical request follows the SigV4 rules for services other than S3: the URI path as sent
//! (already percent-encoded by the client) is percent-encoded once more, query parameters are
//! decoded, re-encoded with the RFC 3986 unreserved set and sorted, and the signed headers are
//! lower-cased with their values trimmed and inner whitespace collapsed.

use std::fmt::Write as _;

use axum::http::HeaderMap;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use ring::{digest, hmac};

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// RFC 3986 unreserved characters stay; everything else is percent-encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The same, keeping `/` (for paths).
const PATH: &AsciiSet = &UNRESERVED.remove(b'/');

/// How far the request's `X-Amz-Date` may be from the emulator's clock.
const MAX_SKEW_SECS: i64 = 15 * 60;

/// Why a request's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigError {
    /// No `Authorization` header.
    Missing,
    /// The access key id is not one the emulator knows.
    UnknownKey(String),
    /// Anything else: a malformed header, a wrong scope or date, a mismatching signature.
    Invalid(String),
}

/// The parts of an `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// The access key id.
    pub access_key_id: String,
    /// `yyyymmdd`.
    pub date: String,
    /// The region of the scope.
    pub region: String,
    /// The service of the scope.
    pub service: String,
    /// Lower-case signed header names, in the header's order.
    pub signed_headers: Vec<String>,
    /// Hex signature.
    pub signature: String,
}

/// Parses `AWS4-HMAC-SHA256 Credential=<akid>/<date>/<region>/<service>/aws4_request,
/// SignedHeaders=<a;b>, Signature=<hex>`.
pub fn parse_authorization(value: &str) -> Option<Authorization> {
    let rest = value.trim().strip_prefix(ALGORITHM)?.trim_start();
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k.trim() {
            "Credential" => credential = Some(v.trim()),
            "SignedHeaders" => signed = Some(v.trim()),
            "Signature" => signature = Some(v.trim()),
            _ => {}
        }
    }
    let mut scope = credential?.split('/');
    let auth = Authorization {
        access_key_id: scope.next()?.to_string(),
        date: scope.next()?.to_string(),
        region: scope.next()?.to_string(),
        service: scope.next()?.to_string(),
        signed_headers: signed?
            .split(';')
            .map(|h| h.trim().to_ascii_lowercase())
            .collect(),
        signature: signature?.to_ascii_lowercase(),
    };
    (scope.next() == Some("aws4_request")
        && scope.next().is_none()
        && !auth.access_key_id.is_empty())
    .then_some(auth)
}

/// The access key id in a request's `Authorization` header, if any.
pub fn access_key_id(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    parse_authorization(value).map(|a| a.access_key_id)
}

/// Verifies a request signed for `service` in `region`; returns the access key id.
///
/// # Errors
/// [`SigError`] saying why the signature is not acceptable.
#[allow(clippy::too_many_arguments)]
pub fn verify(
    method: &str,
    raw_path: &str,
    raw_query: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
    region: &str,
    service: &str,
    secret_of: &dyn Fn(&str) -> Option<String>,
    now: jiff::Timestamp,
) -> Result<String, SigError> {
    let value = headers.get("authorization").ok_or(SigError::Missing)?;
    let value = value
        .to_str()
        .map_err(|_| SigError::Invalid("Authorization header is not text".into()))?;
    let auth = parse_authorization(value).ok_or_else(|| {
        SigError::Invalid(
            "Authorization header requires Credential, SignedHeaders and Signature".into(),
        )
    })?;
    let secret = secret_of(&auth.access_key_id)
        .ok_or_else(|| SigError::UnknownKey(auth.access_key_id.clone()))?;
    if auth.service != service {
        return Err(SigError::Invalid(format!(
            "Credential should be scoped to correct service: '{service}'."
        )));
    }
    if auth.region != region {
        return Err(SigError::Invalid(format!(
            "Credential should be scoped to a valid region, not '{}'. Expected '{region}'.",
            auth.region
        )));
    }
    let amz_date = header(headers, "x-amz-date")
        .ok_or_else(|| SigError::Invalid("missing X-Amz-Date header".into()))?;
    let when = jiff::civil::DateTime::strptime("%Y%m%dT%H%M%SZ", &amz_date)
        .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC))
        .map(|z| z.timestamp())
        .map_err(|_| SigError::Invalid("X-Amz-Date is not yyyymmddThhmmssZ".into()))?;
    if (now.as_second() - when.as_second()).abs() > MAX_SKEW_SECS {
        return Err(SigError::Invalid(format!(
            "Signature expired: {amz_date} is not within 15 minutes of the server time"
        )));
    }
    if !amz_date.starts_with(&auth.date) {
        return Err(SigError::Invalid(
            "Date in Credential scope does not match YYYYMMDD from X-Amz-Date".into(),
        ));
    }
    if !auth.signed_headers.iter().any(|h| h == "host") {
        return Err(SigError::Invalid("'Host' must be a signed header".into()));
    }

    let mut canonical = format!(
        "{method}\n{}\n{}\n",
        canonical_path(raw_path),
        canonical_query(raw_query.unwrap_or(""))
    );
    for name in &auth.signed_headers {
        let values: Vec<String> = headers
            .get_all(name.as_str())
            .iter()
            .map(|v| {
                String::from_utf8_lossy(v.as_bytes())
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let _ = writeln!(canonical, "{name}:{}", values.join(","));
    }
    canonical.push('\n');
    canonical.push_str(&auth.signed_headers.join(";"));
    canonical.push('\n');
    let payload = header(headers, "x-amz-content-sha256")
        .unwrap_or_else(|| hex::encode(digest::digest(&digest::SHA256, body)));
    canonical.push_str(&payload);

    let scope = format!(
        "{}/{}/{}/aws4_request",
        auth.date, auth.region, auth.service
    );
    let to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex::encode(digest::digest(&digest::SHA256, canonical.as_bytes()))
    );
    let key = signing_key(&secret, &auth.date, &auth.region, &auth.service);
    let signature = hex::decode(&auth.signature).map_err(|_| mismatch())?;
    hmac::verify(&key, to_sign.as_bytes(), &signature).map_err(|_| mismatch())?;
    Ok(auth.access_key_id)
}

fn mismatch() -> SigError {
    SigError::Invalid(
        "The request signature we calculated does not match the signature you provided. \
         Check your AWS Secret Access Key and signing method."
            .into(),
    )
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
}

/// The path as sent, encoded once more (the SigV4 "double encoding" of non-S3 services).
fn canonical_path(raw: &str) -> String {
    if raw.is_empty() {
        return "/".into();
    }
    utf8_percent_encode(raw, PATH).to_string()
}

fn canonical_query(raw: &str) -> String {
    let mut pairs: Vec<(String, String)> = raw
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (encode(&decode(k)), encode(&decode(v)))
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

fn encode(s: &str) -> String {
    utf8_percent_encode(s, UNRESERVED).to_string()
}

fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> hmac::Key {
    let mut key = format!("AWS4{secret}").into_bytes();
    for part in [date, region, service, "aws4_request"] {
        let k = hmac::Key::new(hmac::HMAC_SHA256, &key);
        key = hmac::sign(&k, part.as_bytes()).as_ref().to_vec();
    }
    hmac::Key::new(hmac::HMAC_SHA256, &key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_header_parses_into_its_scope() {
        let a = parse_authorization(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/eks/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
        )
        .unwrap();
        assert_eq!(a.access_key_id, "AKIDEXAMPLE");
        assert_eq!(
            (a.date.as_str(), a.region.as_str(), a.service.as_str()),
            ("20150830", "us-east-1", "eks")
        );
        assert_eq!(a.signed_headers, ["content-type", "host", "x-amz-date"]);
        assert!(parse_authorization("Bearer x").is_none());
        assert!(
            parse_authorization(
                "AWS4-HMAC-SHA256 Credential=A/B/C/D/other, SignedHeaders=host, Signature=00"
            )
            .is_none()
        );
    }

    /// The signing example of the AWS General Reference ("GET /?Param2=value2&Param1=value1").
    #[test]
    fn a_published_example_signature_verifies() {
        let mut headers = HeaderMap::new();
        headers.insert("host", "example.amazonaws.com".parse().unwrap());
        headers.insert("x-amz-date", "20150830T123600Z".parse().unwrap());
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
                .parse()
                .unwrap(),
        );
        let now: jiff::Timestamp = "2015-08-30T12:36:00Z".parse().unwrap();
        let secret = |k: &str| {
            (k == "AKIDEXAMPLE").then(|| "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".to_string())
        };
        let ok = verify(
            "GET",
            "/",
            Some("Param2=value2&Param1=value1"),
            &headers,
            b"",
            "us-east-1",
            "service",
            &secret,
            now,
        );
        assert_eq!(ok, Ok("AKIDEXAMPLE".to_string()));
        let tampered = verify(
            "GET",
            "/",
            Some("Param2=value3&Param1=value1"),
            &headers,
            b"",
            "us-east-1",
            "service",
            &secret,
            now,
        );
        assert!(matches!(tampered, Err(SigError::Invalid(_))));
        let unknown = |_: &str| None;
        let refused = verify(
            "GET",
            "/",
            Some("Param2=value2&Param1=value1"),
            &headers,
            b"",
            "us-east-1",
            "service",
            &unknown,
            now,
        );
        assert_eq!(refused, Err(SigError::UnknownKey("AKIDEXAMPLE".into())));
    }

    #[test]
    fn paths_are_encoded_once_more_and_queries_sorted() {
        assert_eq!(
            canonical_path("/tags/arn%3Aaws%3Aeks"),
            "/tags/arn%253Aaws%253Aeks"
        );
        assert_eq!(
            canonical_query("tagKeys=b&tagKeys=a&maxResults=5"),
            "maxResults=5&tagKeys=a&tagKeys=b"
        );
    }
}
