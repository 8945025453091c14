//! Running the GKE emulator on a listener, in-process (tests) or from the `emulator` binary
//! (the kit's [`Served`]).

use std::sync::Arc;

use anyhow::Result;
use tokio::net::TcpListener;

use super::{Gke, GkeConfig, api};
use crate::kit::{Emulated, Kit, Served, Timing};

/// A running GKE emulator.
pub type GkeServer = Served<Gke>;

impl Emulated for Gke {
    fn kit(&self) -> &Arc<Kit> {
        Gke::kit(self)
    }

    async fn shutdown(&self) {
        Gke::shutdown(self).await;
    }
}

impl Served<Gke> {
    /// The emulated service and its state.
    pub fn gke(&self) -> &Arc<Gke> {
        self.service()
    }

    /// The token URI service-account keys must name.
    pub fn token_uri(&self) -> String {
        format!("{}/token", self.url())
    }
}

/// Serves GKE on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read or a trusted key is unreadable.
pub async fn serve_gke(
    config: GkeConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<GkeServer> {
    let kit = Arc::new(Kit::new("gke", timing));
    let service = Arc::new(Gke::new(config, kit)?);
    service.spawn_ticker();
    let app = api::router(service.clone());
    Served::start(listener, service, app)
}
