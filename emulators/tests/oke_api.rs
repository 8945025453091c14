//! The OKE emulator over plain HTTP, as OCI's SDKs send it (no usable Rust SDK of OCI exists to
//! drive it with): every request signed (the shared signer, itself equal to Oracle's Python SDK
//! on golden vectors), work requests through their states, and the refusals users meet. The
//! emulator's signature check is held to what Oracle's own SDK signs: the golden vectors verify,
//! and any change to them does not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use emulators::kit::{Delays, Timing};
use emulators::oke::outside::{OciApi, create_network, http_date};
use emulators::oke::signature::{self, KeyRing, PublicKey, Received};
use emulators::oke::{COMPARTMENT, OkeConfig, OkeServer, TENANCY, generate_api_key, serve_oke};
use oci_signer::ApiKey;
use serde_json::{Value, json};

struct Bed {
    server: OkeServer,
    api: OciApi,
    pem: String,
    user: String,
    fingerprint: String,
}

/// An emulator whose cluster and node-pool work requests take `delay` seconds: long enough that
/// what the tests read right after a request still finds it running, however loaded the machine.
async fn bed(ocpu_limit: u32, delay: f64) -> Bed {
    let user = emulators::oke::global_ocid("user");
    let (pem, key) = generate_api_key(&format!("{TENANCY}/{user}")).unwrap();
    let fingerprint = key.fingerprint();
    let config = OkeConfig {
        keys: vec![key],
        ocpu_limit,
        ..OkeConfig::default()
    };
    let timing = Timing {
        cluster: Delays::uniform(delay),
        pool: Delays::uniform(delay),
        addon: Delays::uniform(0.1),
        // Long enough that a read right after a shrink still finds the leaving node, however
        // loaded the machine.
        instance_shutdown: 2.0,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = serve_oke(config, timing, listener).await.unwrap();
    let api = OciApi::new(
        server.url(),
        ApiKey::from_pem(&pem, TENANCY, &user, &fingerprint).unwrap(),
    );
    Bed {
        server,
        api,
        pem,
        user,
        fingerprint,
    }
}

impl Bed {
    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> (Value, Option<String>) {
        self.api.ok(method, path, body.as_ref()).await.unwrap()
    }

    async fn refused(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, v, _) = self.api.call(method, path, body.as_ref()).await.unwrap();
        assert!(status >= 400, "{method} {path} answered {status}: {v}");
        (status, v)
    }

    async fn wait(&self, work_request: &str) {
        self.api
            .wait(work_request, Duration::from_secs(20))
            .await
            .unwrap();
    }

    async fn cluster_body(
        &self,
        net: &emulators::oke::outside::BroughtNetwork,
        version: &str,
    ) -> Value {
        json!({
            "name": "c1",
            "compartmentId": COMPARTMENT,
            "vcnId": net.vcn,
            "kubernetesVersion": version,
            "endpointConfig": { "subnetId": net.endpoint_subnet, "isPublicIpEnabled": true },
            "options": { "serviceLbSubnetIds": [net.lb_subnet] },
            "freeformTags": { "team": "a" },
        })
    }
}

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oci-signer/testdata/signer-vectors.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn what_oracle_s_sdk_signs_verifies_and_any_change_does_not() {
    let v = vectors();
    let s = |k: &str| v[k].as_str().unwrap();
    let key_id = format!("{}/{}/{}", s("tenancy"), s("user"), s("fingerprint"));
    let ring = KeyRing::new([PublicKey::from_pem(&key_id, s("privateKeyPkcs8")).unwrap()]);
    let cases = v["vectors"].as_array().unwrap();
    assert!(cases.len() >= 9);
    for case in cases {
        let headers = &case["headers"];
        let url = case["url"].as_str().unwrap();
        let after_host = url.splitn(4, '/').nth(3).unwrap();
        let target = format!("/{after_host}");
        let host = url.split('/').nth(2).unwrap().to_string();
        let body = case["body"]
            .as_str()
            .unwrap_or_default()
            .as_bytes()
            .to_vec();
        let date = headers["date"].as_str().unwrap();
        let at = signature::parse_http_date(date).unwrap();
        let check = |header: &dyn Fn(&str) -> Option<String>, body: &[u8], method: &str| {
            signature::verify(
                &ring,
                &Received {
                    method,
                    target: &target,
                    header,
                    body,
                },
                at,
                signature::MAX_SKEW,
            )
        };
        let as_sent = |name: &str| match name {
            "host" => Some(host.clone()),
            other => headers[other].as_str().map(String::from),
        };
        let method = case["method"].as_str().unwrap();
        let caller = check(&as_sent, &body, method)
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"))
            .unwrap();
        assert_eq!(caller.user, s("user"));
        // Another method, another body, another date or another key: refused.
        let other_method = if method == "GET" { "DELETE" } else { "GET" };
        assert!(check(&as_sent, &body, other_method).is_err(), "{url}");
        if headers["x-content-sha256"].is_string() {
            let mut changed = body.clone();
            changed.push(b' ');
            assert!(check(&as_sent, &changed, method).is_err(), "{url}");
        }
        let later = |name: &str| match name {
            "date" => Some("Tue, 01 Dec 2026 21:00:01 GMT".to_string()),
            other => as_sent(other),
        };
        assert!(check(&later, &body, method).is_err(), "{url}");
        let stranger =
            KeyRing::new([
                PublicKey::from_pem(&key_id, &generate_api_key("x").unwrap().0).unwrap(),
            ]);
        assert!(
            signature::verify(
                &stranger,
                &Received {
                    method,
                    target: &target,
                    header: &as_sent,
                    body: &body,
                },
                at,
                signature::MAX_SKEW
            )
            .is_err()
        );
    }
}

