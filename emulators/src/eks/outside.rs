//! What happens to a provider's EKS resources from outside Cluster API, done through the EKS API as
//! any AWS client does it (REST-JSON, SigV4-signed with the third-party `aws-sigv4` signer):
//! the cloud's autoscaler resizing a node group ([`scale_pool`]), and a network a user brings
//! ([`create_network`], in moto's EC2).
//!
//! The node group of a Cluster API pool is found the way the EKS provider names and tags it: the
//! EKS cluster is the one carrying the ownership tag `capi-managed-eks=<namespace>_<cluster>`
//! ([`contract::naming::ownership_tag`]), the node group is named
//! `derive_cloud_name(<namespace>, <EKSMachinePool name>)` ([`contract::naming::EKS_NODEGROUP`])
//! and carries the same tag.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use contract::naming;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::ec2::{Ec2, Ec2Error};
use super::error::ERROR_TYPE_HEADER;

/// The provider name in the EKS provider's ownership tag (`capi-managed-eks`).
pub const PROVIDER: &str = "eks";

/// Why a call to the EKS API failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("EKS {operation}: {}{message}", kind.as_deref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct ApiError {
    /// The operation called.
    pub operation: &'static str,
    /// The exception name (`ResourceInUseException`, …); `None` when EKS did not answer.
    pub kind: Option<String>,
    /// The HTTP status (0 when EKS did not answer).
    pub status: u16,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    /// Whether trying again later may succeed: the resource is busy, the call was throttled, the
    /// service failed, or it did not answer.
    pub fn is_retryable(&self) -> bool {
        self.status == 0
            || self.status == 429
            || self.status >= 500
            || self.kind.as_deref() == Some("ResourceInUseException")
    }
}

/// A small EKS API client (the operations [`scale_pool`] needs) for an emulator's URL.
#[derive(Debug)]
pub struct EksApi {
    url: String,
    region: String,
    credentials: Option<Credentials>,
    http: reqwest::Client,
}

impl EksApi {
    /// A client for the EKS API at `url` in `region`, signing with `credentials`
    /// (`(access key id, secret)`) when given, unsigned otherwise (an emulator that checks none).
    pub fn new(url: &str, region: &str, credentials: Option<(String, String)>) -> Self {
        let http = crate::kit::http_client(Duration::from_secs(30));
        Self {
            url: url.trim_end_matches('/').to_string(),
            region: region.to_string(),
            credentials: credentials
                .map(|(k, s)| Credentials::new(k, s, None, None, "emulator-outside")),
            http,
        }
    }

    /// Every cluster's name (ListClusters, all pages).
    ///
    /// # Errors
    /// EKS's error or a transport failure.
    pub async fn list_clusters(&self) -> Result<Vec<String>, ApiError> {
        self.list_all("ListClusters", "/clusters", "clusters").await
    }

    /// DescribeCluster's `cluster`.
    ///
    /// # Errors
    /// EKS's error (`ResourceNotFoundException`, …) or a transport failure.
    pub async fn describe_cluster(&self, name: &str) -> Result<Value, ApiError> {
        let path = format!("/clusters/{}", segment(name));
        let out = self.call("DescribeCluster", "GET", &path, None).await?;
        Ok(out["cluster"].clone())
    }

    /// Every node group's name of `cluster` (ListNodegroups, all pages).
    ///
    /// # Errors
    /// EKS's error or a transport failure.
    pub async fn list_nodegroups(&self, cluster: &str) -> Result<Vec<String>, ApiError> {
        let path = format!("/clusters/{}/node-groups", segment(cluster));
        self.list_all("ListNodegroups", &path, "nodegroups").await
    }

    /// DescribeNodegroup's `nodegroup`.
    ///
    /// # Errors
    /// EKS's error or a transport failure.
    pub async fn describe_nodegroup(&self, cluster: &str, ng: &str) -> Result<Value, ApiError> {
        let path = format!("/clusters/{}/node-groups/{}", segment(cluster), segment(ng));
        let out = self.call("DescribeNodegroup", "GET", &path, None).await?;
        Ok(out["nodegroup"].clone())
    }

