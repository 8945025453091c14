//! The AKS emulator over plain HTTP, as Azure Resource Manager's wire protocol has it (no
//! maintained Rust client of AKS exists to drive it with): Entra tokens, asynchronous operations
//! with their headers, ETags, and the refusals users meet.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use emulators::aks::{AksConfig, AksServer, Principal, serve_aks};
use emulators::kit::{Delays, Timing};
use serde_json::{Value, json};

const CV: &str = "2026-08-01";
const NV: &str = "2024-05-01";
const RV: &str = "2021-04-01";

struct Bed {
    server: AksServer,
    http: reqwest::Client,
    token: String,
    sub: String,
}

async fn bed(vcpu_quota: u32) -> Bed {
    let config = AksConfig {
        principals: vec![Principal {
            client_id: "app".into(),
            secret: Some("pw".into()),
            federated: None,
            object_id: "oid-app".into(),
        }],
        vcpu_quota,
        ..AksConfig::default()
    };
    let timing = Timing {
        cluster: Delays::uniform(0.4),
        pool: Delays::uniform(0.3),
        addon: Delays::uniform(0.1),
        instance_shutdown: 0.6,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_aks(config, timing, listener).await.unwrap();
    let http = emulators::kit::http_client(Duration::from_secs(10));
    let form = emulators::aks::outside::form_body(&[
        ("grant_type", "client_credentials"),
        ("client_id", "app"),
        ("client_secret", "pw"),
        ("scope", "https://management.azure.com/.default"),
    ]);
    let answer: Value = http
        .post(server.token_url())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = answer["access_token"]
        .as_str()
        .expect("a token")
        .to_string();
    let sub = server.aks().config().subscription.clone();
    Bed {
        server,
        http,
        token,
        sub,
    }
}

impl Bed {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        version: &str,
        body: Option<Value>,
        if_match: Option<&str>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let url = format!(
            "{}/subscriptions/{}{path}?api-version={version}",
            self.server.url(),
            self.sub
        );
        let mut r = self.http.request(method, url).bearer_auth(&self.token);
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        if let Some(e) = if_match {
            r = r.header("if-match", e);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        (
            status,
            headers,
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }

    /// Polls an `Azure-AsyncOperation` URL until it leaves InProgress.
    async fn wait(&self, headers: &reqwest::header::HeaderMap) -> Value {
        let url = headers
            .get("azure-asyncoperation")
            .expect("Azure-AsyncOperation")
            .to_str()
            .unwrap()
            .to_string();
        assert!(headers.get("location").is_some(), "Location is sent too");
        for _ in 0..100 {
            let v: Value = self
                .http
                .get(&url)
                .bearer_auth(&self.token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if v["status"] != "InProgress" {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("operation {url} never finished");
    }
}

fn cluster_body(version: &str, count: u32) -> Value {
    json!({
        "location": "eastus",
        "tags": { "owner": "test" },
        "properties": {
            "kubernetesVersion": version,
            "dnsPrefix": "c1-dns",
            "aadProfile": { "managed": true, "enableAzureRBAC": true },
            "disableLocalAccounts": true,
            "agentPoolProfiles": [{ "name": "system", "mode": "System", "count": count, "vmSize": "Standard_D2s_v5", "availabilityZones": ["1", "2"] }],
        }
    })
}

const C1: &str = "/resourceGroups/rg1/providers/Microsoft.ContainerService/managedClusters/c1";

#[tokio::test]
async fn a_cluster_and_a_pool_through_their_asynchronous_operations() {
    let b = bed(100).await;
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.32", 2)),
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("ResourceGroupNotFound"))
    );
    let (s, _, _) = b
        .call(
            reqwest::Method::PUT,
            "/resourcegroups/rg1",
            RV,
            Some(json!({"location": "eastus"})),
            None,
        )
        .await;
    assert_eq!(s, 201);
    let (s, h, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.32", 2)),
            None,
        )
        .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["properties"]["provisioningState"], "Creating");
    assert_eq!(v["properties"]["currentKubernetesVersion"], "1.32.7");
    // A second change while the first runs is refused.
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.32", 2)),
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("OperationNotAllowed")),
        "{v}"
    );
    assert_eq!(b.wait(&h).await["status"], "Succeeded");
    let (_, _, c) = b.call(reqwest::Method::GET, C1, CV, None, None).await;
    assert_eq!(c["properties"]["provisioningState"], "Succeeded");
    let node_group = c["properties"]["nodeResourceGroup"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(node_group, "MC_rg1_c1_eastus");
    // A stale ETag is refused; the current one is taken.
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.33", 2)),
            Some("\"stale\""),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (412, Some("PreconditionFailed"))
    );
    // One minor at a time.
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.34", 2)),
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("OperationNotAllowed")),
        "{v}"
    );
    let etag = c["eTag"].as_str().unwrap();
    let (s, h, v) = b
        .call(
            reqwest::Method::PUT,
            C1,
            CV,
            Some(cluster_body("1.33", 2)),
            Some(etag),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["properties"]["provisioningState"], "Upgrading");
    assert_eq!(b.wait(&h).await["status"], "Succeeded");
    // A user pool: not above the control plane, scaled, its instances listed as scale-set VMs.
    let pool = format!("{C1}/agentPools/pool1");
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            &pool,
            CV,
            Some(json!({"properties": {"count": 1, "orchestratorVersion": "1.34"}})),
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("NodePoolMcVersionIncompatible"))
    );
    let (s, h, v) = b.call(reqwest::Method::PUT, &pool, CV, Some(json!({"properties": {"count": 3, "vmSize": "Standard_D2s_v5", "nodeTaints": ["dedicated=x:NoSchedule"]}})), None).await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["properties"]["currentOrchestratorVersion"], "1.33.3");
    assert_eq!(b.wait(&h).await["status"], "Succeeded");
    let sets =
        format!("/resourceGroups/{node_group}/providers/Microsoft.Compute/virtualMachineScaleSets");
    let (_, _, v) = b
        .call(reqwest::Method::GET, &sets, "2024-07-01", None, None)
        .await;
    let vmss = v["value"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tags"]["aks-managed-poolName"] == "pool1")
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, _, vms) = b
        .call(
            reqwest::Method::GET,
            &format!("{sets}/{vmss}/virtualMachines"),
            "2024-07-01",
            None,
            None,
        )
        .await;
    assert_eq!(vms["value"].as_array().unwrap().len(), 3);
    // Scale down: removed instances stay Deleting for the shutdown window.
    let (_, _, p) = b.call(reqwest::Method::GET, &pool, CV, None, None).await;
    let mut props = p["properties"].clone();
    props["count"] = json!(1);
    let (s, h, v) = b
        .call(
            reqwest::Method::PUT,
            &pool,
            CV,
            Some(json!({"properties": props})),
            None,
        )
        .await;
    assert_eq!(
        (s, v["properties"]["provisioningState"].as_str()),
        (200, Some("Scaling")),
        "{v}"
    );
    b.wait(&h).await;
    let (_, _, vms) = b
        .call(
            reqwest::Method::GET,
            &format!("{sets}/{vmss}/virtualMachines"),
            "2024-07-01",
            None,
            None,
        )
        .await;
    let deleting = vms["value"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["properties"]["provisioningState"] == "Deleting")
        .count();
    assert_eq!(deleting, 2, "{vms}");
    let ids = b.server.aks().instances();
    assert!(ids.iter().all(|i| i.provider_id.starts_with(&format!("azure:///subscriptions/{}/resourceGroups/mc_rg1_c1_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/", b.sub))), "{ids:?}");
    // The only System pool cannot go; local accounts are off, so no admin credential.
    let (s, _, v) = b
        .call(
            reqwest::Method::DELETE,
            &format!("{C1}/agentPools/system"),
            CV,
            None,
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("OperationNotAllowed"))
    );
    let (s, _, v) = b
        .call(
            reqwest::Method::POST,
            &format!("{C1}/listClusterAdminCredential"),
            CV,
            None,
            None,
        )
        .await;
    assert_eq!(s, 400, "{v}");
    let (s, _, v) = b
        .call(
            reqwest::Method::POST,
            &format!("{C1}/listClusterUserCredential"),
            CV,
            None,
            None,
        )
        .await;
    assert_eq!(s, 200);
    let kubeconfig = String::from_utf8(
        base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            v["kubeconfigs"][0]["value"].as_str().unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        kubeconfig.contains("command: kubelogin")
            && kubeconfig.contains(emulators::aks::AKS_SERVER_APP),
        "{kubeconfig}"
    );
    // Delete: 202 with Location, then gone with its node resource group.
    let (s, h, _) = b.call(reqwest::Method::DELETE, C1, CV, None, None).await;
    assert_eq!(s, 202);
    assert_eq!(b.wait(&h).await["status"], "Succeeded");
    let (s, _, _) = b.call(reqwest::Method::GET, C1, CV, None, None).await;
    assert_eq!(s, 404);
    let (s, _, _) = b
        .call(
            reqwest::Method::GET,
            &format!("/resourcegroups/{node_group}"),
            RV,
            None,
            None,
        )
        .await;
    assert_eq!(s, 404);
    b.server.shutdown().await;
}

