//! Each cloud's part of the environment: its emulator with its workload API servers, the
//! credentials it accepts, the provider's CRDs and the provider started against it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use emulators::aks::{AksConfig, AksServer, Principal, serve_aks};
use emulators::eks::{EksConfig, ServerHandle, serve_eks};
use emulators::gke::{GkeConfig, GkeServer, ServiceAccountKey, serve_gke};
use emulators::kit::Timing;
use emulators::kit::workload::WorkloadServers;
use emulators::moto::Moto;
use emulators::oke::{OkeConfig, OkeServer, serve_oke};

use super::process::start_provider;
use super::{
    ACCESS_KEY_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, Cloud, EksProvider, EnvOptions,
    Environment, GCP_PROJECT, REGION, SECRET_ACCESS_KEY,
};

/// The emulated EKS.
pub struct EksCloud {
    /// moto (EC2, IAM, STS).
    pub moto: Moto,
    /// The EKS emulator.
    pub server: ServerHandle,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The network and roles brought by the user, when the clusters use them.
    pub brought: Option<crate::peer::Aws>,
    /// Which provider manages the clusters.
    pub provider: EksProvider,
}

/// The emulated GKE.
pub struct GkeCloud {
    /// The GKE emulator.
    pub server: GkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The service-account key file the provider uses.
    pub key_file: PathBuf,
}

/// The emulated AKS.
pub struct AksCloud {
    /// The AKS emulator (ARM and Entra ID).
    pub server: AksServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
}

/// The emulated OKE.
pub struct OkeCloud {
    /// The OKE emulator.
    pub server: OkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The API key file the provider signs with.
    pub key_file: PathBuf,
}

