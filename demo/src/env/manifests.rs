//! Cluster manifests: rendered from a provider's cluster template by the real `clusterctl
//! generate cluster`, and server-side applied to the management plane.

use anyhow::{Context, Result, bail};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};

use super::{
    AZURE_LOCATION, Cloud, EksProvider, Environment, GCP_PROJECT, GCP_REGION, OCI_REGION, REGION,
};

impl Environment {
    /// Server-side applies every object of a multi-document YAML in `namespace`.
    pub async fn apply_yaml(&self, yaml: &str, namespace: &str) -> Result<Vec<DynamicObject>> {
        let client = self.plane.client().await?;
        let mut applied = Vec::new();
        for doc in serde_saphyr::from_multiple::<serde_json::Value>(yaml)? {
            if doc.is_null() {
                continue;
            }
            let obj: DynamicObject = serde_json::from_value(doc.clone())?;
            let types = obj
                .types
                .clone()
                .context("object without apiVersion/kind")?;
            let (group, version) = types
                .api_version
                .rsplit_once('/')
                .unwrap_or(("", types.api_version.as_str()));
            let resource =
                ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, &types.kind));
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            let name = obj.metadata.name.clone().context("object without a name")?;
            let params = PatchParams::apply("demo").force();
            applied.push(
                api.patch(&name, &params, &Patch::Apply(&doc))
                    .await
                    .with_context(|| format!("applying {} {name}", types.kind))?,
            );
        }
        Ok(applied)
    }

    /// Renders the EKS provider's cluster template with the real `clusterctl generate cluster`.
    pub async fn generate_cluster(
        &self,
        name: &str,
        namespace: &str,
        version: &str,
        workers: u32,
    ) -> Result<String> {
        if let Some(eks) = &self.eks
            && eks.provider == EksProvider::Capa
            && let Some(aws) = &eks.brought
        {
            return Ok(crate::peer::cluster_yaml(
                name, namespace, version, workers, REGION, aws,
            ));
        }
        self.generate(Cloud::Eks, name, namespace, version, workers)
            .await
    }

    /// Renders `cloud`'s provider's cluster template with the real `clusterctl generate cluster`.
    pub async fn generate(
        &self,
        cloud: Cloud,
        name: &str,
        namespace: &str,
        version: &str,
        workers: u32,
    ) -> Result<String> {
        let config_home = self.dir.path().join("clusterctl");
        std::fs::create_dir_all(&config_home)?;
        // On a brought network: the byo-network flavor, naming what was brought.
        let mut network: Vec<(&str, String)> = Vec::new();
        match cloud {
            Cloud::Eks => {
                if let Some(aws) = self.eks.as_ref().and_then(|e| e.brought.as_ref()) {
                    network.push(("AWS_SUBNET_IDS", format!("[{}]", aws.subnets.join(", "))));
                }
            }
            Cloud::Gke => {
                if let Some(net) = self.gke.as_ref().and_then(|g| g.brought.as_ref()) {
                    network.push(("GCP_NETWORK", net.network.clone()));
                    network.push(("GCP_SUBNETWORK", net.subnetwork.clone()));
                }
            }
            Cloud::Oke => {
                if let Some(net) = self.oke.as_ref().and_then(|o| o.brought.as_ref()) {
                    network.push(("OCI_VCN_ID", net.vcn.clone()));
                    network.push(("OCI_ENDPOINT_SUBNET_ID", net.endpoint_subnet.clone()));
                    network.push(("OCI_NODE_SUBNET_ID", net.node_subnet.clone()));
                }
            }
            Cloud::Aks => {}
        }
        let byo_template = cloud
            .template()
            .replace("cluster-template.yaml", "cluster-template-byo-network.yaml");
        let template = if network.is_empty() {
            cloud.template().to_string()
        } else {
            byo_template
        };
        let output = testbed::process::command(self.plane.assets().clusterctl())
            .args([
                "generate",
                "cluster",
                name,
                "--from",
                &template,
                "--kubernetes-version",
                version,
            ])
            .args([
                "--worker-machine-count",
                &workers.to_string(),
                "--target-namespace",
                namespace,
            ])
            .arg("--kubeconfig")
            .arg(self.plane.kubeconfig_path())
            .env("XDG_CONFIG_HOME", &config_home)
            .env("CLUSTERCTL_DISABLE_VERSIONCHECK", "true")
            .env("GCP_PROJECT", GCP_PROJECT)
            .env("GCP_REGION", GCP_REGION)
            .env("AZURE_SUBSCRIPTION_ID", emulators::aks::SUBSCRIPTION)
            .env("AZURE_LOCATION", AZURE_LOCATION)
            .env("OCI_COMPARTMENT_ID", emulators::oke::COMPARTMENT)
            .env("OCI_REGION", OCI_REGION)
            .envs(network)
            .output()
            .await?;
        if !output.status.success() {
            bail!(
                "clusterctl generate cluster failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8(output.stdout)?)
    }
}
