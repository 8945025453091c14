//! The subnet service: one public and one private subnet per zone, blocks from
//! [`super::cidr::carve`], zones the region's first available ones by name.
//!
//! Public subnets map public IPs on launch and carry `kubernetes.io/role/elb=1`, private ones
//! `kubernetes.io/role/internal-elb=1`; all carry `kubernetes.io/cluster/<eks name>=shared` so
//! the AWS load balancer controller finds them.
//!
//! Once a zone has a subnet of ours it keeps its slot (read back from the subnet's block), so a
//! new zone appearing in the region never moves the layout; the zone list is read only when a
//! subnet is missing.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType};
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::AwsSubnet;
use super::cidr::{Ipv4Cidr, carve};
use super::ec2::{self, filter, missing_tags, tags_of};
use super::{Built, BuiltSubnet, Desired, Progress, Removal, Scope, Teardown, Turn};

/// The tag the AWS load balancer controller reads to pick subnets for internet-facing balancers.
pub const PUBLIC_ROLE_TAG: &str = "kubernetes.io/role/elb";
/// The tag it reads for internal balancers.
pub const PRIVATE_ROLE_TAG: &str = "kubernetes.io/role/internal-elb";

/// The `kubernetes.io/cluster/<name>` tag key.
pub fn cluster_tag(eks_cluster_name: &str) -> String {
    format!("kubernetes.io/cluster/{eks_cluster_name}")
}

/// A subnet as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubnetView {
    /// Subnet id.
    pub id: String,
    /// Availability zone.
    pub zone: String,
    /// IPv4 block.
    pub cidr: String,
    /// `pending` or `available`.
    pub state: String,
    /// Whether instances launched in it get a public IP.
    pub map_public_ip: bool,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl SubnetView {
    /// From the SDK's shape.
    pub fn from_sdk(s: &aws_sdk_ec2::types::Subnet) -> Self {
        Self {
            id: s.subnet_id().unwrap_or_default().to_string(),
            zone: s.availability_zone().unwrap_or_default().to_string(),
            cidr: s.cidr_block().unwrap_or_default().to_string(),
            state: s
                .state()
                .map(|x| x.as_str().to_string())
                .unwrap_or_default(),
            map_public_ip: s.map_public_ip_on_launch().unwrap_or(false),
            tags: tags_of(s.tags()),
        }
    }
}

/// A subnet the layout wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// Zone slot.
    pub slot: usize,
    /// Public or private.
    pub public: bool,
    /// Zone.
    pub zone: String,
    /// Block.
    pub cidr: Ipv4Cidr,
    /// Name tag.
    pub name: String,
    /// Every tag it must carry.
    pub tags: BTreeMap<String, String>,
}

/// The subnet service's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A subnet is missing and the zone list is needed to place it.
    NeedZones,
    /// The spec cannot be met (VPC too small, region short of zones).
    Invalid(String),
    /// A subnet with our name in our VPC is not ours.
    Conflict(String),
    /// Create this subnet.
    Create(Wanted),
    /// A subnet of ours is pending.
    Wait(String),
    /// Turn on public IPs for this public subnet.
    MapPublicIp(String),
    /// Add these tags to this subnet.
    Tag(String, BTreeMap<String, String>),
    /// Every subnet exists as desired.
    Ready,
}

/// The plan: the subnets there are, and the next step.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The wanted subnets that exist and are available, in slot order (public first).
    pub existing: Vec<BuiltSubnet>,
    /// What to do next.
    pub step: Step,
}

