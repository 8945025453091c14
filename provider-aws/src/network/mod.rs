//! The cluster's AWS network, as an ordered list of services.
//!
//! A created network is six services, each one AWS resource kind in its own module, walked in
//! [`Service::ORDER`] to build and in reverse to tear down:
//!
//! | service | builds | needs |
//! | --- | --- | --- |
//! | [`vpc`] | the VPC (DNS support and hostnames on) | |
//! | [`subnets`] | one public and one private subnet per zone | VPC |
//! | [`internet_gateway`] | an internet gateway attached to the VPC | VPC |
//! | [`nat_gateway`] | an Elastic IP and one NAT gateway in the first public subnet | subnets, internet gateway |
//! | [`route_tables`] | public (→ internet gateway) and private (→ NAT) route tables | all of the above |
//! | [`security_group`] | the cluster's security group | VPC |
//!
//! Every service observes its resources (found by their `Name` tag and checked for this
//! cluster's ownership tag) once per pass, plans with a pure function, and writes until it is
//! as desired or waits for the cloud: each write's answer (the id EC2 gave, the tags the
//! request sent) is folded into what the turn observed (each module's `fold`, pure) and the
//! plan runs again without reading again ([`Turn`]), so when EC2 answers at once the whole
//! network is built in one pass; the walk goes on past a service that is still working. Each reports its part of the `NetworkReady`
//! condition ([`BuildOutcome::condition`]).
//!
//! Creation never runs twice for one resource: every create carries the tags (Name and
//! ownership) in the request itself, so the next pass finds what a crashed pass created, and the
//! EC2 calls that take a `ClientToken` (CreateNatGateway, CreateRouteTable) get one derived from
//! the object's UID and what is being created ([`client_token`]).
//!
//! A resource with the provider's name but without this cluster's ownership tag is not ours:
//! the pass stops with `NameConflict`. Networks are never adopted: bringing a network by id
//! ([`bring_your_own`]) is how a cluster uses one it did not create.
//!
//! Tear-down finds resources by the ownership tag alone (so it works after `clusterctl move`,
//! with no status) and deletes only those; a dependency still in place (EKS network interfaces,
//! a NAT gateway still deleting) leaves the step pending.

pub mod bring_your_own;
pub mod cidr;
pub mod ec2;
pub mod internet_gateway;
pub mod nat_gateway;
pub mod route_tables;
pub mod security_group;
pub mod subnets;
pub mod vpc;

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Filter;
use contract::api::{NetworkStatus, SubnetStatus};
use contract::conditions::{ConditionType, DesiredCondition};
use contract::naming;
use provider_runtime::ProviderError;
use provider_runtime::infra_cluster::SeenNetwork;
use provider_runtime::walker::{self, Builds, TearsDown, Walk};
pub use provider_runtime::walker::{Progress, Removal, Timing, Turn, Wait};

use crate::api::{EKSCluster, EKSClusterObserved};
use crate::client::CloudError;
use cidr::Ipv4Cidr;
use ec2::Ec2;

/// The VPC block used when the spec names none.
pub const DEFAULT_CIDR: &str = "10.0.0.0/16";
/// Zones of a created VPC when `spec.eks.availabilityZones` is not set.
pub const DEFAULT_ZONES: usize = 2;
/// EKS needs subnets in at least this many zones.
pub const MIN_ZONES: usize = 2;

/// The Cluster whose resources these are (the one ownership type of every cloud).
pub use contract::ownership::Owner;

/// A Describe filter on `owner`'s ownership tag (what tear-down finds resources by).
pub fn owner_filter(owner: &Owner) -> Filter {
    let (key, value) = owner.tag();
    ec2::tag_filter(&key, &value)
}

/// The `Name` tags of a created network's resources: `<namespace>-<cluster>-<role>` (the
/// namespace keeps two clusters of one name apart in one account).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    base: String,
}

impl Names {
    /// Names for the cluster `namespace/cluster`.
    pub fn new(namespace: &str, cluster: &str) -> Self {
        Self {
            base: naming::derive_cloud_name(namespace, cluster, &naming::EKS_CLUSTER),
        }
    }

