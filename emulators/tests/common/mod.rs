//! Test helpers shared by the emulator's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use aws_sdk_eks::config::Credentials;
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use emulators::eks::token::TOKEN_PREFIX;

pub const AKID: &str = "AKIAIOSFODNN7EXAMPLE";
pub const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
pub const CLUSTER: &str = "capi-demo";

/// An EKS token minted with the third-party `aws-sigv4` signer, as `aws eks get-token` does.
pub struct Mint<'a> {
    pub host: &'a str,
    pub region: &'a str,
    pub cluster: &'a str,
    pub secret: &'a str,
    pub session_token: Option<&'a str>,
    pub at: SystemTime,
    pub expires_in: Duration,
    pub unsigned_payload: bool,
}

impl Default for Mint<'_> {
    fn default() -> Self {
        Self {
            host: "sts.us-west-2.amazonaws.com",
            region: "us-west-2",
            cluster: CLUSTER,
            secret: SECRET,
            session_token: None,
            at: SystemTime::now(),
            expires_in: Duration::from_secs(60),
            unsigned_payload: false,
        }
    }
}

impl Mint<'_> {
    /// Presigns `GET https://<host>/?Action=GetCallerIdentity&Version=2011-06-15` with the
    /// `x-k8s-aws-id` header signed, and wraps the URL as `aws eks get-token` does.
    pub fn token(&self) -> String {
        // `Identity` is inferred from `SigningParams::identity`.
        let identity = Credentials::new(
            AKID,
            self.secret,
            self.session_token.map(str::to_string),
            None,
            "test",
        )
        .into();
        let mut settings = SigningSettings::default();
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(self.expires_in);
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(self.region)
            .name("sts")
            .time(self.at)
            .settings(settings)
            .build()
            .unwrap()
            .into();
        let url = format!(
            "https://{}/?Action=GetCallerIdentity&Version=2011-06-15",
            self.host
        );
        let body = if self.unsigned_payload {
            SignableBody::UnsignedPayload
        } else {
            SignableBody::Bytes(&[])
        };
        let signable = SignableRequest::new(
            "GET",
            url.as_str(),
            [("x-k8s-aws-id", self.cluster)].into_iter(),
            body,
        )
        .unwrap();
        let (instructions, _signature) = sign(signable, &params).unwrap().into_parts();
        let mut request = axum::http::Request::get(url.as_str()).body(()).unwrap();
        instructions.apply_to_request_http1x(&mut request);
        let presigned = request.uri().to_string();
        format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(presigned))
    }
}
