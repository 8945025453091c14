//! Running the AKS emulator on a listener, in-process (tests) or from the `emulator` binary
//! (the kit's [`Served`]).

use std::sync::Arc;

use anyhow::Result;
use tokio::net::TcpListener;

use super::{Aks, AksConfig, api};
use crate::kit::{Emulated, Kit, Served, Timing};

/// A running AKS emulator.
pub type AksServer = Served<Aks>;

impl Emulated for Aks {
    fn kit(&self) -> &Arc<Kit> {
        Aks::kit(self)
    }

    async fn shutdown(&self) {
        Aks::shutdown(self).await;
    }
}

impl Served<Aks> {
    /// The emulated service and its state.
    pub fn aks(&self) -> &Arc<Aks> {
        self.service()
    }

    /// The tenant's token endpoint, `<url>/<tenant>/oauth2/v2.0/token`.
    pub fn token_url(&self) -> String {
        format!(
            "{}/{}/oauth2/v2.0/token",
            self.url(),
            self.service().config().tenant
        )
    }
}

/// Serves AKS on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read or the signing key cannot be made.
pub async fn serve_aks(
    config: AksConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<AksServer> {
    let kit = Arc::new(Kit::new("aks", timing));
    let service = Arc::new(Aks::new(config, kit)?);
    service.spawn_ticker();
    let app = api::router(service.clone());
    Served::start(listener, service, app)
}
