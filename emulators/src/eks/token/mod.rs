//! The EKS authentication token, as `aws eks get-token` and aws-iam-authenticator mint it, and its
//! verification as EKS performs it, without calling STS.
//!
//! A token is `k8s-aws-v1.` followed by the unpadded base64url encoding of a SigV4 presigned URL
//! for STS `GetCallerIdentity`:
//!
//! ```text
//! https://sts.<region>.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15
//!   &X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=<akid>%2F<yyyymmdd>%2F<region>%2Fsts%2Faws4_request
//!   &X-Amz-Date=<yyyymmddThhmmssZ>&X-Amz-Expires=<secs>&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id
//!   [&X-Amz-Security-Token=<session token>]&X-Amz-Signature=<hex>
//! ```
//!
//! The header `x-k8s-aws-id: <cluster name>` is signed but not carried in the URL: the verifier
//! supplies its own cluster name when it recomputes the signature, so a token minted for another
//! cluster fails exactly like a token signed with a wrong secret.
//!
//! Real EKS forwards the URL to STS, which checks the signature. This emulator recomputes the
//! signature itself from the secret of the access key (which the emulator's credential store knows)
//! and applies the same pre-checks as aws-iam-authenticator's server
//! (`kubernetes-sigs/aws-iam-authenticator`, `pkg/token/token.go`, `tokenVerifier.Verify`):
//! at most 4 KiB, the `k8s-aws-v1.` prefix, raw base64url, scheme `https`, an STS host of the
//! `aws` partition, path `/`, only the whitelisted query parameters and each once, action
//! `GetCallerIdentity`, `x-k8s-aws-id` among the signed headers, `X-Amz-Expires` an integer in
//! `0..=900`, and expiry 15 minutes after `X-Amz-Date` whatever `X-Amz-Expires` says.
//!
//! The canonical request STS verifies for such a URL (SigV4 query-string authentication):
//!
//! ```text
//! GET
//! /
//! <every query parameter but X-Amz-Signature: name and value RFC 3986-encoded, sorted, joined by &>
//! host:<host>
//! x-k8s-aws-id:<cluster name>
//!
//! host;x-k8s-aws-id
//! e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
//! ```
//!
//! The payload hash is the SHA-256 of the empty body, not `UNSIGNED-PAYLOAD`: `UNSIGNED-PAYLOAD` is
//! an S3 convention (botocore uses it only in `S3SigV4QueryAuth`; its generic `SigV4QueryAuth`, used
//! by `aws eks get-token`, and aws-sdk-go's presigner both hash the empty body), and STS rejects
//! presigned `GetCallerIdentity` URLs signed with `UNSIGNED-PAYLOAD` (rusoto/rusoto#1439). A signer
//! built on the Rust `aws-sigv4` crate must therefore pass `SignableBody::Bytes(&[])`.

//!
//! This module holds the verification and its errors; [`presigned`] decodes and checks the
//! presigned URL and recomputes its SigV4 signature.

mod presigned;
#[cfg(test)]
mod tests;

use jiff::{SignedDuration, Timestamp};
use ring::hmac;

use presigned::{PresignedUrl, canonical_request, parse_amz_date, signing_key, string_to_sign};

/// The prefix of every EKS token.
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";

/// The signed header carrying the cluster name.
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";

/// How long a token is valid after its `X-Amz-Date`, whatever its `X-Amz-Expires` says
/// (aws-iam-authenticator `pkg/token/token.go`, `presignedURLExpiration`: presigned STS URLs are
/// valid for 15 minutes after the timestamp in `x-amz-date`).
pub const TOKEN_LIFETIME: SignedDuration = SignedDuration::from_mins(15);

/// How far in the future an `X-Amz-Date` may lie before the token is refused as not yet valid
/// (AWS refuses a signature "not yet current" beyond five minutes of clock skew).
pub const MAX_CLOCK_SKEW: SignedDuration = SignedDuration::from_mins(5);

/// The largest token accepted, in bytes (aws-iam-authenticator `maxTokenLenBytes`).
pub const MAX_TOKEN_LEN: usize = 4096;

/// The largest `X-Amz-Expires` accepted, in seconds (aws-iam-authenticator checks `0..=900`).
pub const MAX_EXPIRES_SECS: u64 = 900;

