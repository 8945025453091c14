//! The VPC service: one VPC named `<namespace>-<cluster>-vpc`, DNS support and DNS hostnames
//! on (EKS private endpoints and node registration need both).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType, VpcAttributeName};
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::cidr::Ipv4Cidr;
use super::ec2::{self, filter, missing_tags, tag_filter, tags_of};
use super::{Built, Owner, Progress, Removal, Scope, Teardown, Turn};

/// A VPC as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VpcView {
    /// VPC id.
    pub id: String,
    /// Primary CIDR block.
    pub cidr: String,
    /// `pending` or `available`.
    pub state: String,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl VpcView {
    fn from_sdk(v: &aws_sdk_ec2::types::Vpc) -> Self {
        Self {
            id: v.vpc_id().unwrap_or_default().to_string(),
            cidr: v.cidr_block().unwrap_or_default().to_string(),
            state: v
                .state()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            tags: tags_of(v.tags()),
        }
    }
}

/// What the VPC service found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// VPCs carrying our name (ours or not).
    pub named: Vec<VpcView>,
    /// `enableDnsSupport` of our VPC, when read.
    pub dns_support: Option<bool>,
    /// `enableDnsHostnames` of our VPC, when read.
    pub dns_hostnames: Option<bool>,
}

/// The VPC service's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// No VPC of ours: create it.
    Create,
    /// Ours, still pending.
    Wait(VpcView),
    /// Ours: add missing tags.
    Tag(VpcView, BTreeMap<String, String>),
    /// Ours: turn DNS support on.
    EnableDnsSupport(VpcView),
    /// Ours: turn DNS hostnames on.
    EnableDnsHostnames(VpcView),
    /// Ours, as desired.
    Ready(VpcView),
    /// The name is taken by a VPC that is not ours.
    Conflict(String),
}

/// Our VPC among those found (the lowest id if, against all odds, there are several).
pub fn ours<'a>(named: &'a [VpcView], owner: &Owner) -> Option<&'a VpcView> {
    named
        .iter()
        .filter(|v| owner.owns(&v.tags))
        .min_by(|a, b| a.id.cmp(&b.id))
}

/// Decides the VPC service's step (pure).
pub fn plan(
    observed: &Observed,
    owner: &Owner,
    name: &str,
    want_tags: &BTreeMap<String, String>,
) -> Plan {
    let Some(vpc) = ours(&observed.named, owner) else {
        return match observed.named.first() {
            Some(other) => Plan::Conflict(format!(
                "VPC {} is named {name} but does not carry this cluster's ownership tag; the provider does not adopt networks: delete or rename it, or bring it with spec.network.id",
                other.id
            )),
            None => Plan::Create,
        };
    };
    if vpc.state == "pending" {
        return Plan::Wait(vpc.clone());
    }
    let missing = missing_tags(&vpc.tags, want_tags);
    if !missing.is_empty() {
        return Plan::Tag(vpc.clone(), missing);
    }
    if observed.dns_support == Some(false) {
        return Plan::EnableDnsSupport(vpc.clone());
    }
    if observed.dns_hostnames == Some(false) {
        return Plan::EnableDnsHostnames(vpc.clone());
    }
    Plan::Ready(vpc.clone())
}

async fn describe(
    scope: &Scope<'_>,
    filters: Vec<aws_sdk_ec2::types::Filter>,
) -> Result<Vec<VpcView>, ProviderError> {
    let out = scope
        .ec2
        .call(
            "DescribeVpcs",
            scope
                .ec2
                .sdk()
                .describe_vpcs()
                .set_filters(Some(filters))
                .send(),
        )
        .await?;
    Ok(out.vpcs().iter().map(VpcView::from_sdk).collect())
}