    /// The VPC.
    pub fn vpc(&self) -> String {
        format!("{}-vpc", self.base)
    }

    /// A subnet.
    pub fn subnet(&self, public: bool, zone: &str) -> String {
        format!(
            "{}-{}-{zone}",
            self.base,
            if public { "public" } else { "private" }
        )
    }

    /// The internet gateway.
    pub fn internet_gateway(&self) -> String {
        format!("{}-igw", self.base)
    }

    /// The NAT gateway's Elastic IP.
    pub fn nat_address(&self) -> String {
        format!("{}-nat-eip", self.base)
    }

    /// The NAT gateway.
    pub fn nat_gateway(&self) -> String {
        format!("{}-nat", self.base)
    }

    /// A route table.
    pub fn route_table(&self, public: bool) -> String {
        format!(
            "{}-{}-rt",
            self.base,
            if public { "public" } else { "private" }
        )
    }

    /// The security group (its group name and Name tag).
    pub fn security_group(&self) -> String {
        format!("{}-sg", self.base)
    }
}

/// What a created network should be, from the spec (validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desired {
    /// Whose network it is.
    pub owner: Owner,
    /// Resource names.
    pub names: Names,
    /// The VPC block.
    pub cidr: Ipv4Cidr,
    /// How many zones.
    pub zones: usize,
    /// Tags on every resource: the user's `additionalTags` and the ownership tag.
    pub tags: BTreeMap<String, String>,
    /// The EKS cluster's name, for the `kubernetes.io/cluster/<name>` subnet tag.
    pub eks_cluster_name: String,
    /// The EKSCluster's UID, the seed of idempotency tokens.
    pub uid: String,
}

impl Desired {
    /// The common tags plus `Name`.
    pub fn tags_named(&self, name: &str) -> BTreeMap<String, String> {
        let mut tags = self.tags.clone();
        tags.insert("Name".into(), name.into());
        tags
    }
}

/// The AWS network as the services see it: the shared part of the status
/// ([`NetworkStatus`]) and what only EKS reports ([`EKSClusterObserved`]) in one struct, the
/// way the services read and fill it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AwsNetwork {
    /// The VPC ID.
    pub vpc_id: Option<String>,
    /// The subnets, with their zones.
    pub subnets: Vec<AwsSubnet>,
    /// The security group the control plane and nodes share.
    pub security_group_id: Option<String>,
    /// Whether the provider created the network (and so deletes it) or the user brought it.
    pub managed: bool,
    /// The VPC's CIDR block.
    pub cidr_block: Option<String>,
    /// The internet gateway of a created network.
    pub internet_gateway_id: Option<String>,
    /// The NAT gateway of a created network (the private subnets' way out).
    pub nat_gateway_id: Option<String>,
    /// The route table of a created network's public subnets.
    pub public_route_table_id: Option<String>,
    /// The route table of a created network's private subnets.
    pub private_route_table_id: Option<String>,
}

/// One subnet in use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AwsSubnet {
    /// Subnet ID.
    pub id: String,
    /// Availability zone.
    pub availability_zone: String,
    /// Whether it routes to an internet gateway.
    pub public: bool,
    /// CIDR block.
    pub cidr_block: Option<String>,
}

impl AwsNetwork {
    /// The network as the status reports it: the shared shape and the `eks` block.
    pub fn seen(self) -> SeenNetwork<EKSClusterObserved> {
        SeenNetwork {
            shared: NetworkStatus {
                id: self.vpc_id.unwrap_or_default(),
                cidr_block: self.cidr_block,
                managed: self.managed,
                subnets: self
                    .subnets
                    .into_iter()
                    .map(|s| SubnetStatus {
                        id: s.id,
                        cidr_block: s.cidr_block,
                        zones: vec![s.availability_zone],
                        public: s.public,
                    })
                    .collect(),
            },
            own: EKSClusterObserved {
                security_group_id: self.security_group_id,
                internet_gateway_id: self.internet_gateway_id,
                nat_gateway_id: self.nat_gateway_id,
                public_route_table_id: self.public_route_table_id,
                private_route_table_id: self.private_route_table_id,
            },
        }
    }

