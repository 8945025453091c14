//! What a benchmark run measures: a provider on its cloud (ours on EKS, GKE or OKE, or the Go
//! peer a user would otherwise pick there), and everything the probes need to know of it: its
//! process, its kinds and how each reports itself ready, where its cloud calls are counted, and
//! the clusters it is given.

use serde_json::Value;

use crate::env::{Cloud, EksProvider, Environment, GCP_PROJECT, GCP_REGION};

/// A provider on its cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// EKS: ours (`provider-aws`) or CAPA.
    Eks(EksProvider),
    /// GKE: ours (`provider-gcp`).
    Gke,
    /// GKE: Cluster API Provider GCP ([`crate::peer::capg`]).
    Capg,
    /// OKE: ours (`provider-oci`).
    Oke,
    /// OKE: Cluster API Provider for OCI ([`crate::peer::capoci`]).
    Capoci,
}

const INFRA: &str = "infrastructure.cluster.x-k8s.io";

/// Where a provider's cloud calls are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Calls {
    /// The provider's own counter on its metrics page (EKS: its EC2 calls go to moto, which the
    /// emulator does not see).
    Metric(&'static str),
    /// The emulator's counters: every call the cloud answered, whoever's client sent it (the
    /// run has one provider).
    Emulator,
}

impl Subject {
    /// The cloud it manages.
    pub fn cloud(self) -> Cloud {
        match self {
            Subject::Eks(_) => Cloud::Eks,
            Subject::Gke | Subject::Capg => Cloud::Gke,
            Subject::Oke | Subject::Capoci => Cloud::Oke,
        }
    }