async fn attribute(
    scope: &Scope<'_>,
    id: &str,
    attribute: VpcAttributeName,
) -> Result<Option<bool>, ProviderError> {
    let out = scope
        .ec2
        .call(
            "DescribeVpcAttribute",
            scope
                .ec2
                .sdk()
                .describe_vpc_attribute()
                .vpc_id(id)
                .attribute(attribute.clone())
                .send(),
        )
        .await?;
    let value = match attribute {
        VpcAttributeName::EnableDnsSupport => out.enable_dns_support(),
        _ => out.enable_dns_hostnames(),
    };
    Ok(value.and_then(AttributeBooleanValue::value))
}

async fn observe(scope: &Scope<'_>) -> Result<Observed, ProviderError> {
    let desired = scope.desired;
    let mut named = describe(scope, vec![tag_filter("Name", &desired.names.vpc())]).await?;
    // EC2 lists a new VPC a moment after creating it: the id recorded in status bridges that.
    if ours(&named, &desired.owner).is_none()
        && let Some(hint) = scope.previous.and_then(|p| p.vpc_id.as_deref())
    {
        let by_id = describe(scope, vec![filter("vpc-id", [hint])]).await?;
        named.extend(by_id.into_iter().filter(|v| desired.owner.owns(&v.tags)));
    }
    let mut observed = Observed {
        named,
        ..Observed::default()
    };
    if let Some(vpc) = ours(&observed.named, &desired.owner)
        .filter(|v| v.state == "available")
        .cloned()
    {
        observed.dns_support =
            attribute(scope, &vpc.id, VpcAttributeName::EnableDnsSupport).await?;
        observed.dns_hostnames =
            attribute(scope, &vpc.id, VpcAttributeName::EnableDnsHostnames).await?;
    }
    Ok(observed)
}

fn record(built: &mut Built, vpc: &VpcView) -> Result<(), ProviderError> {
    let cidr: Ipv4Cidr = super::cidr::parse(&vpc.cidr).map_err(|e| {
        ProviderError::terminal(
            Reason::InvalidSpec,
            format!("VPC {} has an unusable CIDR block: {e}", vpc.id),
        )
    })?;
    built.vpc = Some((vpc.id.clone(), cidr));
    Ok(())
}

fn enable(flag: bool) -> AttributeBooleanValue {
    AttributeBooleanValue::builder().value(flag).build()
}

/// Folds a write's answer into what the turn observed (pure), so the next step is planned
/// without reading again. A created VPC carries the tags the request sent; EC2 creates a VPC
/// with DNS support on and DNS hostnames off, so hostnames are turned on next (a later pass's
/// read corrects the fold if the cloud differs).
pub fn fold(
    observed: &mut Observed,
    step: &Plan,
    created: Option<VpcView>,
    want: &BTreeMap<String, String>,
) {
    match step {
        Plan::Create => {
            if let Some(mut vpc) = created {
                vpc.tags.extend(want.clone());
                observed.named.push(vpc);
                observed.dns_support = Some(true);
                observed.dns_hostnames = Some(false);
            }
        }
        Plan::Tag(vpc, tags) => {
            if let Some(v) = observed.named.iter_mut().find(|v| v.id == vpc.id) {
                v.tags.extend(tags.clone());
            }
        }
        Plan::EnableDnsSupport(_) => observed.dns_support = Some(true),
        Plan::EnableDnsHostnames(_) => observed.dns_hostnames = Some(true),
        Plan::Wait(_) | Plan::Ready(_) | Plan::Conflict(_) => {}
    }
}

