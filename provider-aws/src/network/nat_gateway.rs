//! The NAT gateway service: an Elastic IP and one public NAT gateway in the first public
//! subnet, the private subnets' way out.
//!
//! A NAT gateway takes a minute or two to become available (and as long to be deleted): the
//! service starts the operation and looks again at the poll interval, never waits. One that
//! failed or was deleted behind our back is replaced; the `ClientToken` of the replacement
//! differs because the dead gateways (which EC2 keeps listing for a while) and the id last
//! recorded in status are part of it.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{DomainType, ResourceType};
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::ec2::{self, filter, missing_tags, tag_filter, tags_of};
use super::{Built, Owner, Progress, Removal, Scope, Teardown, Turn, client_token};

/// A NAT gateway as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatView {
    /// NAT gateway id.
    pub id: String,
    /// `pending`, `available`, `deleting`, `deleted` or `failed`.
    pub state: String,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl NatView {
    fn from_sdk(n: &aws_sdk_ec2::types::NatGateway) -> Self {
        Self {
            id: n.nat_gateway_id().unwrap_or_default().to_string(),
            state: n
                .state()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            failure: n.failure_message().map(str::to_string),
            tags: tags_of(n.tags()),
        }
    }

    fn live(&self) -> bool {
        matches!(self.state.as_str(), "pending" | "available")
    }
}

/// An Elastic IP as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressView {
    /// Allocation id.
    pub allocation_id: String,
    /// Set while it is associated with a network interface.
    pub association_id: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl AddressView {
    fn from_sdk(a: &aws_sdk_ec2::types::Address) -> Self {
        Self {
            allocation_id: a.allocation_id().unwrap_or_default().to_string(),
            association_id: a.association_id().map(str::to_string),
            tags: tags_of(a.tags()),
        }
    }
}

/// What the NAT gateway needs from the services before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs<'a> {
    /// Whose it is.
    pub owner: &'a Owner,
    /// The NAT gateway's Name tag.
    pub name: &'a str,
    /// The Elastic IP's Name tag.
    pub address_name: &'a str,
    /// The first public subnet, once it exists.
    pub subnet: Option<&'a str>,
    /// Whether the internet gateway is attached (EC2 refuses a public NAT gateway without one).
    pub internet_gateway: bool,
    /// The EKSCluster's UID.
    pub uid: &'a str,
    /// The NAT gateway id last recorded in status.
    pub previous: Option<&'a str>,
    /// The tags the NAT gateway must carry.
    pub want_tags: &'a BTreeMap<String, String>,
}

/// The NAT gateway service's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Waits for the subnets or the internet gateway.
    Blocked(String),
    /// Ours and available.
    Ready(String),
    /// Ours, available, missing tags.
    Tag(String, BTreeMap<String, String>),
    /// Ours, pending.
    Wait(String),
    /// No live gateway: the Elastic IPs are needed to go on.
    NeedAddresses,
    /// Allocate an Elastic IP.
    Allocate,
    /// Our Elastic IP is still held by a gateway being deleted.
    AddressBusy(String),
    /// Create the gateway.
    Create {
        /// Subnet.
        subnet: String,
        /// Elastic IP allocation.
        allocation: String,
        /// Idempotency token.
        token: String,
        /// Why the last one is gone, if it failed.
        replacing: Option<String>,
    },
    /// A gateway or address with our name is not ours.
    Conflict(String),
}

