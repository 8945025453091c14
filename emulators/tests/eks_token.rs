//! The EKS token verifier against someone else's signer: tokens are presigned with the AWS SDK's
//! own SigV4 implementation (the `aws-sigv4` crate) exactly as `aws eks get-token` builds them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{AKID, CLUSTER, Mint, SECRET};
use emulators::eks::token::{self, TOKEN_PREFIX, TokenError};
use jiff::Timestamp;

fn url_of(token: &str) -> String {
    String::from_utf8(
        URL_SAFE_NO_PAD
            .decode(token.strip_prefix(TOKEN_PREFIX).unwrap())
            .unwrap(),
    )
    .unwrap()
}

fn token_of(url: &str) -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(url))
}

fn known(akid: &str) -> Option<String> {
    (akid == AKID).then(|| SECRET.to_string())
}

fn now() -> Timestamp {
    Timestamp::now()
}

#[test]
fn a_token_presigned_by_aws_sigv4_is_accepted_for_its_cluster() {
    let token = Mint::default().token();
    let url = url_of(&token);
    assert!(
        url.starts_with("https://sts.us-west-2.amazonaws.com/?"),
        "{url}"
    );
    assert!(
        url.contains("X-Amz-SignedHeaders=host%3Bx-k8s-aws-id"),
        "{url}"
    );
    assert!(url.contains("X-Amz-Expires=60"), "{url}");
    let id = token::verify(&token, CLUSTER, &known, now()).unwrap();
    assert_eq!(id.access_key_id, AKID);
    assert_eq!(id.arn, format!("arn:aws:iam::123456789012:user/{AKID}"));
    assert!(!id.has_session_token);
}

#[test]
fn the_global_endpoint_and_temporary_credentials_are_accepted() {
    let token = Mint {
        host: "sts.amazonaws.com",
        region: "us-east-1",
        // A session token uses characters that must be encoded in the canonical query.
        session_token: Some("IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH+MEUCIQD/x=="),
        expires_in: Duration::from_secs(900),
        ..Mint::default()
    }
    .token();
    assert!(url_of(&token).contains("X-Amz-Security-Token="));
    let id = token::verify(&token, CLUSTER, &known, now()).unwrap();
    assert!(id.has_session_token);
}

#[test]
fn a_wrong_secret_or_another_cluster_fails_the_signature() {
    let wrong_secret = Mint {
        secret: "not-the-secret",
        ..Mint::default()
    }
    .token();
    assert_eq!(
        token::verify(&wrong_secret, CLUSTER, &known, now()).unwrap_err(),
        TokenError::SignatureMismatch
    );
    let other_cluster = Mint {
        cluster: "someone-elses",
        ..Mint::default()
    }
    .token();
    assert_eq!(
        token::verify(&other_cluster, CLUSTER, &known, now()).unwrap_err(),
        TokenError::SignatureMismatch
    );
    assert!(token::verify(&other_cluster, "someone-elses", &known, now()).is_ok());
}

#[test]
fn an_unknown_access_key_is_named() {
    let token = Mint::default().token();
    assert_eq!(
        token::verify(&token, CLUSTER, &|_| None, now()).unwrap_err(),
        TokenError::UnknownAccessKey(AKID.into())
    );
}

#[test]
fn tokens_live_fifteen_minutes_from_their_date_whatever_x_amz_expires_says() {
    let fourteen_ago = Mint {
        at: SystemTime::now() - Duration::from_secs(14 * 60),
        ..Mint::default()
    }
    .token();
    // X-Amz-Expires is 60 s, yet the token is still good after 14 minutes.
    assert!(token::verify(&fourteen_ago, CLUSTER, &known, now()).is_ok());

    let sixteen_ago = Mint {
        at: SystemTime::now() - Duration::from_secs(16 * 60),
        ..Mint::default()
    }
    .token();
    assert!(matches!(
        token::verify(&sixteen_ago, CLUSTER, &known, now()),
        Err(TokenError::Expired { .. })
    ));

    let minted = Timestamp::now();
    let token = Mint {
        at: SystemTime::from(minted),
        ..Mint::default()
    }
    .token();
    let expires = token::expires_at(&token).unwrap();
    // X-Amz-Date has whole seconds.
    let dated = Timestamp::from_second(minted.as_second()).unwrap();
    assert_eq!(expires, dated + jiff::SignedDuration::from_mins(15));
}