/// Decides the subnet service's step (pure). `zones` is the region's available zones, or
/// `None` when not read (yet).
pub fn plan(
    desired: &Desired,
    vpc_cidr: Ipv4Cidr,
    subnets: &[SubnetView],
    zones: Option<&[String]>,
) -> Plan {
    let stop = |step| Plan {
        existing: Vec::new(),
        step,
    };
    let layout = match carve(vpc_cidr, desired.zones) {
        Ok(l) => l,
        Err(message) => return stop(Step::Invalid(message)),
    };
    let mut ours: Vec<&SubnetView> = subnets
        .iter()
        .filter(|s| desired.owner.owns(&s.tags))
        .collect();
    ours.sort_by(|a, b| a.id.cmp(&b.id));

    // Zones already taken by our subnets keep their slots.
    let mut slots: Vec<Option<String>> = vec![None; desired.zones];
    for s in &ours {
        let Ok(cidr) = super::cidr::parse(&s.cidr) else {
            continue;
        };
        if let Some((slot, _)) = layout.slot_of(&cidr)
            && slots[slot].is_none()
            && !slots.iter().flatten().any(|z| *z == s.zone)
        {
            slots[slot] = Some(s.zone.clone());
        }
    }
    if slots.iter().any(Option::is_none) {
        let Some(zones) = zones else {
            return stop(Step::NeedZones);
        };
        let taken: Vec<String> = slots.iter().flatten().cloned().collect();
        let mut free = zones.iter().filter(|z| !taken.contains(z));
        for slot in slots.iter_mut().filter(|s| s.is_none()) {
            match free.next() {
                Some(z) => *slot = Some(z.clone()),
                None => {
                    return stop(Step::Invalid(format!(
                        "spec.eks.availabilityZones asks for {} zones but the region offers only {} available ones ({})",
                        desired.zones,
                        zones.len(),
                        zones.join(", ")
                    )));
                }
            }
        }
    }

    let wanted: Vec<Wanted> = slots
        .iter()
        .enumerate()
        .flat_map(|(slot, zone)| {
            let zone = zone.clone().unwrap_or_default();
            [true, false].map(|public| {
                let name = desired.names.subnet(public, &zone);
                let mut tags = desired.tags_named(&name);
                tags.insert(
                    (if public {
                        PUBLIC_ROLE_TAG
                    } else {
                        PRIVATE_ROLE_TAG
                    })
                    .into(),
                    "1".into(),
                );
                tags.insert(cluster_tag(&desired.eks_cluster_name), "shared".into());
                let cidr = if public {
                    layout.public[slot]
                } else {
                    layout.private[slot]
                };
                Wanted {
                    slot,
                    public,
                    zone: zone.clone(),
                    cidr,
                    name,
                    tags,
                }
            })
        })
        .collect();

    let found = |w: &Wanted| {
        ours.iter()
            .copied()
            .find(|s| super::cidr::parse(&s.cidr).ok() == Some(w.cidr))
    };
    let existing: Vec<BuiltSubnet> = wanted
        .iter()
        .filter_map(|w| {
            let s = found(w).filter(|s| s.state != "pending")?;
            Some(BuiltSubnet {
                slot: w.slot,
                status: AwsSubnet {
                    id: s.id.clone(),
                    availability_zone: s.zone.clone(),
                    public: w.public,
                    cidr_block: Some(s.cidr.clone()),
                },
            })
        })
        .collect();

    for w in &wanted {
        if found(w).is_none()
            && let Some(other) = subnets
                .iter()
                .find(|s| !desired.owner.owns(&s.tags) && s.tags.get("Name") == Some(&w.name))
        {
            let message = format!(
                "subnet {} in the cluster's VPC is named {} but does not carry this cluster's ownership tag; delete or rename it",
                other.id, w.name
            );
            return Plan {
                existing,
                step: Step::Conflict(message),
            };
        }
    }
    let step = if let Some(w) = wanted.iter().find(|w| found(w).is_none()) {
        Step::Create(w.clone())
    } else if let Some(s) = wanted
        .iter()
        .filter_map(found)
        .find(|s| s.state == "pending")
    {
        Step::Wait(s.id.clone())
    } else if let Some(s) = wanted
        .iter()
        .filter(|w| w.public)
        .filter_map(found)
        .find(|s| !s.map_public_ip)
    {
        Step::MapPublicIp(s.id.clone())
    } else if let Some((s, tags)) = wanted.iter().find_map(|w| {
        let s = found(w)?;
        let missing = missing_tags(&s.tags, &w.tags);
        (!missing.is_empty()).then_some((s, missing))
    }) {
        Step::Tag(s.id.clone(), tags)
    } else {
        Step::Ready
    };
    Plan { existing, step }
}