#[tokio::test]
async fn a_cluster_and_its_node_pool_go_through_their_work_requests() {
    let bed = bed(100, 2.0).await;
    let net = create_network(&bed.api, COMPARTMENT, "net", 20)
        .await
        .unwrap();
    let ads: Vec<String> = bed
        .ok(
            "GET",
            &format!("/20160918/availabilityDomains?compartmentId={COMPARTMENT}"),
            None,
        )
        .await
        .0
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ads.len(), 3);
    let (fds, _) = bed
        .ok(
            "GET",
            &format!(
                "/20160918/faultDomains?compartmentId={COMPARTMENT}&availabilityDomain={}",
                ads[1]
            ),
            None,
        )
        .await;
    assert_eq!(fds[2]["name"], "FAULT-DOMAIN-3");
    assert_eq!(fds[2]["availabilityDomain"], ads[1].as_str());
    let (regions, _) = bed.ok("GET", "/20160918/regions", None).await;
    assert!(
        regions
            .as_array()
            .unwrap()
            .contains(&json!({"key": "IAD", "name": "us-ashburn-1"})),
        "{regions}"
    );
    let (status, _) = bed
        .refused(
            "GET",
            &format!("/20160918/faultDomains?compartmentId={COMPARTMENT}&availabilityDomain=Uocm:PHX-AD-1"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (options, _) = bed.ok("GET", "/20180222/clusterOptions/all", None).await;
    assert!(
        options["kubernetesVersions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "v1.32.1")
    );

    let body = bed.cluster_body(&net, "v1.32.1").await;
    let (_, wr) = bed.ok("POST", "/20180222/clusters", Some(body)).await;
    let wr = wr.expect("opc-work-request-id");
    let (w, _) = bed
        .ok("GET", &format!("/20180222/workRequests/{wr}"), None)
        .await;
    assert_eq!(w["operationType"], "CLUSTER_CREATE");
    assert!(
        matches!(w["status"].as_str(), Some("ACCEPTED" | "IN_PROGRESS")),
        "{w}"
    );
    assert_eq!(w["resources"][0]["entityType"], "cluster");
    let cluster = w["resources"][0]["identifier"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(cluster.starts_with("ocid1.cluster.oc1.iad."), "{cluster}");
    let (c, _) = bed
        .ok("GET", &format!("/20180222/clusters/{cluster}"), None)
        .await;
    assert_eq!(c["lifecycleState"], "CREATING");
    bed.wait(&wr).await;
    let (c, _) = bed
        .ok("GET", &format!("/20180222/clusters/{cluster}"), None)
        .await;
    assert_eq!(c["lifecycleState"], "ACTIVE");
    // The options a create left out, as OKE fills them in.
    assert_eq!(
        c["options"]["addOns"],
        json!({"isKubernetesDashboardEnabled": false, "isTillerEnabled": false})
    );
    assert_eq!(
        c["options"]["admissionControllerOptions"]["isPodSecurityPolicyEnabled"],
        false
    );
    assert!(
        c["endpoints"]["publicEndpoint"]
            .as_str()
            .unwrap()
            .ends_with(":6443")
    );
    assert!(
        c["endpoints"]["privateEndpoint"]
            .as_str()
            .unwrap()
            .starts_with("10.20.0.")
    );
    assert_eq!(
        c["availableKubernetesUpgrades"],
        json!(["v1.32.10", "v1.33.1"])
    );
    let (listed, _) = bed
        .ok(
            "GET",
            &format!("/20180222/clusters?compartmentId={COMPARTMENT}&name=c1"),
            None,
        )
        .await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let (status, kubeconfig, _) = bed
        .api
        .call(
            "POST",
            &format!("/20180222/clusters/{cluster}/kubeconfig/content"),
            Some(&json!({"tokenVersion": "2.0.0", "endpoint": "PUBLIC_ENDPOINT"})),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{kubeconfig}");
    let kubeconfig = contract::kubeconfig::Kubeconfig::parse(
        kubeconfig.as_str().expect("a YAML kubeconfig").as_bytes(),
    )
    .unwrap();
    assert_eq!(
        kubeconfig.current_server(),
        Some(
            format!(
                "https://{}",
                c["endpoints"]["publicEndpoint"].as_str().unwrap()
            )
            .as_str()
        )
    );
    let exec = kubeconfig
        .current_user()
        .and_then(|u| u.exec.as_ref())
        .expect("an exec plugin");
    assert_eq!(exec.command, "oci");
    assert!(
        exec.args
            .windows(2)
            .any(|w| w[0] == "--cluster-id" && w[1] == cluster),
        "{:?}",
        exec.args
    );

    let (opts, _) = bed
        .ok("GET", &format!("/20180222/nodePoolOptions/{cluster}"), None)
        .await;
    let image = opts["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sourceName"] == "Oracle-Linux-8.10-2026.11.01-0")
        .unwrap()["imageId"]
        .clone();
    let pool = json!({
        "compartmentId": COMPARTMENT,
        "clusterId": cluster,
        "name": "p1",
        "kubernetesVersion": "v1.32.1",
        "nodeShape": "VM.Standard.E4.Flex",
        "nodeShapeConfig": { "ocpus": 2, "memoryInGBs": 32 },
        "nodeSourceDetails": { "sourceType": "IMAGE", "imageId": image },
        "initialNodeLabels": [{ "key": "team", "value": "a" }],
        "nodeConfigDetails": {
            "size": 3,
            "placementConfigs": ads.iter().map(|ad| json!({ "availabilityDomain": ad, "subnetId": net.node_subnet })).collect::<Vec<_>>(),
        },
        "nodePoolCyclingDetails": { "isNodeCyclingEnabled": true, "maximumSurge": "1", "maximumUnavailable": "0" },
    });
    let (_, wr) = bed
        .ok("POST", "/20180222/nodePools", Some(pool.clone()))
        .await;
    let wr = wr.unwrap();
    let (w, _) = bed
        .ok("GET", &format!("/20180222/workRequests/{wr}"), None)
        .await;
    let pool_id = w["resources"][0]["identifier"]
        .as_str()
        .unwrap()
        .to_string();
    bed.wait(&wr).await;
    let (_, p, headers) = raw(
        &bed,
        "GET",
        &format!("/20180222/nodePools/{pool_id}"),
        None,
        &[],
    )
    .await;
    assert!(p["nodeMetadata"].is_null(), "none was given: {p}");
    let etag = headers
        .get("etag")
        .and_then(|e| e.to_str().ok())
        .map(String::from);
    assert_eq!(p["lifecycleState"], "ACTIVE");
    let nodes = p["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    let domains: std::collections::BTreeSet<&str> = nodes
        .iter()
        .map(|n| n["availabilityDomain"].as_str().unwrap())
        .collect();
    assert_eq!(domains.len(), 3, "one node per availability domain");
    assert!(
        nodes
            .iter()
            .all(|n| n["id"].as_str().unwrap().starts_with("ocid1.instance."))
    );
    let (instances, _) = bed
        .ok(
            "GET",
            &format!("/20160918/instances?compartmentId={COMPARTMENT}"),
            None,
        )
        .await;
    assert_eq!(instances.as_array().unwrap().len(), 3);

    // A stale etag is refused; the pool shrinks, its leaving node DELETING first.
    let (status, e, _) = raw(
        &bed,
        "PUT",
        &format!("/20180222/nodePools/{pool_id}"),
        Some(&json!({"nodeConfigDetails": {"size": 1}})),
        &[("if-match", "stale")],
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (412, Some("NoEtagMatch")),
        "{e}"
    );
    let (status, e, _) = raw(
        &bed,
        "PUT",
        &format!("/20180222/nodePools/{pool_id}"),
        Some(&json!({"nodeConfigDetails": {"size": 2}})),
        &[("if-match", etag.as_deref().unwrap())],
    )
    .await;
    assert_eq!(status, 202, "{e}");
    let (busy, e) = bed
        .refused(
            "PUT",
            &format!("/20180222/nodePools/{pool_id}"),
            Some(json!({"nodeConfigDetails": {"size": 1}})),
        )
        .await;
    assert_eq!((busy, e["code"].as_str()), (409, Some("IncorrectState")));
    let (w, _) = bed
        .ok(
            "GET",
            &format!("/20180222/workRequests?compartmentId={COMPARTMENT}&resourceId={pool_id}"),
            None,
        )
        .await;
    let wr = w
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["operationType"] == "NODEPOOL_UPDATE")
        .unwrap()["id"]
        .as_str()
        .map(String::from);
    bed.wait(&wr.unwrap()).await;
    let (p, _) = bed
        .ok("GET", &format!("/20180222/nodePools/{pool_id}"), None)
        .await;
    assert_eq!(p["nodeConfigDetails"]["size"], 2);
    assert!(
        p["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["lifecycleState"] == "DELETING")
    );

    // The cluster moves one minor; the pool follows with its nodes cycled.
    let (_, wr) = bed
        .ok(
            "PUT",
            &format!("/20180222/clusters/{cluster}"),
            Some(json!({"kubernetesVersion": "v1.33.1"})),
        )
        .await;
    bed.wait(&wr.unwrap()).await;
    let (_, wr) = bed
        .ok(
            "PUT",
            &format!("/20180222/nodePools/{pool_id}"),
            Some(json!({"kubernetesVersion": "v1.33.1"})),
        )
        .await;
    bed.wait(&wr.unwrap()).await;
    let (p, _) = bed
        .ok("GET", &format!("/20180222/nodePools/{pool_id}"), None)
        .await;
    let active: Vec<&Value> = p["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["lifecycleState"] == "ACTIVE")
        .collect();
    assert_eq!(active.len(), 2, "{p}");
    assert!(
        active.iter().all(|n| n["kubernetesVersion"] == "v1.33.1"),
        "{p}"
    );

    // The subnet in use cannot go; the pool and the cluster can.
    let (status, e) = bed
        .refused(
            "DELETE",
            &format!("/20160918/subnets/{}", net.node_subnet),
            None,
        )
        .await;
    assert_eq!((status, e["code"].as_str()), (409, Some("Conflict")), "{e}");
    let (_, wr) = bed
        .ok("DELETE", &format!("/20180222/nodePools/{pool_id}"), None)
        .await;
    bed.wait(&wr.unwrap()).await;
    let (_, wr) = bed
        .ok("DELETE", &format!("/20180222/clusters/{cluster}"), None)
        .await;
    bed.wait(&wr.unwrap()).await;
    let (c, _) = bed
        .ok("GET", &format!("/20180222/clusters/{cluster}"), None)
        .await;
    assert_eq!(c["lifecycleState"], "DELETED");
    let calls = bed.server.kit().calls.snapshot();
    assert!(calls["GetCluster"].contains_key("gone"), "{calls:?}");
    bed.server.shutdown().await;
}

#[tokio::test]
async fn what_oci_refuses_is_refused_in_oci_s_words() {
    let bed = bed(4, 3.0).await;
    // Unsigned, signed by an unknown key, or dated too far off: NotAuthenticated.
    let http = emulators::kit::http_client(Duration::from_secs(5));
    let unsigned = http
        .get(format!("{}/20180222/clusterOptions/all", bed.server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status().as_u16(), 401);
    assert!(unsigned.headers().get("opc-request-id").is_some());
    let e: Value = unsigned.json().await.unwrap();
    assert_eq!(e["code"], "NotAuthenticated");
    let stranger = OciApi::new(
        bed.server.url(),
        ApiKey::from_pem(
            &generate_api_key("x").unwrap().0,
            TENANCY,
            &bed.user,
            &bed.fingerprint,
        )
        .unwrap(),
    );
    let (status, _, _) = stranger
        .call("GET", "/20180222/clusterOptions/all", None)
        .await
        .unwrap();
    assert_eq!(status, 401);
    let key = ApiKey::from_pem(&bed.pem, TENANCY, &bed.user, &bed.fingerprint).unwrap();
    let url = format!("{}/20180222/clusterOptions/all", bed.server.url());
    let old = http_date(jiff::Timestamp::now() - jiff::SignedDuration::from_secs(600));
    let signed = oci_signer::sign(
        &key,
        &oci_signer::Request {
            method: "GET",
            url: &url,
            body: None,
            content_type: "application/json",
            date: &old,
        },
    )
    .unwrap();
    let mut request = http.get(&url);
    for (k, v) in signed {
        if k != "host" {
            request = request.header(k, v);
        }
    }
    let stale = request.send().await.unwrap();
    assert_eq!(stale.status().as_u16(), 401);
    let stale: Value = stale.json().await.unwrap();
    assert_eq!(stale["code"], "NotAuthenticated");
    assert!(
        stale["message"]
            .as_str()
            .unwrap()
            .contains("is not within allowed clock skew"),
        "{stale}"
    );

    let net = create_network(&bed.api, COMPARTMENT, "net", 30)
        .await
        .unwrap();
    let (status, e) = bed
        .refused(
            "POST",
            "/20160918/internetGateways",
            Some(json!({"compartmentId": COMPARTMENT, "vcnId": net.vcn, "isEnabled": true})),
        )
        .await;
    assert_eq!((status, e["code"].as_str()), (400, Some("LimitExceeded")));
    let (status, e) = bed
        .refused("POST", "/20160918/subnets", Some(json!({"compartmentId": COMPARTMENT, "vcnId": net.vcn, "cidrBlock": "10.31.0.0/24"})))
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("InvalidParameter"))
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("not within the VCN")
    );
    let (status, e) = bed
        .refused("POST", "/20160918/subnets", Some(json!({"compartmentId": COMPARTMENT, "vcnId": net.vcn, "cidrBlock": "10.30.10.128/25"})))
        .await;
    assert!(
        status == 400 && e["message"].as_str().unwrap().contains("overlaps"),
        "{e}"
    );
    let (status, e) = bed
        .refused("DELETE", &format!("/20160918/vcns/{}", net.vcn), None)
        .await;
    assert_eq!((status, e["code"].as_str()), (409, Some("Conflict")));
    let (status, e) = bed
        .refused(
            "GET",
            "/20160918/vcns?compartmentId=ocid1.compartment.oc1..nosuch",
            None,
        )
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (404, Some("NotAuthorizedOrNotFound"))
    );

    let mut body = bed.cluster_body(&net, "v1.29.1").await;
    let (status, e) = bed
        .refused("POST", "/20180222/clusters", Some(body.clone()))
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("InvalidParameter"))
    );
    body["kubernetesVersion"] = json!("v1.31.10");
    body["endpointConfig"]["subnetId"] = json!(net.node_subnet);
    let (status, e) = bed
        .refused("POST", "/20180222/clusters", Some(body.clone()))
        .await;
    assert!(
        status == 400 && e["message"].as_str().unwrap().contains("private"),
        "{e}"
    );
    body["endpointConfig"]["subnetId"] = json!(net.endpoint_subnet);
    // The same retry token and body: the same work request; another body: refused.
    let token = "create-c1-token";
    let wr1 = with_token(&bed, token, &body).await;
    let wr2 = with_token(&bed, token, &body).await;
    assert_eq!(wr1, wr2);
    let mut other = body.clone();
    other["name"] = json!("c2");
    let (status, e) = with_token_refused(&bed, token, &other).await;
    assert_eq!((status, e["code"].as_str()), (409, Some("Conflict")));
    let wr1 = wr1.unwrap();
    let (w, _) = bed
        .ok("GET", &format!("/20180222/workRequests/{wr1}"), None)
        .await;
    let cluster = w["resources"][0]["identifier"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, e) = bed
        .refused(
            "PUT",
            &format!("/20180222/clusters/{cluster}"),
            Some(json!({"kubernetesVersion": "v1.32.1"})),
        )
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (409, Some("IncorrectState")),
        "{e}"
    );
    bed.wait(&wr1).await;
    let (status, e) = bed
        .refused(
            "PUT",
            &format!("/20180222/clusters/{cluster}"),
            Some(json!({"kubernetesVersion": "v1.33.1"})),
        )
        .await;
    assert!(
        status == 400
            && e["message"]
                .as_str()
                .unwrap()
                .contains("one minor version at a time"),
        "{e}"
    );
    let (status, e) = bed
        .refused(
            "PUT",
            &format!("/20180222/clusters/{cluster}"),
            Some(json!({"kubernetesVersion": "v1.31.1"})),
        )
        .await;
    assert_eq!(status, 400, "{e}");

    // Node pools: newer than the cluster, a flexible shape without OCPUs, over the OCPU limit.
    let (opts, _) = bed.ok("GET", "/20180222/nodePoolOptions/all", None).await;
    let image = opts["sources"][0]["imageId"].clone();
    let ad = &bed.server.oke().availability_domains()[0];
    let pool = |version: &str, config: Value, size: u32| {
        json!({
            "compartmentId": COMPARTMENT, "clusterId": cluster, "name": "p", "kubernetesVersion": version,
            "nodeShape": "VM.Standard.E4.Flex", "nodeShapeConfig": config,
            "nodeSourceDetails": { "sourceType": "IMAGE", "imageId": image },
            "nodeConfigDetails": { "size": size, "placementConfigs": [{ "availabilityDomain": ad, "subnetId": net.node_subnet }] },
        })
    };
    let (status, e) = bed
        .refused(
            "POST",
            "/20180222/nodePools",
            Some(pool("v1.32.1", json!({"ocpus": 1}), 1)),
        )
        .await;
    assert!(
        status == 400
            && e["message"]
                .as_str()
                .unwrap()
                .contains("newer than its cluster"),
        "{e}"
    );
    let (status, e) = bed
        .refused(
            "POST",
            "/20180222/nodePools",
            Some(pool("v1.31.10", Value::Null, 1)),
        )
        .await;
    assert!(
        status == 400 && e["message"].as_str().unwrap().contains("ocpus"),
        "{e}"
    );
    let (status, e) = bed
        .refused(
            "POST",
            "/20180222/nodePools",
            Some(pool("v1.31.10", json!({"ocpus": 2}), 3)),
        )
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("LimitExceeded")),
        "{e}"
    );
    bed.server.shutdown().await;
}

