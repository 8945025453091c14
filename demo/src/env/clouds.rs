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
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::process::start_provider;
use super::{
    ACCESS_KEY_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, Cloud, EksProvider, EnvOptions,
    Environment, GCP_PROJECT, GCP_REGION, REGION, SECRET_ACCESS_KEY,
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

impl EksCloud {
    /// AWS's own EKS client on the emulator, with the environment's credentials: what a user's
    /// `aws eks` would call.
    pub fn eks_client(&self) -> aws_sdk_eks::Client {
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        aws_sdk_eks::Client::from_conf(
            aws_sdk_eks::config::Builder::new()
                .behavior_version_latest()
                .endpoint_url(self.server.url())
                .region(aws_sdk_eks::config::Region::new(REGION))
                .credentials_provider(aws_sdk_eks::config::Credentials::new(
                    ACCESS_KEY_ID,
                    SECRET_ACCESS_KEY,
                    None,
                    None,
                    "demo",
                ))
                .http_client(http)
                .build(),
        )
    }
}

/// The name of the network a user brings to GKE or OKE.
const BROUGHT: &str = "brought";

/// The emulated GKE.
pub struct GkeCloud {
    /// The GKE emulator.
    pub server: GkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The service-account key file the provider uses.
    pub key_file: PathBuf,
    /// The network brought by the user, when the clusters use one.
    pub brought: Option<emulators::gke::outside::BroughtNetwork>,
    key: ServiceAccountKey,
}

impl GkeCloud {
    /// A client of the emulator's REST API with the provider's key: what a user's `gcloud`
    /// would do in the same project.
    pub fn api(&self) -> emulators::gke::outside::GoogleApi {
        emulators::gke::outside::GoogleApi::new(self.server.url(), Some(self.key.clone()))
    }
}

/// The emulated AKS.
pub struct AksCloud {
    /// The AKS emulator (ARM and Entra ID).
    pub server: AksServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
}

impl AksCloud {
    /// An ARM client of the emulator in the default subscription, as the provider's service
    /// principal: what a user's `az` command would do with the same identity.
    pub fn api(&self) -> emulators::aks::outside::ArmApi {
        emulators::aks::outside::ArmApi::new(
            self.server.url(),
            &self.server.aks().config().tenant,
            AZURE_CLIENT_ID,
            AZURE_CLIENT_SECRET,
            emulators::aks::SUBSCRIPTION,
        )
    }
}

/// The emulated OKE.
pub struct OkeCloud {
    /// The OKE emulator.
    pub server: OkeServer,
    /// Its workload API servers.
    pub workload: Arc<WorkloadServers>,
    /// The API key file the provider signs with.
    pub key_file: PathBuf,
    /// The network brought by the user, when the clusters use one.
    pub brought: Option<emulators::oke::outside::BroughtNetwork>,
    /// The user and fingerprint of that key.
    user: String,
    fingerprint: String,
}

impl OkeCloud {
    /// A client of the emulator signing with the provider's key: what a user's `oci` command
    /// would do in the same tenancy.
    ///
    /// # Errors
    /// The key file cannot be read.
    pub fn api(&self) -> Result<emulators::oke::outside::OciApi> {
        let pem = std::fs::read_to_string(&self.key_file)?;
        let key = oci_signer::ApiKey::from_pem(
            &pem,
            emulators::oke::TENANCY,
            &self.user,
            &self.fingerprint,
        )?;
        Ok(emulators::oke::outside::OciApi::new(self.server.url(), key))
    }
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
        let base = format!("http://{}", listener.local_addr()?);
        let workload = self.workload_servers(Cloud::Eks, &base)?;
        let mut config = EksConfig::new(REGION, "123456789012");
        config.credentials = vec![(ACCESS_KEY_ID.into(), SECRET_ACCESS_KEY.into())];
        config.cluster_quota = super::cluster_quota(options, emulators::eks::CLUSTER_QUOTA);
        if workload_servers {
            config.workload = Some(workload.clone());
        }
        config.ec2_endpoint = Some(moto.url().to_string());
        config.sts_endpoints = vec![moto.url().to_string()];
        let server = serve_eks(config, timing, listener)
            .await
            .context("starting the EKS emulator")?;
        let provider_kind = options.eks_provider;
        let with_capa = matches!(provider_kind, EksProvider::Capa | EksProvider::CapaThenOurs);
        let brought = if options.byo_network || with_capa {
            Some(crate::peer::prepare_aws(moto.url(), REGION, ACCESS_KEY_ID).await?)
        } else {
            None
        };
        let aws_env = vec![
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ENDPOINT_URL", moto.url().to_string()),
            ("AWS_ENDPOINT_URL_EKS", server.url().to_string()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
        ];
        if provider_kind != EksProvider::Capa {
            self.plane
                .install_crds(&provider_aws::api::crds())
                .await
                .context("installing the EKS provider's CRDs")?;
            let (child, port) = start_provider(Cloud::Eks, &self.plane, logs, poll, &aws_env)?;
            self.metrics.push((Cloud::Eks, port));
            self.providers.push((Cloud::Eks, child));
            self.restarts.push((Cloud::Eks, aws_env.clone(), poll));
        }
        if with_capa {
            let assets = crate::peer::assets().await?;
            crate::peer::install_crds(&self.plane, &assets)
                .await
                .context("installing CAPA's CRDs")?;
            let (child, port) =
                crate::peer::start(&self.plane, &assets, self.dir.path(), logs, &aws_env)?;
            self.metrics.push((Cloud::Eks, port));
            self.providers.push((Cloud::Eks, child));
        }
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
        options: &EnvOptions,
    ) -> Result<()> {
        let poll = options.poll_interval;
        let peer = options.peers.contains(&Cloud::Gke);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = self.workload_servers(Cloud::Gke, &base)?;
        let key = ServiceAccountKey::generate(
            GCP_PROJECT,
            &format!("capi-provider@{GCP_PROJECT}.iam.gserviceaccount.com"),
            &format!("{base}/token"),
        )?;
        let key_file = self.dir.path().join("gke-key.json");
        std::fs::write(&key_file, serde_json::to_string_pretty(&key.to_json())?)?;
        let config = GkeConfig {
            keys: vec![key.clone()],
            workload: Some(workload.clone()),
            cluster_quota: super::cluster_quota(options, emulators::gke::CLUSTER_QUOTA),
            ..GkeConfig::default()
        };
        let server = serve_gke(config, timing, listener)
            .await
            .context("starting the GKE emulator")?;
        let url = server.url().to_string();
        let brought = if options.byo_network || peer {
            let api = emulators::gke::outside::GoogleApi::new(&url, Some(key.clone()));
            Some(
                emulators::gke::outside::create_network(&api, GCP_PROJECT, GCP_REGION, BROUGHT, 60)
                    .await
                    .context("bringing a network to GKE")?,
            )
        } else {
            None
        };
        self.gke = Some(GkeCloud {
            server,
            workload,
            key_file: key_file.clone(),
            brought,
            key,
        });
        if peer {
            return self.start_capg().await;
        }
        self.start_ours(
            Cloud::Gke,
            &provider_gcp::api::crds(),
            logs,
            poll,
            &[
                (
                    "GOOGLE_APPLICATION_CREDENTIALS",
                    key_file.display().to_string(),
                ),
                ("GKE_CONTAINER_ENDPOINT", url.clone()),
                ("GKE_COMPUTE_ENDPOINT", url),
            ],
        )
        .await
    }

    pub(super) async fn start_aks(
        &mut self,
        timing: Timing,
        logs: &Path,
        poll: &str,
    ) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = self.workload_servers(Cloud::Aks, &base)?;
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
        self.start_ours(
            Cloud::Aks,
            &provider_azure::api::crds(),
            logs,
            poll,
            &[
                ("AZURE_TENANT_ID", tenant),
                ("AZURE_CLIENT_ID", AZURE_CLIENT_ID.to_string()),
                ("AZURE_CLIENT_SECRET", AZURE_CLIENT_SECRET.to_string()),
                ("AZURE_AUTHORITY_HOST", server.url().to_string()),
                ("AKS_ARM_ENDPOINT", server.url().to_string()),
            ],
        )
        .await?;
        self.aks = Some(AksCloud { server, workload });
        Ok(())
    }

    pub(super) async fn start_oke(
        &mut self,
        timing: Timing,
        logs: &Path,
        options: &EnvOptions,
    ) -> Result<()> {
        let poll = options.poll_interval;
        let peer = options.peers.contains(&Cloud::Oke);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let workload = self.workload_servers(Cloud::Oke, &base)?;
        let user = emulators::oke::global_ocid("user");
        let tenancy = emulators::oke::TENANCY;
        let (pem, key) = emulators::oke::generate_api_key(&format!("{tenancy}/{user}"))?;
        let fingerprint = key.fingerprint();
        let key_file = self.dir.path().join("oci_api_key.pem");
        std::fs::write(&key_file, pem)?;
        let config = OkeConfig {
            keys: vec![key],
            workload: Some(workload.clone()),
            cluster_limit: super::cluster_quota(options, emulators::oke::CLUSTER_LIMIT),
            ..OkeConfig::default()
        };
        let server = serve_oke(config, timing, listener)
            .await
            .context("starting the OKE emulator")?;
        let url = server.url().to_string();
        self.oke = Some(OkeCloud {
            server,
            workload,
            key_file: key_file.clone(),
            brought: None,
            user: user.clone(),
            fingerprint: fingerprint.clone(),
        });
        if (options.byo_network || peer)
            && let Some(oke) = self.oke.as_mut()
        {
            let api = oke.api()?;
            oke.brought = Some(
                emulators::oke::outside::create_network(
                    &api,
                    emulators::oke::COMPARTMENT,
                    BROUGHT,
                    60,
                )
                .await
                .context("bringing a network to OKE")?,
            );
        }
        if peer {
            return self.start_capoci().await;
        }
        self.start_ours(
            Cloud::Oke,
            &provider_oci::api::crds(),
            logs,
            poll,
            &[
                ("OCI_TENANCY_ID", tenancy.to_string()),
                ("OCI_USER_ID", user.clone()),
                ("OCI_CREDENTIALS_FINGERPRINT", fingerprint.clone()),
                ("OCI_CREDENTIALS_KEY_PATH", key_file.display().to_string()),
                ("OCI_ENDPOINT", url),
            ],
        )
        .await
    }

    /// A cloud's workload API servers, whose token reviews go to its emulator at `base`.
    fn workload_servers(&self, cloud: Cloud, base: &str) -> Result<Arc<WorkloadServers>> {
        let dir = format!("workload-{}", cloud.kind_prefix().to_lowercase());
        Ok(Arc::new(WorkloadServers::new(
            self.plane.assets().clone(),
            self.dir.path().join(dir),
            format!("{base}/_emulator/tokenreview"),
        )?))
    }

    /// Installs our provider's CRDs for `cloud` and starts it with `env`.
    async fn start_ours(
        &mut self,
        cloud: Cloud,
        crds: &[CustomResourceDefinition],
        logs: &Path,
        poll: &str,
        env: &[(&str, String)],
    ) -> Result<()> {
        self.plane
            .install_crds(crds)
            .await
            .with_context(|| format!("installing the {} provider's CRDs", cloud.kind_prefix()))?;
        let (child, metrics_port) = start_provider(cloud, &self.plane, logs, poll, env)?;
        self.metrics.push((cloud, metrics_port));
        self.providers.push((cloud, child));
        Ok(())
    }
}