/// One build turn of the VPC service: observe once, then write until the VPC is as desired.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let desired = scope.desired;
    let name = desired.names.vpc();
    let want = desired.tags_named(&name);
    let mut observed = observe(scope).await?;
    let ec2 = scope.ec2;
    let mut turn = Turn::new();
    loop {
        let step = plan(&observed, &desired.owner, &name, &want);
        let mut created = None;
        let progress = match &step {
            Plan::Conflict(message) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    message.clone(),
                ));
            }
            Plan::Wait(vpc) => {
                return Ok(turn.end(Progress::waiting(format!("VPC {} is pending", vpc.id))));
            }
            Plan::Ready(vpc) => {
                record(built, vpc)?;
                return Ok(Progress::Ready);
            }
            _ if !turn.may_take(&step) => return Ok(turn.end(Progress::updating("VPC"))),
            Plan::Create => {
                let request = ec2
                    .sdk()
                    .create_vpc()
                    .cidr_block(desired.cidr.to_string())
                    .tag_specifications(ec2::tag_spec(ResourceType::Vpc, &want));
                let out = ec2.call("CreateVpc", request.send()).await?;
                let Some(vpc) = out.vpc().map(VpcView::from_sdk) else {
                    return Ok(Progress::creating(format!("requested VPC {name}")));
                };
                let message = format!("created VPC {} ({})", vpc.id, desired.cidr);
                created = Some(vpc);
                Progress::creating(message)
            }
            Plan::Tag(vpc, tags) => {
                ec2.add_tags(&vpc.id, tags).await?;
                Progress::updating(format!("tagged VPC {}", vpc.id))
            }
            Plan::EnableDnsSupport(vpc) => {
                let request = ec2
                    .sdk()
                    .modify_vpc_attribute()
                    .vpc_id(&vpc.id)
                    .enable_dns_support(enable(true));
                ec2.call("ModifyVpcAttribute", request.send()).await?;
                Progress::updating(format!("turned on DNS support in VPC {}", vpc.id))
            }
            Plan::EnableDnsHostnames(vpc) => {
                let request = ec2
                    .sdk()
                    .modify_vpc_attribute()
                    .vpc_id(&vpc.id)
                    .enable_dns_hostnames(enable(true));
                ec2.call("ModifyVpcAttribute", request.send()).await?;
                Progress::updating(format!("turned on DNS hostnames in VPC {}", vpc.id))
            }
        };
        fold(&mut observed, &step, created, &want);
        turn.took(step, progress);
    }
}

