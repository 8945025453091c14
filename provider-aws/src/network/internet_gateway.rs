//! The internet gateway service: one gateway, attached to the VPC (the public subnets' route
//! out, and what a public NAT gateway needs).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::ResourceType;
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::ec2::{self, missing_tags, tag_filter, tags_of};
use super::{Built, Owner, Progress, Removal, Scope, Teardown, Turn};

/// An internet gateway as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayView {
    /// Gateway id.
    pub id: String,
    /// VPCs it is attached (or attaching) to.
    pub attached_to: Vec<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl GatewayView {
    fn from_sdk(g: &aws_sdk_ec2::types::InternetGateway) -> Self {
        Self {
            id: g.internet_gateway_id().unwrap_or_default().to_string(),
            attached_to: g
                .attachments()
                .iter()
                .filter(|a| {
                    a.state()
                        .is_none_or(|s| !matches!(s.as_str(), "detaching" | "detached"))
                })
                .filter_map(|a| a.vpc_id().map(str::to_string))
                .collect(),
            tags: tags_of(g.tags()),
        }
    }
}

/// The internet gateway service's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// No gateway of ours: create it.
    Create,
    /// Ours, not attached: attach it to the VPC.
    Attach(String),
    /// Ours, attached elsewhere: a state the provider does not fix by itself.
    AttachedElsewhere(String, String),
    /// Ours: add missing tags.
    Tag(String, BTreeMap<String, String>),
    /// Ours, attached.
    Ready(String),
    /// The name is taken by a gateway that is not ours.
    Conflict(String),
}

/// Decides the gateway service's step (pure).
pub fn plan(
    named: &[GatewayView],
    owner: &Owner,
    vpc_id: &str,
    want_tags: &BTreeMap<String, String>,
) -> Plan {
    let mut ours: Vec<&GatewayView> = named.iter().filter(|g| owner.owns(&g.tags)).collect();
    // Prefer one already attached to our VPC, then the lowest id.
    ours.sort_by_key(|g| (!g.attached_to.iter().any(|v| v == vpc_id), g.id.clone()));
    let Some(gw) = ours.first() else {
        return match named.first() {
            Some(other) => Plan::Conflict(format!(
                "internet gateway {} carries the cluster's name but not its ownership tag; delete or rename it",
                other.id
            )),
            None => Plan::Create,
        };
    };
    if !gw.attached_to.iter().any(|v| v == vpc_id) {
        return match gw.attached_to.first() {
            Some(other) => Plan::AttachedElsewhere(gw.id.clone(), other.clone()),
            None => Plan::Attach(gw.id.clone()),
        };
    }
    let missing = missing_tags(&gw.tags, want_tags);
    if !missing.is_empty() {
        return Plan::Tag(gw.id.clone(), missing);
    }
    Plan::Ready(gw.id.clone())
}

/// Folds a write's answer into the gateways the turn observed (pure): a created gateway with
/// the tags its request sent, an attachment, tags added.
pub fn fold(
    named: &mut Vec<GatewayView>,
    step: &Plan,
    vpc_id: &str,
    created: Option<GatewayView>,
    want: &BTreeMap<String, String>,
) {
    match step {
        Plan::Create => {
            if let Some(mut gateway) = created {
                gateway.tags.extend(want.clone());
                named.push(gateway);
            }
        }
        Plan::Attach(id) => {
            for g in named.iter_mut().filter(|g| g.id == *id) {
                g.attached_to.push(vpc_id.to_string());
            }
        }
        Plan::Tag(id, tags) => {
            for g in named.iter_mut().filter(|g| g.id == *id) {
                g.tags.extend(tags.clone());
            }
        }
        Plan::AttachedElsewhere(..) | Plan::Ready(_) | Plan::Conflict(_) => {}
    }
}

/// One build turn of the internet gateway service: observe once, then create, attach and tag
/// the gateway.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let Some((vpc_id, _)) = built.vpc.clone() else {
        return Ok(Progress::Blocked("waiting for the VPC".into()));
    };
    let ec2 = scope.ec2;
    let name = scope.desired.names.internet_gateway();
    let want = scope.desired.tags_named(&name);
    let out = ec2
        .call(
            "DescribeInternetGateways",
            ec2.sdk()
                .describe_internet_gateways()
                .filters(tag_filter("Name", &name))
                .send(),
        )
        .await?;
    let mut named: Vec<GatewayView> = out
        .internet_gateways()
        .iter()
        .map(GatewayView::from_sdk)
        .collect();
    let mut turn = Turn::new();
    loop {
        let step = plan(&named, &scope.desired.owner, &vpc_id, &want);
        let mut created = None;
        let progress = match &step {
            Plan::Conflict(message) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    message.clone(),
                ));
            }
            Plan::AttachedElsewhere(id, other) => {
                return Err(ProviderError::terminal(
                    Reason::InvalidSpec,
                    format!(
                        "internet gateway {id} of this cluster is attached to VPC {other}, not to {vpc_id}; detach it"
                    ),
                ));
            }
            Plan::Ready(id) => {
                built.internet_gateway = Some(id.clone());
                return Ok(Progress::Ready);
            }
            _ if !turn.may_take(&step) => {
                return Ok(turn.end(Progress::updating("internet gateway")));
            }
            Plan::Create => {
                let request = ec2
                    .sdk()
                    .create_internet_gateway()
                    .tag_specifications(ec2::tag_spec(ResourceType::InternetGateway, &want));
                let out = ec2.call("CreateInternetGateway", request.send()).await?;
                created = out.internet_gateway().map(GatewayView::from_sdk);
                let id = created.as_ref().map(|g| g.id.as_str()).unwrap_or_default();
                Progress::creating(format!("created internet gateway {id}"))
            }
            Plan::Attach(id) => {
                let request = ec2
                    .sdk()
                    .attach_internet_gateway()
                    .internet_gateway_id(id)
                    .vpc_id(&vpc_id);
                ec2.call("AttachInternetGateway", request.send()).await?;
                Progress::creating(format!("attached internet gateway {id} to VPC {vpc_id}"))
            }
            Plan::Tag(id, tags) => {
                ec2.add_tags(id, tags).await?;
                Progress::updating(format!("tagged internet gateway {id}"))
            }
        };
        fold(&mut named, &step, &vpc_id, created, &want);
        turn.took(step, progress);
    }
}