    /// UpdateNodegroupConfig with `body`; returns the `update`.
    ///
    /// # Errors
    /// EKS's error (`ResourceInUseException` while another update runs, …) or a transport failure.
    pub async fn update_nodegroup_config(
        &self,
        cluster: &str,
        ng: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        let path = format!(
            "/clusters/{}/node-groups/{}/update-config",
            segment(cluster),
            segment(ng)
        );
        let out = self
            .call("UpdateNodegroupConfig", "POST", &path, Some(body))
            .await?;
        Ok(out["update"].clone())
    }

    /// DescribeUpdate's `update` for an update of node group `ng`.
    ///
    /// # Errors
    /// EKS's error or a transport failure.
    pub async fn describe_nodegroup_update(
        &self,
        cluster: &str,
        ng: &str,
        id: &str,
    ) -> Result<Value, ApiError> {
        let path = format!(
            "/clusters/{}/updates/{}?nodegroupName={}",
            segment(cluster),
            segment(id),
            segment(ng)
        );
        let out = self.call("DescribeUpdate", "GET", &path, None).await?;
        Ok(out["update"].clone())
    }

    /// DeleteNodegroup.
    ///
    /// # Errors
    /// EKS's error (`ResourceInUseException` while an update runs, …) or a transport failure.
    pub async fn delete_nodegroup(&self, cluster: &str, ng: &str) -> Result<Value, ApiError> {
        let path = format!("/clusters/{}/node-groups/{}", segment(cluster), segment(ng));
        let out = self.call("DeleteNodegroup", "DELETE", &path, None).await?;
        Ok(out["nodegroup"].clone())
    }

    /// DeleteCluster.
    ///
    /// # Errors
    /// EKS's error (`ResourceInUseException` while node groups are attached, …) or a transport
    /// failure.
    pub async fn delete_cluster(&self, name: &str) -> Result<Value, ApiError> {
        let path = format!("/clusters/{}", segment(name));
        let out = self.call("DeleteCluster", "DELETE", &path, None).await?;
        Ok(out["cluster"].clone())
    }

    async fn list_all(
        &self,
        operation: &'static str,
        path: &str,
        field: &str,
    ) -> Result<Vec<String>, ApiError> {
        let mut names = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let page_path = match &next {
                Some(token) => format!("{path}?nextToken={}", segment(token)),
                None => path.to_string(),
            };
            let out = self.call(operation, "GET", &page_path, None).await?;
            names.extend(
                out[field]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            match out["nextToken"].as_str().filter(|t| !t.is_empty()) {
                Some(token) => next = Some(token.to_string()),
                None => return Ok(names),
            }
        }
    }

    async fn call(
        &self,
        operation: &'static str,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let fail = |status: u16, kind: Option<String>, message: String| ApiError {
            operation,
            kind,
            status,
            message,
        };
        let url = format!("{}{path}", self.url);
        let bytes = body.map(Value::to_string).unwrap_or_default().into_bytes();
        let mut headers: Vec<(String, String)> = Vec::new();
        if body.is_some() {
            headers.push(("content-type".into(), "application/json".into()));
        }
        if let Some(credentials) = &self.credentials {
            headers.extend(
                self.signature(method, &url, &headers, &bytes, credentials)
                    .map_err(|e| fail(0, None, format!("signing the request: {e}")))?,
            );
        }
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| fail(0, None, format!("method {method}: {e}")))?;
        let mut request = self.http.request(method, &url);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = request
            .body(bytes)
            .send()
            .await
            .map_err(|e| fail(0, None, format!("request failed: {e}")))?;
        let status = response.status().as_u16();
        let kind = response
            .headers()
            .get(ERROR_TYPE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(':').next().unwrap_or(v).to_string());
        let text = response
            .text()
            .await
            .map_err(|e| fail(0, None, format!("reading the response: {e}")))?;
        let value: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)
                .map_err(|e| fail(status, kind.clone(), format!("not JSON ({e}): {text}")))?
        };
        if !(200..300).contains(&status) {
            let message = value["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(fail(status, kind, message));
        }
        Ok(value)
    }

    /// The SigV4 headers (`authorization`, `x-amz-date`, …) for the request.
    fn signature(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
        credentials: &Credentials,
    ) -> Result<Vec<(String, String)>, String> {
        let identity = credentials.clone().into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("eks")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| e.to_string())?
            .into();
        let signable = SignableRequest::new(
            method,
            url,
            headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            SignableBody::Bytes(body),
        )
        .map_err(|e| e.to_string())?;
        let (instructions, _signature) = sign(signable, &params)
            .map_err(|e| e.to_string())?
            .into_parts();
        let (signed, _query) = instructions.into_parts();
        Ok(signed
            .into_iter()
            .map(|h| (h.name().to_string(), h.value().to_string()))
            .collect())
    }
}

