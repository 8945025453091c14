//! The Go peer for OKE: Cluster API Provider for OCI (CAPOCI) v0.24.0, built from its published
//! Go module (`testbed/build-capoci.sh`, nothing patched) and run out of cluster on the same
//! management plane against the OKE emulator, over plain http on loopback: every OCI client's
//! host is set per cluster (`OCIManagedCluster.spec.hostUrl`), and the OCI Go SDK keeps an
//! `http://` scheme.
//!
//! The scenario is the one both providers run the same way: a network the user brings (CAPOCI's
//! `skipNetworkManagement`, a VCN with a public endpoint subnet, a private node subnet and a
//! public load-balancer subnet), the region's three availability domains named (CAPOCI would
//! otherwise list fault domains), Flannel, one node pool per cluster. CAPOCI's admission
//! webhooks are not registered with the API server, so the YAML writes out what their defaulting
//! and CAPOCI's own comparison defaults would set (an update is sent on every reconcile for any
//! field the answer has and the spec lacks).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use emulators::oke::outside::BroughtNetwork;
use testbed::ManagementPlane;
use tokio::process::Child;

/// The CAPOCI release run.
pub const CAPOCI_VERSION: &str = "v0.24.0";

/// The node image the pools boot: the emulator's Oracle Linux platform image (any version).
const PLATFORM_IMAGE: &str =
    "ocid1.image.oc1.iad.aaaaaaaaol810platform2026110100000000000000000000000000";

/// The directory holding CAPOCI's binary and CRDs: `CAPOCI_ASSETS`, or built (once, cached) by
/// `testbed/build-capoci.sh`.
///
/// # Errors
/// The build failed (it needs Go and the module proxy).
pub async fn assets() -> Result<PathBuf> {
    super::built("build-capoci.sh", "CAPOCI_ASSETS", "CAPOCI", CAPOCI_VERSION).await
}

/// What CAPOCI signs with: the emulator's tenancy, a user and the fingerprint and private key of
/// that user's API key.
#[derive(Debug, Clone)]
pub struct Signer {
    /// The tenancy OCID.
    pub tenancy: String,
    /// The user OCID.
    pub user: String,
    /// The key's fingerprint.
    pub fingerprint: String,
    /// The private key (PEM).
    pub key_pem: String,
    /// The region.
    pub region: String,
}

