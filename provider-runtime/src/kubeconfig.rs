//! The two kubeconfig Secrets of a managed control plane, written the same way for every cloud.
//!
//! A cloud supplies only what is its own: a [`TokenSource`] (how it mints the short-lived
//! credential of `<cluster>-kubeconfig`, how long the cluster accepts one, and how to read a
//! token's expiry back) and the exec plugin of `<cluster>-user-kubeconfig`. Everything else is
//! here: the Secrets' shape ([`contract::kubeconfig`]), when each is rewritten (missing, moved,
//! misshapen, or the token due for refresh when a third of its lifetime is left), and the write
//! (server-side apply under the provider's field manager). A resting cluster costs one Secret
//! write per token refresh and nothing else; [`until_refresh`] says when to look again.

use std::time::Duration;

use contract::api::{ApiEndpoint, Endpoint, EndpointName};
use contract::kubeconfig::{
    ContractSecretSpec, ExecPlugin, cluster_kubeconfig_secret, contract_secret_good_until,
    kubeconfig_secret_name, preferred_name, user_kubeconfig_secret, user_kubeconfig_secret_name,
    user_secret_current, with_token_expiry,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

pub use contract::kubeconfig::until_refresh;

use crate::ProviderError;

/// A minted credential and when it stops working.
#[derive(Clone)]
pub struct MintedToken {
    /// The bearer token.
    pub token: String,
    /// When the cluster stops accepting it.
    pub expires_at: jiff::Timestamp,
}

impl std::fmt::Debug for MintedToken {
    // The token is a credential: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MintedToken")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// How a cloud makes the credential of `<cluster>-kubeconfig`.
pub trait TokenSource {
    /// How long the cluster accepts a token.
    fn lifetime(&self) -> Duration;

    /// When `token` (read back from the Secret) expires, when the token itself says (an EKS
    /// token is dated); `None` for an opaque token (an OAuth access token): the expiry the
    /// Secret was written with is used instead ([`contract::kubeconfig::TOKEN_EXPIRY_ANNOTATION`]).
    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp>;

    /// A new token, good from `now`: signed locally (EKS) or exchanged at the cloud's token
    /// endpoint (GKE).
    ///
    /// # Errors
    /// When the cloud's signer or token endpoint fails; the message is for a condition.
    fn mint(
        &self,
        now: jiff::Timestamp,
        cloud_id: &str,
    ) -> impl std::future::Future<Output = Result<MintedToken, ProviderError>> + Send;
}

/// The Secrets of one control plane: where they live and who owns them.
#[derive(Clone)]
pub struct KubeconfigSecrets<'a> {
    /// Client to the management cluster.
    pub client: &'a kube::Client,
    /// The provider's field manager.
    pub field_manager: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster_name: &'a str,
    /// The ControlPlane, as the Secrets' controller owner.
    pub owner: OwnerReference,
}

/// What the Secrets point at.
#[derive(Clone, Debug)]
pub struct KubeconfigTarget<'a> {
    /// The cloud's id of the cluster the pass observed (for a token that names it).
    pub cloud_id: &'a str,
    /// The server of `<cluster>-kubeconfig` (the user's endpoint, or the published one).
    pub server: &'a ApiEndpoint,
    /// The cluster CA, PEM.
    pub ca_pem: &'a [u8],
    /// Every endpoint the cloud exposes: one context each in the user kubeconfig.
    pub endpoints: &'a [Endpoint],
    /// The endpoint the user kubeconfig's current context should use.
    pub preferred: EndpointName,
    /// The user kubeconfig's exec plugin (`aws eks get-token`, `kubelogin`, …).
    pub plugin: ExecPlugin,
}

impl KubeconfigSecrets<'_> {
    /// Writes whichever of the two Secrets is missing, stale or due for a token refresh, and
    /// returns when the contract Secret's token expires.
    ///
    /// # Errors
    /// A management-API error as [`ProviderError::Kube`]; a token or kubeconfig that cannot be
    /// made as a cloud error (the control plane's `KubeconfigReady` says so).
    pub async fn ensure(
        &self,
        target: &KubeconfigTarget<'_>,
        tokens: &impl TokenSource,
        now: jiff::Timestamp,
    ) -> Result<jiff::Timestamp, ProviderError> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), self.namespace);
        let name = kubeconfig_secret_name(self.cluster_name);
        let existing = api.get_opt(&name).await?;
        let spec = ContractSecretSpec {
            cluster_name: self.cluster_name,
            owner_uid: &self.owner.uid,
            server: target.server,
            ca_pem: target.ca_pem,
            lifetime: tokens.lifetime(),
        };
        let good =
            contract_secret_good_until(existing.as_ref(), &spec, now, |t| tokens.expires_at(t));
        let expires_at = match good {
            Some(expiry) => expiry,
            None => {
                let token = tokens.mint(now, target.cloud_id).await?;
                let secret = with_token_expiry(
                    cluster_kubeconfig_secret(
                        self.cluster_name,
                        self.namespace,
                        self.owner.clone(),
                        target.server,
                        target.ca_pem,
                        &token.token,
                    ),
                    token.expires_at,
                );
                self.apply(&api, &secret).await?;
                tracing::debug!(secret = %name, "kubeconfig Secret written");
                token.expires_at
            }
        };

        let desired = user_kubeconfig_secret(
            self.cluster_name,
            self.namespace,
            self.owner.clone(),
            target.endpoints,
            preferred_name(target.endpoints, target.preferred),
            target.ca_pem,
            target.plugin.clone(),
        )
        .map_err(|e| ProviderError::cloud("cloud_response", e.to_string()))?;
        let user_name = user_kubeconfig_secret_name(self.cluster_name);
        let existing = api.get_opt(&user_name).await?;
        if !user_secret_current(
            existing.as_ref(),
            &desired,
            self.cluster_name,
            &self.owner.uid,
        ) {
            self.apply(&api, &desired).await?;
            tracing::debug!(secret = %user_name, "user kubeconfig Secret written");
        }
        Ok(expires_at)
    }

    async fn apply(&self, api: &Api<Secret>, secret: &Secret) -> Result<(), kube::Error> {
        api.patch(
            &secret.name_any(),
            &PatchParams::apply(self.field_manager).force(),
            &Patch::Apply(secret),
        )
        .await?;
        Ok(())
    }
}
