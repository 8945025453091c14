//! The provider processes: where a provider binary is found, the kubeconfig of its own user
//! (so the API server's audit log tells its writes apart), and how it is spawned with nothing
//! but the environment it is given, its output into a log file.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use testbed::ManagementPlane;
use tokio::process::Child;

use super::Cloud;

/// A provider binary next to the running executable (`target/<profile>/`), or the one
/// `PROVIDER_AWS_BIN` / `PROVIDER_GCP_BIN` / `PROVIDER_AZURE_BIN` / `PROVIDER_OCI_BIN` names.
pub fn provider_binary(cloud: Cloud) -> Result<PathBuf> {
    let var = match cloud {
        Cloud::Eks => "PROVIDER_AWS_BIN",
        Cloud::Gke => "PROVIDER_GCP_BIN",
        Cloud::Aks => "PROVIDER_AZURE_BIN",
        Cloud::Oke => "PROVIDER_OCI_BIN",
    };
    if let Some(path) = std::env::var_os(var) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    for dir in exe.ancestors().skip(1).take(2) {
        let candidate = dir.join(cloud.binary());
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "{} binary not found next to {}; build it with `cargo build -p {}`",
        cloud.binary(),
        exe.display(),
        cloud.binary()
    )
}

/// Starts a provider; returns it and its metrics port.
pub(super) fn start_provider(
    cloud: Cloud,
    plane: &ManagementPlane,
    logs: &Path,
    poll: &str,
    env: &[(&str, String)],
) -> Result<(Child, u16)> {
    let binary = provider_binary(cloud)?;
    let metrics_port = testbed::process::free_port()?;
    let kubeconfig = own_kubeconfig(plane, logs.parent().unwrap_or(logs), cloud.binary())?;
    let mut command = testbed::process::command(&binary);
    command
        .args([
            "--metrics-bind-address",
            &format!("127.0.0.1:{metrics_port}"),
            "--health-probe-bind-address",
            "0",
            "--poll-interval",
            poll,
        ])
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        );
    let child = spawn_logged(
        command,
        &kubeconfig,
        env,
        &logs.join(format!("{}.log", cloud.binary())),
    )
    .with_context(|| format!("starting {}", binary.display()))?;
    Ok((child, metrics_port))
}

/// A kubeconfig in `dir` for `user`, its own user (in `system:masters`), so the API server's
/// audit log tells that program's writes apart from core's.
pub(crate) fn own_kubeconfig(plane: &ManagementPlane, dir: &Path, user: &str) -> Result<PathBuf> {
    let kubeconfig = dir.join(format!("{user}.kubeconfig"));
    testbed::write_kubeconfig(
        &kubeconfig,
        plane.server(),
        plane.ca().cert_pem(),
        &testbed::KubeconfigAuth::ClientCertificate(
            plane.ca().client(user, Some("system:masters"))?,
        ),
    )?;
    Ok(kubeconfig)
}

/// Starts `command` with only `PATH`, `KUBECONFIG` and `env` in its environment, its output
/// into `log`.
pub(crate) fn spawn_logged(
    mut command: tokio::process::Command,
    kubeconfig: &Path,
    env: &[(&str, String)],
    log: &Path,
) -> Result<Child> {
    // Appended to: a provider restarted by a test keeps its earlier lines.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("KUBECONFIG", kubeconfig);
    for (k, v) in env {
        command.env(k, v);
    }
    Ok(command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?)
}
