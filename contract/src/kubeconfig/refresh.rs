//! When the kubeconfig Secrets are written again, the same on every cloud (the runtime does the
//! writing): a token is replaced once a third of its lifetime is left, the contract Secret stays
//! while its shape, server, CA and token hold, and the user Secret while its bytes are current.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Secret;

use super::{KUBECONFIG_DATA_KEY, kubeconfig_from_secret};
use crate::api::{ApiEndpoint, Endpoint, EndpointName};
use crate::capi::{CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE};

/// The part of a token's lifetime still left when the provider replaces it: one over this (five
/// minutes of EKS's fifteen; 20 s of a 60 s lifetime).
pub const REFRESH_LEAD_DIVISOR: u32 = 3;

/// How long before it expires a token of `lifetime` is replaced: a third of the lifetime.
pub fn refresh_lead(lifetime: std::time::Duration) -> std::time::Duration {
    lifetime / REFRESH_LEAD_DIVISOR
}

/// When a token of `lifetime` expiring at `expires_at` is to be replaced.
pub fn refresh_at(expires_at: jiff::Timestamp, lifetime: std::time::Duration) -> jiff::Timestamp {
    let lead = jiff::SignedDuration::try_from(refresh_lead(lifetime))
        .unwrap_or(jiff::SignedDuration::ZERO);
    expires_at.checked_sub(lead).unwrap_or(expires_at)
}

/// How long from `now` until that token is due for refresh (at least a second, so a requeue is
/// never immediate).
pub fn until_refresh(
    expires_at: jiff::Timestamp,
    now: jiff::Timestamp,
    lifetime: std::time::Duration,
) -> std::time::Duration {
    let left = refresh_at(expires_at, lifetime).duration_since(now);
    std::time::Duration::try_from(left)
        .unwrap_or(std::time::Duration::ZERO)
        .max(std::time::Duration::from_secs(1))
}

/// Whether `secret` has the type, label and controller owner both Secrets must carry.
fn well_formed(secret: &Secret, cluster_name: &str, owner_uid: &str) -> bool {
    let labels = secret.metadata.labels.as_ref();
    secret.type_.as_deref() == Some(CLUSTER_SECRET_TYPE)
        && labels
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
            .map(String::as_str)
            == Some(cluster_name)
        && secret
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid && o.controller == Some(true))
}

/// What the contract Secret should hold: its Cluster, owner, server and CA, and how its token
/// is read.
#[derive(Clone, Copy, Debug)]
pub struct ContractSecretSpec<'a> {
    /// The Cluster's name (the Secret's label).
    pub cluster_name: &'a str,
    /// The ControlPlane's UID (the Secret's controller owner).
    pub owner_uid: &'a str,
    /// The API server.
    pub server: &'a ApiEndpoint,
    /// The cluster CA, PEM.
    pub ca_pem: &'a [u8],
    /// How long the cloud accepts a token.
    pub lifetime: std::time::Duration,
}

/// The annotation on `<cluster>-kubeconfig` saying when its token expires (RFC 3339), written
/// with every token: an opaque token (an OAuth access token) does not say itself.
pub const TOKEN_EXPIRY_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/token-expires-at";

/// `secret` with [`TOKEN_EXPIRY_ANNOTATION`] set to `expires_at`.
pub fn with_token_expiry(mut secret: Secret, expires_at: jiff::Timestamp) -> Secret {
    secret
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(TOKEN_EXPIRY_ANNOTATION.to_owned(), expires_at.to_string());
    secret
}

