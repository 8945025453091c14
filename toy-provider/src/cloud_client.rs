//! HTTP client of the toy cloud.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api;

/// What the cloud said to a create.
#[derive(Debug)]
pub enum Created<T> {
    /// Created.
    Created(T),
    /// The name is taken.
    Conflict(String),
}

/// A client of one toy cloud.
#[derive(Debug, Clone)]
pub struct CloudClient {
    base: String,
    http: reqwest::Client,
}

impl CloudClient {
    /// The cloud's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A client of the cloud at `base` (`http://127.0.0.1:<port>`).
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn new(base: &str) -> Result<Self> {
        // reqwest built beside Google's clients has rustls without a provider: set ring's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .context("building the HTTP client")?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            http,
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(StatusCode, Vec<u8>)> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(body) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        let status = resp.status();
        let bytes = resp.bytes().await?.to_vec();
        Ok((status, bytes))
    }

    fn fail(status: StatusCode, bytes: &[u8], what: &str) -> anyhow::Error {
        let msg = serde_json::from_slice::<api::ErrorBody>(bytes)
            .map(|e| e.error)
            .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned());
        anyhow::anyhow!("{what}: cloud answered {status}: {msg}")
    }

    /// GET returning `None` on 404.
    async fn get_opt<T: DeserializeOwned>(&self, path: &str, what: &str) -> Result<Option<T>> {
        let (status, bytes) = self.call(Method::GET, path, None).await?;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => Ok(Some(serde_json::from_slice(&bytes)?)),
            s => Err(Self::fail(s, &bytes, what)),
        }
    }

    async fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        what: &str,
    ) -> Result<Created<T>> {
        let (status, bytes) = self
            .call(method, path, Some(serde_json::to_vec(body)?))
            .await?;
        match status {
            StatusCode::CONFLICT => Ok(Created::Conflict(
                serde_json::from_slice::<api::ErrorBody>(&bytes)
                    .map(|e| e.error)
                    .unwrap_or_default(),
            )),
            s if s.is_success() => Ok(Created::Created(serde_json::from_slice(&bytes)?)),
            s => Err(Self::fail(s, &bytes, what)),
        }
    }

    /// DELETE: `true` when the cloud accepted, `false` on 404.
    async fn delete(&self, path: &str, what: &str) -> Result<bool> {
        let (status, bytes) = self.call(Method::DELETE, path, None).await?;
        match status {
            StatusCode::NOT_FOUND => Ok(false),
            s if s.is_success() => Ok(true),
            s => Err(Self::fail(s, &bytes, what)),
        }
    }

    /// DescribeCluster.
    pub async fn describe_cluster(&self, name: &str) -> Result<Option<api::Cluster>> {
        self.get_opt(&format!("/clusters/{name}"), "DescribeCluster")
            .await
    }

    /// CreateCluster.
    pub async fn create_cluster(&self, req: &api::CreateCluster) -> Result<Created<api::Cluster>> {
        self.send(Method::POST, "/clusters", req, "CreateCluster")
            .await
    }

    /// UpdateCluster (version).
    pub async fn update_cluster(&self, name: &str, version: &str) -> Result<()> {
        let req = api::UpdateCluster {
            version: version.to_string(),
        };
        match self
            .send::<_, api::Cluster>(
                Method::PATCH,
                &format!("/clusters/{name}"),
                &req,
                "UpdateCluster",
            )
            .await?
        {
            Created::Created(_) => Ok(()),
            Created::Conflict(msg) => bail!("UpdateCluster: {msg}"),
        }
    }

    /// TagCluster: replaces the cluster's owner tags (`Tags::none()` lets it go).
    pub async fn tag_cluster(&self, name: &str, tags: &api::Tags) -> Result<()> {
        match self
            .send::<_, api::Cluster>(
                Method::PUT,
                &format!("/clusters/{name}/tags"),
                tags,
                "TagCluster",
            )
            .await?
        {
            Created::Created(_) => Ok(()),
            Created::Conflict(msg) => bail!("TagCluster: {msg}"),
        }
    }

    /// DeleteCluster: `false` when it is already gone.
    pub async fn delete_cluster(&self, name: &str) -> Result<bool> {
        self.delete(&format!("/clusters/{name}"), "DeleteCluster")
            .await
    }

    /// GetCredentials: the cluster's kubeconfig.
    pub async fn credentials(&self, name: &str) -> Result<String> {
        let (status, bytes) = self
            .call(Method::GET, &format!("/clusters/{name}/credentials"), None)
            .await?;
        if !status.is_success() {
            return Err(Self::fail(status, &bytes, "GetCredentials"));
        }
        Ok(String::from_utf8(bytes)?)
    }

    /// DescribePool: `None` when the pool or its cluster is gone.
    pub async fn describe_pool(&self, cluster: &str, pool: &str) -> Result<Option<api::Pool>> {
        self.get_opt(&format!("/clusters/{cluster}/pools/{pool}"), "DescribePool")
            .await
    }

    /// CreatePool.
    pub async fn create_pool(
        &self,
        cluster: &str,
        req: &api::CreatePool,
    ) -> Result<Created<api::Pool>> {
        self.send(
            Method::POST,
            &format!("/clusters/{cluster}/pools"),
            req,
            "CreatePool",
        )
        .await
    }

    /// UpdatePool (desired size).
    pub async fn update_pool(&self, cluster: &str, pool: &str, desired_size: u32) -> Result<()> {
        let req = api::ScalePool { desired_size };
        match self
            .send::<_, api::Pool>(
                Method::PATCH,
                &format!("/clusters/{cluster}/pools/{pool}"),
                &req,
                "UpdatePool",
            )
            .await?
        {
            Created::Created(_) => Ok(()),
            Created::Conflict(msg) => bail!("UpdatePool: {msg}"),
        }
    }

    /// DeletePool: `false` when it is already gone.
    pub async fn delete_pool(&self, cluster: &str, pool: &str) -> Result<bool> {
        self.delete(&format!("/clusters/{cluster}/pools/{pool}"), "DeletePool")
            .await
    }

    /// The cloud's own autoscaler changing a pool's size (not a provider call).
    pub async fn outside_scale(
        &self,
        namespace: &str,
        cluster: &str,
        pool: &str,
        desired_size: u32,
    ) -> Result<api::Pool> {
        let req = api::ScalePool { desired_size };
        match self
            .send(
                Method::POST,
                &format!("/pools/{namespace}/{cluster}/{pool}"),
                &req,
                "OutsideScale",
            )
            .await?
        {
            Created::Created(p) => Ok(p),
            Created::Conflict(msg) => bail!("OutsideScale: {msg}"),
        }
    }

    /// DescribeNetwork.
    pub async fn describe_network(&self, name: &str) -> Result<Option<api::Network>> {
        self.get_opt(&format!("/networks/{name}"), "DescribeNetwork")
            .await
    }

    /// CreateNetwork: a taken name is a conflict.
    pub async fn create_network(&self, req: &api::CreateNetwork) -> Result<Created<api::Network>> {
        self.send(Method::POST, "/networks", req, "CreateNetwork")
            .await
    }

    /// DeleteNetwork: `false` when it is already gone.
    pub async fn delete_network(&self, name: &str) -> Result<bool> {
        self.delete(&format!("/networks/{name}"), "DeleteNetwork")
            .await
    }

    /// ListClusters.
    pub async fn list_clusters(&self) -> Result<Vec<api::Cluster>> {
        Ok(self
            .get_opt("/clusters", "ListClusters")
            .await?
            .unwrap_or_default())
    }
}
