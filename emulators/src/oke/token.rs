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
    let mut query = crate::kit::form(query);
    let authorization = query.remove("authorization");
    let date = query.remove("date");
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
        // No keys uploaded: the key id still names the caller.
        None => {
            let params = signature::parameters(&parts.authorization)?;
            Caller::of_key_id(params.get("keyid").map_or("", String::as_str))
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

    /// A token as `oci ce cluster generate-token` makes it: a signed GET of the cluster's
    /// `cluster_request` URL, its `authorization` and `date` carried in the query.
    fn token(
        pem: &str,
        user: &str,
        fingerprint: &str,
        cluster: &str,
        at: jiff::Timestamp,
    ) -> String {
        let key = oci_signer::ApiKey::from_pem(pem, crate::oke::TENANCY, user, fingerprint)
            .unwrap_or_else(|e| panic!("{e}"));
        let url = format!(
            "https://containerengine.us-ashburn-1.oraclecloud.com/cluster_request/{cluster}"
        );
        let date = crate::oke::outside::http_date(at);
        let signed = oci_signer::sign(
            &key,
            &oci_signer::Request {
                method: "GET",
                url: &url,
                body: None,
                content_type: "application/json",
                date: &date,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let query = |name: &str| {
            let v = signed
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or_default();
            percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        URL_SAFE.encode(format!(
            "{url}?authorization={}&date={}",
            query("authorization"),
            query("date")
        ))
    }

    #[test]
    fn a_cluster_takes_a_fresh_token_of_an_uploaded_key_for_itself_only() {
        let user = crate::oke::global_ocid("user");
        let key_id = format!("{}/{user}", crate::oke::TENANCY);
        let (pem, key) = crate::oke::generate_api_key(&key_id).unwrap_or_else(|e| panic!("{e}"));
        let fingerprint = key.fingerprint();
        let ring = KeyRing::new([key]);
        let now = jiff::Timestamp::now();
        let cluster = "ocid1.cluster.oc1.iad.aaa";
        let fresh = token(&pem, &user, &fingerprint, cluster, now);
        let caller =
            verify(&ring, &fresh, cluster, now, LIFETIME).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(caller.user, user);
        let other = verify(&ring, &fresh, "ocid1.cluster.oc1.iad.bbb", now, LIFETIME).unwrap_err();
        assert!(other.contains("another cluster"), "{other}");
        let later = now + jiff::SignedDuration::from_secs(301);
        assert!(
            verify(&ring, &fresh, cluster, later, LIFETIME)
                .unwrap_err()
                .contains("expired")
        );
        let (stranger, _) = crate::oke::generate_api_key("x").unwrap_or_else(|e| panic!("{e}"));
        let forged = token(&stranger, &user, &fingerprint, cluster, now);
        assert!(verify(&ring, &forged, cluster, now, LIFETIME).is_err());
        // With no key uploaded the form is still checked, and the key id names the caller.
        let open = KeyRing::new(Vec::<signature::PublicKey>::new());
        assert_eq!(
            verify(&open, &forged, cluster, now, LIFETIME).map(|c| c.user),
            Ok(user)
        );
    }
}
