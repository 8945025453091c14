//! The token verifier against tokens minted here, a published SigV4 example and the tokens
//! aws-iam-authenticator refuses.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::presigned::{
    PresignedUrl, canonical_request, check_sts_host, signing_key, sigv4_encode, string_to_sign,
};
use super::*;

const AKID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

/// Our own presigner, for unit tests only (the integration tests sign with `aws-sigv4`).
fn mint(host: &str, region: &str, cluster: &str, at: &str, extra: &[(&str, &str)]) -> String {
    mint_for(&format!("https://{host}"), region, cluster, at, extra)
}

/// [`mint`] for an endpoint given as `scheme://authority`.
fn mint_for(origin: &str, region: &str, cluster: &str, at: &str, extra: &[(&str, &str)]) -> String {
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
