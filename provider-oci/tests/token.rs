//! The kubeconfig Secret's token, as the provider mints it (`oci ce cluster generate-token`'s
//! form), is what an OKE cluster accepts: the OKE emulator's token check, written apart from the
//! provider's signer, takes it for its own cluster while its date is fresh, and for nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use emulators::oke::{KeyRing, TENANCY, generate_api_key, global_ocid, token};
use oci_signer::ApiKey;
use provider_oci::client::token::{cluster_token, signed_at};

#[test]
fn a_minted_token_is_accepted_for_its_cluster_while_fresh_and_for_nothing_else() {
    let user = global_ocid("user");
    let (pem, public) = generate_api_key(&format!("{TENANCY}/{user}")).unwrap();
    let fingerprint = public.fingerprint();
    let ring = KeyRing::new([public]);
    let key = ApiKey::from_pem(&pem, TENANCY, &user, &fingerprint).unwrap();
    let cluster = "ocid1.cluster.oc1.iad.aaaaaaaatokentest";
    let now = jiff::Timestamp::now();
    let minted = cluster_token(&key, "us-ashburn-1", cluster, now).unwrap();
    assert_eq!(
        signed_at(&minted).map(|t| t.as_second()),
        Some(now.as_second())
    );
    let parts = token::parse(&minted).unwrap();
    assert_eq!(parts.host, "containerengine.us-ashburn-1.oraclecloud.com");

    let caller = token::verify(&ring, &minted, cluster, now, token::LIFETIME).unwrap();
    assert_eq!(caller.user, user);
    assert!(
        token::verify(
            &ring,
            &minted,
            "ocid1.cluster.oc1.iad.other",
            now,
            token::LIFETIME
        )
        .is_err()
    );
    let later = now + jiff::SignedDuration::from_secs(301);
    assert!(token::verify(&ring, &minted, cluster, later, token::LIFETIME).is_err());
    let short = Duration::from_secs(60);
    let a_minute_on = now + jiff::SignedDuration::from_secs(61);
    assert!(token::verify(&ring, &minted, cluster, a_minute_on, short).is_err());
    // Another key of the same name signs something the cluster refuses.
    let (other, _) = generate_api_key("x").unwrap();
    let forged = cluster_token(
        &ApiKey::from_pem(&other, TENANCY, &user, &fingerprint).unwrap(),
        "us-ashburn-1",
        cluster,
        now,
    )
    .unwrap();
    assert!(token::verify(&ring, &forged, cluster, now, token::LIFETIME).is_err());
}