/// A path or query segment, percent-encoded.
fn segment(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

/// A node group's `scalingConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaling {
    /// `minSize`.
    pub min: i64,
    /// `maxSize`.
    pub max: i64,
    /// `desiredSize`.
    pub desired: i64,
}

impl Scaling {
    /// From DescribeNodegroup's `nodegroup`.
    pub fn of(nodegroup: &Value) -> Option<Self> {
        let s = &nodegroup["scalingConfig"];
        Some(Self {
            min: s["minSize"].as_i64()?,
            max: s["maxSize"].as_i64()?,
            desired: s["desiredSize"].as_i64()?,
        })
    }

    /// The `scalingConfig` of an UpdateNodegroupConfig that makes the desired size `replicas`, as
    /// an autoscaler holding the node group would: the desired size, plus the one bound it crosses
    /// (EKS refuses a desired size outside `minSize..=maxSize`); `None` when it already is.
    pub fn resize_to(self, replicas: i64) -> Option<Value> {
        if replicas == self.desired {
            return None;
        }
        let mut config = json!({ "desiredSize": replicas });
        if replicas < self.min {
            config["minSize"] = json!(replicas);
        }
        if replicas > self.max {
            config["maxSize"] = json!(replicas);
        }
        Some(config)
    }
}

/// The EKS cluster whose ownership tag says it belongs to the Cluster API cluster
/// `namespace/cluster`.
///
/// # Errors
/// None or several carry the tag, or an EKS call failed.
pub async fn owned_cluster(
    api: &EksApi,
    namespace: &str,
    cluster: &str,
) -> Result<String, anyhow::Error> {
    let mut owned = Vec::new();
    for name in api.list_clusters().await? {
        let described = api.describe_cluster(&name).await?;
        if naming::is_owned_by(&tags(&described), PROVIDER, namespace, cluster) {
            owned.push(name);
        }
    }
    match owned.as_slice() {
        [one] => Ok(one.clone()),
        [] => {
            let (key, value) = naming::ownership_tag(PROVIDER, namespace, cluster);
            anyhow::bail!("no EKS cluster is tagged {key}={value}")
        }
        many => anyhow::bail!(
            "several EKS clusters are tagged for {namespace}/{cluster}: {}",
            many.join(", ")
        ),
    }
}

