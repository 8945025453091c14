//! The real programs the bed runs: found in `TESTBED_ASSETS`, or built once from their Go modules
//! by `testbed/build-assets.sh` into a per-user cache keyed by version.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Environment variable naming a directory of prebuilt assets (as envtest's `KUBEBUILDER_ASSETS`).
pub const ASSETS_ENV: &str = "TESTBED_ASSETS";

/// The script that builds the assets; it prints the asset directory on its last line.
pub const BUILD_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/build-assets.sh");

/// The build script: where this crate was compiled, or, when that checkout is gone (a binary
/// built in another clone sharing the target directory), `testbed/build-assets.sh` under the
/// working directory.
fn build_script() -> PathBuf {
    let compiled = PathBuf::from(BUILD_SCRIPT);
    if compiled.is_file() {
        return compiled;
    }
    PathBuf::from("testbed/build-assets.sh")
}

/// Paths of the management-plane programs and the Cluster API manifests they need.
#[derive(Debug, Clone)]
pub struct Assets {
    dir: PathBuf,
}

impl Assets {
    /// Finds the assets: `TESTBED_ASSETS` if set, else the cache, building it first if needed
    /// (several minutes on a fresh machine; seconds afterwards).
    pub fn locate() -> Result<Self> {
        if let Some(dir) = std::env::var_os(ASSETS_ENV).filter(|d| !d.is_empty()) {
            return Self::at(PathBuf::from(dir));
        }
        let script = build_script();
        let output = std::process::Command::new("bash")
            .arg(&script)
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running {}", script.display()))?;
        if !output.status.success() {
            bail!(
                "{} failed ({}); see its output above",
                script.display(),
                output.status
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let dir = stdout.lines().last().map(str::trim).unwrap_or_default();
        if dir.is_empty() {
            bail!("{} printed no asset directory", script.display());
        }
        Self::at(PathBuf::from(dir))
    }

    /// Uses the assets in `dir`, checking that every program is there.
    pub fn at(dir: PathBuf) -> Result<Self> {
        let assets = Self { dir };
        for program in [
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "capi-manager",
            "clusterctl",
        ] {
            let path = assets.dir.join(program);
            if !path.is_file() {
                bail!("test-bed asset {} is missing", path.display());
            }
        }
        Ok(assets)
    }

    /// The asset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// etcd.
    pub fn etcd(&self) -> PathBuf {
        self.dir.join("etcd")
    }
    /// kube-apiserver.
    pub fn kube_apiserver(&self) -> PathBuf {
        self.dir.join("kube-apiserver")
    }
    /// kube-controller-manager.
    pub fn kube_controller_manager(&self) -> PathBuf {
        self.dir.join("kube-controller-manager")
    }
    /// The Cluster API core manager.
    pub fn capi_manager(&self) -> PathBuf {
        self.dir.join("capi-manager")
    }
    /// clusterctl.
    pub fn clusterctl(&self) -> PathBuf {
        self.dir.join("clusterctl")
    }
    /// Cluster API core's CRDs (`core/config/crd/bases` of the same module).
    pub fn capi_crd_dir(&self) -> PathBuf {
        self.dir.join("capi-config").join("crd")
    }
    /// Cluster API core's webhook configurations (`core/config/webhook/manifests.yaml`).
    pub fn capi_webhooks(&self) -> PathBuf {
        self.dir.join("capi-config").join("webhooks.yaml")
    }
    /// Cluster API's own `metadata.yaml` (release series and contracts).
    pub fn capi_metadata(&self) -> PathBuf {
        self.dir.join("capi-metadata.yaml")
    }
    /// The pinned versions, one `name version` line each.
    pub fn versions(&self) -> String {
        std::fs::read_to_string(self.dir.join("VERSIONS")).unwrap_or_default()
    }
}
