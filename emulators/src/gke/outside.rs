//! Changes made to the emulated Google Cloud from outside Cluster API, over its own HTTP API as
//! any client would: a network to bring (`emulator gke-network`) and a node pool resized the
//! way GKE's autoscaler would (`emulator gke-scale`). Requests carry a self-signed JWT of the
//! given service-account key.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::auth::{CLOUD_PLATFORM, ServiceAccountKey};

/// A small client of the emulator's REST API.
pub struct GoogleApi {
    base: String,
    key: Option<ServiceAccountKey>,
    http: reqwest::Client,
}

impl GoogleApi {
    /// A client of the emulator at `base`, authenticating as `key` (none: unauthenticated).
    pub fn new(base: &str, key: Option<ServiceAccountKey>) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            key,
            http: crate::kit::http_client(Duration::from_secs(30)),
        }
    }

    fn bearer(&self) -> Result<Option<String>> {
        let Some(key) = &self.key else {
            return Ok(None);
        };
        let now = jiff::Timestamp::now().as_second();
        Ok(Some(key.sign_jwt(&json!({
            "iss": key.client_email, "sub": key.client_email, "scope": CLOUD_PLATFORM,
            "iat": now, "exp": now + 3600,
        }))?))
    }

    /// Sends one request; returns the status and the JSON body.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value)> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = self.bearer()? {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("calling {path}"))?;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let value = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok((status, value))
    }

    /// One request that must succeed; its JSON answer.
    ///
    /// # Errors
    /// The call failed, or Google's error (its message).
    pub async fn ok(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value> {
        let (status, value) = self.call(method, path, body).await?;
        if !(200..300).contains(&status) {
            bail!(
                "{path} answered {status}: {}",
                value["error"]["message"].as_str().unwrap_or("no message")
            );
        }
        Ok(value)
    }

    /// Waits for a Compute operation (by its self link) to be DONE without error.
    async fn wait_compute(&self, op: &Value) -> Result<()> {
        let link = op["selfLink"].as_str().unwrap_or_default();
        let path = link
            .split_once("/compute/v1/")
            .map(|(_, p)| format!("/compute/v1/{p}"))
            .context("the operation has no self link")?;
        for _ in 0..600 {
            let now = self.ok(reqwest::Method::GET, &path, None).await?;
            if now["status"] == "DONE" {
                if !now["error"].is_null() {
                    bail!("the operation failed: {}", now["error"]);
                }
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the operation {path} did not finish in a minute")
    }
}

/// A network to bring: its name and its subnetwork's.
#[derive(Debug, Clone)]
pub struct BroughtNetwork {
    /// The VPC network.
    pub network: String,
    /// The subnetwork (ranges `pods` and `services`).
    pub subnetwork: String,
}

/// Creates a custom-mode VPC network `name` with one subnetwork `<name>-nodes` in `region`
/// (10.<octet>.0.0/20, Pods 10.<octet+1>.0.0/16, Services 10.<octet+2>.0.0/20).
///
/// # Errors
/// When the emulator refuses a call or an operation fails.
pub async fn create_network(
    api: &GoogleApi,
    project: &str,
    region: &str,
    name: &str,
    octet: u8,
) -> Result<BroughtNetwork> {
    let op = api
        .ok(
            reqwest::Method::POST,
            &format!("/compute/v1/projects/{project}/global/networks"),
            Some(&json!({ "name": name, "autoCreateSubnetworks": false, "description": "brought by the user" })),
        )
        .await?;
    api.wait_compute(&op).await?;
    let subnetwork = format!("{name}-nodes");
    let next = |n: u8| octet.saturating_add(n);
    let op = api
        .ok(
            reqwest::Method::POST,
            &format!("/compute/v1/projects/{project}/regions/{region}/subnetworks"),
            Some(&json!({
                "name": subnetwork,
                "network": format!("projects/{project}/global/networks/{name}"),
                "ipCidrRange": format!("10.{octet}.0.0/20"),
                "secondaryIpRanges": [
                    { "rangeName": "pods", "ipCidrRange": format!("10.{}.0.0/16", next(1)) },
                    { "rangeName": "services", "ipCidrRange": format!("10.{}.0.0/20", next(2)) },
                ],
            })),
        )
        .await?;
    api.wait_compute(&op).await?;
    Ok(BroughtNetwork {
        network: name.to_string(),
        subnetwork,
    })
}

/// What to resize.
#[derive(Debug, Clone)]
pub struct ScaleRequest {
    /// The project.
    pub project: String,
    /// The cluster's location.
    pub location: String,
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The node pool's name in GKE.
    pub pool: String,
    /// The wanted node count (all zones).
    pub replicas: i64,
}

/// What a resize did.
#[derive(Debug, Clone)]
pub struct Scaled {
    /// The GKE cluster.
    pub cluster: String,
    /// Nodes per zone before and after.
    pub from: i64,
    /// See `from`.
    pub to: i64,
}

/// Finds the cluster by the provider's ownership label, resizes the pool with `setSize`
/// (retrying while another operation runs), and waits for the operation.
///
/// # Errors
/// When no cluster carries the label, the count does not divide over the pool's zones, or GKE
/// refuses.
pub async fn scale_pool(
    api: &GoogleApi,
    request: &ScaleRequest,
    timeout: Duration,
) -> Result<Scaled> {
    let (key, value) = contract::naming::ownership_tag("gke", &request.namespace, &request.cluster);
    let parent = format!(
        "/v1/projects/{}/locations/{}",
        request.project, request.location
    );
    let list = api
        .ok(reqwest::Method::GET, &format!("{parent}/clusters"), None)
        .await?;
    let cluster = list["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["resourceLabels"][&key] == value.as_str())
        .with_context(|| format!("no GKE cluster in {parent} carries {key}={value}"))?;
    let name = cluster["name"].as_str().unwrap_or_default().to_string();
    let pool_path = format!("{parent}/clusters/{name}/nodePools/{}", request.pool);
    let pool = api.ok(reqwest::Method::GET, &pool_path, None).await?;
    let zones = pool["locations"].as_array().map_or(1, Vec::len).max(1) as i64;
    if request.replicas % zones != 0 {
        bail!(
            "{} nodes cannot be spread over the pool's {zones} zones",
            request.replicas
        );
    }
    // A pool's initialNodeCount stays as created: its size is its instance groups' target size.
    let from = match pool["instanceGroupUrls"][0]
        .as_str()
        .and_then(|u| u.split_once("/compute/v1/"))
    {
        Some((_, path)) => {
            let group = api
                .ok(reqwest::Method::GET, &format!("/compute/v1/{path}"), None)
                .await?;
            super::validate::int_of(&group, "targetSize")
        }
        None => 0,
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let op = loop {
        let (status, answer) = api
            .call(
                reqwest::Method::POST,
                &format!("{pool_path}:setSize"),
                Some(&json!({ "nodeCount": request.replicas / zones })),
            )
            .await?;
        if (200..300).contains(&status) {
            break answer;
        }
        if answer["error"]["status"] == "FAILED_PRECONDITION"
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        bail!("setSize answered {status}: {}", answer["error"]["message"]);
    };
    let op_path = format!(
        "{parent}/operations/{}",
        op["name"].as_str().unwrap_or_default()
    );
    loop {
        let now = api.ok(reqwest::Method::GET, &op_path, None).await?;
        if now["status"] == "DONE" {
            if !now["error"].is_null() {
                bail!("the resize failed: {}", now["error"]["message"]);
            }
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("the resize did not finish in {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(Scaled {
        cluster: name,
        from,
        to: request.replicas / zones,
    })
}

/// What to delete behind the provider's back.
#[derive(Debug, Clone)]
pub struct DeleteRequest {
    /// The project.
    pub project: String,
    /// The cluster's location.
    pub location: String,
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The node pool's name in GKE; `None` deletes the whole cluster.
    pub pool: Option<String>,
}

/// Deletes a node pool, or the whole cluster (GKE deletes its node pools with it), of the GKE
/// cluster labelled for `namespace/cluster`, as a user would in the console, retrying while
/// another operation runs; waits for the operation; returns the GKE cluster's name.
///
/// # Errors
/// When no cluster carries the label, GKE refuses, or the deletion does not finish in `timeout`.
pub async fn delete(api: &GoogleApi, request: &DeleteRequest, timeout: Duration) -> Result<String> {
    let (key, value) = contract::naming::ownership_tag("gke", &request.namespace, &request.cluster);
    let parent = format!(
        "/v1/projects/{}/locations/{}",
        request.project, request.location
    );
    let list = api
        .ok(reqwest::Method::GET, &format!("{parent}/clusters"), None)
        .await?;
    let cluster = list["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["resourceLabels"][&key] == value.as_str())
        .with_context(|| format!("no GKE cluster in {parent} carries {key}={value}"))?;
    let name = cluster["name"].as_str().unwrap_or_default().to_string();
    let path = match &request.pool {
        Some(pool) => format!("{parent}/clusters/{name}/nodePools/{pool}"),
        None => format!("{parent}/clusters/{name}"),
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let op = loop {
        let (status, answer) = api.call(reqwest::Method::DELETE, &path, None).await?;
        if (200..300).contains(&status) {
            break answer;
        }
        if answer["error"]["status"] == "FAILED_PRECONDITION"
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        bail!(
            "deleting {path} answered {status}: {}",
            answer["error"]["message"]
        );
    };
    let op_path = format!(
        "{parent}/operations/{}",
        op["name"].as_str().unwrap_or_default()
    );
    loop {
        let now = api.ok(reqwest::Method::GET, &op_path, None).await?;
        if now["status"] == "DONE" {
            if !now["error"].is_null() {
                bail!("the deletion failed: {}", now["error"]["message"]);
            }
            return Ok(name);
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("the deletion of {path} did not finish in {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
