//! The two kubeconfig Secrets of an EKS cluster, and when to write them.
//!
//! `<cluster>-kubeconfig` holds an EKS token (a presigned STS URL, good for 15 minutes, or the
//! lifetime the provider is configured with); it is rewritten once the token is due for refresh
//! (when a third of its lifetime is left: 5 minutes before it expires on EKS), when the server or
//! CA changed, or when the Secret lost its shape (type, label, owner). `<cluster>-user-kubeconfig`
//! runs `aws eks get-token` and is rewritten only when its content would change. A resting
//! cluster therefore costs one Secret write per token refresh and nothing else.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{ApiEndpoint, Endpoint, EndpointName};
use contract::capi::{CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE};
use contract::kubeconfig::{ExecPlugin, KUBECONFIG_DATA_KEY, Kubeconfig, kubeconfig_from_secret};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

use super::mapping::token_expiry;
use crate::cloud::token::refresh_lead;

/// When a token of `lifetime` expiring at `expires_at` is to be replaced: when a third of its
/// lifetime is left.
pub fn refresh_at(expires_at: jiff::Timestamp, lifetime: Duration) -> jiff::Timestamp {
    let lead = jiff::SignedDuration::try_from(refresh_lead(lifetime))
        .unwrap_or(jiff::SignedDuration::ZERO);
    expires_at.checked_sub(lead).unwrap_or(expires_at)
}

/// How long until the token of `lifetime` expiring at `expires_at` is due for refresh (at least
/// a second).
pub fn until_refresh(
    expires_at: jiff::Timestamp,
    now: jiff::Timestamp,
    lifetime: Duration,
) -> Duration {
    let left = refresh_at(expires_at, lifetime).duration_since(now);
    Duration::try_from(left)
        .unwrap_or(Duration::ZERO)
        .max(Duration::from_secs(1))
}

/// Whether `secret` has the type, label and controller owner both Secrets must carry.
fn well_formed(secret: &Secret, cluster_name: &str, owner_uid: &str) -> bool {
    secret.type_.as_deref() == Some(CLUSTER_SECRET_TYPE)
        && secret.labels().get(CLUSTER_NAME_LABEL).map(String::as_str) == Some(cluster_name)
        && secret
            .owner_references()
            .iter()
            .any(|o| o.uid == owner_uid && o.controller == Some(true))
}

/// When the token in an existing `<cluster>-kubeconfig` expires, if the Secret can stay as it
/// is at `now`: right shape, server `server`, CA `ca_pem`, and a token (living `lifetime` from
/// its signing time) not yet due for refresh. `None` means write it.
pub fn contract_secret_good_until(
    existing: Option<&Secret>,
    cluster_name: &str,
    owner_uid: &str,
    server: &ApiEndpoint,
    ca_pem: &[u8],
    now: jiff::Timestamp,
    lifetime: Duration,
) -> Option<jiff::Timestamp> {
    let secret = existing?;
    if !well_formed(secret, cluster_name, owner_uid) {
        return None;
    }
    let config = kubeconfig_from_secret(secret).ok()?;
    let cluster = config
        .current()
        .and_then(|c| config.cluster(&c.context.cluster))?;
    if cluster.server != server.https_url()
        || cluster.certificate_authority_data.as_deref() != Some(STANDARD.encode(ca_pem).as_str())
    {
        return None;
    }
    let token = config.current_user()?.token.as_deref()?;
    let expires_at = token_expiry(token, lifetime)?;
    (now < refresh_at(expires_at, lifetime)).then_some(expires_at)
}

