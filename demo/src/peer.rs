//! The Go peers run beside ours on the same bed: [`capg`] for GKE, [`capoci`] for OKE, and here the one the
//! benchmark measures beside our EKS provider: Cluster API Provider AWS (CAPA)
//! v2.13.0, built from its published Go module (`testbed/build-capa.sh`, nothing patched), run
//! out of cluster on the same management plane against the same EKS emulator and moto.
//!
//! The scenario is the one both providers can run the same way: a network the user brings (one
//! VPC with two subnets in two zones, made in moto), IAM roles made beforehand (CAPA's
//! `EKSEnableIAM` off), no add-ons, one managed node group per cluster. CAPA's admission
//! webhooks are not registered with the API server (they would need a serving address the API
//! server trusts), so the cluster YAML writes out what their defaulting would set.

pub mod capg;
pub mod capoci;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use testbed::ManagementPlane;
use tokio::process::Child;

/// The CAPA release measured (the only one the Go module proxy serves here).
pub const CAPA_VERSION: &str = "v2.13.0";

/// The label Cluster API core reads a provider's contract versions from: every peer follows the
/// v1beta1 contract with each version its CRDs serve. The peers' kustomizations put it on every
/// CRD; their bare CRD files do not carry it.
const CONTRACT_LABEL: &str = "cluster.x-k8s.io/v1beta1";

/// The directory holding CAPA's binary and CRDs: `CAPA_ASSETS`, or built (once, cached) by
/// `testbed/build-capa.sh`.
///
/// # Errors
/// The build failed (it needs Go and the module proxy).
pub async fn assets() -> Result<PathBuf> {
    built("build-capa.sh", "CAPA_ASSETS", "CAPA", CAPA_VERSION).await
}

/// A peer's binary and CRDs: the directory `assets_var` names, or what `testbed/<script>`
/// builds (once; cached).
async fn built(script: &str, assets_var: &str, peer: &str, version: &str) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(assets_var) {
        return Ok(PathBuf::from(dir));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testbed")
        .join(script);
    eprintln!("demo: building {peer} {version} (cached after the first time)");
    let out = tokio::process::Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .await
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!(
            "building {peer} with {} failed (its log is above): it needs Go and the Go module proxy; \
             {assets_var} can name a directory holding a prebuilt binary and crds/",
            script.display()
        );
    }
    Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
}

