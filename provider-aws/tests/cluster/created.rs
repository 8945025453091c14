//! A created network: built, reported, held in moto as ours, and copied by core.

use provider_aws::network::AwsNetwork;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use contract::naming;
use provider_aws::api::EKSCluster;
use provider_aws::scope::PROVIDER;

use crate::helpers::{Inventory, counts, endpoint_untouched, filter, owned, provisioned, tags};
use crate::setup::Ctx;
use crate::support::{condition, eventually};
use crate::{MANAGED, NS};

/// The managed cluster as the first phase left it.
pub struct Managed {
    /// The EKSCluster once provisioned.
    pub object: EKSCluster,
    /// Its VPC.
    pub vpc_id: String,
    /// Its security group.
    pub security_group: String,
    /// Everything tagged as its own in moto, taken then.
    pub inventory: Inventory,
}

/// Proves that the managed EKSCluster becomes provisioned with NetworkReady, never sets
/// `spec.controlPlaneEndpoint`, and reports a created network of four subnets over two zones
/// (two public), a security group, two control-plane failure domains and Ready; returns it with
/// what moto then holds tagged as its own.
pub async fn builds_and_reports_the_network(ctx: &Ctx) -> Managed {
    let managed = eventually(
        "the managed EKSCluster to be provisioned",
        Duration::from_secs(240),
        || async {
            let c = ctx.eks.get(MANAGED).await.ok()?;
            (provisioned(&c) && condition(&c, "NetworkReady")?.status == "True").then_some(c)
        },
    )
    .await;
    assert!(
        endpoint_untouched(&ctx.dynamic, MANAGED).await,
        "the EKSCluster never sets spec.controlPlaneEndpoint"
    );
    let status = managed.status.clone().unwrap();
    assert!(status.common.ready, "v1beta1 ready");
    let network = AwsNetwork::of(&managed).expect("status.network");
    assert!(network.managed);
    let vpc_id = network.vpc_id.clone().expect("vpcID");
    assert_eq!(network.cidr_block.as_deref(), Some("10.0.0.0/16"));
    assert_eq!(network.subnets.len(), 4, "{network:?}");
    let zones: BTreeSet<&str> = network
        .subnets
        .iter()
        .map(|s| s.availability_zone.as_str())
        .collect();
    assert_eq!(zones, BTreeSet::from(["eu-west-1a", "eu-west-1b"]));
    assert_eq!(network.subnets.iter().filter(|s| s.public).count(), 2);
    assert!(network.subnets.iter().all(|s| s.cidr_block.is_some()));
    let security_group = network.security_group_id.clone().expect("securityGroupID");
    let domains: Vec<(String, Option<bool>)> = status
        .common
        .failure_domains
        .iter()
        .map(|d| (d.name.clone(), d.control_plane))
        .collect();
    assert_eq!(
        domains,
        [
            ("eu-west-1a".to_string(), Some(true)),
            ("eu-west-1b".to_string(), Some(true))
        ]
    );
    let ready = condition(&managed, "Ready").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Ready")
    );
    let inventory = owned(&ctx.ec2, MANAGED).await;
    Managed {
        object: managed,
        vpc_id,
        security_group,
        inventory,
    }
}

/// Proves that moto holds exactly one VPC (named, with the additional and ownership tags and DNS
/// hostnames on), four subnets, an internet gateway, a NAT gateway with its address, two route
/// tables and a security group, all tagged as ours and wired as a public/private network.
pub async fn moto_holds_it_all_tagged(ctx: &Ctx, managed: &Managed) {
    let inventory = &managed.inventory;
    assert_eq!(
        counts(inventory),
        BTreeMap::from([
            ("eip", 1),
            ("igw", 1),
            ("nat", 1),
            ("route-table", 2),
            ("security-group", 1),
            ("subnet", 4),
            ("vpc", 1)
        ]),
        "{inventory:?}"
    );
    check_vpc(ctx, &managed.vpc_id).await;
    let (public, private) = check_subnets(ctx, &managed.vpc_id).await;
    check_routes(ctx, managed, &public, &private).await;
    let groups = ctx
        .ec2
        .describe_security_groups()
        .group_ids(&managed.security_group)
        .send()
        .await
        .unwrap();
    assert_eq!(
        groups.security_groups()[0].vpc_id(),
        Some(managed.vpc_id.as_str())
    );
}

/// The VPC's Name, additional and ownership tags, and DNS hostnames on.
async fn check_vpc(ctx: &Ctx, vpc_id: &str) {
    let (key, value) = naming::ownership_tag(PROVIDER, NS, MANAGED);
    let vpc = ctx
        .ec2
        .describe_vpcs()
        .vpc_ids(vpc_id)
        .send()
        .await
        .unwrap();
    let vpc_tags = tags(vpc.vpcs()[0].tags());
    assert_eq!(
        vpc_tags.get("Name").map(String::as_str),
        Some("net-managed-vpc")
    );
    assert_eq!(
        vpc_tags.get("team").map(String::as_str),
        Some("network"),
        "additionalTags reach AWS"
    );
    assert_eq!(vpc_tags.get(&key), Some(&value));
    let hostnames = ctx
        .ec2
        .describe_vpc_attribute()
        .vpc_id(vpc_id)
        .attribute(aws_sdk_ec2::types::VpcAttributeName::EnableDnsHostnames)
        .send()
        .await
        .unwrap();
    assert_eq!(
        hostnames.enable_dns_hostnames().and_then(|v| v.value()),
        Some(true)
    );
}