/// Decides the NAT gateway service's step (pure). `addresses` is `None` until read.
pub fn plan(nats: &[NatView], addresses: Option<&[AddressView]>, inputs: &Inputs<'_>) -> Plan {
    let owner = inputs.owner;
    let mut live: Vec<&NatView> = nats
        .iter()
        .filter(|n| owner.owns(&n.tags) && n.live())
        .collect();
    live.sort_by_key(|n| (n.state != "available", n.id.clone()));
    if let Some(nat) = live.first() {
        if nat.state == "pending" {
            return Plan::Wait(nat.id.clone());
        }
        let missing = missing_tags(&nat.tags, inputs.want_tags);
        return if missing.is_empty() {
            Plan::Ready(nat.id.clone())
        } else {
            Plan::Tag(nat.id.clone(), missing)
        };
    }
    if let Some(other) = nats.iter().find(|n| {
        !owner.owns(&n.tags)
            && n.live()
            && n.tags.get("Name").map(String::as_str) == Some(inputs.name)
    }) {
        return Plan::Conflict(format!(
            "NAT gateway {} in the cluster's VPC carries the cluster's name but not its ownership tag; delete or rename it",
            other.id
        ));
    }
    let (Some(subnet), true) = (inputs.subnet, inputs.internet_gateway) else {
        return Plan::Blocked(
            if inputs.subnet.is_none() {
                "waiting for the first public subnet"
            } else {
                "waiting for the internet gateway"
            }
            .into(),
        );
    };
    let Some(addresses) = addresses else {
        return Plan::NeedAddresses;
    };
    let ours: Vec<&AddressView> = addresses.iter().filter(|a| owner.owns(&a.tags)).collect();
    if ours.is_empty() {
        return match addresses.first() {
            Some(other) => Plan::Conflict(format!(
                "Elastic IP {} carries the cluster's name ({}) but not its ownership tag; release or rename it",
                other.allocation_id, inputs.address_name
            )),
            None => Plan::Allocate,
        };
    }
    let mut dead: Vec<&NatView> = nats
        .iter()
        .filter(|n| owner.owns(&n.tags) && !n.live())
        .collect();
    dead.sort_by(|a, b| a.id.cmp(&b.id));
    let mut free: Vec<&&AddressView> = ours.iter().filter(|a| a.association_id.is_none()).collect();
    free.sort_by(|a, b| a.allocation_id.cmp(&b.allocation_id));
    let Some(address) = free.first() else {
        return match dead.iter().find(|n| n.state == "deleting") {
            Some(n) => Plan::AddressBusy(format!(
                "Elastic IP {} is still held by NAT gateway {}, which is being deleted",
                ours[0].allocation_id, n.id
            )),
            // Held by something else: leave it (it is released with the cluster) and take another.
            None => Plan::Allocate,
        };
    };
    let dead_ids: Vec<&str> = dead.iter().map(|n| n.id.as_str()).collect();
    let dead_ids = dead_ids.join(",");
    let token = client_token(
        "CreateNatGateway",
        inputs.uid,
        &[
            subnet,
            &address.allocation_id,
            &dead_ids,
            inputs.previous.unwrap_or_default(),
        ],
    );
    let replacing = dead.iter().rev().find_map(|n| {
        n.failure
            .clone()
            .map(|f| format!("NAT gateway {} failed: {f}", n.id))
    });
    Plan::Create {
        subnet: subnet.to_string(),
        allocation: address.allocation_id.clone(),
        token,
        replacing,
    }
}

/// What a NAT gateway turn's write created, folded into what the turn observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    /// An Elastic IP.
    Address(AddressView),
    /// A NAT gateway.
    Gateway(NatView),
}

/// Folds a write's answer into what the turn observed (pure): an allocated address, a created
/// gateway (both with the tags their requests sent), tags added.
pub fn fold(
    nats: &mut Vec<NatView>,
    addresses: &mut Option<Vec<AddressView>>,
    step: &Plan,
    created: Option<Created>,
) {
    match (step, created) {
        (Plan::Allocate, Some(Created::Address(address))) => {
            addresses.get_or_insert_with(Vec::new).push(address);
        }
        (Plan::Create { .. }, Some(Created::Gateway(nat))) => nats.push(nat),
        (Plan::Tag(id, tags), _) => {
            for n in nats.iter_mut().filter(|n| n.id == *id) {
                n.tags.extend(tags.clone());
            }
        }
        _ => {}
    }
}

