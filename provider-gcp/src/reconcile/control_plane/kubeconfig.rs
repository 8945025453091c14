//! The kubeconfigs' credentials: the OAuth access tokens of `<cluster>-kubeconfig`
//! ([`Tokens`]) and the exec plugin of `<cluster>-user-kubeconfig` ([`auth_plugin`]).

use contract::kubeconfig::ExecPlugin;
use provider_runtime::ProviderError;
use provider_runtime::kubeconfig::{MintedToken, TokenSource};

use crate::client::ServiceAccountKey;

/// OAuth access tokens for the kubeconfig Secret, minted from the identity's key.
pub struct Tokens {
    pub(super) http: reqwest::Client,
    pub(super) key: ServiceAccountKey,
    pub(super) lifetime: std::time::Duration,
}

impl TokenSource for Tokens {
    fn lifetime(&self) -> std::time::Duration {
        self.lifetime
    }

    fn expires_at(&self, _token: &str) -> Option<jiff::Timestamp> {
        // An access token is opaque: the Secret's recorded expiry is used.
        None
    }

    async fn mint(&self, now: jiff::Timestamp, _: &str) -> Result<MintedToken, ProviderError> {
        crate::client::token::mint(&self.http, &self.key, now).await
    }
}

/// `gke-gcloud-auth-plugin`, the exec plugin of the user kubeconfig.
pub fn auth_plugin() -> ExecPlugin {
    let mut plugin = ExecPlugin::new("gke-gcloud-auth-plugin", Vec::<String>::new());
    plugin.install_hint = Some(
        "Install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin) and log in with gcloud auth login.".into(),
    );
    plugin.provide_cluster_info = true;
    plugin
}
