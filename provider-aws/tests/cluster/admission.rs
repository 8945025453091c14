//! What admission (the CRD's own rules) refuses, and the managed cluster created.

use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::MANAGED;
use crate::helpers::{cluster, eks_cluster};
use crate::setup::Ctx;

/// Proves that admission rejects a created network's CIDR block outside /16–/24 (and an IPv6
/// one) and a change of `spec.eks.availabilityZones`; creates the managed EKSCluster and its
/// Cluster on the way.
pub async fn rejects_bad_specs_and_creates_managed(ctx: &Ctx) {
    for (i, block) in ["10.0.0.0/8", "10.0.0.0/26", "fd00::/56"]
        .into_iter()
        .enumerate()
    {
        let bad = eks_cluster(&format!("wide-{i}"), Some(json!({"cidrBlock": block})));
        let err = ctx
            .eks
            .create(&PostParams::default(), &bad)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.network.cidrBlock must be an IPv4 block from /16 to /24"),
            "{block}: {err}"
        );
    }
    ctx.eks
        .create(&PostParams::default(), &eks_cluster(MANAGED, None))
        .await
        .unwrap();
    let err = ctx
        .eks
        .patch(
            MANAGED,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"eks": {"availabilityZones": 3}}})),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.eks.availabilityZones is immutable"),
        "{err}"
    );
    ctx.clusters
        .create(&PostParams::default(), &cluster(MANAGED))
        .await
        .expect("Cluster managed");
}
