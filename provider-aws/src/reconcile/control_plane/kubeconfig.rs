//! What is EKS's own in the two kubeconfig Secrets (the rest is the shared runtime's,
//! [`provider_runtime::kubeconfig`]): the EKS token of `<cluster>-kubeconfig` ([`Tokens`]: a
//! presigned STS URL, good for 15 minutes or the lifetime the provider is configured with) and
//! the `aws eks get-token` exec plugin of `<cluster>-user-kubeconfig` ([`get_token_plugin`]).

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use contract::kubeconfig::ExecPlugin;
use provider_runtime::ProviderError;
use provider_runtime::kubeconfig::{MintedToken, TokenSource};

use crate::client::AwsCredentials;

/// EKS tokens for one cluster.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The identity the token is signed with.
    pub credentials: AwsCredentials,
    /// The cluster's region.
    pub region: String,
    /// The cluster's name in EKS.
    pub eks_name: String,
    /// How long EKS accepts a token.
    pub lifetime: Duration,
}

impl TokenSource for Tokens {
    fn lifetime(&self) -> Duration {
        self.lifetime
    }

    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        token_expiry(token, self.lifetime)
    }

    async fn mint(&self, now: jiff::Timestamp, _: &str) -> Result<MintedToken, ProviderError> {
        crate::client::token::mint(
            &self.credentials,
            &self.region,
            &self.eks_name,
            SystemTime::from(now),
            self.lifetime,
        )
        .map_err(|e| ProviderError::cloud("token", format!("could not mint the EKS token: {e}")))
    }
}

/// When an EKS token stops working: its signing time (`X-Amz-Date` of the presigned URL inside)
/// plus `lifetime`. `None` when the token is not one this provider minted.
pub fn token_expiry(token: &str, lifetime: Duration) -> Option<jiff::Timestamp> {
    let encoded = token.strip_prefix("k8s-aws-v1.")?;
    let url =
        String::from_utf8(URL_SAFE_NO_PAD.decode(encoded.trim_end_matches('=')).ok()?).ok()?;
    let query = url.split_once('?')?.1;
    let date = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("X-Amz-Date="))?;
    let signed = jiff::civil::DateTime::strptime("%Y%m%dT%H%M%SZ", date)
        .ok()?
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()?
        .timestamp();
    signed
        .checked_add(jiff::SignedDuration::try_from(lifetime).ok()?)
        .ok()
}

/// The exec plugin of the user kubeconfig: `aws eks get-token` for the EKS cluster.
pub fn get_token_plugin(eks_name: &str, region: &str) -> ExecPlugin {
    let mut plugin = ExecPlugin::new(
        "aws",
        [
            "eks",
            "get-token",
            "--cluster-name",
            eks_name,
            "--region",
            region,
        ],
    );
    plugin.install_hint = Some("Install the AWS CLI (https://aws.amazon.com/cli/) and configure credentials for this account.".into());
    plugin
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::client::token::TOKEN_LIFETIME;

    fn t(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[tokio::test]
    async fn a_minted_eks_token_reads_back_with_the_lifetime_in_force() {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let tokens = Tokens {
            credentials: creds,
            region: "us-west-2".into(),
            eks_name: "ns-c1".into(),
            lifetime: TOKEN_LIFETIME,
        };
        let minted = tokens
            .mint(t(0), "arn:aws:eks:us-east-1:111122223333:cluster/c1")
            .await
            .unwrap();
        assert_eq!(minted.expires_at, t(900));
        assert_eq!(tokens.expires_at(&minted.token), Some(t(900)));
        // Read with a one-minute lifetime, the same token expires a minute after signing: the
        // lifetime in force decides, not the token.
        let short = Tokens {
            lifetime: Duration::from_secs(60),
            ..tokens.clone()
        };
        assert_eq!(short.expires_at(&minted.token), Some(t(60)));
        assert_eq!(tokens.expires_at("not-an-eks-token"), None);
        assert!(
            !format!("{minted:?}").contains(&minted.token),
            "no token in Debug"
        );
    }

    #[test]
    fn a_minted_token_says_when_it_expires() {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let minted =
            crate::client::token::mint(&creds, "us-west-2", "ns-c1", at, TOKEN_LIFETIME).unwrap();
        let expiry = token_expiry(&minted.token, TOKEN_LIFETIME).unwrap();
        assert_eq!(expiry, minted.expires_at);
        assert_eq!(token_expiry("not-a-token", Duration::from_secs(1)), None);
        assert_eq!(token_expiry("k8s-aws-v1.!!!", Duration::from_secs(1)), None);
    }

    #[test]
    fn the_user_kubeconfig_runs_aws_eks_get_token_for_the_cluster() {
        let plugin = get_token_plugin("ns-c1", "us-west-2");
        assert_eq!(plugin.command, "aws");
        assert_eq!(
            plugin.args,
            [
                "eks",
                "get-token",
                "--cluster-name",
                "ns-c1",
                "--region",
                "us-west-2"
            ]
        );
        assert_eq!(plugin.api_version, "client.authentication.k8s.io/v1beta1");
    }
}
