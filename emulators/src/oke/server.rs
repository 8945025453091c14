//! Running the OKE emulator on a listener, in-process (tests) or from the `emulator` binary
//! (the kit's [`Served`]).

use std::sync::Arc;

use anyhow::Result;
use tokio::net::TcpListener;

use super::{Oke, OkeConfig, api};
use crate::kit::{Emulated, Kit, Served, Timing};

/// A running OKE emulator.
pub type OkeServer = Served<Oke>;

impl Emulated for Oke {
    fn kit(&self) -> &Arc<Kit> {
        Oke::kit(self)
    }

    async fn shutdown(&self) {
        Oke::shutdown(self).await;
    }
}

impl Served<Oke> {
    /// The emulated service and its state.
    pub fn oke(&self) -> &Arc<Oke> {
        self.service()
    }
}

/// Serves OKE on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read.
pub async fn serve_oke(
    config: OkeConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<OkeServer> {
    let kit = Arc::new(Kit::new("oke", timing));
    let service = Arc::new(Oke::new(config, kit));
    service.spawn_ticker();
    let app = api::router(service.clone());
    Served::start(listener, service, app)
}
