//! What is AKS's own in the two kubeconfig Secrets (the rest is the kernel's,
//! [`provider_runtime::kubeconfig`]): the Microsoft Entra token of `<cluster>-kubeconfig`, for
//! AKS's server application, and the `kubelogin` exec plugin of `<cluster>-user-kubeconfig`.

use std::sync::Arc;
use std::time::Duration;

use contract::kubeconfig::ExecPlugin;
use provider_runtime::ProviderError;
use provider_runtime::kubeconfig::{MintedToken, TokenSource};

use crate::client;
use crate::client::credentials::{AKS_SCOPE, AKS_SERVER_APP, jwt_expiry};

/// Entra tokens for the kubeconfig Secret.
pub struct Tokens {
    entra: Arc<client::Tokens>,
    lifetime: Duration,
}

impl Tokens {
    /// Tokens exchanged by `entra`'s identity, which the cluster accepts for `lifetime`.
    pub fn new(entra: Arc<client::Tokens>, lifetime: Duration) -> Self {
        Self { entra, lifetime }
    }
}

impl TokenSource for Tokens {
    fn lifetime(&self) -> Duration {
        self.lifetime
    }

    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        jwt_expiry(token)
    }

    async fn mint(&self, now: jiff::Timestamp, _: &str) -> Result<MintedToken, ProviderError> {
        let t = self.entra.exchange(AKS_SCOPE, now).await?;
        Ok(MintedToken {
            token: t.token.0,
            expires_at: t.expires_at,
        })
    }
}

/// `kubelogin`, the exec plugin of the user kubeconfig (Entra sign-in through the Azure CLI).
pub fn auth_plugin() -> ExecPlugin {
    let mut plugin = ExecPlugin::new(
        "kubelogin",
        [
            "get-token",
            "--login",
            "azurecli",
            "--server-id",
            AKS_SERVER_APP,
        ],
    );
    plugin.install_hint = Some(
        "Install kubelogin (az aks install-cli, or https://azure.github.io/kubelogin) and sign in with az login.".into(),
    );
    plugin
}