async fn available_zones(scope: &Scope<'_>) -> Result<Vec<String>, ProviderError> {
    let request = scope
        .ec2
        .sdk()
        .describe_availability_zones()
        .filters(filter("state", ["available"]))
        .filters(filter("zone-type", ["availability-zone"]));
    let out = scope
        .ec2
        .call("DescribeAvailabilityZones", request.send())
        .await?;
    let mut zones: Vec<String> = out
        .availability_zones()
        .iter()
        .filter(|z| {
            z.opt_in_status()
                .is_none_or(|o| o.as_str() != "not-opted-in")
        })
        .filter_map(|z| z.zone_name().map(str::to_string))
        .collect();
    zones.sort();
    zones.dedup();
    Ok(zones)
}

/// Folds a write's answer into the subnets the turn observed (pure): a created subnet with the
/// tags its request sent, public IPs turned on, tags added.
pub fn fold(subnets: &mut Vec<SubnetView>, step: &Step, created: Option<SubnetView>) {
    match step {
        Step::Create(w) => {
            if let Some(mut subnet) = created {
                subnet.tags.extend(w.tags.clone());
                subnets.push(subnet);
            }
        }
        Step::MapPublicIp(id) => {
            for s in subnets.iter_mut().filter(|s| s.id == *id) {
                s.map_public_ip = true;
            }
        }
        Step::Tag(id, tags) => {
            for s in subnets.iter_mut().filter(|s| s.id == *id) {
                s.tags.extend(tags.clone());
            }
        }
        Step::NeedZones | Step::Invalid(_) | Step::Conflict(_) | Step::Wait(_) | Step::Ready => {}
    }
}

/// One build turn of the subnet service: observe once, then create and set up every missing
/// subnet.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let Some((vpc_id, vpc_cidr)) = built.vpc.clone() else {
        return Ok(Progress::Blocked("waiting for the VPC".into()));
    };
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeSubnets",
            ec2.sdk()
                .describe_subnets()
                .filters(filter("vpc-id", [&vpc_id]))
                .send(),
        )
        .await?;
    let mut subnets: Vec<SubnetView> = out.subnets().iter().map(SubnetView::from_sdk).collect();
    let mut zones: Option<Vec<String>> = None;
    let mut turn = Turn::new();
    loop {
        let mut plan = plan(scope.desired, vpc_cidr, &subnets, zones.as_deref());
        if plan.step == Step::NeedZones && zones.is_none() {
            let read = available_zones(scope).await?;
            plan = self::plan(scope.desired, vpc_cidr, &subnets, Some(&read));
            zones = Some(read);
        }
        built.subnets = plan.existing;
        let step = plan.step;
        let mut created = None;
        let progress = match &step {
            Step::NeedZones => {
                return Err(ProviderError::cloud(
                    "internal",
                    "the zone list did not settle the subnet layout",
                ));
            }
            Step::Invalid(message) => {
                return Err(ProviderError::terminal(
                    Reason::InvalidSpec,
                    message.clone(),
                ));
            }
            Step::Conflict(message) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    message.clone(),
                ));
            }
            Step::Wait(id) => {
                return Ok(turn.end(Progress::waiting(format!("subnet {id} is pending"))));
            }
            Step::Ready => return Ok(Progress::Ready),
            _ if !turn.may_take(&step) => return Ok(turn.end(Progress::updating("subnets"))),
            Step::Create(w) => {
                let request = ec2
                    .sdk()
                    .create_subnet()
                    .vpc_id(&vpc_id)
                    .cidr_block(w.cidr.to_string())
                    .availability_zone(&w.zone)
                    .tag_specifications(ec2::tag_spec(ResourceType::Subnet, &w.tags));
                let out = ec2.call("CreateSubnet", request.send()).await?;
                created = out.subnet().map(SubnetView::from_sdk);
                let id = created.as_ref().map(|s| s.id.as_str()).unwrap_or_default();
                let role = if w.public { "public" } else { "private" };
                Progress::creating(format!(
                    "created {role} subnet {id} ({}) in {}",
                    w.cidr, w.zone
                ))
            }
            Step::MapPublicIp(id) => {
                let request = ec2
                    .sdk()
                    .modify_subnet_attribute()
                    .subnet_id(id)
                    .map_public_ip_on_launch(AttributeBooleanValue::builder().value(true).build());
                ec2.call("ModifySubnetAttribute", request.send()).await?;
                Progress::updating(format!("turned on public IPs for instances in subnet {id}"))
            }
            Step::Tag(id, tags) => {
                ec2.add_tags(id, tags).await?;
                Progress::updating(format!("tagged subnet {id}"))
            }
        };
        fold(&mut subnets, &step, created);
        turn.took(step, progress);
    }
}

