//! The cloud's own host names, on loopback: an HTTP proxy that answers `CONNECT <host>:443` for
//! the emulated cloud's API hosts and then serves the emulator's routes over TLS (HTTP/1.1 or
//! HTTP/2 by ALPN, so gRPC works) with a certificate from the emulator's own CA.
//!
//! A client that dials only the cloud's fixed host names (Google's gRPC clients do) reaches the
//! emulator unchanged through `HTTPS_PROXY=http://127.0.0.1:<port>` and a trust bundle holding
//! [`Front::ca_pem`]. Go, like most clients, never proxies loopback, so the management plane
//! and the workload API servers stay direct.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

/// The longest CONNECT request head read before the connection is dropped.
const MAX_HEAD: usize = 8 * 1024;

/// How long a client has to send its CONNECT request.
const HEAD_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A running proxy in front of an emulator's routes.
#[derive(Debug)]
pub struct Front {
    proxy_url: String,
    ca_pem: String,
    task: JoinHandle<()>,
}

impl Front {
    /// Serves `app` behind a CONNECT proxy on `listener` for `hosts` (port 443 each), with a
    /// serving certificate for those names from a CA made for this front.
    ///
    /// # Errors
    /// The certificates cannot be made or the listener's address cannot be read.
    pub fn start(listener: TcpListener, hosts: &[&str], app: Router) -> Result<Self> {
        let authority = testbed::pki::Authority::new("capi-managed emulator CA")
            .context("making the emulator's CA")?;
        let serving = authority
            .serving(hosts.first().copied().unwrap_or("localhost"), hosts, &[])
            .context("making the emulator's serving certificate")?;
        let mut chain = Vec::new();
        for pem in [&serving.cert_pem, &authority.cert_pem().to_string()] {
            chain.push(
                CertificateDer::from_pem_slice(pem.as_bytes())
                    .context("reading the serving certificate")?,
            );
        }
        let key = PrivateKeyDer::from_pem_slice(serving.key_pem.as_bytes())
            .context("reading the serving key")?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("choosing TLS versions")?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .context("loading the serving certificate")?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let addr = listener
            .local_addr()
            .context("reading the proxy's address")?;
        let hosts: Arc<[String]> = hosts.iter().map(|h| (*h).to_string()).collect();
        // The tunnels are the accept loop's own: stopping it (on drop) ends them all.
        let task = tokio::spawn(async move {
            let mut tunnels = tokio::task::JoinSet::new();
            loop {
                while tunnels.try_join_next().is_some() {}
                let stream = match listener.accept().await {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of descriptors, say: wait rather than spin.
                        tracing::warn!(error = %e, "the proxy could not accept");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let (acceptor, app, hosts) = (acceptor.clone(), app.clone(), hosts.clone());
                tunnels.spawn(async move {
                    if let Err(e) = tunnel(stream, &hosts, acceptor, app).await {
                        tracing::debug!(error = %e, "proxied connection ended");
                    }
                });
            }
        });
        Ok(Self {
            proxy_url: format!("http://127.0.0.1:{}", addr.port()),
            ca_pem: authority.cert_pem().to_string(),
            task,
        })
    }

    /// `http://127.0.0.1:<port>`: what `HTTPS_PROXY` names.
    pub fn proxy_url(&self) -> &str {
        &self.proxy_url
    }

    /// The CA that signed the hosts' certificate, PEM: the trust bundle clients need.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One proxied connection: the CONNECT request, then TLS, then the routes.
async fn tunnel(
    mut stream: TcpStream,
    hosts: &[String],
    acceptor: TlsAcceptor,
    app: Router,
) -> Result<()> {
    let head = tokio::time::timeout(HEAD_WITHIN, read_head(&mut stream))
        .await
        .context("no CONNECT request in time")??;
    let target = head
        .lines()
        .next()
        .and_then(|line| {
            let mut parts = line.split(' ');
            match (parts.next(), parts.next()) {
                (Some("CONNECT"), Some(target)) => Some(target.to_string()),
                _ => None,
            }
        })
        .unwrap_or_default();
    let served = target
        .strip_suffix(":443")
        .is_some_and(|host| hosts.iter().any(|h| h == host));
    if !served {
        // Anything else (another cloud host, a plain request) is not this cloud's.
        stream
            .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            .await?;
        anyhow::bail!("refused CONNECT {target:?}");
    }
    stream
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    let tls = acceptor.accept(stream).await.context("TLS handshake")?;
    hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
        .await
        .map_err(|e| anyhow::anyhow!("serving {target}: {e}"))
}

/// Reads a request head up to its blank line (the client sends nothing more before the answer).
async fn read_head(stream: &mut TcpStream) -> Result<String> {
    let mut head = Vec::with_capacity(256);
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_HEAD || stream.read(&mut byte).await? == 0 {
            anyhow::bail!("no complete CONNECT request");
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}