/// One tear-down turn: deletes a VPC of ours (the last step; everything in it is gone by now).
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeVpcs",
            ec2.sdk()
                .describe_vpcs()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let vpcs: Vec<VpcView> = out
        .vpcs()
        .iter()
        .map(VpcView::from_sdk)
        .filter(|v| scope.owner.owns(&v.tags))
        .collect();
    let Some(vpc) = vpcs.first() else {
        return Ok(Removal::Gone);
    };
    let result = ec2
        .call("DeleteVpc", ec2.sdk().delete_vpc().vpc_id(&vpc.id).send())
        .await;
    super::after_delete(
        result,
        vpcs.len() == 1,
        format!("deleted VPC {}", vpc.id),
        format!("VPC {} is gone", vpc.id),
        &format!(
            "VPC {} still has dependencies (network interfaces, gateways or subnets created outside the provider?)",
            vpc.id
        ),
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
        [("Name".to_string(), "ns-c1-vpc".to_string()), (k, v)].into()
    }

    fn vpc(id: &str, state: &str, ours: bool) -> VpcView {
        let mut tags: BTreeMap<String, String> =
            [("Name".to_string(), "ns-c1-vpc".to_string())].into();
        if ours {
            tags = want();
        }
        VpcView {
            id: id.into(),
            cidr: "10.0.0.0/16".into(),
            state: state.into(),
            tags,
        }
    }

    fn observed(named: Vec<VpcView>, support: Option<bool>, hostnames: Option<bool>) -> Observed {
        Observed {
            named,
            dns_support: support,
            dns_hostnames: hostnames,
        }
    }

    fn run(o: &Observed) -> Plan {
        plan(o, &owner(), "ns-c1-vpc", &want())
    }

    #[test]
    fn no_vpc_with_our_name_is_created() {
        assert_eq!(run(&observed(vec![], None, None)), Plan::Create);
    }

    #[test]
    fn a_vpc_with_our_name_but_not_our_tag_is_a_conflict_never_adopted() {
        match run(&observed(
            vec![vpc("vpc-other", "available", false)],
            None,
            None,
        )) {
            Plan::Conflict(m) => {
                assert!(
                    m.contains("vpc-other") && m.contains("spec.network.id"),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ours_beside_a_foreign_namesake_is_used() {
        let o = observed(
            vec![
                vpc("vpc-b", "available", false),
                vpc("vpc-a", "available", true),
            ],
            Some(true),
            Some(true),
        );
        assert_eq!(run(&o), Plan::Ready(vpc("vpc-a", "available", true)));
    }

    #[test]
    fn a_pending_vpc_is_waited_for() {
        assert_eq!(
            run(&observed(vec![vpc("vpc-a", "pending", true)], None, None)),
            Plan::Wait(vpc("vpc-a", "pending", true))
        );
    }

    #[test]
    fn dns_support_then_dns_hostnames_are_turned_on_one_per_pass() {
        let v = vpc("vpc-a", "available", true);
        assert_eq!(
            run(&observed(vec![v.clone()], Some(false), Some(false))),
            Plan::EnableDnsSupport(v.clone())
        );
        assert_eq!(
            run(&observed(vec![v.clone()], Some(true), Some(false))),
            Plan::EnableDnsHostnames(v.clone())
        );
        assert_eq!(
            run(&observed(vec![v.clone()], Some(true), Some(true))),
            Plan::Ready(v)
        );
    }

    #[test]
    fn missing_or_changed_tags_are_added_before_anything_else() {
        let mut v = vpc("vpc-a", "available", true);
        let mut w = want();
        w.insert("team".into(), "blue".into());
        match plan(
            &observed(vec![v.clone()], Some(false), Some(false)),
            &owner(),
            "ns-c1-vpc",
            &w,
        ) {
            Plan::Tag(_, tags) => {
                assert_eq!(tags, [("team".to_string(), "blue".to_string())].into())
            }
            other => panic!("{other:?}"),
        }
        v.tags.insert("team".into(), "blue".into());
        assert_eq!(
            plan(
                &observed(vec![v.clone()], Some(true), Some(true)),
                &owner(),
                "ns-c1-vpc",
                &w
            ),
            Plan::Ready(v)
        );
    }

    #[test]
    fn of_two_vpcs_of_ours_the_lowest_id_is_used_every_time() {
        let o = observed(
            vec![
                vpc("vpc-b", "available", true),
                vpc("vpc-a", "available", true),
            ],
            Some(true),
            Some(true),
        );
        assert_eq!(run(&o), Plan::Ready(vpc("vpc-a", "available", true)));
    }

    #[test]
    fn one_turn_creates_the_vpc_and_turns_hostnames_on_without_reading_again() {
        let mut o = observed(vec![], None, None);
        let mut steps = Vec::new();
        loop {
            let step = run(&o);
            if matches!(step, Plan::Ready(_)) {
                break;
            }
            assert!(steps.len() < 5, "{steps:?}");
            // CreateVpc answers with the id and state, never the request's tags.
            let created = (step == Plan::Create).then(|| {
                let mut v = vpc("vpc-new", "available", false);
                v.tags.clear();
                v
            });
            fold(&mut o, &step, created, &want());
            steps.push(step);
        }
        let names: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                Plan::Create => "create",
                Plan::EnableDnsHostnames(_) => "hostnames",
                _ => "other",
            })
            .collect();
        assert_eq!(names, ["create", "hostnames"]);

        // A VPC still pending after its creation waits (the turn ends), never created twice.
        let mut o = observed(vec![], None, None);
        fold(
            &mut o,
            &Plan::Create,
            Some(vpc("vpc-new", "pending", false)),
            &want(),
        );
        assert!(matches!(run(&o), Plan::Wait(_)), "{:?}", run(&o));
    }
}