/// Starts CAPOCI against the management plane as its own user (so the API server's audit log
/// tells its writes apart), signing with `signer`; returns it and its metrics port.
///
/// # Errors
/// A file could not be written or the process not started.
pub fn start(
    plane: &ManagementPlane,
    assets: &Path,
    run_dir: &Path,
    logs: &Path,
    signer: &Signer,
) -> Result<(Child, u16)> {
    let binary = assets.join("cluster-api-provider-oci");
    let user = "cluster-api-provider-oci";
    let kubeconfig = crate::env::own_kubeconfig(plane, run_dir, user)?;
    let certs = super::webhook_certs(plane, run_dir, "capoci")?;
    // CAPOCI reads its credentials from AUTH_CONFIG_DIR, which may be one YAML file; the values
    // are used as read, so no trailing newline may end up in one.
    let auth = run_dir.join("capoci-auth.yaml");
    let indented: String = signer
        .key_pem
        .trim_end()
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect();
    std::fs::write(
        &auth,
        format!(
            "region: {}\ntenancy: {}\nuser: {}\nfingerprint: {}\npassphrase: \"\"\nuseInstancePrincipals: false\nkey: |\n{indented}",
            signer.region, signer.tenancy, signer.user, signer.fingerprint
        ),
    )?;
    let webhook_port = testbed::process::free_port()?;
    let metrics_port = testbed::process::free_port()?;
    let mut command = testbed::process::command(&binary);
    command.args([
        "--feature-gates=MachinePool=true,OKE=true",
        "--leader-elect=false",
        &format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
        "--health-probe-bind-address=0",
        &format!("--webhook-port={webhook_port}"),
        &format!("--webhook-cert-dir={}", certs.display()),
        "-v=2",
    ]);
    let env = [
        ("HOME", run_dir.display().to_string()),
        ("AUTH_CONFIG_DIR", auth.display().to_string()),
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

/// One cluster for CAPOCI: Cluster, OCIManagedCluster on the brought `network` in
/// `compartment`, OCIManagedControlPlane at `version`, a MachinePool of `workers` nodes and its
/// OCIManagedMachinePool; every OCI client pointed at the emulator at `url`.
pub fn cluster_yaml(
    name: &str,
    namespace: &str,
    version: &str,
    workers: u32,
    compartment: &str,
    network: &BroughtNetwork,
    url: &str,
) -> String {
    let url = url.trim_end_matches('/');
    let ads: String = emulators::oke::catalog::availability_domains(emulators::oke::REGION)
        .iter()
        .map(|ad| {
            format!(
                "\n    \"{ad}\":\n      name: \"{ad}\"\n      faultDomains: [FAULT-DOMAIN-1, FAULT-DOMAIN-2, FAULT-DOMAIN-3]"
            )
        })
        .collect();
    let BroughtNetwork {
        vcn,
        endpoint_subnet,
        node_subnet,
        lb_subnet,
    } = network;
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: {namespace}
spec:
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: OCIManagedCluster
    name: {name}
  controlPlaneRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: OCIManagedControlPlane
    name: {name}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OCIManagedCluster
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  compartmentId: {compartment}
  ociResourceIdentifier: {namespace}-{name}
  hostUrl:
    containerEngineClientUrl: {url}
    identityClientUrl: {url}
    vCNClientUrl: {url}
    computeClientUrl: {url}
    computeManagementClientUrl: {url}
    workrequestClientUrl: {url}
    loadBalancerClientUrl: {url}
    networkLoadBalancerClientUrl: {url}
  availabilityDomains:{ads}
  networkSpec:
    skipNetworkManagement: true
    vcn:
      id: {vcn}
      subnets:
      - role: control-plane-endpoint
        id: {endpoint_subnet}
        name: endpoint
        type: public
      - role: worker
        id: {node_subnet}
        name: nodes
        type: private
      - role: service-lb
        id: {lb_subnet}
        name: lb
        type: public
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OCIManagedControlPlane
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  version: {version}
  clusterPodNetworkOptions:
  - cniType: FLANNEL_OVERLAY
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata:
  name: {name}-pool-0
  namespace: {namespace}
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
        kind: OCIManagedMachinePool
        name: {name}-pool-0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OCIManagedMachinePool
metadata:
  name: {name}-pool-0
  namespace: {namespace}
  labels:
    cluster.x-k8s.io/cluster-name: {name}
spec:
  version: {version}
  nodeShape: VM.Standard.E4.Flex
  nodeShapeConfig:
    ocpus: "1"
    memoryInGBs: "16"
  nodeSourceViaImage:
    imageId: {PLATFORM_IMAGE}
    bootVolumeSizeInGBs: 50
  sshPublicKey: ""
  nodePoolNodeConfig:
    nodePoolPodNetworkOptionDetails:
      cniType: FLANNEL_OVERLAY
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_yaml_is_five_objects_on_the_brought_network_and_the_emulator() {
        let network = BroughtNetwork {
            vcn: "ocid1.vcn".into(),
            endpoint_subnet: "ocid1.subnet.ep".into(),
            node_subnet: "ocid1.subnet.nodes".into(),
            lb_subnet: "ocid1.subnet.lb".into(),
        };
        let yaml = cluster_yaml(
            "o0",
            "bench",
            "v1.33.1",
            2,
            "ocid1.compartment",
            &network,
            "http://127.0.0.1:1/",
        );
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).unwrap();
        let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                "Cluster",
                "OCIManagedCluster",
                "OCIManagedControlPlane",
                "MachinePool",
                "OCIManagedMachinePool"
            ]
        );
        let cluster = &docs[1]["spec"];
        assert_eq!(
            cluster["hostUrl"]["containerEngineClientUrl"],
            "http://127.0.0.1:1"
        );
        assert_eq!(
            cluster["networkSpec"]["vcn"]["subnets"][0]["type"],
            "public"
        );
        assert_eq!(
            cluster["availabilityDomains"]["Uocm:US-ASHBURN-AD-2"]["faultDomains"][2],
            "FAULT-DOMAIN-3"
        );
        assert_eq!(docs[3]["spec"]["replicas"], 2);
        assert_eq!(
            docs[4]["spec"]["nodeSourceViaImage"]["bootVolumeSizeInGBs"],
            50
        );
    }
}
