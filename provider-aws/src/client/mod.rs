//! The AWS side: SDK clients per region and identity, the mapping of SDK errors to what the
//! reconcilers should do, and the EKS authentication token.
//!
//! Endpoints follow the SDK's own environment variables (`AWS_ENDPOINT_URL`,
//! `AWS_ENDPOINT_URL_EKS`, `AWS_ENDPOINT_URL_EC2`), which is how the tests point the provider at
//! moto and the EKS emulator, or [`Endpoints`] given in code (in-process tests, where the
//! environment cannot be changed safely). TLS is rustls with ring; no aws-lc.

pub mod errors;
pub mod identity;
pub mod overrides;
pub mod token;

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};

pub use errors::{CloudError, classify};

/// The update an EKS `Update*` call started, checked to carry its id (what the next pass polls).
/// EKS always returns one; an answer without it is a transient error, and the retry's request
/// token makes EKS answer with the same update rather than start a second one. The same rule
/// for the control plane and the node groups.
pub fn started_update<'a>(
    operation: &str,
    update: Option<&'a aws_sdk_eks::types::Update>,
) -> Result<&'a aws_sdk_eks::types::Update, CloudError> {
    update
        .filter(|u| u.id().is_some_and(|id| !id.is_empty()))
        .ok_or_else(|| {
            CloudError::Transient(format!("EKS answered {operation} without an update id"))
        })
}
pub use identity::AwsCredentials;

/// The SDK clients for one region and one identity.
#[derive(Clone, Debug)]
pub struct Clients {
    /// Amazon EKS.
    pub eks: aws_sdk_eks::Client,
    /// Amazon EC2 (network, node instances).
    pub ec2: aws_sdk_ec2::Client,
    /// The region.
    pub region: String,
    /// The credentials, kept for presigning EKS tokens.
    pub credentials: AwsCredentials,
}

/// Endpoint overrides for the SDK clients (tests and local emulators, set in code where the
/// environment cannot be changed); `None` follows the SDK's own configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// The EKS endpoint, e.g. `http://127.0.0.1:4566`.
    pub eks: Option<String>,
    /// The EC2 endpoint.
    pub ec2: Option<String>,
}

impl Clients {
    /// Clients for `region` with `credentials`.
    pub async fn new(region: &str, credentials: AwsCredentials) -> Self {
        Self::with_endpoints(region, credentials, &Endpoints::default()).await
    }

    /// Clients for `region` with `credentials`, talking to `endpoints` where given.
    pub async fn with_endpoints(
        region: &str,
        credentials: AwsCredentials,
        endpoints: &Endpoints,
    ) -> Self {
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https();
        // The SDK's own retries are off: the kernel retries each object with jittered backoff
        // that honours the cloud's Retry-After, while the SDK's standard strategy re-sends a
        // throttled call within about a second whatever Retry-After said (the fault suite's
        // "no call before Retry-After" oracle caught it: 4 early calls in one run). A failed
        // create is retried with the same idempotency token, so nothing is created twice.
        let config = aws_config::defaults(BehaviorVersion::latest())
            .retry_config(aws_config::retry::RetryConfig::disabled())
            .http_client(http)
            .region(Region::new(region.to_string()))
            .credentials_provider(SharedCredentialsProvider::new(credentials.to_sdk()))
            .load()
            .await;
        let mut eks = aws_sdk_eks::config::Builder::from(&config);
        if let Some(url) = &endpoints.eks {
            eks = eks.endpoint_url(url);
        }
        let mut ec2 = aws_sdk_ec2::config::Builder::from(&config);
        if let Some(url) = &endpoints.ec2 {
            ec2 = ec2.endpoint_url(url);
        }
        Self {
            eks: aws_sdk_eks::Client::from_conf(eks.build()),
            ec2: aws_sdk_ec2::Client::from_conf(ec2.build()),
            region: region.to_string(),
            credentials,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod started_update_tests {
    use aws_sdk_eks::types::Update;

    use super::*;

    #[test]
    fn an_update_without_an_id_is_an_error_for_every_kind() {
        let with_id = Update::builder().id("u-1").build();
        assert_eq!(
            started_update("UpdateClusterVersion", Some(&with_id))
                .unwrap()
                .id(),
            Some("u-1")
        );
        for missing in [
            None,
            Some(Update::builder().build()),
            Some(Update::builder().id("").build()),
        ] {
            let err = started_update("UpdateNodegroupConfig", missing.as_ref()).unwrap_err();
            assert!(
                matches!(&err, CloudError::Transient(m) if m.contains("UpdateNodegroupConfig")),
                "{err:?}"
            );
        }
    }
}