/// Whether an existing user Secret already is `desired` (shape and kubeconfig bytes).
pub fn user_secret_current(
    existing: Option<&Secret>,
    desired: &Secret,
    cluster_name: &str,
    owner_uid: &str,
) -> bool {
    let value = |s: &Secret| {
        s.data
            .as_ref()
            .and_then(|d| d.get(KUBECONFIG_DATA_KEY))
            .map(|v| v.0.clone())
    };
    existing.is_some_and(|s| {
        well_formed(s, cluster_name, owner_uid) && value(s).is_some() && value(s) == value(desired)
    })
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

/// The preferred endpoint's name for the user kubeconfig's current context.
pub fn preferred_name(endpoints: &[Endpoint], preferred: EndpointName) -> EndpointName {
    if endpoints.iter().any(|e| e.name == preferred) {
        preferred
    } else {
        endpoints.first().map(|e| e.name).unwrap_or(preferred)
    }
}

/// Reads a Secret by name (`None` when absent).
pub async fn read(api: &Api<Secret>, name: &str) -> Result<Option<Secret>, kube::Error> {
    api.get_opt(name).await
}

/// Writes `secret` with server-side apply under `field_manager`.
pub async fn apply(
    api: &Api<Secret>,
    secret: &Secret,
    field_manager: &str,
) -> Result<(), kube::Error> {
    let name = secret.name_any();
    api.patch(
        &name,
        &PatchParams::apply(field_manager).force(),
        &Patch::Apply(secret),
    )
    .await?;
    Ok(())
}

/// The kubeconfig in a Secret (for tests and diagnostics).
pub fn parse(secret: &Secret) -> Option<Kubeconfig> {
    kubeconfig_from_secret(secret).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::SystemTime;

    use contract::kubeconfig::{cluster_kubeconfig_secret, user_kubeconfig_secret};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;
    use crate::cloud::AwsCredentials;
    use crate::cloud::token::TOKEN_LIFETIME;

    /// EKS's lifetime.
    const L: Duration = TOKEN_LIFETIME;

    const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn owner() -> OwnerReference {
        OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1alpha1".into(),
            kind: "EKSControlPlane".into(),
            name: "c1-cp".into(),
            uid: "uid-1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    fn server() -> ApiEndpoint {
        ApiEndpoint {
            host: "x.gr7.us-west-2.eks.amazonaws.com".into(),
            port: 443,
        }
    }

    fn secret_signed_at(at: jiff::Timestamp, lifetime: Duration) -> Secret {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let token =
            crate::cloud::token::mint(&creds, "us-west-2", "ns-c1", SystemTime::from(at), lifetime)
                .unwrap();
        cluster_kubeconfig_secret("c1", "ns", owner(), &server(), CA, &token.token)
    }

    fn t(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_fresh_token_keeps_the_secret_until_five_minutes_before_expiry() {
        let secret = secret_signed_at(t(0), L);
        let good =
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &server(), CA, t(60), L);
        assert_eq!(good, Some(t(900)));
        assert_eq!(until_refresh(t(900), t(60), L), Duration::from_secs(540));
        assert_eq!(
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &server(), CA, t(599), L),
            Some(t(900))
        );
        assert_eq!(
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &server(), CA, t(600), L),
            None,
            "due for refresh"
        );
        assert_eq!(
            until_refresh(t(900), t(899), L),
            Duration::from_secs(1),
            "never a zero requeue"
        );
    }

    #[test]
    fn a_short_lived_token_is_refreshed_when_a_third_of_its_lifetime_is_left() {
        let minute = Duration::from_secs(60);
        let secret = secret_signed_at(t(0), minute);
        let good = |now| {
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &server(), CA, now, minute)
        };
        assert_eq!(refresh_at(t(60), minute), t(40));
        assert_eq!(good(t(1)), Some(t(60)));
        assert_eq!(until_refresh(t(60), t(1), minute), Duration::from_secs(39));
        assert_eq!(good(t(39)), Some(t(60)));
        assert_eq!(good(t(40)), None, "due for refresh at 40 s");
        // Read with EKS's lifetime, the same token is good for 15 minutes: the lifetime in force
        // decides, not the token.
        assert_eq!(
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &server(), CA, t(40), L),
            Some(t(900))
        );
    }

    #[test]
    fn a_secret_is_rewritten_when_missing_moved_or_misshapen() {
        let secret = secret_signed_at(t(0), L);
        assert_eq!(
            contract_secret_good_until(None, "c1", "uid-1", &server(), CA, t(1), L),
            None
        );
        let moved = ApiEndpoint {
            host: "y.example".into(),
            port: 443,
        };
        assert_eq!(
            contract_secret_good_until(Some(&secret), "c1", "uid-1", &moved, CA, t(1), L),
            None
        );
        assert_eq!(
            contract_secret_good_until(
                Some(&secret),
                "c1",
                "uid-1",
                &server(),
                b"other CA",
                t(1),
                L
            ),
            None
        );
        assert_eq!(
            contract_secret_good_until(Some(&secret), "c1", "uid-2", &server(), CA, t(1), L),
            None,
            "another owner"
        );
        let mut unlabelled = secret.clone();
        unlabelled.metadata.labels = None;
        assert_eq!(
            contract_secret_good_until(Some(&unlabelled), "c1", "uid-1", &server(), CA, t(1), L),
            None
        );
        let mut static_token =
            cluster_kubeconfig_secret("c1", "ns", owner(), &server(), CA, "not-an-eks-token");
        assert_eq!(
            contract_secret_good_until(Some(&static_token), "c1", "uid-1", &server(), CA, t(1), L),
            None
        );
        static_token.data = None;
        assert_eq!(
            contract_secret_good_until(Some(&static_token), "c1", "uid-1", &server(), CA, t(1), L),
            None
        );
    }

    #[test]
    fn the_user_secret_is_rewritten_only_when_its_content_changes() {
        let endpoints = vec![Endpoint {
            name: EndpointName::Public,
            host: server().host,
            port: 443,
        }];
        let build = |region: &str| {
            user_kubeconfig_secret(
                "c1",
                "ns",
                owner(),
                &endpoints,
                EndpointName::Public,
                CA,
                get_token_plugin("ns-c1", region),
            )
            .unwrap()
        };
        let desired = build("us-west-2");
        assert!(user_secret_current(
            Some(&build("us-west-2")),
            &desired,
            "c1",
            "uid-1"
        ));
        assert!(!user_secret_current(
            Some(&build("eu-west-1")),
            &desired,
            "c1",
            "uid-1"
        ));
        assert!(!user_secret_current(None, &desired, "c1", "uid-1"));
        let config = parse(&desired).unwrap();
        assert!(!config.has_static_credential());
        let exec = config.current_user().unwrap().exec.as_ref().unwrap();
        assert_eq!(exec.command, "aws");
        assert_eq!(
            exec.args,
            [
                "eks",
                "get-token",
                "--cluster-name",
                "ns-c1",
                "--region",
                "us-west-2"
            ]
        );
        assert_eq!(exec.api_version, "client.authentication.k8s.io/v1beta1");
    }

    #[test]
    fn the_current_context_falls_back_to_an_endpoint_that_exists() {
        let public = vec![Endpoint {
            name: EndpointName::Public,
            host: "h".into(),
            port: 443,
        }];
        assert_eq!(
            preferred_name(&public, EndpointName::Private),
            EndpointName::Public
        );
        assert_eq!(
            preferred_name(&public, EndpointName::Public),
            EndpointName::Public
        );
    }
}
