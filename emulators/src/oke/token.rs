//! The bearer token an OKE cluster accepts: what `oci ce cluster generate-token` prints in its
//! ExecCredential. It is a URL of the Container Engine endpoint,
//! `<endpoint>/cluster_request/<cluster OCID>`, signed as a GET by the user's API key, with the
//! signature's `authorization` and `date` headers carried as query parameters, the whole URL
//! base64url-encoded. A cluster accepts it for its own OCID only, with a valid signature of an
//! uploaded key, for [`LIFETIME`] after its date.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};

use super::signature::{self, Caller, KeyRing, Received};

/// How long a cluster accepts a token after its date: OCI's five minutes of clock skew (the CLI's
/// ExecCredential expires after four, so kubectl asks for a new one in time).
pub const LIFETIME: Duration = Duration::from_secs(300);

/// The parts of a token: the host, the cluster it names, the `authorization` and `date` it
/// carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParts {
    /// The endpoint's host (with a port other than the scheme's).
    pub host: String,
    /// The cluster OCID in the path.
    pub cluster: String,
    /// The signature header.
    pub authorization: String,
    /// The signed date.
    pub date: String,
}

/// Reads a token.
///
/// # Errors
/// When it is not a base64url-encoded `…/cluster_request/<cluster>?authorization=…&date=…` URL.
pub fn parse(token: &str) -> Result<TokenParts, String> {
    let token = token.trim();
    let bytes = URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .or_else(|_| URL_SAFE.decode(token))
        .map_err(|_| "the token is not base64url")?;
    let url = String::from_utf8(bytes).map_err(|_| "the token is not a URL")?;
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("the token is not an http(s) URL")?;
    let (authority, path_query) = rest.split_once('/').ok_or("the token URL has no path")?;
    let (path, query) = path_query
        .split_once('?')
        .ok_or("the token URL has no query")?;
    let cluster = path
        .strip_prefix("cluster_request/")
        .filter(|c| !c.is_empty() && !c.contains('/'))
        .ok_or("the token URL is not a cluster_request")?;
    let mut authorization = None;
    let mut date = None;
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_encoding::percent_decode_str(&v.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned();
        match k {
            "authorization" => authorization = Some(v),
            "date" => date = Some(v),
            _ => {}
        }
    }
    let host = authority
        .strip_suffix(":443")
        .filter(|_| url.starts_with("https://"))
        .unwrap_or(authority);
    Ok(TokenParts {
        host: host.to_string(),
        cluster: cluster.to_string(),
        authorization: authorization.ok_or("the token carries no authorization")?,
        date: date.ok_or("the token carries no date")?,
    })
}

/// Checks a token for `cluster`: its signature (with an uploaded key, when keys are uploaded),
/// its cluster and its age.
///
/// # Errors
/// Why the token is refused (never echoing it).
pub fn verify(
    keys: &KeyRing,
    token: &str,
    cluster: &str,
    now: jiff::Timestamp,
    lifetime: Duration,
) -> Result<Caller, String> {
    let parts = parse(token)?;
    if parts.cluster != cluster {
        return Err("the token was made for another cluster".into());
    }
    let target = format!("/cluster_request/{}", parts.cluster);
    let lookup = |name: &str| match name {
        "authorization" => Some(parts.authorization.clone()),
        "date" => Some(parts.date.clone()),
        "host" => Some(parts.host.clone()),
        _ => None,
    };
    let received = Received {
        method: "GET",
        target: &target,
        header: &lookup,
        body: &[],
    };
    let signed_at =
        signature::parse_http_date(&parts.date).ok_or("the token's date is not a date")?;
    if now.duration_since(signed_at).unsigned_abs() > lifetime && now > signed_at {
        return Err(format!("the token expired (signed at {})", parts.date));
    }
    match signature::verify(keys, &received, now, lifetime)? {
        Some(caller) => Ok(caller),
        None => {
            // No keys uploaded: the key id still names the caller.
            let key_id = parts
                .authorization
                .split("keyId=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default();
            let mut ids = key_id.split('/');
            Ok(Caller {
                tenancy: ids.next().unwrap_or_default().to_string(),
                user: ids.next().unwrap_or_default().to_string(),
                fingerprint: ids.next().unwrap_or_default().to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_a_base64url_cluster_request_url() {
        let url = "https://containerengine.us-ashburn-1.oci.oraclecloud.com/cluster_request/ocid1.cluster.oc1.iad.abc?authorization=Signature%20keyId%3D%22t%2Fu%2Ff%22&date=Tue%2C%2001%20Dec%202026%2021%3A00%3A00%20GMT";
        let parts = parse(&URL_SAFE.encode(url)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parts.cluster, "ocid1.cluster.oc1.iad.abc");
        assert_eq!(
            parts.host,
            "containerengine.us-ashburn-1.oci.oraclecloud.com"
        );
        assert_eq!(parts.date, "Tue, 01 Dec 2026 21:00:00 GMT");
        assert_eq!(parts.authorization, "Signature keyId=\"t/u/f\"");
        assert!(parse("not a token").is_err());
        assert!(parse(&URL_SAFE.encode("https://h/clusters/x?date=1")).is_err());
    }
}