#[tokio::test]
async fn what_arm_and_aks_refuse() {
    let b = bed(4).await;
    b.call(
        reqwest::Method::PUT,
        "/resourcegroups/rg1",
        RV,
        Some(json!({"location": "eastus"})),
        None,
    )
    .await;
    // No api-version, an old one, no token.
    let url = format!("{}/subscriptions/{}{C1}", b.server.url(), b.sub);
    let v: Value = b
        .http
        .get(&url)
        .bearer_auth(&b.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["error"]["code"], "MissingApiVersionParameter");
    let (_, _, v) = b
        .call(reqwest::Method::GET, C1, "2019-04-01", None, None)
        .await;
    assert_eq!(v["error"]["code"], "NoRegisteredProviderFound");
    let r = b
        .http
        .get(format!("{url}?api-version={CV}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = b
        .http
        .get(format!("{url}?api-version={CV}"))
        .bearer_auth("not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // Names, DNS prefixes, versions, sizes, system pools, quota.
    let bad = |f: &dyn Fn(&mut Value)| {
        let mut body = cluster_body("1.32", 1);
        f(&mut body);
        body
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            bad(&|b| b["properties"]["dnsPrefix"] = json!("bad_prefix")),
            "InvalidDnsPrefix",
        ),
        (
            bad(&|b| b["properties"]["kubernetesVersion"] = json!("1.21")),
            "K8sVersionNotSupported",
        ),
        (
            bad(&|b| b["properties"]["agentPoolProfiles"][0]["vmSize"] = json!("Standard_Huge")),
            "VMSizeNotSupported",
        ),
        (
            bad(&|b| b["properties"]["agentPoolProfiles"][0]["mode"] = json!("User")),
            "InvalidParameter",
        ),
        (
            bad(&|b| b["properties"]["agentPoolProfiles"][0]["count"] = json!(3)),
            "QuotaExceeded",
        ),
        (
            bad(&|b| b["properties"]["aadProfile"] = Value::Null),
            "BadRequest",
        ),
    ];
    for (body, code) in cases {
        let (s, _, v) = b.call(reqwest::Method::PUT, C1, CV, Some(body), None).await;
        assert_eq!((s, v["error"]["code"].as_str()), (400, Some(code)), "{v}");
    }
    let (s, _, v) = b
        .call(
            reqwest::Method::PUT,
            "/resourceGroups/rg1/providers/Microsoft.ContainerService/managedClusters/-c",
            CV,
            Some(cluster_body("1.32", 1)),
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("InvalidResourceName"))
    );
    // A subnet outside its network; a subnet in use cannot be deleted.
    let vnet = "/resourceGroups/rg1/providers/Microsoft.Network/virtualNetworks/v1";
    let (s, _, v) = b.call(reqwest::Method::PUT, vnet, NV, Some(json!({"location": "eastus", "properties": {"addressSpace": {"addressPrefixes": ["10.1.0.0/16"]}, "subnets": [{"name": "s", "properties": {"addressPrefix": "10.2.0.0/24"}}]}})), None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("NetcfgSubnetRangeOutsideVnet"))
    );
    let (s, h, v) = b.call(reqwest::Method::PUT, vnet, NV, Some(json!({"location": "eastus", "properties": {"addressSpace": {"addressPrefixes": ["10.1.0.0/16"]}, "subnets": [{"name": "s", "properties": {"addressPrefix": "10.1.0.0/24"}}]}})), None).await;
    assert_eq!(s, 201, "{v}");
    b.wait(&h).await;
    let subnet = v["properties"]["subnets"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut body = cluster_body("1.32", 1);
    body["properties"]["agentPoolProfiles"][0]["vnetSubnetID"] = json!(subnet);
    let (s, h, v) = b.call(reqwest::Method::PUT, C1, CV, Some(body), None).await;
    assert_eq!(s, 201, "{v}");
    let (s, _, v) = b.call(reqwest::Method::DELETE, vnet, NV, None, None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("InUseSubnetCannotBeDeleted"))
    );
    b.wait(&h).await;
    // Throttling and faults come from the kit: a 429 carries Retry-After in ARM's shape.
    b.server.kit().faults.add(serde_json::from_value(json!({"operation": "ManagedClusters_Get", "fault": {"kind": "throttle", "retryAfterSeconds": 3}, "trigger": {"count": 1}})).unwrap());
    let (s, h, v) = b.call(reqwest::Method::GET, C1, CV, None, None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (429, Some("TooManyRequests"))
    );
    assert_eq!(h.get("retry-after").unwrap(), "3");
    b.server.shutdown().await;
}
