//! The management plane is real: each component is proven by what only it does, and each proof
//! is shown to fail when its component is left out.

use std::time::Duration;

use conformance::bed_check::{self, BedCheck};
use testbed::{ManagementPlane, Options};

fn report(checks: &[BedCheck]) -> String {
    checks
        .iter()
        .map(|c| {
            format!(
                "{} [{}] {}: {:?}",
                c.id, c.component, c.statement, c.outcome
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn outcome<'a>(checks: &'a [BedCheck], id: &str) -> &'a BedCheck {
    checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

#[tokio::test]
async fn every_component_of_the_full_plane_proves_itself_and_each_proof_fails_without_its_component()
 {
    // The full plane: every check passes.
    let plane = ManagementPlane::start(Options::default())
        .await
        .expect("the management plane starts");
    let version = plane.server_version().await.expect("server version");
    let checks = bed_check::run(&plane, "bed-check", Duration::from_secs(60))
        .await
        .expect("checks run");
    assert!(
        checks.iter().all(BedCheck::passed),
        "full plane ({version}):\n{}",
        report(&checks)
    );
    assert_eq!(checks.len(), 6);
    plane.stop().await;

    // Only etcd and kube-apiserver: the Cluster API and garbage-collector checks must fail, and the
    // API-server checks must still pass.
    let bare = ManagementPlane::start(Options {
        capi: false,
        controller_manager: false,
        ..Options::default()
    })
    .await
    .expect("a bare plane starts");
    // Cluster API's CRDs are not installed in a bare plane; the checks that need them must say so.
    let checks = bed_check::run(&bare, "bed-check", Duration::from_secs(10))
        .await
        .expect("checks run");
    for id in ["B1", "B2"] {
        assert!(
            outcome(&checks, id).passed(),
            "bare plane:\n{}",
            report(&checks)
        );
    }
    for id in ["B3", "B4", "B5", "B6"] {
        assert!(
            !outcome(&checks, id).passed(),
            "{id} passed without its component:\n{}",
            report(&checks)
        );
    }
    bare.stop().await;
}

#[tokio::test]
async fn the_capi_checks_fail_when_only_the_cluster_api_manager_is_missing() {
    // CRDs and webhook configurations present, manager not running: finalizers never appear and
    // every admission call fails (the webhooks are unreachable), while garbage collection works.
    let plane = ManagementPlane::start(Options {
        capi: false,
        ..Options::default()
    })
    .await
    .expect("plane starts");
    plane
        .install_capi_without_manager()
        .await
        .expect("CRDs and webhooks installed");
    let checks = bed_check::run(&plane, "bed-check", Duration::from_secs(10))
        .await
        .expect("checks run");
    for id in ["B3", "B4", "B5"] {
        assert!(
            !outcome(&checks, id).passed(),
            "{id} passed without the manager:\n{}",
            report(&checks)
        );
    }
    assert!(outcome(&checks, "B6").passed(), "{}", report(&checks));
    plane.stop().await;
}