/// The node group of pool `pool` (the EKSMachinePool's name) of EKS cluster `eks_cluster`: named
/// as the provider derives it (or `name` when given) and tagged for `namespace/cluster`.
///
/// # Errors
/// No such node group, one not tagged for the cluster, or an EKS call failed.
pub async fn owned_nodegroup(
    api: &EksApi,
    eks_cluster: &str,
    namespace: &str,
    cluster: &str,
    pool: &str,
    name: Option<&str>,
) -> Result<String, anyhow::Error> {
    let wanted = name
        .map(str::to_string)
        .unwrap_or_else(|| naming::derive_cloud_name(namespace, pool, &naming::EKS_NODEGROUP));
    let names = api.list_nodegroups(eks_cluster).await?;
    if !names.contains(&wanted) {
        anyhow::bail!(
            "EKS cluster {eks_cluster} has no node group {wanted} (pool {pool}); it has: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    }
    let described = api.describe_nodegroup(eks_cluster, &wanted).await?;
    if !naming::is_owned_by(&tags(&described), PROVIDER, namespace, cluster) {
        anyhow::bail!(
            "node group {wanted} of EKS cluster {eks_cluster} is not tagged for {namespace}/{cluster}"
        );
    }
    Ok(wanted)
}

fn tags(resource: &Value) -> BTreeMap<String, String> {
    resource["tags"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

/// What [`scale_pool`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaled {
    /// The EKS cluster.
    pub cluster: String,
    /// The node group.
    pub nodegroup: String,
    /// Its desired size before.
    pub from: i64,
    /// Its desired size now.
    pub to: i64,
}

/// Which pool to resize, and to what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleRequest {
    /// The Cluster API cluster's namespace.
    pub namespace: String,
    /// The Cluster API cluster's name.
    pub cluster: String,
    /// The EKSMachinePool's name.
    pub pool: String,
    /// The node group's name when it is not the derived one (`spec.cloudName`).
    pub nodegroup: Option<String>,
    /// The desired size wanted.
    pub replicas: i64,
}

/// Sets the desired size of a pool's node group to `request.replicas` through
/// UpdateNodegroupConfig, as the cloud's autoscaler would (Cluster API is not involved), and waits
/// until EKS reports the update done. While the node group is busy (another update, still
/// creating) or EKS throttles, it tries again until `timeout`.
///
/// # Errors
/// The node group cannot be found, EKS refused the change, the update failed, or `timeout` passed.
pub async fn scale_pool(
    api: &EksApi,
    request: &ScaleRequest,
    timeout: Duration,
) -> Result<Scaled, anyhow::Error> {
    if request.replicas < 0 {
        anyhow::bail!("replicas must not be negative ({})", request.replicas);
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let retry = |what: String| async move {
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("gave up after {timeout:?}: {what}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(())
    };
    let eks_cluster = owned_cluster(api, &request.namespace, &request.cluster).await?;
    let ng = owned_nodegroup(
        api,
        &eks_cluster,
        &request.namespace,
        &request.cluster,
        &request.pool,
        request.nodegroup.as_deref(),
    )
    .await?;
    let (from, update) = loop {
        let described = match api.describe_nodegroup(&eks_cluster, &ng).await {
            Ok(d) => d,
            Err(e) if e.is_retryable() => {
                retry(e.to_string()).await?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let scaling = Scaling::of(&described)
            .ok_or_else(|| anyhow::anyhow!("node group {ng} reports no scalingConfig"))?;
        let Some(config) = scaling.resize_to(request.replicas) else {
            return Ok(Scaled {
                cluster: eks_cluster,
                nodegroup: ng,
                from: scaling.desired,
                to: request.replicas,
            });
        };
        let body = json!({ "scalingConfig": config });
        match api.update_nodegroup_config(&eks_cluster, &ng, &body).await {
            Ok(update) => break (scaling.desired, update),
            Err(e) if e.is_retryable() => retry(e.to_string()).await?,
            Err(e) => return Err(e.into()),
        }
    };
    let id = update["id"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("UpdateNodegroupConfig returned no update id"))?
        .to_string();
    loop {
        match api.describe_nodegroup_update(&eks_cluster, &ng, &id).await {
            Ok(u) => match u["status"].as_str() {
                Some("Successful") => break,
                Some("Failed" | "Cancelled") => {
                    anyhow::bail!(
                        "update {id} of node group {ng} ended {}: {}",
                        u["status"],
                        u["errors"]
                    )
                }
                _ => retry(format!("update {id} of node group {ng} still in progress")).await?,
            },
            Err(e) if e.is_retryable() => retry(e.to_string()).await?,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Scaled {
        cluster: eks_cluster,
        nodegroup: ng,
        from,
        to: request.replicas,
    })
}

/// A network made by [`create_network`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// The VPC.
    pub vpc: String,
    /// Its subnets with their zones, in the zones' order.
    pub subnets: Vec<(String, String)>,
}

/// Creates a VPC `10.<octet>.0.0/16` with one `/20` subnet in each of `zones`, every one tagged
/// `Name=<name>`: the network a user brings to a cluster.
///
/// # Errors
/// moto's error or a transport failure.
pub async fn create_network(
    ec2: &Ec2,
    name: &str,
    octet: u8,
    zones: &[String],
) -> Result<Network, Ec2Error> {
    let tags = [("Name".to_string(), name.to_string())];
    let vpc = ec2.create_vpc(&format!("10.{octet}.0.0/16"), &tags).await?;
    let mut subnets = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        let cidr = format!("10.{octet}.{}.0/20", i * 16);
        let tags = [("Name".to_string(), format!("{name}-{zone}"))];
        let id = ec2.create_subnet(&vpc, &cidr, zone, &tags).await?;
        subnets.push((id, zone.clone()));
    }
    Ok(Network { vpc, subnets })
}

/// Deletes the node group of `pool` (the pool's InfraMachinePool name) of the Cluster API
/// cluster `namespace/cluster` through the EKS API, as a user with the AWS console would,
/// behind the provider's back; waits until it is gone (not found, or a node group of the same
/// name with another ARN: the provider already made it again). Returns `(EKS cluster, node
/// group)`.
///
/// # Errors
/// The node group cannot be found, EKS refuses the deletion for longer than `timeout`, or it is
/// still listed after `timeout`.
pub async fn delete_pool(
    api: &EksApi,
    namespace: &str,
    cluster: &str,
    pool: &str,
    timeout: Duration,
) -> Result<(String, String), anyhow::Error> {
    let deadline = tokio::time::Instant::now() + timeout;
    let eks_cluster = owned_cluster(api, namespace, cluster).await?;
    let ng = owned_nodegroup(api, &eks_cluster, namespace, cluster, pool, None).await?;
    // The provider may create the node group again under the same name as soon as it is gone;
    // its ARN ends in a new id, so "gone" is "not found, or another ARN".
    let arn = api.describe_nodegroup(&eks_cluster, &ng).await?["nodegroupArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    loop {
        match api.delete_nodegroup(&eks_cluster, &ng).await {
            Ok(_) => break,
            Err(e) if e.is_retryable() && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    loop {
        match api.describe_nodegroup(&eks_cluster, &ng).await {
            Ok(now) if now["nodegroupArn"].as_str() == Some(arn.as_str()) => {}
            Ok(_) => break,
            Err(e) if e.status == 404 => break,
            Err(e) if !e.is_retryable() => return Err(e.into()),
            Err(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("node group {ng} ({arn}) of {eks_cluster} still there after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok((eks_cluster, ng))
}

/// Deletes the EKS cluster of Cluster API cluster `namespace/cluster` behind its provider's
/// back, as a user would in the console: its node groups first (EKS refuses to delete a cluster
/// with node groups attached), then the cluster, deleting again whatever node group reappears
/// meanwhile; returns the cluster's name once it is gone (not found, or another ARN).
///
/// # Errors
/// No cluster tagged for it, an EKS call failed, or it is still there after `timeout`.
pub async fn delete_cluster(
    api: &EksApi,
    namespace: &str,
    cluster: &str,
    timeout: Duration,
) -> Result<String, anyhow::Error> {
    let deadline = tokio::time::Instant::now() + timeout;
    let eks_cluster = owned_cluster(api, namespace, cluster).await?;
    let arn = api.describe_cluster(&eks_cluster).await?["arn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    loop {
        for ng in api.list_nodegroups(&eks_cluster).await? {
            match api.delete_nodegroup(&eks_cluster, &ng).await {
                Ok(_) => {}
                Err(e) if e.is_retryable() || e.status == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
        match api.delete_cluster(&eks_cluster).await {
            Ok(_) => break,
            Err(e) if e.is_retryable() && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    loop {
        match api.describe_cluster(&eks_cluster).await {
            Ok(now) if now["arn"].as_str() == Some(arn.as_str()) => {}
            Ok(_) => break,
            Err(e) if e.status == 404 => break,
            Err(e) if !e.is_retryable() => return Err(e.into()),
            Err(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("EKS cluster {eks_cluster} ({arn}) still there after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(eks_cluster)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resize_sends_the_desired_size_and_only_the_bound_it_crosses() {
        let s = Scaling {
            min: 1,
            max: 3,
            desired: 2,
        };
        assert_eq!(s.resize_to(2), None);
        assert_eq!(s.resize_to(3), Some(json!({"desiredSize": 3})));
        assert_eq!(
            s.resize_to(5),
            Some(json!({"desiredSize": 5, "maxSize": 5}))
        );
        assert_eq!(
            s.resize_to(0),
            Some(json!({"desiredSize": 0, "minSize": 0}))
        );
    }

    #[test]
    fn only_a_busy_node_group_throttling_or_no_answer_is_retried() {
        let e = |status: u16, kind: Option<&str>| ApiError {
            operation: "UpdateNodegroupConfig",
            kind: kind.map(str::to_string),
            status,
            message: String::new(),
        };
        assert!(e(409, Some("ResourceInUseException")).is_retryable());
        assert!(e(429, Some("ThrottlingException")).is_retryable());
        assert!(e(500, Some("ServerException")).is_retryable());
        assert!(e(0, None).is_retryable());
        assert!(!e(400, Some("InvalidParameterException")).is_retryable());
        assert!(!e(404, Some("ResourceNotFoundException")).is_retryable());
    }
}