impl Environment {
    pub(super) async fn start_eks(
        &mut self,
        timing: Timing,
        logs: &Path,
        options: &EnvOptions,
    ) -> Result<()> {
        let (poll, workload_servers) = (options.poll_interval, options.workload_servers);
        let moto = Moto::start(logs).await.context("starting moto")?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-eks"),
            format!("http://127.0.0.1:{port}/_emulator/tokenreview"),
        )?);
        let mut config = EksConfig::new(REGION, "123456789012");
        config.credentials = vec![(ACCESS_KEY_ID.into(), SECRET_ACCESS_KEY.into())];
        config.cluster_quota = options.eks_cluster_quota;
        if workload_servers {
            config.workload = Some(workload.clone());
        }
        config.ec2_endpoint = Some(moto.url().to_string());
        config.sts_endpoints = vec![moto.url().to_string()];
        let server = serve_eks(config, timing, listener)
            .await
            .context("starting the EKS emulator")?;
        let provider_kind = options.eks_provider;
        let brought = if options.byo_network || provider_kind == EksProvider::Capa {
            Some(crate::peer::prepare_aws(moto.url(), REGION, ACCESS_KEY_ID).await?)
        } else {
            None
        };
        let aws_env = [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ENDPOINT_URL", moto.url().to_string()),
            ("AWS_ENDPOINT_URL_EKS", server.url().to_string()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
        ];
        let provider = match provider_kind {
            EksProvider::Ours => {
                self.plane
                    .install_crds(&provider_aws::api::crds())
                    .await
                    .context("installing the EKS provider's CRDs")?;
                start_provider(Cloud::Eks, &self.plane, logs, poll, &aws_env)?
            }
            EksProvider::Capa => {
                let assets = crate::peer::assets().await?;
                crate::peer::install_crds(&self.plane, &assets)
                    .await
                    .context("installing CAPA's CRDs")?;
                crate::peer::start(&self.plane, &assets, self.dir.path(), logs, &aws_env)?
            }
        };
        self.metrics.push((Cloud::Eks, provider.1));
        self.providers.push((Cloud::Eks, provider.0));
        self.eks = Some(EksCloud {
            moto,
            server,
            workload,
            brought,
            provider: provider_kind,
        });
        Ok(())
    }

    pub(super) async fn start_gke(
        &mut self,
        timing: Timing,
        logs: &Path,
        poll: &str,
    ) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-gke"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let key = ServiceAccountKey::generate(
            GCP_PROJECT,
            &format!("capi-provider@{GCP_PROJECT}.iam.gserviceaccount.com"),
            &format!("{base}/token"),
        )?;
        let key_file = self.dir.path().join("gke-key.json");
        std::fs::write(&key_file, serde_json::to_string_pretty(&key.to_json())?)?;
        let config = GkeConfig {
            keys: vec![key],
            workload: Some(workload.clone()),
            ..GkeConfig::default()
        };
        let server = serve_gke(config, timing, listener)
            .await
            .context("starting the GKE emulator")?;
        self.plane
            .install_crds(&provider_gcp::api::crds())
            .await
            .context("installing the GKE provider's CRDs")?;
        let provider = start_provider(
            Cloud::Gke,
            &self.plane,
            logs,
            poll,
            &[
                (
                    "GOOGLE_APPLICATION_CREDENTIALS",
                    key_file.display().to_string(),
                ),
                ("GKE_CONTAINER_ENDPOINT", server.url().to_string()),
                ("GKE_COMPUTE_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Gke, provider.1));
        self.providers.push((Cloud::Gke, provider.0));
        self.gke = Some(GkeCloud {
            server,
            workload,
            key_file,
        });
        Ok(())
    }

    pub(super) async fn start_aks(
        &mut self,
        timing: Timing,
        logs: &Path,
        poll: &str,
    ) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-aks"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let config = AksConfig {
            principals: vec![Principal {
                client_id: AZURE_CLIENT_ID.into(),
                secret: Some(AZURE_CLIENT_SECRET.into()),
                federated: None,
                object_id: format!("oid-{AZURE_CLIENT_ID}"),
            }],
            workload: Some(workload.clone()),
            ..AksConfig::default()
        };
        let tenant = config.tenant.clone();
        let server = serve_aks(config, timing, listener)
            .await
            .context("starting the AKS emulator")?;
        self.plane
            .install_crds(&provider_azure::api::crds())
            .await
            .context("installing the AKS provider's CRDs")?;
        let provider = start_provider(
            Cloud::Aks,
            &self.plane,
            logs,
            poll,
            &[
                ("AZURE_TENANT_ID", tenant),
                ("AZURE_CLIENT_ID", AZURE_CLIENT_ID.to_string()),
                ("AZURE_CLIENT_SECRET", AZURE_CLIENT_SECRET.to_string()),
                ("AZURE_AUTHORITY_HOST", server.url().to_string()),
                ("AKS_ARM_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Aks, provider.1));
        self.providers.push((Cloud::Aks, provider.0));
        self.aks = Some(AksCloud { server, workload });
        Ok(())
    }

    pub(super) async fn start_oke(
        &mut self,
        timing: Timing,
        logs: &Path,
        poll: &str,
    ) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join("workload-oke"),
            format!("{base}/_emulator/tokenreview"),
        )?);
        let user = emulators::oke::global_ocid("user");
        let tenancy = emulators::oke::TENANCY;
        let (pem, key) = emulators::oke::generate_api_key(&format!("{tenancy}/{user}"))?;
        let fingerprint = key.fingerprint();
        let key_file = self.dir.path().join("oci_api_key.pem");
        std::fs::write(&key_file, pem)?;
        let config = OkeConfig {
            keys: vec![key],
            workload: Some(workload.clone()),
            ..OkeConfig::default()
        };
        let server = serve_oke(config, timing, listener)
            .await
            .context("starting the OKE emulator")?;
        self.plane
            .install_crds(&provider_oci::api::crds())
            .await
            .context("installing the OKE provider's CRDs")?;
        let provider = start_provider(
            Cloud::Oke,
            &self.plane,
            logs,
            poll,
            &[
                ("OCI_TENANCY_ID", tenancy.to_string()),
                ("OCI_USER_ID", user),
                ("OCI_CREDENTIALS_FINGERPRINT", fingerprint),
                ("OCI_CREDENTIALS_KEY_PATH", key_file.display().to_string()),
                ("OCI_ENDPOINT", server.url().to_string()),
            ],
        )?;
        self.metrics.push((Cloud::Oke, provider.1));
        self.providers.push((Cloud::Oke, provider.0));
        self.oke = Some(OkeCloud {
            server,
            workload,
            key_file,
        });
        Ok(())
    }
}