    /// The network an earlier pass wrote in the status.
    pub fn from_status(shared: &NetworkStatus, own: Option<&EKSClusterObserved>) -> Self {
        let own = own.cloned().unwrap_or_default();
        Self {
            vpc_id: Some(shared.id.clone()).filter(|id| !id.is_empty()),
            subnets: shared.subnets.iter().map(AwsSubnet::from_status).collect(),
            security_group_id: own.security_group_id,
            managed: shared.managed,
            cidr_block: shared.cidr_block.clone(),
            internet_gateway_id: own.internet_gateway_id,
            nat_gateway_id: own.nat_gateway_id,
            public_route_table_id: own.public_route_table_id,
            private_route_table_id: own.private_route_table_id,
        }
    }

    /// The network the EKSCluster's status describes, if any.
    pub fn of(cluster: &EKSCluster) -> Option<Self> {
        let status = cluster.status.as_ref()?;
        let shared = status.common.network.as_ref()?;
        Some(Self::from_status(shared, status.eks.as_ref()))
    }
}

impl AwsSubnet {
    /// A subnet as the status reports it (an AWS subnet is in one zone).
    pub fn from_status(s: &SubnetStatus) -> Self {
        Self {
            id: s.id.clone(),
            availability_zone: s.zones.first().cloned().unwrap_or_default(),
            public: s.public,
            cidr_block: s.cidr_block.clone(),
        }
    }
}

/// What a service may use in a build pass.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// EC2.
    pub ec2: &'a Ec2,
    /// The network to build.
    pub desired: &'a Desired,
    /// The network recorded in status by earlier passes: hints only (status does not survive
    /// `clusterctl move`), used to bridge EC2's eventual consistency and to vary tokens.
    pub previous: Option<&'a AwsNetwork>,
    /// Requeue delays.
    pub timing: Timing,
}

/// What a service may use while tearing down.
#[derive(Clone, Copy, Debug)]
pub struct Teardown<'a> {
    /// EC2.
    pub ec2: &'a Ec2,
    /// Whose resources to delete.
    pub owner: &'a Owner,
    /// Requeue delays.
    pub timing: Timing,
}

/// A subnet the network has, with its zone slot.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltSubnet {
    /// Which zone slot (0-based) it fills.
    pub slot: usize,
    /// Its id, zone, block and role.
    pub status: AwsSubnet,
}

/// What the services have found or made so far in a pass: each service's outputs, read by the
/// services after it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Built {
    /// The VPC id and block, once it is available.
    pub vpc: Option<(String, Ipv4Cidr)>,
    /// The subnets that exist, in slot order (public before private).
    pub subnets: Vec<BuiltSubnet>,
    /// The internet gateway, once attached to the VPC.
    pub internet_gateway: Option<String>,
    /// The NAT gateway, once available.
    pub nat_gateway: Option<String>,
    /// The public and private route tables, as listed by EC2.
    pub route_tables: (Option<String>, Option<String>),
    /// The security group.
    pub security_group: Option<String>,
}

impl Built {
    /// The subnets of one role.
    pub fn subnets_of(&self, public: bool) -> impl Iterator<Item = &BuiltSubnet> {
        self.subnets
            .iter()
            .filter(move |s| s.status.public == public)
    }

    /// The network status this describes.
    pub fn status(&self) -> AwsNetwork {
        AwsNetwork {
            vpc_id: self.vpc.as_ref().map(|(id, _)| id.clone()),
            subnets: self.subnets.iter().map(|s| s.status.clone()).collect(),
            security_group_id: self.security_group.clone(),
            managed: true,
            cidr_block: self.vpc.as_ref().map(|(_, c)| c.to_string()),
            internet_gateway_id: self.internet_gateway.clone(),
            nat_gateway_id: self.nat_gateway.clone(),
            public_route_table_id: self.route_tables.0.clone(),
            private_route_table_id: self.route_tables.1.clone(),
        }
    }
}

