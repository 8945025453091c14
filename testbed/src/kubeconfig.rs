//! Writing kubeconfig files for the bed's API servers.

use std::path::Path;

use anyhow::Result;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::pki::CertPair;

/// How a kubeconfig authenticates.
#[derive(Debug, Clone)]
pub enum KubeconfigAuth {
    /// A client certificate and key.
    ClientCertificate(CertPair),
    /// A bearer token.
    Token(String),
}

/// Writes a single-context kubeconfig (context and cluster named `testbed`) to `path`.
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_pem: &str,
    auth: &KubeconfigAuth,
) -> Result<()> {
    write_kubeconfig_in(path, server, ca_pem, auth, None)
}

/// [`write_kubeconfig`] whose context names `namespace` (a client's default namespace: where a
/// controller run out of cluster keeps its leader Lease).
pub fn write_kubeconfig_in(
    path: &Path,
    server: &str,
    ca_pem: &str,
    auth: &KubeconfigAuth,
    namespace: Option<&str>,
) -> Result<()> {
    let ca = STANDARD.encode(ca_pem);
    let user = match auth {
        KubeconfigAuth::ClientCertificate(pair) => format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            STANDARD.encode(&pair.cert_pem),
            STANDARD.encode(&pair.key_pem)
        ),
        KubeconfigAuth::Token(token) => format!("    token: {token}\n"),
    };
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\nusers:\n- name: testbed\n  user:\n{user}contexts:\n- name: testbed\n  context:\n    cluster: testbed\n    user: testbed\n{namespace}current-context: testbed\n",
        namespace = namespace
            .map(|ns| format!("    namespace: {ns}\n"))
            .unwrap_or_default()
    );
    std::fs::write(path, text)?;
    Ok(())
}
