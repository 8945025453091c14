//! The gRPC front as Google's Go clients reach it: `CONNECT <host>:443` to the emulator's proxy,
//! TLS from the emulator's CA with ALPN `h2`, then gRPC calls in binary protobuf (messages from
//! Google's published protos), the errors as gRPC status codes. The same state as the REST
//! front: a cluster made through Google's Rust REST client is read back over gRPC.

use bytes::{Buf, Bytes};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::{Bed, PROJECT, bed, cluster_name, create, wait};

/// Opens a tunnel through the proxy to `host:443`: `Err` carries the proxy's status line.
async fn tunnel(bed: &Bed, host: &str) -> Result<TcpStream, String> {
    let proxy = bed.server.proxy_url().trim_start_matches("http://");
    let mut stream = TcpStream::connect(proxy).await.unwrap();
    stream
        .write_all(format!("CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stream.read(&mut byte).await.unwrap(),
            1,
            "the proxy hung up"
        );
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let status = head.lines().next().unwrap().to_string();
    if status.contains(" 200 ") {
        Ok(stream)
    } else {
        Err(status)
    }
}

/// What a unary call answered: the gRPC status code and message, and the response if OK.
struct Answer {
    code: i32,
    message: String,
    body: Bytes,
}

/// One unary call to `/{service}/{method}` on `host`, through the proxy and TLS, with `token`.
async fn call(bed: &Bed, host: &str, path: &str, token: Option<&str>, request: Vec<u8>) -> Answer {
    let stream = tunnel(bed, host).await.unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(bed.server.ca_pem().as_bytes()).unwrap())
        .unwrap();
    let mut config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(ServerName::try_from(host.to_string()).unwrap(), stream)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(connection);
    let mut frame = vec![0_u8];
    frame.extend_from_slice(&u32::try_from(request.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&request);
    let mut builder = hyper::Request::post(format!("https://{host}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    let response = sender
        .send_request(builder.body(Full::new(Bytes::from(frame))).unwrap())
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/grpc");
    let head = response.headers().clone();
    let collected = response.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let status = |name: &str| {
        trailers
            .get(name)
            .or_else(|| head.get(name))
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let code = status("grpc-status").parse().unwrap();
    let message = percent_encoding::percent_decode_str(&status("grpc-message"))
        .decode_utf8_lossy()
        .into_owned();
    let mut data = collected.to_bytes();
    let body = if data.len() >= 5 {
        data.advance(5);
        data
    } else {
        Bytes::new()
    };
    Answer {
        code,
        message,
        body,
    }
}

fn pool() -> DescriptorPool {
    emulators::gke::grpc::descriptors().unwrap()
}

/// `message` (by full name) from JSON, encoded.
fn encode(pool: &DescriptorPool, message: &str, value: serde_json::Value) -> Vec<u8> {
    let descriptor = pool.get_message_by_name(message).unwrap();
    DynamicMessage::deserialize(descriptor, value)
        .unwrap()
        .encode_to_vec()
}

fn decode(pool: &DescriptorPool, message: &str, body: Bytes) -> DynamicMessage {
    DynamicMessage::decode(pool.get_message_by_name(message).unwrap(), body).unwrap()
}

fn self_signed(bed: &Bed) -> String {
    let now = jiff::Timestamp::now().as_second();
    let email = &bed.key.client_email;
    bed.key
        .sign_jwt(&json!({
            "iss": email, "sub": email, "iat": now, "exp": now + 3600,
            "scope": "https://www.googleapis.com/auth/cloud-platform",
        }))
        .unwrap()
}

const CONTAINER: &str = "container.googleapis.com";
const IAM: &str = "iamcredentials.googleapis.com";
const GET_CLUSTER: &str = "/google.container.v1.ClusterManager/GetCluster";
const GENERATE: &str = "/google.iam.credentials.v1.IAMCredentials/GenerateAccessToken";

#[tokio::test]
async fn grpc_through_the_proxy_reads_the_state_the_rest_front_wrote_and_errors_carry_grpc_codes() {
    let bed = bed().await;
    let pool = pool();
    let jwt = self_signed(&bed);

    // Only Google's hosts are tunnelled.
    assert!(
        tunnel(&bed, "example.com")
            .await
            .unwrap_err()
            .contains("403")
    );

    // NotFound, as CAPG tests for it before creating.
    let request = encode(
        &pool,
        "google.container.v1.GetClusterRequest",
        json!({ "name": cluster_name("g1") }),
    );
    let answer = call(&bed, CONTAINER, GET_CLUSTER, Some(&jwt), request.clone()).await;
    assert_eq!(answer.code, 5, "{}", answer.message);
    assert!(answer.message.contains("g1"), "{}", answer.message);

    // No credentials: Unauthenticated.
    let answer = call(&bed, CONTAINER, GET_CLUSTER, None, request.clone()).await;
    assert_eq!(answer.code, 16, "{}", answer.message);

    // Made through REST, read through gRPC: enums as numbers.
    let op = create(&bed, "g1", "1.33").await;
    wait(&bed, &op).await;
    let answer = call(&bed, CONTAINER, GET_CLUSTER, Some(&jwt), request).await;
    assert_eq!(answer.code, 0, "{}", answer.message);
    let cluster = decode(&pool, "google.container.v1.Cluster", answer.body);
    assert_eq!(
        cluster.get_field_by_name("name").unwrap().as_str(),
        Some("g1")
    );
    // Cluster.Status RUNNING is 2 on the wire.
    assert_eq!(
        cluster
            .get_field_by_name("status")
            .unwrap()
            .as_enum_number(),
        Some(2)
    );
    assert!(
        cluster
            .get_field_by_name("current_master_version")
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("1.33.")
    );

    // Refused by the rules both fronts share: InvalidArgument.
    let bad = encode(
        &pool,
        "google.container.v1.SetNodePoolSizeRequest",
        json!({ "name": format!("{}/nodePools/pool-a", cluster_name("g1")), "nodeCount": -1 }),
    );
    let answer = call(
        &bed,
        CONTAINER,
        "/google.container.v1.ClusterManager/SetNodePoolSize",
        Some(&jwt),
        bad,
    )
    .await;
    assert_eq!(answer.code, 3, "{}", answer.message);

    // A binding the REST front does not serve (the deprecated zonal form): Unimplemented, not
    // NotFound (which a caller would take for a missing cluster).
    let zonal = encode(
        &pool,
        "google.container.v1.GetClusterRequest",
        json!({ "projectId": PROJECT, "zone": "us-central1-a", "clusterId": "g1" }),
    );
    let answer = call(&bed, CONTAINER, GET_CLUSTER, Some(&jwt), zonal).await;
    assert_eq!(answer.code, 12, "{}", answer.message);

    // A method the protos do not have: Unimplemented.
    let answer = call(
        &bed,
        CONTAINER,
        "/google.container.v1.ClusterManager/NoSuchMethod",
        Some(&jwt),
        Vec::new(),
    )
    .await;
    assert_eq!(answer.code, 12, "{}", answer.message);
}

#[tokio::test]
async fn generate_access_token_mints_a_token_the_apis_accept_for_the_callers_own_account_only() {
    let bed = bed().await;
    let pool = pool();
    let jwt = self_signed(&bed);
    let request = |email: &str| {
        encode(
            &pool,
            "google.iam.credentials.v1.GenerateAccessTokenRequest",
            json!({
                "name": format!("projects/-/serviceAccounts/{email}"),
                "scope": ["https://www.googleapis.com/auth/cloud-platform"],
            }),
        )
    };
    let answer = call(
        &bed,
        IAM,
        GENERATE,
        Some(&jwt),
        request(&bed.key.client_email),
    )
    .await;
    assert_eq!(answer.code, 0, "{}", answer.message);
    let minted = decode(
        &pool,
        "google.iam.credentials.v1.GenerateAccessTokenResponse",
        answer.body,
    );
    let token = minted
        .get_field_by_name("access_token")
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(token.starts_with("ya29."), "{token}");
    assert!(minted.has_field_by_name("expire_time"));

    // The token is an access token the APIs (and so the workload API servers) accept.
    let list = reqwest::Client::new()
        .get(format!(
            "{}/v1/projects/{PROJECT}/locations/-/clusters",
            bed.server.url()
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);

    // Another account's token: PermissionDenied.
    let other = format!("someone@{PROJECT}.iam.gserviceaccount.com");
    let answer = call(&bed, IAM, GENERATE, Some(&jwt), request(&other)).await;
    assert_eq!(answer.code, 7, "{}", answer.message);
}
