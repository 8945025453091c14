//! The signer against golden vectors made with Oracle's own Python SDK
//! (`testdata/make-vectors.py`, `oci.signer.Signer`): every signed header equal byte for byte,
//! for GET, HEAD, DELETE, POST and PUT, with queries, escapes, an empty and a non-ASCII body, and
//! the key in both PEM forms OCI accepts.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use oci_signer::{ApiKey, Request, sign};
use serde_json::Value;

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/signer-vectors.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_signed_header_equals_the_oci_sdks() {
    let v = vectors();
    let s = |k: &str| v[k].as_str().unwrap();
    for pem in ["privateKeyPkcs8", "privateKeyPkcs1"] {
        let key = ApiKey::from_pem(s(pem), s("tenancy"), s("user"), s("fingerprint")).unwrap();
        let cases = v["vectors"].as_array().unwrap();
        assert!(cases.len() >= 9);
        for case in cases {
            let want = &case["headers"];
            let body = case["body"].as_str().map(str::as_bytes);
            let request = Request {
                method: case["method"].as_str().unwrap(),
                url: case["url"].as_str().unwrap(),
                body,
                content_type: "application/json",
                date: want["date"].as_str().unwrap(),
            };
            let got = sign(&key, &request).unwrap();
            for (name, value) in &got {
                assert_eq!(
                    want[*name].as_str(),
                    Some(value.as_str()),
                    "{pem}: {} {}: header {name}",
                    request.method,
                    request.url
                );
            }
            let signed_body = matches!(request.method, "POST" | "PUT" | "PATCH");
            assert_eq!(got.len(), if signed_body { 6 } else { 3 }, "{got:?}");
        }
    }
}

#[test]
fn a_changed_byte_changes_the_signature() {
    let v = vectors();
    let s = |k: &str| v[k].as_str().unwrap();
    let key = ApiKey::from_pem(
        s("privateKeyPkcs8"),
        s("tenancy"),
        s("user"),
        s("fingerprint"),
    )
    .unwrap();
    let case = &v["vectors"][4];
    let body = case["body"].as_str().unwrap().replace("team-a", "team-b");
    let got = sign(
        &key,
        &Request {
            method: "POST",
            url: case["url"].as_str().unwrap(),
            body: Some(body.as_bytes()),
            content_type: "application/json",
            date: case["headers"]["date"].as_str().unwrap(),
        },
    )
    .unwrap();
    let auth = &got.iter().find(|(k, _)| *k == "authorization").unwrap().1;
    assert_ne!(
        Some(auth.as_str()),
        case["headers"]["authorization"].as_str()
    );
}
