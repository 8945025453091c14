//! C57/C58: the real clusterctl installs the EKS, GKE, AKS and OKE releases from the provider
//! repository `cargo run -p xtask -- release` writes (the same files as `manifests/`) into one
//! real management plane (a team mixing clouds), fully offline, reads the repository's versions
//! with `clusterctl upgrade plan`, and renders their cluster templates: the default flavor,
//! `byo-network` and `clusterclass` (with each release's ClusterClass), whose objects the real
//! apiserver and Cluster API core's webhooks admit and core's topology controller turns into the
//! provider's objects.
//!
//! One management plane serves the whole run, in order: `support` builds the local repository
//! and wraps clusterctl, `install` is C57 (init, the inventory, `upgrade plan`), `eks` renders
//! and admits EKS's flavors, and `beside` does the same for each release installed beside it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// A test's crate root finds its modules beside it, not in a folder of its name.
#[path = "clusterctl/beside.rs"]
mod beside;
#[path = "clusterctl/eks.rs"]
mod eks;
#[path = "clusterctl/install.rs"]
mod install;
#[path = "clusterctl/support.rs"]
mod support;

use support::{Clusterctl, cert_manager_crds, local_repository};

#[tokio::test(flavor = "multi_thread")]
async fn clusterctl_installs_the_release_and_renders_its_template() {
    let started = std::time::Instant::now();
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .unwrap();
    plane.install_crds(&cert_manager_crds()).await.unwrap();
    let client = plane.client().await.unwrap();

    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repository");
    let config = local_repository(&repo, plane.assets());
    let ctl = Clusterctl {
        bin: plane.assets().clusterctl(),
        config,
        kubeconfig: plane.kubeconfig_path().to_path_buf(),
        xdg: work.path().join("xdg"),
    };

    let infra = format!("eks:{}", xtask::eks::VERSION);
    let gke_infra = format!("gke:{}", xtask::gke::VERSION);
    let aks_infra = format!("aks:{}", xtask::aks::VERSION);
    let oke_infra = format!("oke:{}", xtask::oke::VERSION);
    let all = format!("{infra},{gke_infra},{aks_infra},{oke_infra}");
    install::init(&ctl, &client, &all).await;
    install::upgrade_plan(&ctl, &repo);

    eks::default_flavor(&ctl, &infra);
    eks::byo_network_flavor(&ctl, &client, &infra).await;
    eks::clusterclass_flavor(&ctl, &client, &infra).await;
    beside::release_beside(&ctl, &client, &gke_infra, &beside::gke()).await;
    beside::release_beside(&ctl, &client, &aks_infra, &beside::aks()).await;
    beside::release_beside(&ctl, &client, &oke_infra, &beside::oke()).await;

    plane.stop().await;
    eprintln!("clusterctl test took {:?}", started.elapsed());
}
