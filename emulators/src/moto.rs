//! moto (pinned, from PyPI) in server mode on loopback: the third-party emulator of EC2, IAM and
//! STS that the AWS tests run against beside our EKS emulator.
//!
//! What moto checks and what it does not is written down in `emulators/README.md`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use testbed::process::{Process, free_port, http_status, wait_until};

/// The script that installs moto into a cached virtualenv and prints `moto_server`'s path.
pub const ENSURE_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/moto/ensure-moto.sh");

/// A running moto server. Dropping it kills the process.
#[derive(Debug)]
pub struct Moto {
    url: String,
    process: Process,
}

impl Moto {
    /// Installs moto if needed (`MOTO_SERVER` points at a prebuilt one), starts it on a free
    /// loopback port with its log in `log_dir`, and waits until it answers.
    pub async fn start(log_dir: &Path) -> Result<Self> {
        let output = tokio::process::Command::new("bash")
            .arg(ENSURE_SCRIPT)
            .stderr(std::process::Stdio::inherit())
            .output()
            .await
            .with_context(|| format!("running {ENSURE_SCRIPT}"))?;
        if !output.status.success() {
            bail!("{ENSURE_SCRIPT} failed ({})", output.status);
        }
        let server = String::from_utf8_lossy(&output.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_string();
        let port = free_port()?;
        std::fs::create_dir_all(log_dir)?;
        // EC2 refuses instance types it does not have; moto does so only when asked.
        let mut process = Process::spawn_with_env(
            "moto",
            Path::new(&server),
            &[
                "-H".into(),
                "127.0.0.1".into(),
                "-p".into(),
                port.to_string(),
            ],
            &[("MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION", "true")],
            log_dir,
        )?;
        let ready = wait_until(
            "moto to answer",
            Duration::from_secs(60),
            Duration::from_millis(200),
            || async move { Ok(http_status(port, "/moto-api/").await.unwrap_or(0) == 200) },
        )
        .await;
        if let Err(e) = ready {
            process.ensure_running()?;
            return Err(e);
        }
        Ok(Self {
            url: format!("http://127.0.0.1:{port}"),
            process,
        })
    }

    /// `http://127.0.0.1:<port>`: the value of `AWS_ENDPOINT_URL` for EC2, IAM and STS.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops moto.
    pub async fn stop(mut self) {
        self.process.stop(Duration::from_secs(3)).await;
    }
}