/// One tear-down turn: detaches, then deletes, a gateway of ours.
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeInternetGateways",
            ec2.sdk()
                .describe_internet_gateways()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let gateways: Vec<GatewayView> = out
        .internet_gateways()
        .iter()
        .map(GatewayView::from_sdk)
        .filter(|g| scope.owner.owns(&g.tags))
        .collect();
    let Some(gw) = gateways.first() else {
        return Ok(Removal::Gone);
    };
    let in_use = format!(
        "internet gateway {} is still in use (public addresses mapped in the VPC)",
        gw.id
    );
    if let Some(vpc) = gw.attached_to.first() {
        let request = ec2
            .sdk()
            .detach_internet_gateway()
            .internet_gateway_id(&gw.id)
            .vpc_id(vpc);
        let result = ec2.call("DetachInternetGateway", request.send()).await;
        // Never the last step: the gateway itself is deleted next.
        return super::after_delete(
            result,
            false,
            format!("detached internet gateway {} from VPC {vpc}", gw.id),
            format!("internet gateway {} is detached", gw.id),
            &in_use,
        );
    }
    let result = ec2
        .call(
            "DeleteInternetGateway",
            ec2.sdk()
                .delete_internet_gateway()
                .internet_gateway_id(&gw.id)
                .send(),
        )
        .await;
    super::after_delete(
        result,
        gateways.len() == 1,
        format!("deleted internet gateway {}", gw.id),
        format!("internet gateway {} is gone", gw.id),
        &in_use,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner::new(crate::scope::PROVIDER, "ns", "c1")
    }

    fn want() -> BTreeMap<String, String> {
        let (k, v) = owner().tag();
        [("Name".to_string(), "ns-c1-igw".to_string()), (k, v)].into()
    }

    fn gw(id: &str, attached: &[&str], ours: bool) -> GatewayView {
        GatewayView {
            id: id.into(),
            attached_to: attached.iter().map(|s| s.to_string()).collect(),
            tags: if ours {
                want()
            } else {
                [("Name".to_string(), "ns-c1-igw".to_string())].into()
            },
        }
    }

    fn run(named: &[GatewayView]) -> Plan {
        plan(named, &owner(), "vpc-1", &want())
    }

    #[test]
    fn no_gateway_is_created_then_attached_then_ready() {
        assert_eq!(run(&[]), Plan::Create);
        assert_eq!(run(&[gw("igw-1", &[], true)]), Plan::Attach("igw-1".into()));
        assert_eq!(
            run(&[gw("igw-1", &["vpc-1"], true)]),
            Plan::Ready("igw-1".into())
        );
    }

    #[test]
    fn a_namesake_that_is_not_ours_is_a_conflict() {
        assert!(
            matches!(run(&[gw("igw-x", &["vpc-9"], false)]), Plan::Conflict(m) if m.contains("igw-x"))
        );
    }

    #[test]
    fn the_gateway_already_on_our_vpc_wins_over_a_stray_one() {
        assert_eq!(
            run(&[gw("igw-0", &[], true), gw("igw-2", &["vpc-1"], true)]),
            Plan::Ready("igw-2".into())
        );
    }

    #[test]
    fn ours_attached_to_another_vpc_is_reported_not_moved() {
        assert_eq!(
            run(&[gw("igw-1", &["vpc-9"], true)]),
            Plan::AttachedElsewhere("igw-1".into(), "vpc-9".into())
        );
    }

    #[test]
    fn missing_tags_are_added_once_attached() {
        let mut g = gw("igw-1", &["vpc-1"], true);
        g.tags.remove("Name");
        assert_eq!(
            run(&[g]),
            Plan::Tag(
                "igw-1".into(),
                [("Name".to_string(), "ns-c1-igw".to_string())].into()
            )
        );
    }
}