/// One build turn of the NAT gateway service: observe once, then allocate the address and
/// create the gateway; a pending gateway is looked at again at the poll interval.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let Some((vpc_id, _)) = built.vpc.clone() else {
        return Ok(Progress::Blocked("waiting for the VPC".into()));
    };
    let ec2 = scope.ec2;
    let desired = scope.desired;
    let name = desired.names.nat_gateway();
    let address_name = desired.names.nat_address();
    let want = desired.tags_named(&name);
    let want_address = desired.tags_named(&address_name);
    let subnet = built
        .subnets
        .iter()
        .find(|s| s.slot == 0 && s.status.public)
        .map(|s| s.status.id.clone());
    let inputs = Inputs {
        owner: &desired.owner,
        name: &name,
        address_name: &address_name,
        subnet: subnet.as_deref(),
        internet_gateway: built.internet_gateway.is_some(),
        uid: &desired.uid,
        previous: scope.previous.and_then(|p| p.nat_gateway_id.as_deref()),
        want_tags: &want,
    };
    // moto ignores tag filters on DescribeNatGateways; ownership is checked on our side anyway.
    let out = ec2
        .call(
            "DescribeNatGateways",
            ec2.sdk()
                .describe_nat_gateways()
                .filter(filter("vpc-id", [&vpc_id]))
                .send(),
        )
        .await?;
    let mut nats: Vec<NatView> = out.nat_gateways().iter().map(NatView::from_sdk).collect();
    let mut addresses: Option<Vec<AddressView>> = None;
    let mut turn = Turn::new();
    loop {
        let mut step = plan(&nats, addresses.as_deref(), &inputs);
        if step == Plan::NeedAddresses && addresses.is_none() {
            let out = ec2
                .call(
                    "DescribeAddresses",
                    ec2.sdk()
                        .describe_addresses()
                        .filters(tag_filter("Name", &address_name))
                        .send(),
                )
                .await?;
            let read: Vec<AddressView> =
                out.addresses().iter().map(AddressView::from_sdk).collect();
            step = plan(&nats, Some(&read), &inputs);
            addresses = Some(read);
        }
        let mut created = None;
        let progress = match &step {
            Plan::Blocked(message) => return Ok(Progress::Blocked(message.clone())),
            Plan::Conflict(message) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    message.clone(),
                ));
            }
            Plan::NeedAddresses => {
                return Err(ProviderError::cloud(
                    "internal",
                    "the Elastic IPs did not settle the NAT gateway plan",
                ));
            }
            Plan::Ready(id) => {
                built.nat_gateway = Some(id.clone());
                return Ok(Progress::Ready);
            }
            Plan::Wait(id) => {
                return Ok(turn.end(Progress::waiting(format!(
                    "NAT gateway {id} is pending (AWS takes a minute or two)"
                ))));
            }
            Plan::AddressBusy(message) => return Ok(Progress::waiting(message.clone())),
            _ if !turn.may_take(&step) => return Ok(turn.end(Progress::updating("NAT gateway"))),
            Plan::Tag(id, tags) => {
                ec2.add_tags(id, tags).await?;
                Progress::updating(format!("tagged NAT gateway {id}"))
            }
            Plan::Allocate => {
                let request = ec2
                    .sdk()
                    .allocate_address()
                    .domain(DomainType::Vpc)
                    .tag_specifications(ec2::tag_spec(ResourceType::ElasticIp, &want_address));
                let out = ec2.call("AllocateAddress", request.send()).await?;
                let id = out.allocation_id().unwrap_or_default().to_string();
                let message = format!("allocated Elastic IP {id} for the NAT gateway");
                created = (!id.is_empty()).then(|| {
                    Created::Address(AddressView {
                        allocation_id: id,
                        association_id: None,
                        tags: want_address.clone(),
                    })
                });
                Progress::creating(message)
            }
            Plan::Create {
                subnet,
                allocation,
                token,
                replacing,
            } => {
                let request = ec2
                    .sdk()
                    .create_nat_gateway()
                    .subnet_id(subnet)
                    .allocation_id(allocation)
                    .client_token(token)
                    .tag_specifications(ec2::tag_spec(ResourceType::Natgateway, &want));
                let out = ec2.call("CreateNatGateway", request.send()).await?;
                created = out.nat_gateway().map(|n| {
                    let mut view = NatView::from_sdk(n);
                    view.tags.extend(want.clone());
                    Created::Gateway(view)
                });
                let id = out
                    .nat_gateway()
                    .and_then(|n| n.nat_gateway_id())
                    .unwrap_or_default();
                let mut message = format!("creating NAT gateway {id} in subnet {subnet}");
                if let Some(replacing) = replacing {
                    message = format!("{replacing}; {message}");
                }
                // AWS makes a NAT gateway in a minute or two: a pending one is polled.
                Progress::waiting(message)
            }
        };
        fold(&mut nats, &mut addresses, &step, created);
        turn.took(step, progress);
    }
}