/// The VPC's subnets, each shared with the cluster and tagged for public or internal load
/// balancers (public ones mapping public addresses); returns the public and the private ids.
async fn check_subnets(ctx: &Ctx, vpc_id: &str) -> (Vec<String>, Vec<String>) {
    let subnets = ctx
        .ec2
        .describe_subnets()
        .filters(filter("vpc-id", vpc_id))
        .send()
        .await
        .unwrap();
    let (mut public, mut private) = (Vec::new(), Vec::new());
    for s in subnets.subnets() {
        let t = tags(s.tags());
        assert_eq!(
            t.get("kubernetes.io/cluster/net-managed")
                .map(String::as_str),
            Some("shared"),
            "{t:?}"
        );
        if t.contains_key("kubernetes.io/role/elb") {
            assert_eq!(s.map_public_ip_on_launch(), Some(true));
            public.push(s.subnet_id().unwrap().to_string());
        } else {
            assert_eq!(
                t.get("kubernetes.io/role/internal-elb").map(String::as_str),
                Some("1"),
                "{t:?}"
            );
            private.push(s.subnet_id().unwrap().to_string());
        }
    }
    assert_eq!((public.len(), private.len()), (2, 2));
    (public, private)
}

/// The internet gateway attached to the VPC, the NAT gateway in a public subnet, and the route
/// tables: public subnets default to the internet gateway, private ones to the NAT gateway.
async fn check_routes(ctx: &Ctx, managed: &Managed, public: &[String], private: &[String]) {
    let (key, value) = naming::ownership_tag(PROVIDER, NS, MANAGED);
    let vpc_id = managed.vpc_id.as_str();
    let igw_id = managed.inventory["igw"].first().unwrap().clone();
    let gws = ctx
        .ec2
        .describe_internet_gateways()
        .internet_gateway_ids(&igw_id)
        .send()
        .await
        .unwrap();
    assert!(
        gws.internet_gateways()[0]
            .attachments()
            .iter()
            .any(|a| a.vpc_id() == Some(vpc_id))
    );
    let nat_id = managed.inventory["nat"].first().unwrap().clone();
    let nats = ctx
        .ec2
        .describe_nat_gateways()
        .nat_gateway_ids(&nat_id)
        .send()
        .await
        .unwrap();
    assert!(
        public
            .iter()
            .any(|p| nats.nat_gateways()[0].subnet_id() == Some(p.as_str())),
        "NAT in a public subnet"
    );
    let tables = ctx
        .ec2
        .describe_route_tables()
        .filters(filter(&format!("tag:{key}"), &value))
        .send()
        .await
        .unwrap();
    for t in tables.route_tables() {
        let default = t
            .routes()
            .iter()
            .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .expect("default route");
        let associated: BTreeSet<String> = t
            .associations()
            .iter()
            .filter_map(|a| a.subnet_id().map(String::from))
            .collect();
        if default.gateway_id() == Some(igw_id.as_str()) {
            assert_eq!(associated, public.iter().cloned().collect());
        } else {
            assert_eq!(default.nat_gateway_id(), Some(nat_id.as_str()));
            assert_eq!(associated, private.iter().cloned().collect());
        }
    }
}

/// Proves that core copies what it needs into the Cluster: infrastructureProvisioned, our
/// failure domains (C19), and InfrastructureReady following our Ready.
pub async fn core_copies_it_into_the_cluster(ctx: &Ctx, managed: &Managed) {
    let c = eventually(
        "the Cluster to show infrastructureProvisioned and our failure domains",
        Duration::from_secs(60),
        || async {
            let c = ctx.clusters.get(MANAGED).await.ok()?;
            let s = c.status.as_ref()?;
            (s.initialization.as_ref()?.infrastructure_provisioned == Some(true)
                && !s.failure_domains.is_empty())
            .then_some(c)
        },
    )
    .await;
    assert_eq!(
        c.status.as_ref().unwrap().failure_domains,
        managed
            .object
            .status
            .as_ref()
            .unwrap()
            .common
            .failure_domains,
        "C19"
    );
    eventually(
        "the Cluster's InfrastructureReady to follow our Ready",
        Duration::from_secs(60),
        || async {
            let c = ctx.clusters.get(MANAGED).await.ok()?;
            c.status?
                .conditions
                .iter()
                .find(|x| x.type_ == "InfrastructureReady" && x.status == "True")
                .map(|_| ())
        },
    )
    .await;
}