async fn with_token(bed: &Bed, token: &str, body: &Value) -> Option<String> {
    let (status, v, headers) = raw(
        bed,
        "POST",
        "/20180222/clusters",
        Some(body),
        &[("opc-retry-token", token)],
    )
    .await;
    assert_eq!(status, 202, "{v}");
    headers
        .get("opc-work-request-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

async fn with_token_refused(bed: &Bed, token: &str, body: &Value) -> (u16, Value) {
    let (status, v, _) = raw(
        bed,
        "POST",
        "/20180222/clusters",
        Some(body),
        &[("opc-retry-token", token)],
    )
    .await;
    (status, v)
}

/// A signed request with extra headers: `(status, body, headers)`.
async fn raw(
    bed: &Bed,
    method: &str,
    path: &str,
    body: Option<&Value>,
    extra: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let key = ApiKey::from_pem(&bed.pem, TENANCY, &bed.user, &bed.fingerprint).unwrap();
    let url = format!("{}{path}", bed.server.url());
    let text = body.map(Value::to_string);
    let date = http_date(jiff::Timestamp::now());
    let signed = oci_signer::sign(
        &key,
        &oci_signer::Request {
            method,
            url: &url,
            body: text.as_deref().map(str::as_bytes),
            content_type: "application/json",
            date: &date,
        },
    )
    .unwrap();
    let mut request = emulators::kit::http_client(Duration::from_secs(5)).request(
        reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
        &url,
    );
    if let Some(t) = text {
        request = request.body(t);
    }
    for (k, v) in signed.into_iter().map(|(k, v)| (k.to_string(), v)).chain(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string())),
    ) {
        if k != "host" && k != "content-length" {
            request = request.header(k, v);
        }
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (
        status,
        response.json().await.unwrap_or(Value::Null),
        headers,
    )
}
