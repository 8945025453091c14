//! Changes made to the emulated tenancy from outside Cluster API, over the OCI APIs as any
//! client would, every request signed with an API key (the shared signer, `oci-signer`): a
//! network to bring (`emulator oke-network`) and a node pool resized the way OKE's cluster
//! autoscaler would (`emulator oke-scale`).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use oci_signer::{ApiKey, Request, sign};
use serde_json::{Value, json};

/// A small signed OCI client of the emulator.
pub struct OciApi {
    base: String,
    key: ApiKey,
    http: reqwest::Client,
}

/// `date` as HTTP writes it.
pub fn http_date(t: jiff::Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

impl OciApi {
    /// A client of the emulator at `base` signing with `key`.
    pub fn new(base: &str, key: ApiKey) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            key,
            http: crate::kit::http_client(Duration::from_secs(30)),
        }
    }

    /// One signed call of `path` (`/20180222/clusters?…`); `(status, body, work request id)`, a
    /// body that is not JSON (a kubeconfig) as a string.
    ///
    /// # Errors
    /// When the request cannot be signed or sent.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value, Option<String>)> {
        let url = format!("{}{path}", self.base);
        let text = body.map(Value::to_string);
        let date = http_date(jiff::Timestamp::now());
        let signed = sign(
            &self.key,
            &Request {
                method,
                url: &url,
                body: text.as_deref().map(str::as_bytes),
                content_type: "application/json",
                date: &date,
            },
        )?;
        let method = reqwest::Method::from_bytes(method.as_bytes())?;
        let mut request = self.http.request(method, &url);
        for (name, value) in signed {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        if let Some(t) = text {
            request = request.body(t);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("calling {path}"))?;
        let status = response.status().as_u16();
        let work_request = response
            .headers()
            .get("opc-work-request-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let text = response.text().await.unwrap_or_default();
        let body = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) if text.is_empty() => Value::Null,
            Err(_) => Value::String(text),
        };
        Ok((status, body, work_request))
    }

    /// A call that must succeed.
    ///
    /// # Errors
    /// OCI's error, with its code and message.
    pub async fn ok(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(Value, Option<String>)> {
        let (status, v, wr) = self.call(method, path, body).await?;
        if !(200..300).contains(&status) {
            bail!(
                "{method} {path} answered {status} {}: {}",
                v["code"].as_str().unwrap_or(""),
                v["message"].as_str().unwrap_or("no message")
            );
        }
        Ok((v, wr))
    }

    /// Waits for a work request to succeed.
    ///
    /// # Errors
    /// When it fails (with its errors) or `timeout` passes.
    pub async fn wait(&self, work_request: &str, timeout: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let (w, _) = self
                .ok(
                    "GET",
                    &format!("/20180222/workRequests/{work_request}"),
                    None,
                )
                .await?;
            match w["status"].as_str() {
                Some("SUCCEEDED") => return Ok(()),
                Some("FAILED" | "CANCELED") => {
                    let (errors, _) = self
                        .ok(
                            "GET",
                            &format!("/20180222/workRequests/{work_request}/errors"),
                            None,
                        )
                        .await?;
                    bail!("work request {work_request} failed: {errors}");
                }
                _ => {}
            }
            if tokio::time::Instant::now() > deadline {
                bail!("work request {work_request} did not finish in {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A network to bring: a VCN with public and private route tables and three subnets.
#[derive(Debug, Clone)]
pub struct BroughtNetwork {
    /// The VCN.
    pub vcn: String,
    /// The API endpoint's subnet (public).
    pub endpoint_subnet: String,
    /// The nodes' subnet (private, behind a NAT gateway).
    pub node_subnet: String,
    /// The load balancers' subnet (public).
    pub lb_subnet: String,
}

async fn create(api: &OciApi, collection: &str, body: Value) -> Result<String> {
    let (v, _) = api
        .ok("POST", &format!("/20160918/{collection}"), Some(&body))
        .await?;
    v["id"]
        .as_str()
        .map(String::from)
        .with_context(|| format!("no id in the answer of Create {collection}"))
}

/// Creates a VCN `10.<octet>.0.0/16` named `name` in `compartment`, with an internet gateway,
/// a NAT gateway, their route tables and three subnets.
///
/// # Errors
/// OCI's refusals.
pub async fn create_network(
    api: &OciApi,
    compartment: &str,
    name: &str,
    octet: u8,
) -> Result<BroughtNetwork> {
    let base = json!({ "compartmentId": compartment });
    let with = |extra: Value| {
        let mut b = base.clone();
        if let (Some(o), Value::Object(e)) = (b.as_object_mut(), extra) {
            o.extend(e);
        }
        b
    };
    let vcn = create(
        api,
        "vcns",
        with(json!({ "cidrBlocks": [format!("10.{octet}.0.0/16")], "displayName": name, "dnsLabel": "brought" })),
    )
    .await?;
    let igw = create(
        api,
        "internetGateways",
        with(json!({ "vcnId": vcn, "isEnabled": true, "displayName": format!("{name}-igw") })),
    )
    .await?;
    let nat = create(
        api,
        "natGateways",
        with(json!({ "vcnId": vcn, "displayName": format!("{name}-nat") })),
    )
    .await?;
    let public = create(
        api,
        "routeTables",
        with(json!({ "vcnId": vcn, "displayName": format!("{name}-public"), "routeRules": [{"destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": igw}] })),
    )
    .await?;
    let private = create(
        api,
        "routeTables",
        with(json!({ "vcnId": vcn, "displayName": format!("{name}-private"), "routeRules": [{"destination": "0.0.0.0/0", "destinationType": "CIDR_BLOCK", "networkEntityId": nat}] })),
    )
    .await?;
    let subnet = |display: &str, cidr: String, route: &str, private: bool| {
        with(json!({
            "vcnId": vcn,
            "displayName": format!("{name}-{display}"),
            "cidrBlock": cidr,
            "routeTableId": route,
            "prohibitPublicIpOnVnic": private,
        }))
    };
    let endpoint_subnet = create(
        api,
        "subnets",
        subnet("endpoint", format!("10.{octet}.0.0/28"), &public, false),
    )
    .await?;
    let lb_subnet = create(
        api,
        "subnets",
        subnet("lb", format!("10.{octet}.1.0/24"), &public, false),
    )
    .await?;
    let node_subnet = create(
        api,
        "subnets",
        subnet("nodes", format!("10.{octet}.10.0/24"), &private, true),
    )
    .await?;
    Ok(BroughtNetwork {
        vcn,
        endpoint_subnet,
        node_subnet,
        lb_subnet,
    })
}

/// A node pool to resize.
#[derive(Debug, Clone)]
pub struct ScaleRequest {
    /// The compartment of the cluster.
    pub compartment: String,
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The node pool's name in OKE.
    pub pool: String,
    /// The size wanted.
    pub replicas: i64,
}

/// What a resize did.
#[derive(Debug, Clone)]
pub struct Scaled {
    /// The OKE cluster's name.
    pub cluster: String,
    /// The size before.
    pub from: i64,
    /// The size after.
    pub to: i64,
}

/// Resizes a node pool as OKE's cluster autoscaler would (an UpdateNodePool of
/// `nodeConfigDetails.size`, bypassing Cluster API), finding the cluster by the provider's
/// ownership tag, retrying while the pool is busy, and waiting for the work request.
///
/// # Errors
/// When the cluster or pool is not found, OCI refuses, or `timeout` passes.
pub async fn scale_pool(api: &OciApi, request: &ScaleRequest, timeout: Duration) -> Result<Scaled> {
    let (key, value) = contract::naming::ownership_tag("oke", &request.namespace, &request.cluster);
    let (clusters, _) = api
        .ok(
            "GET",
            &format!(
                "/20180222/clusters?compartmentId={}&lifecycleState=ACTIVE",
                request.compartment
            ),
            None,
        )
        .await?;
    let cluster = clusters
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["freeformTags"][&key] == value.as_str())
        .with_context(|| format!("no ACTIVE OKE cluster tagged {key}={value}"))?
        .clone();
    let cluster_id = cluster["id"].as_str().unwrap_or_default();
    let (pools, _) = api
        .ok(
            "GET",
            &format!(
                "/20180222/nodePools?compartmentId={}&clusterId={cluster_id}&name={}",
                request.compartment, request.pool
            ),
            None,
        )
        .await?;
    let pool = pools
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["lifecycleState"] != "DELETED" && p["lifecycleState"] != "DELETING")
        .with_context(|| format!("no node pool {} in cluster {cluster_id}", request.pool))?
        .clone();
    let pool_id = pool["id"].as_str().unwrap_or_default();
    let from = pool["nodeConfigDetails"]["size"].as_i64().unwrap_or(0);
    let deadline = tokio::time::Instant::now() + timeout;
    let body = json!({ "nodeConfigDetails": { "size": request.replicas } });
    let work_request = loop {
        let (status, v, wr) = api
            .call(
                "PUT",
                &format!("/20180222/nodePools/{pool_id}"),
                Some(&body),
            )
            .await?;
        match (status, wr) {
            (202, Some(wr)) => break wr,
            (409, _) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            _ => bail!(
                "UpdateNodePool answered {status} {}: {}",
                v["code"].as_str().unwrap_or(""),
                v["message"].as_str().unwrap_or("")
            ),
        }
    };
    api.wait(&work_request, timeout).await?;
    Ok(Scaled {
        cluster: cluster["name"].as_str().unwrap_or_default().to_string(),
        from,
        to: request.replicas,
    })
}

/// What to delete behind the provider's back.
#[derive(Debug, Clone)]
pub struct DeleteRequest {
    /// The compartment of the cluster.
    pub compartment: String,
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The node pool's name in OKE; `None` deletes the whole cluster (OKE deletes its node pools
    /// with it).
    pub pool: Option<String>,
}

/// Deletes a node pool, or the whole cluster, of the OKE cluster tagged for
/// `namespace/cluster`, as a user would in the console, retrying while another work request holds
/// it (409), and waits for the deletion's work request; returns the OKE cluster's name.
///
/// # Errors
/// When the cluster or pool is not found, OCI refuses, or `timeout` passes.
pub async fn delete(api: &OciApi, request: &DeleteRequest, timeout: Duration) -> Result<String> {
    let (key, value) = contract::naming::ownership_tag("oke", &request.namespace, &request.cluster);
    let (clusters, _) = api
        .ok(
            "GET",
            &format!("/20180222/clusters?compartmentId={}", request.compartment),
            None,
        )
        .await?;
    let cluster = clusters
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| !matches!(c["lifecycleState"].as_str(), Some("DELETING" | "DELETED")))
        .find(|c| c["freeformTags"][&key] == value.as_str())
        .with_context(|| format!("no live OKE cluster tagged {key}={value}"))?
        .clone();
    let name = cluster["name"].as_str().unwrap_or_default().to_string();
    let cluster_id = cluster["id"].as_str().unwrap_or_default();
    let path = match &request.pool {
        None => format!("/20180222/clusters/{cluster_id}"),
        Some(pool) => {
            let (pools, _) = api
                .ok(
                    "GET",
                    &format!(
                        "/20180222/nodePools?compartmentId={}&clusterId={cluster_id}&name={pool}",
                        request.compartment
                    ),
                    None,
                )
                .await?;
            let id = pools
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| !matches!(p["lifecycleState"].as_str(), Some("DELETING" | "DELETED")))
                .and_then(|p| p["id"].as_str())
                .with_context(|| format!("no live node pool {pool} in cluster {cluster_id}"))?
                .to_string();
            format!("/20180222/nodePools/{id}")
        }
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let work_request = loop {
        let (status, v, wr) = api.call("DELETE", &path, None).await?;
        match (status, wr) {
            (202, Some(wr)) => break wr,
            (409, _) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            _ => bail!(
                "DELETE {path} answered {status} {}: {}",
                v["code"].as_str().unwrap_or(""),
                v["message"].as_str().unwrap_or("")
            ),
        }
    };
    api.wait(&work_request, timeout).await?;
    Ok(name)
}
