//! Add-ons: installed, updated and deleted from a catalog per Kubernetes minor.

use std::time::Duration;
use test_support::eventually_true;

use aws_sdk_eks::types::{AddonStatus, UpdateStatus, UpdateType};

use crate::support::*;

#[tokio::test]
async fn addons_install_update_and_delete_from_a_catalog_per_kubernetes_minor() {
    let s = start(fast()).await;
    let c = client(s.url());
    let versions = c
        .describe_addon_versions()
        .kubernetes_version("1.31")
        .addon_name("kube-proxy")
        .send()
        .await
        .unwrap();
    let info = &versions.addons()[0];
    assert_eq!(
        (info.addon_name(), info.r#type(), info.owner()),
        (Some("kube-proxy"), Some("networking"), Some("aws"))
    );
    let v = &info.addon_versions()[0];
    assert_eq!(v.addon_version(), Some("v1.31.13-eksbuild.2"));
    assert_eq!(v.compatibilities()[0].cluster_version(), Some("1.31"));
    assert!(v.compatibilities()[0].default_version());
    let all = c
        .describe_addon_versions()
        .kubernetes_version("1.33")
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = all.addons().iter().filter_map(|a| a.addon_name()).collect();
    assert_eq!(
        names,
        ["vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver"]
    );
    let paged = c
        .describe_addon_versions()
        .max_results(2)
        .send()
        .await
        .unwrap();
    assert_eq!(paged.addons().len(), 2);
    assert!(paged.next_token().is_some());

    active_cluster(&c, "adds", "1.31").await;
    let addon = c
        .create_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .tags("a", "b")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(addon.status(), Some(&AddonStatus::Creating));
    assert_eq!(
        addon.addon_version(),
        Some("v1.11.4-eksbuild.14"),
        "the default for 1.31"
    );
    assert!(
        addon
            .addon_arn()
            .unwrap()
            .starts_with("arn:aws:eks:us-west-2:123456789012:addon/adds/coredns/")
    );
    assert_eq!(
        code(
            c.create_addon()
                .cluster_name("adds")
                .addon_name("coredns")
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    assert_eq!(
        message(
            c.create_addon()
                .cluster_name("adds")
                .addon_name("not-an-addon")
                .send()
                .await
        ),
        "Addon specified is not supported"
    );
    let wrong = c
        .create_addon()
        .cluster_name("adds")
        .addon_name("kube-proxy")
        .addon_version("v1.33.5-eksbuild.2")
        .send()
        .await;
    assert_eq!(message(wrong), "Addon version specified is not supported");
    assert_eq!(
        code(
            c.describe_addon()
                .cluster_name("adds")
                .addon_name("vpc-cni")
                .send()
                .await
        ),
        "ResourceNotFoundException"
    );
    eventually_true("coredns ACTIVE", Duration::from_secs(15), || async {
        c.describe_addon()
            .cluster_name("adds")
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .addon
            .unwrap()
            .status()
            == Some(&AddonStatus::Active)
    })
    .await;

    let update = c
        .update_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .addon_version("v1.11.3-eksbuild.2")
        .resolve_conflicts("OVERWRITE".into())
        .send()
        .await
        .unwrap()
        .update
        .unwrap();
    assert_eq!(update.r#type(), Some(&UpdateType::AddonUpdate));
    assert_eq!(
        code(
            c.update_addon()
                .cluster_name("adds")
                .addon_name("coredns")
                .send()
                .await
        ),
        "ResourceInUseException"
    );
    let id = update.id().unwrap().to_string();
    assert_eq!(
        c.list_updates()
            .name("adds")
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .update_ids(),
        [id.as_str()]
    );
    eventually_true("the add-on update", Duration::from_secs(15), || async {
        let u = c
            .describe_update()
            .name("adds")
            .update_id(&id)
            .addon_name("coredns")
            .send()
            .await
            .unwrap()
            .update
            .unwrap();
        u.status() == Some(&UpdateStatus::Successful)
    })
    .await;
    let updated = c
        .describe_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(updated.addon_version(), Some("v1.11.3-eksbuild.2"));
    c.create_addon()
        .cluster_name("adds")
        .addon_name("vpc-cni")
        .send()
        .await
        .unwrap();
    assert_eq!(
        c.list_addons()
            .cluster_name("adds")
            .send()
            .await
            .unwrap()
            .addons(),
        ["coredns", "vpc-cni"]
    );
    let deleting = c
        .delete_addon()
        .cluster_name("adds")
        .addon_name("coredns")
        .send()
        .await
        .unwrap()
        .addon
        .unwrap();
    assert_eq!(deleting.status(), Some(&AddonStatus::Deleting));
    eventually_true("coredns gone", Duration::from_secs(15), || async {
        c.list_addons()
            .cluster_name("adds")
            .send()
            .await
            .unwrap()
            .addons()
            == ["vpc-cni"]
    })
    .await;
    s.shutdown().await;
}