impl Environment {
    /// Starts the OKE peer, CAPOCI (built once and cached), on this bed: its CRDs installed, its
    /// process signing as our provider's OCI user (so the clusters it makes are admin-reachable
    /// with the same key), stopped with the environment. Needs OKE started.
    ///
    /// # Errors
    /// OKE is not started, the build failed, or the process could not start.
    pub async fn start_capoci(&mut self) -> Result<()> {
        let oke = self
            .oke
            .as_ref()
            .context("CAPOCI runs against OKE: start OKE first")?;
        let assets = crate::peer::capoci::assets().await?;
        crate::peer::install_crds(&self.plane, &assets).await?;
        let signer = crate::peer::capoci::Signer {
            tenancy: emulators::oke::TENANCY.to_string(),
            user: oke.user.clone(),
            fingerprint: oke.fingerprint.clone(),
            key_pem: std::fs::read_to_string(&oke.key_file)?,
            region: emulators::oke::REGION.to_string(),
        };
        let logs = self.dir.path().join("logs");
        let (child, metrics) =
            crate::peer::capoci::start(&self.plane, &assets, self.dir.path(), &logs, &signer)?;
        self.metrics.push((Cloud::Oke, metrics));
        self.providers.push((Cloud::Oke, child));
        Ok(())
    }
}

impl Environment {
    /// Starts the GKE peer, CAPG (built once and cached), on this bed: its CRDs installed, its
    /// process signing with our provider's service-account key and reaching Google's host names
    /// through the emulator's proxy, stopped with the environment. Needs GKE started.
    ///
    /// # Errors
    /// GKE is not started, the build failed, or the process could not start.
    pub async fn start_capg(&mut self) -> Result<()> {
        let gke = self
            .gke
            .as_ref()
            .context("CAPG runs against GKE: start GKE first")?;
        let assets = crate::peer::capg::assets().await?;
        crate::peer::install_crds(&self.plane, &assets).await?;
        let google = crate::peer::capg::Google {
            proxy_url: gke.server.proxy_url().to_string(),
            ca_pem: gke.server.ca_pem().to_string(),
            key_file: gke.key_file.clone(),
        };
        let logs = self.dir.path().join("logs");
        let (child, metrics) =
            crate::peer::capg::start(&self.plane, &assets, self.dir.path(), &logs, &google)?;
        self.metrics.push((Cloud::Gke, metrics));
        self.providers.push((Cloud::Gke, child));
        Ok(())
    }
}
