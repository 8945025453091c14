//! The Go peer for GKE: Cluster API Provider GCP (CAPG) v1.13.1 with its GKE controllers, built
//! from its published Go module (`testbed/build-capg.sh`, nothing patched) and run out of
//! cluster on the same management plane against the GKE emulator.
//!
//! CAPG dials Google's own host names only (Kubernetes Engine and IAM Credentials over gRPC,
//! Compute over REST, each on port 443 with TLS), so it reaches the emulator the way it would
//! reach Google through a corporate proxy: `HTTPS_PROXY` names the emulator's CONNECT proxy and
//! `SSL_CERT_FILE` the emulator's CA. Its service-account key names the emulator's token
//! endpoint on loopback, which Go never proxies; nor the management plane and the workload API
//! servers.
//!
//! The scenario is the one both providers run the same way: a network the user brings (named,
//! so CAPG neither creates nor deletes it), a regional cluster, one node pool per cluster with
//! autoscaling off. CAPG's admission webhooks are not registered with the API server, so the
//! YAML writes out what their defaulting would set.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use testbed::ManagementPlane;
use tokio::process::Child;

/// The CAPG release run.
pub const CAPG_VERSION: &str = "v1.13.1";

/// The directory holding CAPG's binary and CRDs: `CAPG_ASSETS`, or built (once, cached) by
/// `testbed/build-capg.sh`.
///
/// # Errors
/// The build failed (it needs Go and the module proxy).
pub async fn assets() -> Result<PathBuf> {
    super::built("build-capg.sh", "CAPG_ASSETS", "CAPG", CAPG_VERSION).await
}

/// Where CAPG's Google clients go: the emulator's proxy and the CA its hosts' certificate is
/// from, and the service-account key CAPG signs with.
#[derive(Debug, Clone)]
pub struct Google {
    /// `http://127.0.0.1:<port>`: the emulator's CONNECT proxy for Google's host names.
    pub proxy_url: String,
    /// The emulator's CA (PEM).
    pub ca_pem: String,
    /// The service-account key file (JSON), its token URI on loopback.
    pub key_file: PathBuf,
}

/// Starts CAPG's GKE controllers against the management plane as their own user (so the API
/// server's audit log tells its writes apart); returns it and its metrics port (plain http).
///
/// # Errors
/// A file could not be written or the process not started.
pub fn start(
    plane: &ManagementPlane,
    assets: &Path,
    run_dir: &Path,
    logs: &Path,
    google: &Google,
) -> Result<(Child, u16)> {
    let binary = assets.join("cluster-api-provider-gcp");
    let user = "cluster-api-provider-gcp";
    let kubeconfig = crate::env::own_kubeconfig(plane, run_dir, user)?;
    let certs = super::webhook_certs(plane, run_dir, "capg")?;
    let ca = run_dir.join("capg-google-ca.pem");
    std::fs::write(&ca, &google.ca_pem)?;
    let webhook_port = testbed::process::free_port()?;
    let health_port = testbed::process::free_port()?;
    let metrics_port = testbed::process::free_port()?;
    let mut command = testbed::process::command(&binary);
    command.args([
        // GKE's controllers only; CAPG's own GCPMachinePool controller is not wanted.
        "--feature-gates=GKE=true,MachinePool=false",
        "--leader-elect=false",
        &format!("--diagnostics-address=127.0.0.1:{metrics_port}"),
        "--insecure-diagnostics",
        &format!("--health-addr=127.0.0.1:{health_port}"),
        &format!("--webhook-port={webhook_port}"),
        &format!("--webhook-cert-dir={}", certs.display()),
        "-v=2",
    ]);
    let env = [
        ("HOME", run_dir.display().to_string()),
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            google.key_file.display().to_string(),
        ),
        ("HTTPS_PROXY", google.proxy_url.clone()),
        ("SSL_CERT_FILE", ca.display().to_string()),
        // Plain TLS to the usual endpoints: no client certificate (Google's libraries would
        // otherwise switch to the mTLS hosts where a gcloud certificate config exists), no
        // DirectPath.
        ("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false".to_string()),
        ("GOOGLE_API_USE_MTLS_ENDPOINT", "never".to_string()),
        ("GOOGLE_CLOUD_DISABLE_DIRECT_PATH", "true".to_string()),
    ];
    let child = crate::env::spawn_logged(
        command,
        &kubeconfig,
        &env,
        &logs.join(format!("{user}.log")),
    )
    .with_context(|| format!("starting {}", binary.display()))?;
    Ok((child, metrics_port))
}

/// One cluster for CAPG: Cluster, GCPManagedCluster on the brought `network` of `project` in
/// `region`, GCPManagedControlPlane at `version` (a full `x.y.z`, as CAPG compares it with
/// GKE's answer), a MachinePool of `workers` nodes and its GCPManagedMachinePool in one zone.
pub fn cluster_yaml(
    name: &str,
    namespace: &str,
    version: &str,
    workers: u32,
    project: &str,
    region: &str,
    network: &str,
) -> String {
    let bare = version.trim_start_matches('v');
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: {namespace}
spec:
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: GCPManagedCluster
    name: {name}
  controlPlaneRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: GCPManagedControlPlane
    name: {name}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPManagedCluster
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  project: {project}
  region: {region}
  network:
    name: {network}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPManagedControlPlane
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  project: {project}
  location: {region}
  clusterName: {namespace}-{name}
  version: "{bare}"
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata:
  name: {name}-pool-0
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  clusterName: {name}
  replicas: {workers}
  template:
    spec:
      clusterName: {name}
      version: {version}
      bootstrap:
        dataSecretName: ""
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: GCPManagedMachinePool
        name: {name}-pool-0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: GCPManagedMachinePool
metadata:
  name: {name}-pool-0
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  nodePoolName: pool-0
  machineType: e2-medium
  nodeLocations: [{region}-a]
  scaling:
    enableAutoscaling: false
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_yaml_is_five_objects_on_the_brought_network() {
        let yaml = cluster_yaml("g0", "bench", "v1.33.5", 2, "p", "us-central1", "net");
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).unwrap();
        let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                "Cluster",
                "GCPManagedCluster",
                "GCPManagedControlPlane",
                "MachinePool",
                "GCPManagedMachinePool"
            ]
        );
        assert_eq!(docs[1]["spec"]["network"]["name"], "net");
        assert_eq!(docs[2]["spec"]["version"], "1.33.5");
        assert_eq!(docs[2]["spec"]["clusterName"], "bench-g0");
        assert_eq!(docs[3]["spec"]["replicas"], 2);
        assert_eq!(docs[4]["spec"]["nodeLocations"][0], "us-central1-a");
    }
}