/// When the token in an existing `<cluster>-kubeconfig` expires, if the Secret can stay as it is
/// at `now`: right shape, server and CA, and a token not yet due for refresh. `expiry_of` reads
/// a token's expiry the cloud's way; when it cannot (`None`, an opaque token), the expiry the
/// Secret was written with ([`TOKEN_EXPIRY_ANNOTATION`]) is used; with neither, the Secret is
/// replaced. `None` means write it.
pub fn contract_secret_good_until(
    existing: Option<&Secret>,
    spec: &ContractSecretSpec<'_>,
    now: jiff::Timestamp,
    expiry_of: impl Fn(&str) -> Option<jiff::Timestamp>,
) -> Option<jiff::Timestamp> {
    let secret = existing?;
    if !well_formed(secret, spec.cluster_name, spec.owner_uid) {
        return None;
    }
    let config = kubeconfig_from_secret(secret).ok()?;
    let cluster = config
        .current()
        .and_then(|c| config.cluster(&c.context.cluster))?;
    if cluster.server != spec.server.https_url()
        || cluster.certificate_authority_data.as_deref()
            != Some(STANDARD.encode(spec.ca_pem).as_str())
    {
        return None;
    }
    let token = config.current_user()?.token.as_deref()?;
    let expires_at = expiry_of(token).or_else(|| {
        secret
            .metadata
            .annotations
            .as_ref()?
            .get(TOKEN_EXPIRY_ANNOTATION)?
            .parse::<jiff::Timestamp>()
            .ok()
    })?;
    (now < refresh_at(expires_at, spec.lifetime)).then_some(expires_at)
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

/// The user kubeconfig's current context: the preferred endpoint when the cloud exposes it,
/// else the first it lists.
pub fn preferred_name(endpoints: &[Endpoint], preferred: EndpointName) -> EndpointName {
    if endpoints.iter().any(|e| e.name == preferred) {
        preferred
    } else {
        endpoints.first().map(|e| e.name).unwrap_or(preferred)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;
    use crate::kubeconfig::{ExecPlugin, cluster_kubeconfig_secret, user_kubeconfig_secret};

    const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    /// EKS's lifetime.
    const L: Duration = Duration::from_secs(15 * 60);

    fn owner() -> OwnerReference {
        OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1alpha1".into(),
            kind: "XControlPlane".into(),
            name: "c1-cp".into(),
            uid: "uid-1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    fn server() -> ApiEndpoint {
        ApiEndpoint {
            host: "x.example".into(),
            port: 443,
        }
    }

    fn t(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    /// A test token that says when it was signed: `signed-<unix seconds>`.
    fn token_signed_at(at: jiff::Timestamp) -> String {
        format!("signed-{}", at.as_second())
    }

    /// Reads a test token as a cloud reads its own: signing time + `lifetime`.
    fn expiry(lifetime: Duration) -> impl Fn(&str) -> Option<jiff::Timestamp> {
        move |token| {
            let signed: i64 = token.strip_prefix("signed-")?.parse().ok()?;
            jiff::Timestamp::from_second(signed)
                .ok()?
                .checked_add(jiff::SignedDuration::try_from(lifetime).ok()?)
                .ok()
        }
    }

    fn secret_signed_at(at: jiff::Timestamp) -> Secret {
        cluster_kubeconfig_secret("c1", "ns", owner(), &server(), CA, &token_signed_at(at))
    }

    fn spec<'a>(
        server: &'a ApiEndpoint,
        ca: &'a [u8],
        uid: &'a str,
        lifetime: Duration,
    ) -> ContractSecretSpec<'a> {
        ContractSecretSpec {
            cluster_name: "c1",
            owner_uid: uid,
            server,
            ca_pem: ca,
            lifetime,
        }
    }

    #[test]
    fn a_fresh_token_keeps_the_secret_until_a_third_of_its_lifetime_is_left() {
        let secret = secret_signed_at(t(0));
        let s = server();
        let good = |now| {
            contract_secret_good_until(Some(&secret), &spec(&s, CA, "uid-1", L), now, expiry(L))
        };
        assert_eq!(good(t(60)), Some(t(900)));
        assert_eq!(until_refresh(t(900), t(60), L), Duration::from_secs(540));
        assert_eq!(good(t(599)), Some(t(900)));
        assert_eq!(good(t(600)), None, "due for refresh");
        assert_eq!(
            until_refresh(t(900), t(899), L),
            Duration::from_secs(1),
            "never a zero requeue"
        );
        let minute = Duration::from_secs(60);
        assert_eq!(refresh_at(t(60), minute), t(40));
        assert_eq!(refresh_lead(minute), Duration::from_secs(20));
        assert_eq!(refresh_lead(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_secret_is_rewritten_when_missing_moved_misshapen_or_unreadable() {
        let secret = secret_signed_at(t(0));
        let s = server();
        let moved = ApiEndpoint {
            host: "y.example".into(),
            port: 443,
        };
        let check = |secret: Option<&Secret>, spec: ContractSecretSpec<'_>| {
            contract_secret_good_until(secret, &spec, t(1), expiry(L))
        };
        assert_eq!(check(None, spec(&s, CA, "uid-1", L)), None);
        assert_eq!(check(Some(&secret), spec(&moved, CA, "uid-1", L)), None);
        assert_eq!(
            check(Some(&secret), spec(&s, b"other CA", "uid-1", L)),
            None
        );
        assert_eq!(
            check(Some(&secret), spec(&s, CA, "uid-2", L)),
            None,
            "another owner"
        );
        let mut unlabelled = secret.clone();
        unlabelled.metadata.labels = None;
        assert_eq!(check(Some(&unlabelled), spec(&s, CA, "uid-1", L)), None);
        let unreadable = cluster_kubeconfig_secret("c1", "ns", owner(), &s, CA, "static-token");
        assert_eq!(check(Some(&unreadable), spec(&s, CA, "uid-1", L)), None);
        // An opaque token is good until the expiry it was written with, refreshed as any.
        let opaque = with_token_expiry(unreadable.clone(), t(900));
        assert_eq!(check(Some(&opaque), spec(&s, CA, "uid-1", L)), Some(t(900)));
        assert_eq!(
            contract_secret_good_until(Some(&opaque), &spec(&s, CA, "uid-1", L), t(600), expiry(L)),
            None,
            "due for refresh"
        );
        let mut garbled = opaque.clone();
        garbled.metadata.annotations = Some(BTreeMap::from([(
            TOKEN_EXPIRY_ANNOTATION.to_owned(),
            "soon".to_owned(),
        )]));
        assert_eq!(check(Some(&garbled), spec(&s, CA, "uid-1", L)), None);
        assert_eq!(check(Some(&secret), spec(&s, CA, "uid-1", L)), Some(t(900)));
    }

    #[test]
    fn the_user_secret_is_current_only_with_the_same_content_and_shape() {
        let endpoints = vec![Endpoint {
            name: EndpointName::Public,
            host: "x.example".into(),
            port: 443,
        }];
        let build = |arg: &str| {
            user_kubeconfig_secret(
                "c1",
                "ns",
                owner(),
                &endpoints,
                EndpointName::Public,
                CA,
                ExecPlugin::new("cloud-cli", ["get-token", arg]),
            )
            .unwrap()
        };
        let desired = build("a");
        assert!(user_secret_current(
            Some(&build("a")),
            &desired,
            "c1",
            "uid-1"
        ));
        assert!(!user_secret_current(
            Some(&build("b")),
            &desired,
            "c1",
            "uid-1"
        ));
        assert!(!user_secret_current(None, &desired, "c1", "uid-1"));
        assert!(!user_secret_current(
            Some(&build("a")),
            &desired,
            "c1",
            "uid-2"
        ));
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
        assert_eq!(
            preferred_name(&[], EndpointName::Private),
            EndpointName::Private
        );
    }
}