/// Installs a peer's CRDs (every file of `crds/`), each labelled with the contract it follows.
///
/// # Errors
/// A file is not a CRD, or the API server refused one.
pub async fn install_crds(plane: &ManagementPlane, assets: &Path) -> Result<()> {
    let mut crds = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(assets.join("crds"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let mut crd: CustomResourceDefinition =
            serde_saphyr::from_str(&text).with_context(|| format!("reading {}", file.display()))?;
        let versions: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        let versions = versions.join("_");
        crd.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(CONTRACT_LABEL.into(), versions);
        crds.push(crd);
    }
    plane.install_crds(&crds).await
}

/// A directory with a serving pair for `peer`'s webhook server: it must start (no peer lets it
/// be switched off), though no webhook configuration points at it.
///
/// # Errors
/// The pair could not be made or written.
fn webhook_certs(plane: &ManagementPlane, run_dir: &Path, peer: &str) -> Result<PathBuf> {
    let certs = run_dir.join(format!("{peer}-webhook-certs"));
    std::fs::create_dir_all(&certs)?;
    let pair = plane.ca().serving(&format!("{peer}-webhook"), &[], &[])?;
    std::fs::write(certs.join("tls.crt"), &pair.cert_pem)?;
    std::fs::write(certs.join("tls.key"), &pair.key_pem)?;
    Ok(certs)
}

/// What the clusters of the scenario name in AWS: the pre-made roles and the network.
#[derive(Debug, Clone)]
pub struct Aws {
    /// The control plane's role (name).
    pub control_plane_role: String,
    /// The node groups' role (name).
    pub node_role: String,
    /// The VPC.
    pub vpc: String,
    /// Its two subnets, in two zones.
    pub subnets: Vec<String>,
}

/// Makes the roles and the network in moto.
///
/// # Errors
/// moto refused a call.
pub async fn prepare_aws(moto_url: &str, region: &str, access_key: &str) -> Result<Aws> {
    let ec2 = emulators::eks::ec2::Ec2::new(moto_url, region, access_key);
    let control_plane_role = "bench-eks-control-plane".to_string();
    let node_role = "bench-eks-nodes".to_string();
    ec2.create_role(&control_plane_role, "eks.amazonaws.com")
        .await
        .context("creating the control plane's role in moto")?;
    ec2.create_role(&node_role, "ec2.amazonaws.com")
        .await
        .context("creating the nodes' role in moto")?;
    let zones = [format!("{region}a"), format!("{region}b")];
    let network = emulators::eks::outside::create_network(&ec2, "bench-network", 90, &zones)
        .await
        .context("creating the network in moto")?;
    Ok(Aws {
        control_plane_role,
        node_role,
        vpc: network.vpc,
        subnets: network.subnets.into_iter().map(|(id, _)| id).collect(),
    })
}

/// Starts CAPA against the management plane as its own user (in `system:masters`, so the API
/// server's audit log tells its writes apart); returns it and its metrics port. `env` carries
/// the AWS settings (credentials, region, endpoints).
///
/// # Errors
/// A file could not be written or the process not started.
pub fn start(
    plane: &ManagementPlane,
    assets: &Path,
    run_dir: &Path,
    logs: &Path,
    env: &[(&str, String)],
) -> Result<(Child, u16)> {
    let binary = assets.join("cluster-api-provider-aws");
    let user = "cluster-api-provider-aws";
    let kubeconfig = crate::env::own_kubeconfig(plane, run_dir, user)?;
    let certs = webhook_certs(plane, run_dir, "capa")?;
    let metrics_port = testbed::process::free_port()?;
    let webhook_port = testbed::process::free_port()?;
    let mut command = testbed::process::command(&binary);
    command.args([
        // EKS is on by default; IAM management off (roles made beforehand).
        "--feature-gates=EKS=true,EKSEnableIAM=false,EKSAllowAddRoles=false,MachinePool=true,EKSFargate=false",
        "--disable-controllers=unmanaged",
        "--leader-elect=false",
        // Its default --sync-period (10 minutes, the most it allows with EKS on) and
        // concurrency (5 workers per kind) are kept: the peer runs as installed.
        &format!("--webhook-port={webhook_port}"),
        &format!("--webhook-cert-dir={}", certs.display()),
        "--health-addr=0",
        "--insecure-diagnostics",
        &format!("--diagnostics-address=127.0.0.1:{metrics_port}"),
        "-v=2",
    ]);
    let mut env = env.to_vec();
    env.push(("HOME", run_dir.display().to_string()));
    let child = crate::env::spawn_logged(
        command,
        &kubeconfig,
        &env,
        &logs.join(format!("{user}.log")),
    )
    .with_context(|| format!("starting {}", binary.display()))?;
    Ok((child, metrics_port))
}

/// One cluster of the scenario for CAPA: Cluster, AWSManagedCluster, AWSManagedControlPlane on
/// the brought network, a MachinePool of `workers` nodes and its AWSManagedMachinePool.
pub fn cluster_yaml(
    name: &str,
    namespace: &str,
    version: &str,
    workers: u32,
    region: &str,
    aws: &Aws,
) -> String {
    let subnets: String = aws
        .subnets
        .iter()
        .map(|s| format!("\n      - id: {s}"))
        .collect();
    let subnet_ids = aws.subnets.join(", ");
    let Aws {
        control_plane_role,
        node_role,
        vpc,
        ..
    } = aws;
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: {namespace}
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: AWSManagedCluster
    name: {name}
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: AWSManagedControlPlane
    name: {name}-control-plane
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSManagedCluster
metadata:
  name: {name}
  namespace: {namespace}
spec: {{}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: AWSManagedControlPlane
metadata:
  name: {name}-control-plane
  namespace: {namespace}
  annotations:
    aws.cluster.x-k8s.io/external-resource-gc: "false"
spec:
  eksClusterName: {namespace}_{name}-control-plane
  region: {region}
  version: {version}
  roleName: {control_plane_role}
  network:
    vpc:
      id: {vpc}
    subnets:{subnets}
  endpointAccess:
    public: true
    private: false
  bastion:
    enabled: false
  tokenMethod: iam-authenticator
  associateOIDCProvider: false
  bootstrapSelfManagedAddons: false
  vpcCni:
    disable: true
  kubeProxy:
    disable: false
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
        kind: AWSManagedMachinePool
        name: {name}-pool-0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSManagedMachinePool
metadata:
  name: {name}-pool-0
  namespace: {namespace}
spec:
  eksNodegroupName: {namespace}_{name}-pool-0
  roleName: {node_role}
  amiType: AL2023_x86_64_STANDARD
  instanceType: t3.medium
  subnetIDs: [{subnet_ids}]
  scaling:
    minSize: 1
    maxSize: {max}
  updateConfig:
    maxUnavailable: 1
  nodeRepairConfig:
    enabled: false
"#,
        max = workers.max(1) + 2,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_yaml_is_five_objects_naming_the_network_and_roles() {
        let aws = Aws {
            control_plane_role: "cp".into(),
            node_role: "nodes".into(),
            vpc: "vpc-1".into(),
            subnets: vec!["subnet-a".into(), "subnet-b".into()],
        };
        let yaml = cluster_yaml("c0", "bench", "v1.31.0", 1, "us-west-2", &aws);
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).unwrap();
        let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                "Cluster",
                "AWSManagedCluster",
                "AWSManagedControlPlane",
                "MachinePool",
                "AWSManagedMachinePool"
            ]
        );
        let cp = &docs[2]["spec"];
        assert_eq!(cp["network"]["vpc"]["id"], "vpc-1");
        assert_eq!(cp["network"]["subnets"][1]["id"], "subnet-b");
        assert_eq!(cp["roleName"], "cp");
        assert_eq!(docs[4]["spec"]["subnetIDs"][0], "subnet-a");
        assert_eq!(docs[4]["spec"]["scaling"]["maxSize"], 3);
        assert_eq!(
            docs[3]["spec"]["template"]["spec"]["bootstrap"]["dataSecretName"],
            ""
        );
    }
}
