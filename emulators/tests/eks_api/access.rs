//! Access: access entries and OIDC identity providers round trip, and the cluster tokens the
//! token review authenticates (creator, principals with entries, the configured lifetime).

use std::time::{Duration, SystemTime};

use aws_sdk_eks::config::Credentials;
use aws_sdk_eks::types::{
    AccessScope, AccessScopeType, ClusterStatus, ConfigStatus, CreateAccessConfigRequest,
    IdentityProviderConfig, OidcIdentityProviderConfigRequest, UpdateType,
};
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use emulators::eks::{EksConfig, ServerHandle, serve_eks};

use crate::support::*;

#[tokio::test]
async fn access_entries_and_oidc_identity_providers_round_trip() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "auth", "1.32").await;
    let role = "arn:aws:iam::123456789012:role/ops";
    let entry = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .kubernetes_groups("ops-team")
        .tags("k", "v")
        .send()
        .await
        .unwrap()
        .access_entry
        .unwrap();
    assert_eq!(entry.principal_arn(), Some(role));
    assert_eq!(entry.kubernetes_groups(), ["ops-team"]);
    assert_eq!(
        entry.username(),
        Some("arn:aws:sts::123456789012:assumed-role/ops/{{SessionName}}")
    );
    assert_eq!(entry.r#type(), Some("STANDARD"));
    assert!(entry.access_entry_arn().unwrap().starts_with(
        "arn:aws:eks:us-west-2:123456789012:access-entry/auth/role/123456789012/ops/"
    ));
    assert_eq!(
        code(
            c.create_access_entry()
                .cluster_name("auth")
                .principal_arn(role)
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    let bad = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn("arn:aws:iam::1:role/x")
        .send()
        .await;
    assert_eq!(
        message(bad),
        "The specified principalArn is invalid: invalid principal."
    );
    let masters = c
        .create_access_entry()
        .cluster_name("auth")
        .principal_arn("arn:aws:iam::123456789012:user/x")
        .kubernetes_groups("system:masters")
        .send()
        .await;
    assert_eq!(code(masters), "InvalidParameterException");
    let described = c
        .describe_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await
        .unwrap()
        .access_entry
        .unwrap();
    assert_eq!(described, entry);
    assert_eq!(
        c.list_access_entries()
            .cluster_name("auth")
            .send()
            .await
            .unwrap()
            .access_entries(),
        [role]
    );
    let associated = c
        .associate_access_policy()
        .cluster_name("auth")
        .principal_arn(role)
        .policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy")
        .access_scope(
            AccessScope::builder()
                .r#type(AccessScopeType::Namespace)
                .namespaces("apps")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(associated.principal_arn(), Some(role));
    let policy = associated.associated_access_policy().unwrap();
    assert_eq!(policy.access_scope().unwrap().namespaces(), ["apps"]);
    let filtered = c
        .list_access_entries()
        .cluster_name("auth")
        .associated_policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")
        .send()
        .await
        .unwrap();
    assert!(filtered.access_entries().is_empty());
    c.delete_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await
        .unwrap();
    let gone = c
        .describe_access_entry()
        .cluster_name("auth")
        .principal_arn(role)
        .send()
        .await;
    assert!(message(gone).starts_with("The specified principalArn could not be found."));

    let oidc = OidcIdentityProviderConfigRequest::builder()
        .identity_provider_config_name("dex")
        .issuer_url("https://dex.example.com")
        .client_id("kubernetes")
        .username_claim("email")
        .groups_claim("groups")
        .required_claims("hd", "example.com")
        .build()
        .unwrap();
    let assoc = c
        .associate_identity_provider_config()
        .cluster_name("auth")
        .oidc(oidc.clone())
        .tags("idp", "dex")
        .send()
        .await
        .unwrap();
    let update = assoc.update().unwrap();
    assert_eq!(
        update.r#type(),
        Some(&UpdateType::AssociateIdentityProviderConfig)
    );
    assert_eq!(
        assoc.tags().unwrap().get("idp").map(String::as_str),
        Some("dex")
    );
    assert_eq!(
        cluster_status(&c, "auth").await,
        Some(ClusterStatus::Updating)
    );
    let reference = IdentityProviderConfig::builder()
        .r#type("oidc")
        .name("dex")
        .build()
        .unwrap();
    let creating = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    let config = creating.identity_provider_config().unwrap().oidc().unwrap();
    assert_eq!(config.status(), Some(&ConfigStatus::Creating));
    assert_eq!(config.issuer_url(), Some("https://dex.example.com"));
    assert_eq!(
        config
            .required_claims()
            .unwrap()
            .get("hd")
            .map(String::as_str),
        Some("example.com")
    );
    wait_cluster(&c, "auth", ClusterStatus::Active).await;
    let active = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        active
            .identity_provider_config()
            .unwrap()
            .oidc()
            .unwrap()
            .status(),
        Some(&ConfigStatus::Active)
    );
    let listed = c
        .list_identity_provider_configs()
        .cluster_name("auth")
        .send()
        .await
        .unwrap();
    assert_eq!(
        listed.identity_provider_configs(),
        std::slice::from_ref(&reference)
    );
    let dis = c
        .disassociate_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        dis.update().unwrap().r#type(),
        Some(&UpdateType::DisassociateIdentityProviderConfig)
    );
    wait_cluster(&c, "auth", ClusterStatus::Active).await;
    assert!(
        c.list_identity_provider_configs()
            .cluster_name("auth")
            .send()
            .await
            .unwrap()
            .identity_provider_configs()
            .is_empty()
    );
    let missing = c
        .describe_identity_provider_config()
        .cluster_name("auth")
        .identity_provider_config(reference)
        .send()
        .await;
    assert_eq!(code(missing), "ResourceNotFoundException");
    s.shutdown().await;
}

/// A token as `aws eks get-token` mints it, presigned with the AWS SDK's own SigV4 signer.
fn token(akid: &str, secret: &str, cluster: &str) -> String {
    let identity = Credentials::new(akid, secret, None, None, "test").into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(Duration::from_secs(60));
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(REGION)
        .name("sts")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .unwrap()
        .into();
    let url = "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15";
    let signable = SignableRequest::new(
        "GET",
        url,
        [("x-k8s-aws-id", cluster)].into_iter(),
        SignableBody::Bytes(&[]),
    )
    .unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut request = axum::http::Request::get(url).body(()).unwrap();
    instructions.apply_to_request_http1x(&mut request);
    format!(
        "k8s-aws-v1.{}",
        URL_SAFE_NO_PAD.encode(request.uri().to_string())
    )
}

async fn review(s: &ServerHandle, id: &str, token: &str) -> serde_json::Value {
    let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}});
    let response = emulators::kit::http_client(std::time::Duration::from_secs(30))
        .post(format!("{}/_emulator/tokenreview/{id}", s.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    body["status"].clone()
}

#[tokio::test]
async fn tokens_authenticate_the_creator_and_principals_with_access_entries() {
    let s = start(fast()).await;
    let c = client(s.url());
    active_cluster(&c, "tok", "1.34").await;
    let id = s
        .eks()
        .with_state(|st| st.clusters["tok"].workload_id.clone());

    let creator = review(&s, &id, &token(AKID, SECRET, "tok")).await;
    assert_eq!(creator["authenticated"], true);
    assert_eq!(creator["user"]["username"], "kubernetes-admin");
    assert_eq!(
        creator["user"]["groups"],
        serde_json::json!(["system:masters"])
    );

    let other_cluster = review(&s, &id, &token(AKID, SECRET, "another")).await;
    assert_eq!(other_cluster["authenticated"], false);
    let stranger = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(
        stranger["authenticated"], false,
        "no access entry, not the creator"
    );

    let principal = format!("arn:aws:iam::123456789012:user/{AKID2}");
    c.create_access_entry()
        .cluster_name("tok")
        .principal_arn(&principal)
        .kubernetes_groups("devs")
        .send()
        .await
        .unwrap();
    let entry = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(entry["authenticated"], true);
    assert_eq!(entry["user"]["username"], principal.as_str());
    assert_eq!(entry["user"]["groups"], serde_json::json!(["devs"]));
    c.associate_access_policy()
        .cluster_name("tok")
        .principal_arn(&principal)
        .policy_arn("arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")
        .access_scope(
            AccessScope::builder()
                .r#type(AccessScopeType::Cluster)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let admin = review(&s, &id, &token(AKID2, SECRET2, "tok")).await;
    assert_eq!(
        admin["user"]["groups"],
        serde_json::json!(["devs", "system:masters"])
    );

    // Without bootstrap admin permissions the creator is nobody special.
    c.create_cluster()
        .name("nobootstrap")
        .role_arn(ROLE)
        .resources_vpc_config(vpc())
        .access_config(
            CreateAccessConfigRequest::builder()
                .bootstrap_cluster_creator_admin_permissions(false)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let id2 = s
        .eks()
        .with_state(|st| st.clusters["nobootstrap"].workload_id.clone());
    assert_eq!(
        review(&s, &id2, &token(AKID, SECRET, "nobootstrap")).await["authenticated"],
        false
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_configured_token_lifetime_expires_tokens_after_it_not_after_fifteen_minutes() {
    let mut config = EksConfig::new(REGION, ACCOUNT);
    config.credentials = vec![(AKID.into(), SECRET.into())];
    config.token_lifetime = jiff::SignedDuration::from_secs(2);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = serve_eks(config, fast(), listener).await.unwrap();
    let c = client(s.url());
    active_cluster(&c, "ttl", "1.34").await;
    let id = s
        .eks()
        .with_state(|st| st.clusters["ttl"].workload_id.clone());

    let t = token(AKID, SECRET, "ttl");
    assert_eq!(review(&s, &id, &t).await["authenticated"], true);
    // The clock, moved by hand: good up to two seconds after X-Amz-Date (whole seconds).
    let now = jiff::Timestamp::now();
    assert!(s.eks().authenticate(&id, &t, now).is_ok());
    let expired = s
        .eks()
        .authenticate(&id, &t, now + jiff::SignedDuration::from_secs(4))
        .unwrap_err();
    assert!(expired.contains("expired"), "{expired}");
    assert!(expired.contains("2s after X-Amz-Date"), "{expired}");

    // And the real clock, through the token webhook workload API servers call.
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let late = review(&s, &id, &t).await;
    assert_eq!(late["authenticated"], false);
    assert!(
        late["error"].as_str().unwrap().contains("expired"),
        "{late}"
    );
    let fresh = token(AKID, SECRET, "ttl");
    assert_eq!(review(&s, &id, &fresh).await["authenticated"], true);
    s.shutdown().await;
}
