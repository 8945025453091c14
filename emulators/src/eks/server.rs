//! Running the EKS emulator on a listener, in-process (tests) or from the `emulator` binary
//! (the kit's [`Served`]).

use std::sync::Arc;

use anyhow::Result;
use tokio::net::TcpListener;

use super::{Eks, EksConfig, router};
use crate::kit::{Emulated, Kit, Served, Timing};

/// A running EKS emulator.
pub type ServerHandle = Served<Eks>;

impl Emulated for Eks {
    fn kit(&self) -> &Arc<Kit> {
        Eks::kit(self)
    }

    async fn shutdown(&self) {
        Eks::shutdown(self).await;
    }
}

impl Served<Eks> {
    /// The emulated service and its state.
    pub fn eks(&self) -> &Arc<Eks> {
        self.service()
    }
}

/// Serves EKS on `listener` with the given delays; the ticker runs from now on.
///
/// # Errors
/// When the listener's address cannot be read.
pub async fn serve_eks(
    config: EksConfig,
    timing: Timing,
    listener: TcpListener,
) -> Result<ServerHandle> {
    let kit = Arc::new(Kit::new("eks", timing));
    let service = Arc::new(Eks::new(config, kit));
    service.spawn_ticker();
    let app = router(service.clone());
    Served::start(listener, service, app)
}
