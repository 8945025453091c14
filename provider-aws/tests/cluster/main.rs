//! EKSCluster against the real management plane (kube-apiserver, Cluster API core v1.14) and
//! moto (EC2): a created network (VPC, two public and two private subnets, internet gateway,
//! NAT gateway, route tables, security group) is built, reported (status.network, failure
//! domains, provisioned) and copied by core into the Cluster; at rest the reconciler only reads;
//! a restart that lost the status creates nothing new; a brought network is read, never
//! changed; bad subnet ids are reported naming the field; a VPC that carries the cluster's name
//! but not its tag is a NameConflict, never adopted; deleting the Clusters removes every tagged
//! resource, waits while something not ours still depends on the VPC (and leaves that alone),
//! and leaves the brought network and an untagged bystander VPC alone; a Cluster deleted with
//! `deletionPolicy: Orphan` leaves its whole network in place, untagged.
//!
//! The provider reads its AWS endpoint from `AWS_ENDPOINT_URL`, so the test body runs as a child
//! process beside moto (see `support::run_in_child_with_moto`).
//!
//! The scenario runs in phases, one function each, in the order [`child`] calls them; every
//! phase takes the [`setup::Ctx`] the set-up leaves, and what an earlier phase found (the created
//! network, the brought one) is handed on explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "../support/mod.rs"]
mod support;

mod admission;
mod brought;
mod created;
mod delete;
mod helpers;
mod provider;
mod refusals;
mod rest;
mod setup;

const TEST: &str = "an_eks_cluster_builds_reports_and_removes_its_network_and_reads_a_brought_one";
const CHILD: &str = "EKS_CLUSTER_TEST_CHILD";
const REGION: &str = "eu-west-1";
const NS: &str = "net";
const SECRET: &str = "aws-credentials";
const MANAGED: &str = "managed";
const BYO: &str = "byo";
const BAD: &str = "byo-bad";
const UNKNOWN_SUBNET: &str = "subnet-0123456789abcdef0";
const CONFLICT: &str = "conflict";
const ORPHANED: &str = "orphaned";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eks_cluster_builds_reports_and_removes_its_network_and_reads_a_brought_one() {
    if support::is_child(CHILD) {
        child().await;
    } else {
        support::run_in_child_with_moto(TEST, CHILD, "eks-cluster-test", &[]).await;
    }
}

/// The test body: the bed and the networks made beforehand, then each phase in turn, then the
/// bed stopped.
async fn child() {
    let (plane, ctx) = setup::start().await;
    let others = setup::make_other_networks(&ctx.ec2).await;
    let provider = provider::Provider::start(&ctx.client);

    admission::rejects_bad_specs_and_creates_managed(&ctx).await;
    let managed = created::builds_and_reports_the_network(&ctx).await;
    created::moto_holds_it_all_tagged(&ctx, &managed).await;
    created::core_copies_it_into_the_cluster(&ctx, &managed).await;
    rest::only_reads_at_rest(&ctx, &provider).await;
    let provider = rest::a_restart_finds_everything_by_tags(&ctx, provider, &managed).await;
    brought::reads_a_brought_network(&ctx, &others).await;
    refusals::reports_unknown_subnet_ids(&ctx, &others).await;
    let squatter = refusals::never_adopts_a_vpc_not_tagged_ours(&ctx).await;
    delete::waits_for_a_foreign_dependency(&ctx, &managed).await;
    delete::removes_only_what_is_ours(&ctx, &managed, &others, &squatter).await;
    delete::orphan_leaves_the_network_untagged(&ctx).await;

    provider.stop().await;
    plane.stop().await;
}