#[test]
fn a_token_dated_in_the_future_beyond_the_clock_skew_is_refused() {
    let token = Mint {
        at: SystemTime::now() + Duration::from_secs(10 * 60),
        ..Mint::default()
    }
    .token();
    assert!(matches!(
        token::verify(&token, CLUSTER, &known, now()),
        Err(TokenError::NotYetValid { .. })
    ));
}

#[test]
fn x_amz_expires_over_fifteen_minutes_is_refused() {
    let token = Mint {
        expires_in: Duration::from_secs(901),
        ..Mint::default()
    }
    .token();
    assert_eq!(
        token::verify(&token, CLUSTER, &known, now()).unwrap_err(),
        TokenError::BadExpires
    );
}

#[test]
fn a_tampered_query_fails_the_signature() {
    let url = url_of(&Mint::default().token());
    for (from, to) in [
        ("X-Amz-Expires=60", "X-Amz-Expires=61"),
        ("Version=2011-06-15", "Version=2011-06-16"),
    ] {
        assert!(url.contains(from), "{url}");
        let tampered = token_of(&url.replace(from, to));
        assert_eq!(
            token::verify(&tampered, CLUSTER, &known, now()).unwrap_err(),
            TokenError::SignatureMismatch,
            "{from} -> {to}"
        );
    }
    let other_host = token_of(&url.replace("sts.us-west-2.", "sts.us-east-2."));
    assert!(matches!(
        token::verify(&other_host, CLUSTER, &known, now()),
        Err(TokenError::BadCredentialScope(_))
    ));
    let evil_host = token_of(&url.replace("sts.us-west-2.amazonaws.com", "sts.evil.test"));
    assert!(matches!(
        token::verify(&evil_host, CLUSTER, &known, now()),
        Err(TokenError::NotSts(_))
    ));
    let other_action = token_of(&url.replace("GetCallerIdentity", "GetSessionToken"));
    assert_eq!(
        token::verify(&other_action, CLUSTER, &known, now()).unwrap_err(),
        TokenError::WrongAction
    );
    let unsigned_cluster = token_of(&url.replace("host%3Bx-k8s-aws-id", "host"));
    assert_eq!(
        token::verify(&unsigned_cluster, CLUSTER, &known, now()).unwrap_err(),
        TokenError::ClusterIdNotSigned
    );
}

#[test]
fn a_wrong_prefix_or_encoding_is_refused() {
    let token = Mint::default().token();
    let body = token.strip_prefix(TOKEN_PREFIX).unwrap();
    assert_eq!(
        token::verify(&format!("k8s-aws-v2.{body}"), CLUSTER, &known, now()).unwrap_err(),
        TokenError::MissingPrefix
    );
    assert_eq!(
        token::verify(body, CLUSTER, &known, now()).unwrap_err(),
        TokenError::MissingPrefix
    );
    let padded = format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(url_of(&token))
    );
    assert!(matches!(
        token::verify(&padded, CLUSTER, &known, now()),
        Err(TokenError::NotBase64)
    ));
}

#[test]
fn a_token_signed_with_unsigned_payload_is_refused_as_sts_refuses_it() {
    let token = Mint {
        unsigned_payload: true,
        ..Mint::default()
    }
    .token();
    assert_eq!(
        token::verify(&token, CLUSTER, &known, now()).unwrap_err(),
        TokenError::SignatureMismatch
    );
}

#[test]
fn no_error_message_carries_the_secret_or_the_token() {
    let cases = [
        Mint {
            secret: "seeded-secret-value",
            ..Mint::default()
        }
        .token(),
        Mint {
            at: SystemTime::now() - Duration::from_secs(3600),
            ..Mint::default()
        }
        .token(),
    ];
    let seeded = |_: &str| Some("seeded-secret-value".to_string());
    for token in cases {
        for creds in [&known as &dyn Fn(&str) -> Option<String>, &seeded] {
            if let Err(e) = token::verify(&token, "another", creds, now()) {
                let text = format!("{e} {e:?}");
                assert!(!text.contains("seeded-secret-value"), "{text}");
                assert!(!text.contains(SECRET), "{text}");
                assert!(!text.contains(&token[TOKEN_PREFIX.len()..][..24]), "{text}");
                let signature = url_of(&token)
                    .split("X-Amz-Signature=")
                    .nth(1)
                    .unwrap()
                    .to_string();
                assert!(!text.contains(&signature), "{text}");
            }
        }
    }
}
