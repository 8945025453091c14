//! The EKS authentication token, minted as `aws eks get-token` does: `k8s-aws-v1.` followed by
//! the base64url (unpadded) of an STS `GetCallerIdentity` URL presigned with SigV4, with the
//! header `x-k8s-aws-id: <cluster name>` signed.
//!
//! EKS accepts such a token for 15 minutes from its signing time, whatever `X-Amz-Expires`
//! says; the provider refreshes the kubeconfig Secret when a third of that is left. The lifetime
//! is a setting (`--token-lifetime`, `EKS_TOKEN_LIFETIME`) only so that tests against an emulator
//! with short-lived tokens can watch the refresh; against EKS it stays 15 minutes.

use std::time::{Duration, SystemTime};

use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::AwsCredentials;

/// How long EKS accepts a token after its signing time.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// A minted EKS token and when it stops working (signing time + the lifetime it was minted
/// for, [`TOKEN_LIFETIME`] on EKS): the runtime's token type, which never prints the token.
pub use provider_runtime::kubeconfig::MintedToken as EksToken;

/// Mints a token for `cluster` (its name in EKS) in `region`, signed at `now`, that the cluster
/// accepts for `lifetime` ([`TOKEN_LIFETIME`] on EKS; the token itself does not carry it).
///
/// # Errors
/// Only if the signer rejects its inputs (an invalid region or header value) or `now + lifetime`
/// is out of range.
pub fn mint(
    credentials: &AwsCredentials,
    region: &str,
    cluster: &str,
    now: SystemTime,
    lifetime: Duration,
) -> Result<EksToken, String> {
    let identity = credentials.to_sdk().into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(Duration::from_secs(60));
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| format!("signing parameters: {e}"))?
        .into();
    let url =
        format!("https://sts.{region}.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15");
    // STS refuses presigned GetCallerIdentity URLs signed with UNSIGNED-PAYLOAD: sign the empty body.
    let signable = SignableRequest::new(
        "GET",
        url.as_str(),
        [("x-k8s-aws-id", cluster)].into_iter(),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| format!("signable request: {e}"))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|e| format!("signing: {e}"))?
        .into_parts();
    let mut request = http::Request::get(url.as_str())
        .body(())
        .map_err(|e| format!("request: {e}"))?;
    instructions.apply_to_request_http1x(&mut request);
    let signed_at = jiff::Timestamp::try_from(now).map_err(|e| format!("time: {e}"))?;
    let expires_at = signed_at
        .checked_add(
            jiff::SignedDuration::try_from(lifetime).map_err(|e| format!("duration: {e}"))?,
        )
        .map_err(|e| format!("time: {e}"))?;
    Ok(EksToken {
        token: format!(
            "k8s-aws-v1.{}",
            URL_SAFE_NO_PAD.encode(request.uri().to_string())
        ),
        expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_a_presigned_sts_url_with_the_cluster_header_signed() {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let t = mint(
            &creds,
            "us-west-2",
            "my-cluster",
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            TOKEN_LIFETIME,
        )
        .unwrap();
        let url = String::from_utf8(
            URL_SAFE_NO_PAD
                .decode(t.token.trim_start_matches("k8s-aws-v1."))
                .unwrap(),
        )
        .unwrap();
        assert!(
            url.starts_with("https://sts.us-west-2.amazonaws.com/?"),
            "{url}"
        );
        assert!(url.contains("Action=GetCallerIdentity"));
        assert!(
            url.contains("X-Amz-SignedHeaders=host%3Bx-k8s-aws-id"),
            "{url}"
        );
        assert!(!url.contains("secret"));
        assert_eq!(t.expires_at.as_second(), 1_800_000_000 + 900);
        assert!(!format!("{t:?}").contains("k8s-aws-v1"));
    }

    #[test]
    fn a_token_expires_after_the_lifetime_it_was_minted_for() {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let t = mint(&creds, "us-west-2", "c", at, Duration::from_secs(60)).unwrap();
        assert_eq!(t.expires_at.as_second(), 1_800_000_000 + 60);
    }

    #[test]
    fn an_eks_token_is_replaced_five_minutes_before_it_expires() {
        use contract::kubeconfig::refresh_lead;
        assert_eq!(refresh_lead(TOKEN_LIFETIME), Duration::from_secs(5 * 60));
        assert_eq!(
            refresh_lead(Duration::from_secs(60)),
            Duration::from_secs(20)
        );
        assert_eq!(
            refresh_lead(Duration::from_secs(10)),
            Duration::from_millis(3333) + Duration::from_nanos(333_333)
        );
        assert_eq!(refresh_lead(Duration::ZERO), Duration::ZERO);
    }
}