/// The zones of a set of subnets, once each in first-seen order (the failure domains).
pub fn zones(subnets: &[AwsSubnet]) -> Vec<String> {
    contract::plan::failure_domains(subnets.iter().map(|s| s.availability_zone.as_str()))
        .into_iter()
        .map(|d| d.name)
        .collect()
}

/// What the result of a tear-down turn's one delete (or detach) call means, `last` telling
/// whether it removed the last resource of ours of its kind: done, `Gone` after the last,
/// else `deleted` (look again soon); already gone, `gone` (soon); something still depends on
/// it, `in_use` with the error (at the poll interval); any other error fails the turn.
pub fn after_delete<T>(
    result: Result<T, CloudError>,
    last: bool,
    deleted: String,
    gone: String,
    in_use: &str,
) -> Result<Removal, ProviderError> {
    match result {
        Ok(_) if last => Ok(Removal::Gone),
        Ok(_) => Ok(Removal::deleting(deleted)),
        Err(e) if ec2::is_gone(&e) => Ok(Removal::deleting(gone)),
        Err(e) if ec2::is_in_use(&e) => Ok(Removal::waiting(format!(
            "{in_use}: {}",
            ProviderError::from(e)
        ))),
        Err(e) => Err(e.into()),
    }
}

/// The services of a created network, in build order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// [`vpc`].
    Vpc,
    /// [`subnets`].
    Subnets,
    /// [`internet_gateway`].
    InternetGateway,
    /// [`nat_gateway`].
    NatGateway,
    /// [`route_tables`].
    RouteTables,
    /// [`security_group`].
    SecurityGroup,
}

impl walker::Service for Service {
    const ORDER: &'static [Service] = &[
        Service::Vpc,
        Service::Subnets,
        Service::InternetGateway,
        Service::NatGateway,
        Service::RouteTables,
        Service::SecurityGroup,
    ];

    fn label(self) -> &'static str {
        match self {
            Service::Vpc => "VPC",
            Service::Subnets => "subnets",
            Service::InternetGateway => "internet gateway",
            Service::NatGateway => "NAT gateway",
            Service::RouteTables => "route tables",
            Service::SecurityGroup => "security group",
        }
    }
}

impl<'a> Builds<Scope<'a>, Built> for Service {
    async fn reconcile(
        self,
        scope: &Scope<'a>,
        built: &mut Built,
    ) -> Result<Progress, ProviderError> {
        match self {
            Service::Vpc => vpc::reconcile(scope, built).await,
            Service::Subnets => subnets::reconcile(scope, built).await,
            Service::InternetGateway => internet_gateway::reconcile(scope, built).await,
            Service::NatGateway => nat_gateway::reconcile(scope, built).await,
            Service::RouteTables => route_tables::reconcile(scope, built).await,
            Service::SecurityGroup => security_group::reconcile(scope, built).await,
        }
    }
}

impl<'a> TearsDown<Teardown<'a>> for Service {
    async fn delete(self, scope: &Teardown<'a>) -> Result<Removal, ProviderError> {
        match self {
            Service::Vpc => vpc::delete(scope).await,
            Service::Subnets => subnets::delete(scope).await,
            Service::InternetGateway => internet_gateway::delete(scope).await,
            Service::NatGateway => nat_gateway::delete(scope).await,
            Service::RouteTables => route_tables::delete(scope).await,
            Service::SecurityGroup => security_group::delete(scope).await,
        }
    }
}

/// The result of walking the services forwards once.
pub type BuildOutcome = Walk<Service, Built>;

/// The `NetworkReady` condition of a walk: each service contributes its part.
pub fn condition(outcome: &BuildOutcome) -> DesiredCondition {
    outcome.condition(ConditionType::NetworkReady, |built| {
        let zones = zones(&built.status().subnets);
        let vpc = built
            .vpc
            .as_ref()
            .map(|(id, _)| id.as_str())
            .unwrap_or_default();
        format!(
            "VPC {vpc} with {} subnets in {} is ready",
            built.subnets.len(),
            zones.join(", ")
        )
    })
}