    /// Whether it is a Go peer (always on a brought network, with workload API servers).
    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Subject::Eks(EksProvider::Capa) | Subject::Capg | Subject::Capoci
        )
    }

    /// Its process's name, which is also the user it writes to kube-apiserver as.
    pub fn binary(self) -> &'static str {
        match self {
            Subject::Eks(provider) => provider.binary(),
            Subject::Gke => Cloud::Gke.binary(),
            Subject::Oke => Cloud::Oke.binary(),
            Subject::Capg => "cluster-api-provider-gcp",
            Subject::Capoci => "cluster-api-provider-oci",
        }
    }

    /// Its release, for the report.
    pub(super) fn release(self) -> Option<String> {
        match self {
            Subject::Eks(EksProvider::Capa) => Some(crate::peer::CAPA_VERSION.to_string()),
            Subject::Capg => Some(crate::peer::capg::CAPG_VERSION.to_string()),
            Subject::Capoci => Some(crate::peer::capoci::CAPOCI_VERSION.to_string()),
            _ => None,
        }
    }

    /// The stem of the files a run writes: `eks`, `gke` or `oke` (`-byo` on a brought network),
    /// `capa`, `capg`, `capoci`.
    pub(super) fn stem(self, byo_network: bool) -> &'static str {
        match (self, byo_network) {
            (Subject::Eks(EksProvider::Capa), _) => "capa",
            (Subject::Eks(_), true) => "eks-byo",
            (Subject::Eks(_), false) => "eks",
            (Subject::Gke, true) => "gke-byo",
            (Subject::Gke, false) => "gke",
            (Subject::Capg, _) => "capg",
            (Subject::Oke, true) => "oke-byo",
            (Subject::Oke, false) => "oke",
            (Subject::Capoci, _) => "capoci",
        }
    }

    /// The Kubernetes version its clusters run: one the cloud offers and the peer takes as
    /// written (CAPG compares a full `x.y.z` with GKE's answer).
    pub(super) fn kubernetes_version(self) -> &'static str {
        match self.cloud() {
            Cloud::Gke => "v1.33.5",
            Cloud::Oke => "v1.32.10",
            Cloud::Eks | Cloud::Aks => "v1.31.0",
        }
    }

    /// The state the emulator's milestone records when a create is done (P5).
    pub(super) fn created_state(self) -> &'static str {
        match self.cloud() {
            Cloud::Gke => "RUNNING",
            _ => "ACTIVE",
        }
    }

    pub(super) fn calls(self) -> Calls {
        match self {
            Subject::Eks(EksProvider::Capa) => Calls::Metric("aws_api_requests_total"),
            Subject::Eks(_) => Calls::Metric("capi_provider_cloud_calls_total"),
            _ => Calls::Emulator,
        }
    }

    /// Its reconcile-duration histogram: ours `capi_provider_reconcile_duration_seconds`, the
    /// peers' controller-runtime's `controller_runtime_reconcile_time_seconds`.
    pub(super) fn reconcile_metric(self) -> &'static str {
        if self.is_peer() {
            "controller_runtime_reconcile_time_seconds"
        } else {
            "capi_provider_reconcile_duration_seconds"
        }
    }

    /// The control plane's (group, version, kind).
    pub(super) fn control_plane(self) -> (&'static str, &'static str, &'static str) {
        const CP: &str = "controlplane.cluster.x-k8s.io";
        match self {
            Subject::Eks(EksProvider::Capa) => (CP, "v1beta2", "AWSManagedControlPlane"),
            Subject::Eks(_) => (CP, "v1alpha1", "EKSControlPlane"),
            Subject::Gke => (CP, "v1alpha1", "GKEControlPlane"),
            Subject::Oke => (CP, "v1alpha1", "OKEControlPlane"),
            Subject::Capg => (INFRA, "v1beta1", "GCPManagedControlPlane"),
            Subject::Capoci => (INFRA, "v1beta2", "OCIManagedControlPlane"),
        }
    }

    /// The pool's (group, version, kind).
    pub(super) fn pool(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Subject::Eks(EksProvider::Capa) => (INFRA, "v1beta2", "AWSManagedMachinePool"),
            Subject::Eks(_) => (INFRA, "v1alpha1", "EKSMachinePool"),
            Subject::Gke => (INFRA, "v1alpha1", "GKEMachinePool"),
            Subject::Oke => (INFRA, "v1alpha1", "OKEMachinePool"),
            Subject::Capg => (INFRA, "v1beta1", "GCPManagedMachinePool"),
            Subject::Capoci => (INFRA, "v1beta2", "OCIManagedMachinePool"),
        }
    }

    /// Whether a pool says it is ready: ours by its Ready condition, the peers (v1beta1
    /// contract) by `status.ready`.
    pub(super) fn pool_ready(self, pool: &Value) -> bool {
        if self.is_peer() {
            pool["status"]["ready"] == true
        } else {
            pool["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        }
    }

    /// The cloud's name of an initialized control plane of Cluster `cluster` in `ns` (None while
    /// not initialized): ours report `status.initialization.controlPlaneInitialized` (v1beta2
    /// contract) and derive the name; the peers report `status.initialized` (v1beta1) and name
    /// the cluster in their spec or by their object.
    pub(super) fn initialized_cloud_name(
        self,
        ns: &str,
        cluster: &str,
        control_plane: &Value,
    ) -> Option<String> {
        let status = &control_plane["status"];
        let ours = |limits: &contract::naming::NameLimits| {
            (status["initialization"]["controlPlaneInitialized"] == true)
                .then(|| contract::naming::derive_cloud_name(ns, cluster, limits))
        };
        // A peer's: `status.initialized`, the cloud's name where the peer keeps it.
        let peer = |name: &Value| {
            (status["initialized"] == true)
                .then(|| name.as_str().map(str::to_string))
                .flatten()
        };
        match self {
            Subject::Eks(EksProvider::Capa) => peer(&control_plane["spec"]["eksClusterName"]),
            Subject::Eks(_) => ours(&contract::naming::EKS_CLUSTER),
            Subject::Gke => ours(&contract::naming::GKE_CLUSTER),
            Subject::Oke => ours(&contract::naming::OKE_CLUSTER),
            Subject::Capg => peer(&control_plane["spec"]["clusterName"]),
            Subject::Capoci => peer(&control_plane["metadata"]["name"]),
        }
    }

    /// One cluster `name` in `ns` with a pool of one node: rendered by `clusterctl generate
    /// cluster` from our template (the byo-network flavor on a brought network), or the peer's
    /// YAML.
    pub(super) async fn render(
        self,
        env: &Environment,
        name: &str,
        ns: &str,
    ) -> anyhow::Result<String> {
        let version = self.kubernetes_version();
        match self {
            Subject::Eks(_) => env.generate_cluster(name, ns, version, 1).await,
            Subject::Gke | Subject::Oke => env.generate(self.cloud(), name, ns, version, 1).await,
            Subject::Capg => {
                let network = env
                    .gke()
                    .and_then(|g| g.brought.as_ref())
                    .map(|n| n.network.clone())
                    .ok_or_else(|| anyhow::anyhow!("CAPG needs a brought network"))?;
                Ok(crate::peer::capg::cluster_yaml(
                    name,
                    ns,
                    version,
                    1,
                    GCP_PROJECT,
                    GCP_REGION,
                    &network,
                ))
            }
            Subject::Capoci => {
                let oke = env
                    .oke()
                    .ok_or_else(|| anyhow::anyhow!("OKE is not emulated here"))?;
                let network = oke
                    .brought
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("CAPOCI needs a brought network"))?;
                Ok(crate::peer::capoci::cluster_yaml(
                    name,
                    ns,
                    version,
                    1,
                    emulators::oke::COMPARTMENT,
                    network,
                    oke.server.url(),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_subject_names_its_cloud_kinds_and_files() {
        let all = [
            Subject::Eks(EksProvider::Ours),
            Subject::Eks(EksProvider::Capa),
            Subject::Gke,
            Subject::Capg,
            Subject::Oke,
            Subject::Capoci,
        ];
        let stems: Vec<&str> = all.iter().map(|s| s.stem(false)).collect();
        assert_eq!(stems, ["eks", "capa", "gke", "capg", "oke", "capoci"]);
        assert_eq!(Subject::Oke.stem(true), "oke-byo");
        assert_eq!(Subject::Capg.stem(true), "capg");
        assert_eq!(Subject::Capg.cloud(), Cloud::Gke);
        assert_eq!(Subject::Capoci.control_plane().2, "OCIManagedControlPlane");
        assert!(Subject::Capg.pool_ready(&serde_json::json!({"status": {"ready": true}})));
        assert!(!Subject::Gke.pool_ready(&serde_json::json!({"status": {"ready": true}})));
        let cp = serde_json::json!({
            "metadata": {"name": "o1"},
            "spec": {"clusterName": "bench-g1"},
            "status": {"initialized": true},
        });
        assert_eq!(
            Subject::Capg
                .initialized_cloud_name("bench", "g1", &cp)
                .as_deref(),
            Some("bench-g1")
        );
        assert_eq!(
            Subject::Capoci
                .initialized_cloud_name("bench", "o1", &cp)
                .as_deref(),
            Some("o1")
        );
        assert_eq!(
            Subject::Gke.initialized_cloud_name("bench", "g1", &cp),
            None
        );
    }
}
