//! The bearer token of `<cluster>-kubeconfig`, made as `oci ce cluster generate-token` makes it:
//! a GET of `https://containerengine.<region>.oraclecloud.com/cluster_request/<cluster OCID>`
//! signed with the user's API key (`date (request-target) host`), the signature's
//! `authorization` and `date` appended as form-encoded query parameters, the whole URL
//! base64url-encoded with padding. A cluster accepts it while its date is within OCI's clock
//! skew (five minutes); the CLI's ExecCredential expires after four.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE;
use oci_signer::{ApiKey, Request, sign};

use super::{HTTP_DATE, http_date};

/// The host the CLI signs for in `region` (without the `.oci.` of the API host).
pub fn token_host(region: &str) -> String {
    format!("containerengine.{region}.oraclecloud.com")
}

/// `application/x-www-form-urlencoded` of one value.
fn form(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A token for `cluster` in `region`, dated `now`.
///
/// # Errors
/// When the key cannot sign.
pub fn cluster_token(
    key: &ApiKey,
    region: &str,
    cluster: &str,
    now: jiff::Timestamp,
) -> Result<String, oci_signer::SignerError> {
    let url = format!("https://{}/cluster_request/{cluster}", token_host(region));
    let date = http_date(now);
    let headers = sign(
        key,
        &Request {
            method: "GET",
            url: &url,
            body: None,
            content_type: "application/json",
            date: &date,
        },
    )?;
    let authorization = headers
        .iter()
        .find(|(k, _)| *k == "authorization")
        .map(|(_, v)| v.as_str())
        .ok_or(oci_signer::SignerError::Sign)?;
    let presigned = format!(
        "{url}?authorization={}&date={}",
        form(authorization),
        form(&date)
    );
    Ok(URL_SAFE.encode(presigned))
}

/// When a token was signed (its `date`), if it is one of ours.
pub fn signed_at(token: &str) -> Option<jiff::Timestamp> {
    let url = String::from_utf8(URL_SAFE.decode(token.trim()).ok()?).ok()?;
    let (_, query) = url.split_once('?')?;
    let date = query.split('&').find_map(|p| p.strip_prefix("date="))?;
    let date = percent_encoding::percent_decode_str(&date.replace('+', " "))
        .decode_utf8()
        .ok()?
        .into_owned();
    let dt = jiff::civil::DateTime::strptime(HTTP_DATE, &date).ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_is_what_the_cli_sends() {
        assert_eq!(
            form("Signature version=\"1\",keyId=\"a/b/c:d\""),
            "Signature+version%3D%221%22%2CkeyId%3D%22a%2Fb%2Fc%3Ad%22"
        );
        assert_eq!(form("Tue, 01 Dec 2026"), "Tue%2C+01+Dec+2026");
    }
}