/// A deterministic EC2 `ClientToken`: the operation and a hash of the object's UID and what
/// makes this create distinct, so the retry of a create that crashed before its status was
/// written repeats the same token.
pub fn client_token(operation: &str, uid: &str, parts: &[&str]) -> String {
    contract::idempotency::token(
        &contract::idempotency::EC2_CLIENT_TOKEN,
        operation,
        uid,
        parts,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::conditions::ConditionStatus;

    use std::time::Duration;

    use contract::conditions::Reason;
    use provider_runtime::walker::Service as _;

    use super::*;

    fn subnet(id: &str, zone: &str, public: bool) -> BuiltSubnet {
        BuiltSubnet {
            slot: 0,
            status: AwsSubnet {
                id: id.into(),
                availability_zone: zone.into(),
                public,
                cidr_block: None,
            },
        }
    }

    fn outcome(progress: Vec<(Service, Progress)>) -> BuildOutcome {
        BuildOutcome {
            built: Built::default(),
            progress,
            error: None,
        }
    }

    fn all_ready() -> Vec<(Service, Progress)> {
        Service::ORDER
            .iter()
            .map(|s| (*s, Progress::Ready))
            .collect()
    }

    const TIMING: Timing = Timing {
        settle: Duration::from_secs(2),
        poll: Duration::from_secs(30),
    };
    const REST: Duration = Duration::from_secs(900);

    #[test]
    fn tokens_are_deterministic_short_ascii_and_differ_by_every_part() {
        let a = client_token("CreateNatGateway", "uid-1", &["subnet-1", "eipalloc-1", ""]);
        assert_eq!(
            a,
            client_token("CreateNatGateway", "uid-1", &["subnet-1", "eipalloc-1", ""])
        );
        assert!(a.len() <= 64 && a.is_ascii(), "{a}");
        assert!(a.starts_with("CreateNatGateway-"));
        assert_ne!(
            a,
            client_token("CreateNatGateway", "uid-2", &["subnet-1", "eipalloc-1", ""])
        );
        assert_ne!(
            a,
            client_token(
                "CreateNatGateway",
                "uid-1",
                &["subnet-1", "eipalloc-1", "nat-old"]
            )
        );
        assert_ne!(
            client_token("x", "u", &["ab", "c"]),
            client_token("x", "u", &["a", "bc"])
        );
    }

    #[test]
    fn names_carry_the_namespace_so_equal_cluster_names_do_not_collide() {
        let a = Names::new("team-a", "prod");
        let b = Names::new("team-b", "prod");
        assert_eq!(a.vpc(), "team-a-prod-vpc");
        assert_ne!(a.vpc(), b.vpc());
        assert_eq!(
            a.subnet(true, "us-east-1a"),
            "team-a-prod-public-us-east-1a"
        );
        assert_eq!(a.route_table(false), "team-a-prod-private-rt");
    }

    #[test]
    fn zones_are_one_per_zone_in_order() {
        let subnets: Vec<AwsSubnet> = [
            subnet("a", "z1", true),
            subnet("b", "z1", false),
            subnet("c", "z2", true),
        ]
        .into_iter()
        .map(|s| s.status)
        .collect();
        assert_eq!(zones(&subnets), ["z1", "z2"]);
    }

    #[test]
    fn the_network_is_ready_only_when_every_service_is() {
        let mut o = outcome(all_ready());
        o.built.vpc = Some(("vpc-1".into(), "10.0.0.0/16".parse().unwrap()));
        o.built.subnets = vec![subnet("a", "z1", true), subnet("b", "z2", true)];
        assert!(o.complete());
        let c = condition(&o);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::True, "Ready")
        );
        assert_eq!(c.message, "VPC vpc-1 with 2 subnets in z1, z2 is ready");
        assert_eq!(o.requeue(TIMING, REST), REST);

        let partial = outcome(all_ready()[..5].to_vec());
        assert!(
            !partial.complete(),
            "a service that had no turn is not ready"
        );
    }

    #[test]
    fn a_working_service_gives_its_reason_and_every_unready_service_its_message() {
        let mut progress = all_ready();
        progress[1].1 = Progress::Blocked("waiting for the VPC".into());
        progress[3].1 = Progress::waiting("nat-1 is pending");
        progress[4].1 = Progress::creating("created rtb-1");
        let o = outcome(progress);
        let c = condition(&o);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::False, "WaitingForCloud")
        );
        assert_eq!(
            c.message,
            "subnets: waiting for the VPC; NAT gateway: nat-1 is pending; route tables: created rtb-1"
        );
        assert_eq!(
            o.requeue(TIMING, REST),
            TIMING.settle,
            "a write settles sooner than the poll"
        );
    }

    #[test]
    fn waiting_for_aws_requeues_at_the_poll_interval_even_with_services_blocked_behind_it() {
        let mut progress = all_ready();
        progress[3].1 = Progress::waiting("pending");
        progress[4].1 = Progress::Blocked("private route table waits for its NAT gateway".into());
        assert_eq!(outcome(progress).requeue(TIMING, REST), TIMING.poll);
        let mut blocked_only = all_ready();
        blocked_only[4].1 = Progress::Blocked("?".into());
        assert_eq!(outcome(blocked_only).requeue(TIMING, REST), TIMING.settle);
    }

    #[test]
    fn a_failure_names_the_service_and_keeps_the_errors_reason() {
        let o = BuildOutcome {
            built: Built::default(),
            progress: vec![(Service::Vpc, Progress::Ready)],
            error: Some((
                Service::Subnets,
                ProviderError::terminal(Reason::NameConflict, "subnet x is not ours"),
            )),
        };
        let c = condition(&o);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::False, "NameConflict")
        );
        assert_eq!(c.message, "subnets: subnet x is not ours");
        assert!(!o.complete());
    }

    #[test]
    fn a_delete_result_maps_to_gone_deleting_waiting_or_the_error() {
        let after = |result: Result<(), CloudError>, last: bool| {
            after_delete(
                result,
                last,
                "deleted x".into(),
                "x is gone".into(),
                "x in use",
            )
        };
        assert_eq!(after(Ok(()), true).unwrap(), Removal::Gone);
        assert_eq!(
            after(Ok(()), false).unwrap(),
            Removal::deleting("deleted x")
        );
        assert_eq!(
            after(Err(CloudError::NotFound("n".into())), true).unwrap(),
            Removal::deleting("x is gone"),
            "already gone: look again, the listing may still hold it"
        );
        match after(Err(CloudError::InUse("DependencyViolation".into())), true).unwrap() {
            Removal::Pending { message, wait } => {
                assert!(message.starts_with("x in use: "), "{message}");
                assert_eq!(wait, Wait::Poll);
            }
            other => panic!("{other:?}"),
        }
        assert!(after(Err(CloudError::Transient("t".into())), false).is_err());
    }

    #[test]
    fn built_status_records_every_id_and_marks_the_network_managed() {
        let built = Built {
            vpc: Some(("vpc-1".into(), "10.0.0.0/16".parse().unwrap())),
            subnets: vec![subnet("subnet-1", "z1", true)],
            internet_gateway: Some("igw-1".into()),
            nat_gateway: Some("nat-1".into()),
            route_tables: (Some("rtb-1".into()), None),
            security_group: Some("sg-1".into()),
        };
        let s = built.status();
        assert!(s.managed);
        assert_eq!(s.vpc_id.as_deref(), Some("vpc-1"));
        assert_eq!(s.cidr_block.as_deref(), Some("10.0.0.0/16"));
        assert_eq!(s.subnets.len(), 1);
        assert_eq!(
            (
                s.internet_gateway_id.as_deref(),
                s.nat_gateway_id.as_deref()
            ),
            (Some("igw-1"), Some("nat-1"))
        );
        assert_eq!(s.security_group_id.as_deref(), Some("sg-1"));
        assert_eq!(
            (s.public_route_table_id.as_deref(), s.private_route_table_id),
            (Some("rtb-1"), None)
        );
    }
}