/// The account the emulator attributes every access key to (moto's default account as well).
pub const DEFAULT_ACCOUNT_ID: &str = "123456789012";

/// SHA-256 of the empty string: the payload hash of a presigned STS request.
const EMPTY_PAYLOAD_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Who signed a verified token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerIdentity {
    /// The access key id that signed the token.
    pub access_key_id: String,
    /// The account the key belongs to ([`DEFAULT_ACCOUNT_ID`]).
    pub account_id: String,
    /// The caller's ARN, `arn:aws:iam::<account>:user/<access key id>`.
    pub arn: String,
    /// Whether the token carried a session token (temporary credentials).
    pub has_session_token: bool,
}

/// Why a token was refused. Messages never include the secret, the signature or the token itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Longer than [`MAX_TOKEN_LEN`].
    #[error("token is too large ({0} bytes, at most {MAX_TOKEN_LEN})")]
    TooLong(usize),
    /// Does not start with `k8s-aws-v1.`.
    #[error("token is missing the expected \"k8s-aws-v1.\" prefix")]
    MissingPrefix,
    /// The part after the prefix is not unpadded base64url of UTF-8 text.
    #[error("token is not base64url-encoded (unpadded) UTF-8")]
    NotBase64,
    /// The decoded text is not an `https://<host>/?<query>` URL.
    #[error("pre-signed URL is malformed: {0}")]
    MalformedUrl(&'static str),
    /// The URL's host is not an STS endpoint of the `aws` partition.
    #[error("unexpected hostname {0:?} in pre-signed URL")]
    NotSts(String),
    /// A query parameter outside the whitelist.
    #[error("non-whitelisted query parameter {0:?}")]
    UnexpectedParameter(String),
    /// A query parameter given twice (names compared case-insensitively).
    #[error("duplicate query parameter {0:?}")]
    DuplicateParameter(String),
    /// A required query parameter is missing.
    #[error("missing query parameter {0}")]
    MissingParameter(&'static str),
    /// `Action` is not `GetCallerIdentity`.
    #[error("unexpected action parameter in pre-signed URL")]
    WrongAction,
    /// `X-Amz-Algorithm` is not `AWS4-HMAC-SHA256`.
    #[error("unsupported signing algorithm (want AWS4-HMAC-SHA256)")]
    UnsupportedAlgorithm,
    /// `x-k8s-aws-id` is not among the signed headers.
    #[error("client did not sign the x-k8s-aws-id header in the pre-signed URL")]
    ClusterIdNotSigned,
    /// Headers other than `host` and `x-k8s-aws-id` are signed; the verifier cannot reproduce them.
    #[error("unsupported signed headers {0:?} (only host and x-k8s-aws-id)")]
    UnsupportedSignedHeaders(String),
    /// `X-Amz-Credential` is not `<akid>/<date>/<region>/sts/aws4_request` for this host and date.
    #[error("invalid credential scope: {0}")]
    BadCredentialScope(&'static str),
    /// `X-Amz-Date` is not `yyyymmddThhmmssZ`.
    #[error("invalid X-Amz-Date parameter in pre-signed URL")]
    BadDate,
    /// `X-Amz-Expires` is not an integer in `0..=900`.
    #[error("invalid X-Amz-Expires parameter in pre-signed URL (want 0..=900 seconds)")]
    BadExpires,
    /// `X-Amz-Date` lies further in the future than [`MAX_CLOCK_SKEW`].
    #[error("X-Amz-Date {date} is in the future (now {now})")]
    NotYetValid {
        /// The token's `X-Amz-Date`.
        date: Timestamp,
        /// The verifier's clock.
        now: Timestamp,
    },
    /// More than the token lifetime ([`TOKEN_LIFETIME`] unless configured) has passed since
    /// `X-Amz-Date`.
    #[error("token expired at {expired_at} ({lifetime:#} after X-Amz-Date; now {now})")]
    Expired {
        /// `X-Amz-Date` plus the lifetime.
        expired_at: Timestamp,
        /// The lifetime in force.
        lifetime: SignedDuration,
        /// The verifier's clock.
        now: Timestamp,
    },
    /// The access key id is not known to the emulator.
    #[error("the access key id {0:?} is not known")]
    UnknownAccessKey(String),
    /// The signature does not match: wrong secret, a tampered URL, or a token minted for another
    /// cluster (the cluster name is signed but not carried).
    #[error("signature does not match (wrong secret, altered URL, or a token for another cluster)")]
    SignatureMismatch,
}

/// Verifies an EKS token for `expected_cluster` at time `now`, looking the secret of the signing
/// access key up through `credentials`; tokens live [`TOKEN_LIFETIME`], as on EKS.
///
/// # Errors
/// A [`TokenError`] naming the first check that failed, in aws-iam-authenticator's order, then the
/// credential lookup and the signature.
pub fn verify(
    token: &str,
    expected_cluster: &str,
    credentials: &dyn Fn(&str) -> Option<String>,
    now: Timestamp,
) -> Result<CallerIdentity, TokenError> {
    verify_within(
        token,
        expected_cluster,
        credentials,
        now,
        TOKEN_LIFETIME,
        &[],
    )
}

/// [`verify`] with tokens living `lifetime` after their `X-Amz-Date` instead of EKS's fifteen
/// minutes (tests shorten it to watch a provider refresh its tokens), and presigned for the STS
/// endpoints `sts_endpoints` (`http://127.0.0.1:5000`: scheme and authority, as a client whose
/// STS calls go to a local STS presigns) besides AWS's own hosts. A token for such an endpoint
/// is checked like any other, its signature over that authority and its region taken from its
/// credential scope.
///
/// # Errors
/// As [`verify`]; [`TokenError::Expired`] once `lifetime` has passed.
pub fn verify_within(
    token: &str,
    expected_cluster: &str,
    credentials: &dyn Fn(&str) -> Option<String>,
    now: Timestamp,
    lifetime: SignedDuration,
    sts_endpoints: &[String],
) -> Result<CallerIdentity, TokenError> {
    let presigned = PresignedUrl::decode(token, sts_endpoints)?;
    let p = presigned.check_params()?;

    if p.expires > MAX_EXPIRES_SECS {
        return Err(TokenError::BadExpires);
    }
    if p.date > now + MAX_CLOCK_SKEW {
        return Err(TokenError::NotYetValid { date: p.date, now });
    }
    let expired_at = p.date.checked_add(lifetime).unwrap_or(Timestamp::MAX);
    if now > expired_at {
        return Err(TokenError::Expired {
            expired_at,
            lifetime,
            now,
        });
    }

    let secret = credentials(&p.scope.access_key_id)
        .ok_or_else(|| TokenError::UnknownAccessKey(p.scope.access_key_id.clone()))?;
    let canonical = canonical_request(
        "GET",
        "/",
        &presigned.canonical_query(),
        &[
            ("host", presigned.host.as_str()),
            (CLUSTER_ID_HEADER, expected_cluster),
        ],
        EMPTY_PAYLOAD_SHA256,
    );
    let to_sign = string_to_sign(&p.amz_date, &p.scope.scope(), &canonical);
    let key = signing_key(&secret, &p.scope.date, &p.scope.region, &p.scope.service);
    let signature = hex::decode(&p.signature).map_err(|_| TokenError::SignatureMismatch)?;
    // ring's verify compares in constant time.
    hmac::verify(&key, to_sign.as_bytes(), &signature)
        .map_err(|_| TokenError::SignatureMismatch)?;

    Ok(CallerIdentity {
        arn: format!(
            "arn:aws:iam::{DEFAULT_ACCOUNT_ID}:user/{}",
            p.scope.access_key_id
        ),
        account_id: DEFAULT_ACCOUNT_ID.to_string(),
        access_key_id: p.scope.access_key_id,
        has_session_token: p.has_session_token,
    })
}

/// When the token stops being accepted: its `X-Amz-Date` plus [`TOKEN_LIFETIME`]. `None` if the
/// token cannot be decoded. The signature is not checked.
pub fn expires_at(token: &str) -> Option<Timestamp> {
    let presigned = PresignedUrl::decode(token, &[]).ok()?;
    let date = presigned.param("x-amz-date")?;
    Some(parse_amz_date(date).ok()? + TOKEN_LIFETIME)
}
