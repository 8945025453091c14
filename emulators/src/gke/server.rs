//! Running the GKE emulator on a listener (REST and gRPC), with a proxy for Google's own host
//! names beside it, in-process (tests) or from the `emulator` binary
//! (the kit's [`Served`]).

use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::net::TcpListener;

use super::{Gke, GkeConfig, api, grpc};
use crate::kit::tls::Front;
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

    /// `http://127.0.0.1:<port>`: an HTTPS proxy (`HTTPS_PROXY`) through which
    /// [`GOOGLE_HOSTS`] on port 443 reach this emulator, over TLS from [`Self::ca_pem`]'s CA,
    /// REST or gRPC.
    pub fn proxy_url(&self) -> &str {
        self.front().map_or("", Front::proxy_url)
    }

    /// The CA behind the Google hosts' certificate (PEM): the trust bundle a client needs.
    pub fn ca_pem(&self) -> &str {
        self.front().map_or("", Front::ca_pem)
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
    let rest = api::router(service.clone());
    let app = rest.clone().merge(grpc::router(rest)?);
    let proxy = TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("binding the proxy for Google's host names")?;
    let front = Front::start(proxy, &GOOGLE_HOSTS, app.clone())?;
    Ok(Served::start(listener, service, app)?.with_front(front))
}

/// The Google API hosts served through the emulator's proxy ([`GkeServer::proxy_url`]).
pub const GOOGLE_HOSTS: [&str; 4] = [
    "container.googleapis.com",
    "compute.googleapis.com",
    "iamcredentials.googleapis.com",
    "oauth2.googleapis.com",
];
