//! The kubeconfigs' credentials: the tokens of `<cluster>-kubeconfig`, signed here in
//! `oci ce cluster generate-token`'s form ([`Tokens`]), and the exec plugin of
//! `<cluster>-user-kubeconfig` ([`user_exec`]).

use std::time::Duration;

use contract::conditions::Reason;
use contract::kubeconfig::ExecPlugin;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::UserExec;
use provider_runtime::kubeconfig::{MintedToken, TokenSource};

use crate::client::Oci;
use crate::client::token::{cluster_token, signed_at};

/// Tokens of `oci ce cluster generate-token`'s form for the kubeconfig Secret, for the cluster
/// the kernel observed.
pub struct Tokens {
    /// The region's client: its API key signs, its region is the token's.
    pub(super) oci: Oci,
    /// How long after its signing a token is taken to hold.
    pub(super) lifetime: Duration,
}

impl Tokens {
    /// How long after its signing a token is taken to hold.
    fn span(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::try_from(self.lifetime).unwrap_or_default()
    }
}

impl TokenSource for Tokens {
    fn lifetime(&self) -> Duration {
        self.lifetime
    }

    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        signed_at(token).map(|t| t + self.span())
    }

    async fn mint(
        &self,
        now: jiff::Timestamp,
        cluster: &str,
    ) -> Result<MintedToken, ProviderError> {
        let token = cluster_token(self.oci.key(), self.oci.region(), cluster, now)
            .map_err(|e| ProviderError::terminal(Reason::Unauthorized, e.to_string()))?;
        Ok(MintedToken {
            token,
            expires_at: now + self.span(),
        })
    }
}

/// `oci ce cluster generate-token` in `region`, without the cluster (`--cluster-id`, which
/// [`user_exec`] has the kernel add with the OCID of the cluster it observed).
pub fn auth_plugin(region: &str) -> ExecPlugin {
    let mut plugin = ExecPlugin::new(
        "oci",
        ["ce", "cluster", "generate-token", "--region", region],
    );
    plugin.install_hint = Some(
        "Install the OCI CLI (https://docs.oracle.com/iaas/Content/API/SDKDocs/cliinstall.htm) and configure it with oci setup config.".into(),
    );
    plugin
}

/// The exec plugin of the user kubeconfig: [`auth_plugin`], and `--cluster-id` with the OCID of
/// the cluster observed.
pub fn user_exec(region: &str) -> UserExec {
    UserExec {
        plugin: auth_plugin(region),
        cloud_id_flag: Some("--cluster-id"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_is_the_oci_cli_s() {
        let p = user_exec("us-ashburn-1").for_cluster("ocid1.cluster.oc1.iad.x");
        assert_eq!(p.command, "oci");
        assert_eq!(
            p.args,
            [
                "ce",
                "cluster",
                "generate-token",
                "--region",
                "us-ashburn-1",
                "--cluster-id",
                "ocid1.cluster.oc1.iad.x"
            ]
        );
    }
}