/// One tear-down turn: deletes one subnet of ours.
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeSubnets",
            ec2.sdk()
                .describe_subnets()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let subnets: Vec<SubnetView> = out
        .subnets()
        .iter()
        .map(SubnetView::from_sdk)
        .filter(|s| scope.owner.owns(&s.tags))
        .collect();
    let Some(subnet) = subnets.first() else {
        return Ok(Removal::Gone);
    };
    let result = ec2
        .call(
            "DeleteSubnet",
            ec2.sdk().delete_subnet().subnet_id(&subnet.id).send(),
        )
        .await;
    super::after_delete(
        result,
        subnets.len() == 1,
        format!("deleted subnet {}; {} left", subnet.id, subnets.len() - 1),
        format!("subnet {} is gone", subnet.id),
        &format!(
            "subnet {} still has network interfaces (EKS releases its own a few minutes after the cluster is deleted)",
            subnet.id
        ),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::network::{Names, Owner};

    fn desired(zones: usize) -> Desired {
        let owner = Owner::new(crate::scope::PROVIDER, "ns", "c1");
        let (k, v) = owner.tag();
        Desired {
            names: Names::new("ns", "c1"),
            owner,
            cidr: "10.0.0.0/16".parse().unwrap(),
            zones,
            tags: [(k, v)].into(),
            eks_cluster_name: "ns-c1".into(),
            uid: "uid".into(),
        }
    }

    fn cidr() -> Ipv4Cidr {
        "10.0.0.0/16".parse().unwrap()
    }

    fn zones(z: &[&str]) -> Vec<String> {
        z.iter().map(|s| s.to_string()).collect()
    }

    /// A subnet of ours as the layout would have made it.
    fn made(d: &Desired, id: &str, zone: &str, cidr: &str, public: bool) -> SubnetView {
        let name = d.names.subnet(public, zone);
        let mut tags = d.tags_named(&name);
        tags.insert(
            (if public {
                PUBLIC_ROLE_TAG
            } else {
                PRIVATE_ROLE_TAG
            })
            .into(),
            "1".into(),
        );
        tags.insert(cluster_tag(&d.eks_cluster_name), "shared".into());
        SubnetView {
            id: id.into(),
            zone: zone.into(),
            cidr: cidr.into(),
            state: "available".into(),
            map_public_ip: public,
            tags,
        }
    }

    fn complete(d: &Desired) -> Vec<SubnetView> {
        vec![
            made(d, "subnet-1", "z-a", "10.0.128.0/20", true),
            made(d, "subnet-2", "z-a", "10.0.0.0/18", false),
            made(d, "subnet-3", "z-b", "10.0.144.0/20", true),
            made(d, "subnet-4", "z-b", "10.0.64.0/18", false),
        ]
    }

    #[test]
    fn an_empty_vpc_first_asks_for_the_zones_then_creates_the_first_public_subnet() {
        let d = desired(2);
        assert_eq!(plan(&d, cidr(), &[], None).step, Step::NeedZones);
        let p = plan(&d, cidr(), &[], Some(&zones(&["z-a", "z-b", "z-c"])));
        match p.step {
            Step::Create(w) => {
                assert_eq!(
                    (
                        w.slot,
                        w.public,
                        w.zone.as_str(),
                        w.cidr.to_string().as_str()
                    ),
                    (0, true, "z-a", "10.0.128.0/20")
                );
                assert_eq!(w.name, "ns-c1-public-z-a");
                assert_eq!(w.tags.get(PUBLIC_ROLE_TAG).map(String::as_str), Some("1"));
                assert_eq!(
                    w.tags
                        .get("kubernetes.io/cluster/ns-c1")
                        .map(String::as_str),
                    Some("shared")
                );
                assert!(d.owner.owns(&w.tags));
            }
            other => panic!("{other:?}"),
        }
        assert!(p.existing.is_empty());
    }

    #[test]
    fn the_private_subnet_of_a_zone_follows_its_public_one() {
        let d = desired(2);
        let have = vec![made(&d, "subnet-1", "z-a", "10.0.128.0/20", true)];
        let p = plan(&d, cidr(), &have, Some(&zones(&["z-a", "z-b"])));
        match p.step {
            Step::Create(w) => {
                assert_eq!(
                    (w.public, w.zone.as_str(), w.cidr.to_string().as_str()),
                    (false, "z-a", "10.0.0.0/18")
                );
                assert_eq!(w.tags.get(PRIVATE_ROLE_TAG).map(String::as_str), Some("1"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.existing.len(), 1);
        assert!(p.existing[0].status.public);
    }

    #[test]
    fn a_complete_set_is_ready_without_reading_the_zones() {
        let d = desired(2);
        let p = plan(&d, cidr(), &complete(&d), None);
        assert_eq!(p.step, Step::Ready);
        let ids: Vec<&str> = p.existing.iter().map(|s| s.status.id.as_str()).collect();
        assert_eq!(ids, ["subnet-1", "subnet-2", "subnet-3", "subnet-4"]);
        assert_eq!(p.existing[3].status.availability_zone, "z-b");
        assert_eq!(
            p.existing[3].status.cidr_block.as_deref(),
            Some("10.0.64.0/18")
        );
    }

    #[test]
    fn zones_in_use_keep_their_slots_even_when_the_region_lists_a_new_zone_first() {
        let d = desired(2);
        // Slot 1 lives in z-c; slot 0's subnets were deleted behind our back.
        let have = vec![
            made(&d, "subnet-3", "z-c", "10.0.144.0/20", true),
            made(&d, "subnet-4", "z-c", "10.0.64.0/18", false),
        ];
        let p = plan(&d, cidr(), &have, Some(&zones(&["z-0", "z-a", "z-c"])));
        match p.step {
            Step::Create(w) => assert_eq!(
                (w.slot, w.zone.as_str(), w.cidr.to_string().as_str()),
                (0, "z-0", "10.0.128.0/20")
            ),
            other => panic!("{other:?}"),
        }
        assert!(p.existing.iter().all(|s| s.slot == 1));
    }

    #[test]
    fn a_region_with_too_few_zones_is_an_invalid_spec() {
        let d = desired(3);
        match plan(&d, cidr(), &[], Some(&zones(&["z-a", "z-b"]))).step {
            Step::Invalid(m) => assert!(
                m.contains("asks for 3 zones") && m.contains("only 2"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_vpc_too_small_for_the_zones_is_an_invalid_spec() {
        let mut d = desired(4);
        d.cidr = "10.0.0.0/24".parse().unwrap();
        match plan(&d, d.cidr, &[], None).step {
            Step::Invalid(m) => assert!(m.contains("too small"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_foreign_subnet_with_our_name_is_a_conflict() {
        let d = desired(2);
        let mut foreign = made(&d, "subnet-x", "z-a", "10.0.240.0/24", true);
        foreign.tags.retain(|k, _| k == "Name");
        match plan(&d, cidr(), &[foreign], Some(&zones(&["z-a", "z-b"]))).step {
            Step::Conflict(m) => assert!(
                m.contains("subnet-x") && m.contains("ns-c1-public-z-a"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn foreign_subnets_with_other_names_are_left_alone() {
        let d = desired(2);
        let mut have = complete(&d);
        let mut foreign = made(&d, "subnet-x", "z-a", "10.0.240.0/24", true);
        foreign.tags = [("Name".to_string(), "someone-else".to_string())].into();
        have.push(foreign);
        assert_eq!(plan(&d, cidr(), &have, None).step, Step::Ready);
    }

    #[test]
    fn pending_then_public_ip_mapping_then_tags_are_settled_in_that_order() {
        let d = desired(2);
        let mut have = complete(&d);
        have[3].state = "pending".into();
        have[2].map_public_ip = false;
        have[1].tags.remove("kubernetes.io/cluster/ns-c1");
        let p = plan(&d, cidr(), &have, None);
        assert_eq!(p.step, Step::Wait("subnet-4".into()));
        assert_eq!(p.existing.len(), 3, "a pending subnet is not used yet");
        have[3].state = "available".into();
        assert_eq!(
            plan(&d, cidr(), &have, None).step,
            Step::MapPublicIp("subnet-3".into())
        );
        have[2].map_public_ip = true;
        assert_eq!(
            plan(&d, cidr(), &have, None).step,
            Step::Tag(
                "subnet-2".into(),
                [(
                    "kubernetes.io/cluster/ns-c1".to_string(),
                    "shared".to_string()
                )]
                .into()
            )
        );
    }

    #[test]
    fn a_new_eks_name_adds_its_cluster_tag() {
        let mut d = desired(2);
        let have = complete(&d);
        d.eks_cluster_name = "custom".into();
        match plan(&d, cidr(), &have, None).step {
            Step::Tag(id, tags) => {
                assert_eq!(id, "subnet-1");
                assert!(tags.contains_key("kubernetes.io/cluster/custom"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_turn_creates_every_subnet_and_maps_public_ips_without_reading_again() {
        let d = desired(2);
        let z = zones(&["z-a", "z-b", "z-c"]);
        let mut subnets = Vec::new();
        let mut steps = Vec::new();
        loop {
            let p = plan(&d, cidr(), &subnets, Some(&z));
            if p.step == Step::Ready {
                assert_eq!(p.existing.len(), 4);
                break;
            }
            assert!(steps.len() < 10, "{steps:?}");
            // CreateSubnet answers with id, zone, block and state; no public IPs; no tags.
            let created = match &p.step {
                Step::Create(w) => Some(SubnetView {
                    id: format!("subnet-{}", steps.len()),
                    zone: w.zone.clone(),
                    cidr: w.cidr.to_string(),
                    state: "available".into(),
                    map_public_ip: false,
                    tags: BTreeMap::new(),
                }),
                _ => None,
            };
            fold(&mut subnets, &p.step, created);
            steps.push(p.step);
        }
        let creates = steps
            .iter()
            .filter(|s| matches!(s, Step::Create(_)))
            .count();
        let maps = steps
            .iter()
            .filter(|s| matches!(s, Step::MapPublicIp(_)))
            .count();
        assert_eq!((creates, maps, steps.len()), (4, 2, 6), "{steps:?}");
    }
}