/// One tear-down turn: deletes a live NAT gateway of ours, waits until none is deleting, then
/// releases our Elastic IPs one per pass.
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeNatGateways",
            ec2.sdk()
                .describe_nat_gateways()
                .filter(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let nats: Vec<NatView> = out
        .nat_gateways()
        .iter()
        .map(NatView::from_sdk)
        .filter(|n| scope.owner.owns(&n.tags))
        .collect();
    if let Some(nat) = nats.iter().find(|n| n.live()) {
        return match ec2
            .call(
                "DeleteNatGateway",
                ec2.sdk()
                    .delete_nat_gateway()
                    .nat_gateway_id(&nat.id)
                    .send(),
            )
            .await
        {
            Ok(_) => Ok(Removal::waiting(format!("deleting NAT gateway {}", nat.id))),
            Err(e) if ec2::is_gone(&e) => {
                Ok(Removal::deleting(format!("NAT gateway {} is gone", nat.id)))
            }
            Err(e) => Err(e.into()),
        };
    }
    if let Some(nat) = nats.iter().find(|n| n.state == "deleting") {
        return Ok(Removal::waiting(format!(
            "NAT gateway {} is being deleted",
            nat.id
        )));
    }
    let out = ec2
        .call(
            "DescribeAddresses",
            ec2.sdk()
                .describe_addresses()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let addresses: Vec<AddressView> = out
        .addresses()
        .iter()
        .map(AddressView::from_sdk)
        .filter(|a| scope.owner.owns(&a.tags))
        .collect();
    let Some(address) = addresses.first() else {
        return Ok(Removal::Gone);
    };
    let result = ec2
        .call(
            "ReleaseAddress",
            ec2.sdk()
                .release_address()
                .allocation_id(&address.allocation_id)
                .send(),
        )
        .await;
    super::after_delete(
        result,
        addresses.len() == 1,
        format!("released Elastic IP {}", address.allocation_id),
        format!("Elastic IP {} is released", address.allocation_id),
        &format!("Elastic IP {} is still associated", address.allocation_id),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner::new(crate::scope::PROVIDER, "ns", "c1")
    }

    fn ours_tags(name: &str) -> BTreeMap<String, String> {
        let (k, v) = owner().tag();
        [("Name".to_string(), name.to_string()), (k, v)].into()
    }

    fn nat(id: &str, state: &str, ours: bool) -> NatView {
        let tags = if ours {
            ours_tags("ns-c1-nat")
        } else {
            [("Name".to_string(), "ns-c1-nat".to_string())].into()
        };
        NatView {
            id: id.into(),
            state: state.into(),
            failure: None,
            tags,
        }
    }

    fn eip(id: &str, associated: bool, ours: bool) -> AddressView {
        let tags = if ours {
            ours_tags("ns-c1-nat-eip")
        } else {
            [("Name".to_string(), "ns-c1-nat-eip".to_string())].into()
        };
        AddressView {
            allocation_id: id.into(),
            association_id: associated.then(|| "eipassoc-1".to_string()),
            tags,
        }
    }

    struct Case {
        subnet: Option<&'static str>,
        igw: bool,
        previous: Option<&'static str>,
    }

    const READY_INPUTS: Case = Case {
        subnet: Some("subnet-pub"),
        igw: true,
        previous: None,
    };

    fn run(case: &Case, nats: &[NatView], addresses: Option<&[AddressView]>) -> Plan {
        let o = owner();
        let want = ours_tags("ns-c1-nat");
        let inputs = Inputs {
            owner: &o,
            name: "ns-c1-nat",
            address_name: "ns-c1-nat-eip",
            subnet: case.subnet,
            internet_gateway: case.igw,
            uid: "uid-1",
            previous: case.previous,
            want_tags: &want,
        };
        plan(nats, addresses, &inputs)
    }

    #[test]
    fn an_available_gateway_of_ours_is_ready_without_reading_addresses() {
        assert_eq!(
            run(&READY_INPUTS, &[nat("nat-1", "available", true)], None),
            Plan::Ready("nat-1".into())
        );
    }

    #[test]
    fn a_pending_gateway_is_waited_for() {
        assert_eq!(
            run(&READY_INPUTS, &[nat("nat-1", "pending", true)], None),
            Plan::Wait("nat-1".into())
        );
    }

    #[test]
    fn without_the_public_subnet_or_the_internet_gateway_nothing_is_created() {
        let no_subnet = Case {
            subnet: None,
            ..READY_INPUTS
        };
        assert!(
            matches!(run(&no_subnet, &[], Some(&[])), Plan::Blocked(m) if m.contains("public subnet"))
        );
        let no_igw = Case {
            igw: false,
            ..READY_INPUTS
        };
        assert!(
            matches!(run(&no_igw, &[], Some(&[])), Plan::Blocked(m) if m.contains("internet gateway"))
        );
    }

    #[test]
    fn first_the_addresses_are_read_then_one_is_allocated_then_the_gateway_created() {
        assert_eq!(run(&READY_INPUTS, &[], None), Plan::NeedAddresses);
        assert_eq!(run(&READY_INPUTS, &[], Some(&[])), Plan::Allocate);
        match run(&READY_INPUTS, &[], Some(&[eip("eipalloc-1", false, true)])) {
            Plan::Create {
                subnet,
                allocation,
                token,
                replacing,
            } => {
                assert_eq!(
                    (subnet.as_str(), allocation.as_str()),
                    ("subnet-pub", "eipalloc-1")
                );
                assert!(token.starts_with("CreateNatGateway-"));
                assert_eq!(replacing, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_retried_create_repeats_its_token_and_a_replacement_gets_a_new_one() {
        let token = |nats: &[NatView], case: &Case| match run(
            case,
            nats,
            Some(&[eip("eipalloc-1", false, true)]),
        ) {
            Plan::Create { token, .. } => token,
            other => panic!("{other:?}"),
        };
        let first = token(&[], &READY_INPUTS);
        assert_eq!(first, token(&[], &READY_INPUTS));
        let mut failed = nat("nat-1", "failed", true);
        failed.failure = Some("Elastic IP address is already associated".into());
        assert_ne!(first, token(&[failed.clone()], &READY_INPUTS));
        let after_move = Case {
            previous: Some("nat-1"),
            ..READY_INPUTS
        };
        assert_ne!(first, token(&[], &after_move));
        match run(
            &READY_INPUTS,
            &[failed],
            Some(&[eip("eipalloc-1", false, true)]),
        ) {
            Plan::Create {
                replacing: Some(r), ..
            } => assert!(r.contains("nat-1 failed: Elastic IP"), "{r}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_address_held_by_a_deleting_gateway_is_waited_for_and_one_held_otherwise_is_replaced() {
        let busy = [eip("eipalloc-1", true, true)];
        assert!(
            matches!(run(&READY_INPUTS, &[nat("nat-0", "deleting", true)], Some(&busy)), Plan::AddressBusy(m) if m.contains("nat-0"))
        );
        assert_eq!(
            run(&READY_INPUTS, &[nat("nat-0", "deleted", true)], Some(&busy)),
            Plan::Allocate
        );
        let both = [
            eip("eipalloc-1", true, true),
            eip("eipalloc-2", false, true),
        ];
        assert!(
            matches!(run(&READY_INPUTS, &[], Some(&both)), Plan::Create { allocation, .. } if allocation == "eipalloc-2")
        );
    }

    #[test]
    fn namesakes_that_are_not_ours_are_conflicts() {
        assert!(
            matches!(run(&READY_INPUTS, &[nat("nat-x", "available", false)], None), Plan::Conflict(m) if m.contains("nat-x"))
        );
        assert!(
            matches!(run(&READY_INPUTS, &[], Some(&[eip("eipalloc-x", false, false)])), Plan::Conflict(m) if m.contains("eipalloc-x"))
        );
        // A dead foreign namesake is no obstacle.
        assert_eq!(
            run(&READY_INPUTS, &[nat("nat-x", "deleted", false)], Some(&[])),
            Plan::Allocate
        );
    }

    #[test]
    fn an_available_gateway_wins_over_a_pending_duplicate() {
        let nats = [
            nat("nat-0", "pending", true),
            nat("nat-9", "available", true),
        ];
        assert_eq!(run(&READY_INPUTS, &nats, None), Plan::Ready("nat-9".into()));
    }
}
