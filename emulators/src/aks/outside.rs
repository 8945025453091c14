//! Changes made to the emulated Azure from outside Cluster API, over ARM as any client would: a
//! network to bring (`emulator aks-network`) and an agent pool resized the way AKS's cluster
//! autoscaler would (`emulator aks-scale`). Requests carry an Entra token from the emulator's
//! token endpoint.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::arm::{CONTAINER_API_VERSION, NETWORK_API_VERSIONS, RESOURCES_API_VERSIONS, newest};

/// A small ARM client of the emulator.
pub struct ArmApi {
    base: String,
    tenant: String,
    client_id: String,
    secret: String,
    subscription: String,
    http: reqwest::Client,
}

impl ArmApi {
    /// A client of the emulator at `base` for `subscription`, as service principal
    /// `client_id`/`secret` of `tenant`.
    pub fn new(
        base: &str,
        tenant: &str,
        client_id: &str,
        secret: &str,
        subscription: &str,
    ) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            tenant: tenant.into(),
            client_id: client_id.into(),
            secret: secret.into(),
            subscription: subscription.into(),
            http: crate::kit::http_client(Duration::from_secs(30)),
        }
    }

    async fn token(&self) -> Result<String> {
        let response = self
            .http
            .post(format!("{}/{}/oauth2/v2.0/token", self.base, self.tenant))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&[
                ("grant_type", "client_credentials"),
                ("client_id", self.client_id.as_str()),
                ("client_secret", self.secret.as_str()),
                ("scope", "https://management.azure.com/.default"),
            ]))
            .send()
            .await
            .context("asking Entra for a token")?;
        let body: Value =
            serde_json::from_str(&response.text().await.context("reading Entra's answer")?)
                .context("Entra's answer is not JSON")?;
        body["access_token"]
            .as_str()
            .map(String::from)
            .with_context(|| format!("Entra gave no token: {}", body["error_description"]))
    }

    /// One ARM call on `path` (after `/subscriptions/<sub>`) at `api_version`.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        api_version: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value)> {
        let url = format!(
            "{}/subscriptions/{}{path}?api-version={api_version}",
            self.base, self.subscription
        );
        let mut request = self
            .http
            .request(method, url)
            .bearer_auth(self.token().await?);
        if let Some(b) = body {
            request = request
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("calling {path}"))?;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// One ARM call on `path` (after `/subscriptions/<sub>`) at `api_version` that must
    /// succeed; its answer.
    ///
    /// # Errors
    /// The call failed or ARM answered an error (its code and message).
    pub async fn ok(
        &self,
        method: reqwest::Method,
        path: &str,
        api_version: &str,
        body: Option<&Value>,
    ) -> Result<Value> {
        let (status, v) = self.call(method, path, api_version, body).await?;
        if !(200..300).contains(&status) {
            bail!(
                "{path} answered {status} {}: {}",
                v["error"]["code"].as_str().unwrap_or(""),
                v["error"]["message"].as_str().unwrap_or("no message")
            );
        }
        Ok(v)
    }
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub fn form_body(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let enc = |s: &str| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            format!("{}={}", enc(k), enc(v))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A network to bring: the resource group, the virtual network and its subnet's id.
#[derive(Debug, Clone)]
pub struct Network {
    /// The resource group.
    pub group: String,
    /// The virtual network's name.
    pub vnet: String,
    /// The subnet's ARM id.
    pub subnet_id: String,
}

/// Creates resource group `group` in `location` with virtual network `name` (10.`octet`.0.0/16)
/// and subnet `nodes` (10.`octet`.0.0/20), and waits for the network to succeed.
pub async fn create_network(
    api: &ArmApi,
    group: &str,
    location: &str,
    name: &str,
    octet: u8,
) -> Result<Network> {
    let rv = newest(RESOURCES_API_VERSIONS);
    let nv = newest(NETWORK_API_VERSIONS);
    api.ok(
        reqwest::Method::PUT,
        &format!("/resourcegroups/{group}"),
        rv,
        Some(&json!({ "location": location })),
    )
    .await?;
    let path =
        format!("/resourceGroups/{group}/providers/Microsoft.Network/virtualNetworks/{name}");
    api.ok(reqwest::Method::PUT, &path, nv, Some(&json!({
        "location": location,
        "properties": {
            "addressSpace": { "addressPrefixes": [format!("10.{octet}.0.0/16")] },
            "subnets": [{ "name": "nodes", "properties": { "addressPrefix": format!("10.{octet}.0.0/20") } }],
        }
    }))).await?;
    for _ in 0..300 {
        let v = api.ok(reqwest::Method::GET, &path, nv, None).await?;
        if v["properties"]["provisioningState"] == "Succeeded" {
            let subnet_id = v["properties"]["subnets"][0]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            return Ok(Network {
                group: group.into(),
                vnet: name.into(),
                subnet_id,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("virtual network {name} did not succeed in 30 s")
}

/// What `aks-scale` is asked.
#[derive(Debug, Clone)]
pub struct ScaleRequest {
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The agent pool's name.
    pub pool: String,
    /// The count wanted.
    pub replicas: i64,
}

/// What `aks-scale` did.
#[derive(Debug, Clone)]
pub struct Scaled {
    /// The managed cluster's name.
    pub cluster: String,
    /// The count before.
    pub from: u64,
    /// The count after.
    pub to: u64,
}

/// Finds the managed cluster of `namespace/cluster` by the provider's ownership tag, sets its
/// pool's count (as AKS's autoscaler does, bypassing Cluster API), and waits until the pool has
/// succeeded.
pub async fn scale_pool(api: &ArmApi, request: &ScaleRequest, timeout: Duration) -> Result<Scaled> {
    let (key, value) = contract::naming::ownership_tag("aks", &request.namespace, &request.cluster);
    let deadline = tokio::time::Instant::now() + timeout;
    let list = api
        .ok(
            reqwest::Method::GET,
            "/providers/Microsoft.ContainerService/managedClusters",
            CONTAINER_API_VERSION,
            None,
        )
        .await?;
    let cluster = list["value"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tags"][&key] == value.as_str())
        .with_context(|| format!("no managed cluster is tagged {key}={value}"))?;
    let id = cluster["id"].as_str().unwrap_or_default();
    let path = format!(
        "{}/agentPools/{}",
        id.split_once(&format!("/subscriptions/{}", api.subscription))
            .map_or(id, |(_, p)| p),
        request.pool
    );
    loop {
        let pool = api
            .ok(reqwest::Method::GET, &path, CONTAINER_API_VERSION, None)
            .await?;
        let from = pool["properties"]["count"].as_u64().unwrap_or(0);
        let mut props = pool["properties"].clone();
        props["count"] = json!(request.replicas);
        let (status, answer) = api
            .call(
                reqwest::Method::PUT,
                &path,
                CONTAINER_API_VERSION,
                Some(&json!({ "properties": props })),
            )
            .await?;
        if status == 409 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        if !(200..300).contains(&status) {
            bail!("resizing answered {status}: {}", answer["error"]["message"]);
        }
        while tokio::time::Instant::now() < deadline {
            let now = api
                .ok(reqwest::Method::GET, &path, CONTAINER_API_VERSION, None)
                .await?;
            if now["properties"]["provisioningState"] == "Succeeded" {
                return Ok(Scaled {
                    cluster: cluster["name"].as_str().unwrap_or_default().to_string(),
                    from,
                    to: request.replicas.max(0) as u64,
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        bail!(
            "agent pool {} did not succeed within {timeout:?}",
            request.pool
        );
    }
}

/// What to delete behind the provider's back.
#[derive(Debug, Clone)]
pub struct DeleteRequest {
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The agent pool's name in AKS; `None` deletes the whole managed cluster.
    pub pool: Option<String>,
}

/// Deletes an agent pool, or the whole managed cluster (AKS deletes its pools and node resource
/// group with it), of the managed cluster tagged for `namespace/cluster`, as a user would in the
/// portal, retrying while another operation holds it (409); waits until ARM answers 404 for it;
/// returns the managed cluster's name.
///
/// # Errors
/// When no managed cluster carries the tag, ARM refuses, or the deletion does not finish in
/// `timeout`.
pub async fn delete(api: &ArmApi, request: &DeleteRequest, timeout: Duration) -> Result<String> {
    let (key, value) = contract::naming::ownership_tag("aks", &request.namespace, &request.cluster);
    let deadline = tokio::time::Instant::now() + timeout;
    let list = api
        .ok(
            reqwest::Method::GET,
            "/providers/Microsoft.ContainerService/managedClusters",
            CONTAINER_API_VERSION,
            None,
        )
        .await?;
    let cluster = list["value"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tags"][&key] == value.as_str())
        .with_context(|| format!("no managed cluster is tagged {key}={value}"))?;
    let name = cluster["name"].as_str().unwrap_or_default().to_string();
    let id = cluster["id"].as_str().unwrap_or_default();
    let cluster_path = id
        .split_once(&format!("/subscriptions/{}", api.subscription))
        .map_or(id, |(_, p)| p);
    let path = match &request.pool {
        Some(pool) => format!("{cluster_path}/agentPools/{pool}"),
        None => cluster_path.to_string(),
    };
    loop {
        let (status, answer) = api
            .call(reqwest::Method::DELETE, &path, CONTAINER_API_VERSION, None)
            .await?;
        if (200..300).contains(&status) {
            break;
        }
        if status == 409 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        bail!(
            "deleting {path} answered {status}: {}",
            answer["error"]["message"]
        );
    }
    // ARM gives a resource no identity beyond its path, so a pool the provider made again in
    // the moment between two reads would look like the deleted one: what is seen again in a
    // state other than Deleting (which ARM never leaves but by removal) is the new one.
    loop {
        let (status, answer) = api
            .call(reqwest::Method::GET, &path, CONTAINER_API_VERSION, None)
            .await?;
        if status == 404 || gone_or_made_again(status, &answer) {
            return Ok(name);
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("{path} was still there {timeout:?} after its deletion");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Whether a read after an accepted DELETE shows the resource gone, or made again: any
/// provisioning state but `Deleting`.
fn gone_or_made_again(status: u16, answer: &serde_json::Value) -> bool {
    status == 404
        || ((200..300).contains(&status)
            && answer["properties"]["provisioningState"]
                .as_str()
                .is_some_and(|s| s != "Deleting"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_made_again_between_two_reads_counts_as_deleted() {
        let state = |s: &str| serde_json::json!({"properties": {"provisioningState": s}});
        assert!(gone_or_made_again(404, &serde_json::Value::Null));
        assert!(!gone_or_made_again(200, &state("Deleting")));
        assert!(gone_or_made_again(200, &state("Creating")));
        assert!(gone_or_made_again(200, &state("Succeeded")));
        assert!(!gone_or_made_again(500, &state("Creating")));
    }
}
