//! The security group service: one group for the cluster, handed to EKS as the control plane's
//! additional security group, with a rule letting its members (control plane network
//! interfaces and nodes) reach each other on every port.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{IpPermission, ResourceType, UserIdGroupPair};
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::ec2::{self, filter, missing_tags, tags_of};
use super::{Built, Owner, Progress, Removal, Scope, Teardown, Turn};

/// A security group as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupView {
    /// Group id.
    pub id: String,
    /// Whether an ingress rule admits all traffic from the group itself.
    pub self_ingress: bool,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl GroupView {
    fn from_sdk(g: &aws_sdk_ec2::types::SecurityGroup) -> Self {
        let id = g.group_id().unwrap_or_default().to_string();
        let self_ingress = g.ip_permissions().iter().any(|p| {
            p.ip_protocol() == Some("-1")
                && p.user_id_group_pairs()
                    .iter()
                    .any(|pair| pair.group_id() == Some(id.as_str()))
        });
        Self {
            id,
            self_ingress,
            tags: tags_of(g.tags()),
        }
    }
}

/// The security group service's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Create the group.
    Create,
    /// Add missing tags.
    Tag(String, BTreeMap<String, String>),
    /// Add the rule admitting the group's own members.
    AllowSelf(String),
    /// As desired.
    Ready(String),
    /// A group of our name in our VPC is not ours.
    Conflict(String),
}

/// Decides the security group service's step (pure); `named` are the VPC's groups with our name.
pub fn plan(named: &[GroupView], owner: &Owner, want_tags: &BTreeMap<String, String>) -> Plan {
    let Some(group) = named.iter().find(|g| owner.owns(&g.tags)) else {
        return match named.first() {
            Some(other) => Plan::Conflict(format!(
                "security group {} in the cluster's VPC has the cluster's group name but not its ownership tag; delete or rename it",
                other.id
            )),
            None => Plan::Create,
        };
    };
    let missing = missing_tags(&group.tags, want_tags);
    if !missing.is_empty() {
        return Plan::Tag(group.id.clone(), missing);
    }
    if !group.self_ingress {
        return Plan::AllowSelf(group.id.clone());
    }
    Plan::Ready(group.id.clone())
}

/// Folds a write's answer into the groups the turn observed (pure): a created group with the
/// tags its request sent and no rule yet, tags added, the members' rule in place.
pub fn fold(named: &mut Vec<GroupView>, step: &Plan, created: Option<GroupView>) {
    match step {
        Plan::Create => named.extend(created),
        Plan::Tag(id, tags) => {
            for g in named.iter_mut().filter(|g| g.id == *id) {
                g.tags.extend(tags.clone());
            }
        }
        Plan::AllowSelf(id) => {
            for g in named.iter_mut().filter(|g| g.id == *id) {
                g.self_ingress = true;
            }
        }
        Plan::Ready(_) | Plan::Conflict(_) => {}
    }
}

/// One build turn of the security group service: observe once, then create the group and its
/// members' rule.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let Some((vpc_id, _)) = built.vpc.clone() else {
        return Ok(Progress::Blocked("waiting for the VPC".into()));
    };
    let ec2 = scope.ec2;
    let desired = scope.desired;
    let name = desired.names.security_group();
    let want = desired.tags_named(&name);
    let request = ec2
        .sdk()
        .describe_security_groups()
        .filters(filter("vpc-id", [&vpc_id]))
        .filters(filter("group-name", [&name]));
    let out = ec2.call("DescribeSecurityGroups", request.send()).await?;
    let mut named: Vec<GroupView> = out
        .security_groups()
        .iter()
        .map(GroupView::from_sdk)
        .collect();
    let mut turn = Turn::new();
    loop {
        let step = plan(&named, &desired.owner, &want);
        let mut created = None;
        let progress = match &step {
            Plan::Conflict(message) => {
                return Err(ProviderError::terminal(
                    Reason::NameConflict,
                    message.clone(),
                ));
            }
            Plan::Ready(id) => {
                built.security_group = Some(id.clone());
                return Ok(Progress::Ready);
            }
            _ if !turn.may_take(&step) => {
                return Ok(turn.end(Progress::updating("security group")));
            }
            Plan::Create => {
                let request = ec2
                    .sdk()
                    .create_security_group()
                    .group_name(&name)
                    .description(format!(
                        "EKS cluster {}/{}: control plane and nodes (managed by Cluster API)",
                        desired.owner.namespace(),
                        desired.owner.cluster()
                    ))
                    .vpc_id(&vpc_id)
                    .tag_specifications(ec2::tag_spec(ResourceType::SecurityGroup, &want));
                let out = ec2.call("CreateSecurityGroup", request.send()).await?;
                let id = out.group_id().unwrap_or_default().to_string();
                built.security_group = Some(id.clone());
                created = (!id.is_empty()).then(|| GroupView {
                    id: id.clone(),
                    self_ingress: false,
                    tags: want.clone(),
                });
                Progress::creating(format!("created security group {id}"))
            }
            Plan::Tag(id, tags) => {
                built.security_group = Some(id.clone());
                ec2.add_tags(id, tags).await?;
                Progress::updating(format!("tagged security group {id}"))
            }
            Plan::AllowSelf(id) => {
                built.security_group = Some(id.clone());
                let rule = IpPermission::builder()
                    .ip_protocol("-1")
                    .user_id_group_pairs(
                        UserIdGroupPair::builder()
                            .group_id(id)
                            .description("cluster members reach each other")
                            .build(),
                    )
                    .build();
                let request = ec2
                    .sdk()
                    .authorize_security_group_ingress()
                    .group_id(id)
                    .ip_permissions(rule);
                match ec2
                    .call("AuthorizeSecurityGroupIngress", request.send())
                    .await
                {
                    Ok(_) => {}
                    // Already there (a crash after the call, before the next look): nothing to do.
                    Err(crate::client::CloudError::Invalid { code, .. })
                        if code == "InvalidPermission.Duplicate" => {}
                    Err(e) => return Err(e.into()),
                }
                Progress::updating(format!(
                    "allowed traffic between members of security group {id}"
                ))
            }
        };
        fold(&mut named, &step, created);
        turn.took(step, progress);
    }
}

/// One tear-down turn: deletes a security group of ours.
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeSecurityGroups",
            ec2.sdk()
                .describe_security_groups()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    let groups: Vec<GroupView> = out
        .security_groups()
        .iter()
        .map(GroupView::from_sdk)
        .filter(|g| scope.owner.owns(&g.tags))
        .collect();
    let Some(group) = groups.first() else {
        return Ok(Removal::Gone);
    };
    let result = ec2
        .call(
            "DeleteSecurityGroup",
            ec2.sdk().delete_security_group().group_id(&group.id).send(),
        )
        .await;
    super::after_delete(
        result,
        groups.len() == 1,
        format!("deleted security group {}", group.id),
        format!("security group {} is gone", group.id),
        &format!(
            "security group {} is still in use (EKS releases its network interfaces a few minutes after the cluster is deleted)",
            group.id
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
        [("Name".to_string(), "ns-c1-sg".to_string()), (k, v)].into()
    }

    fn group(id: &str, ours: bool, self_ingress: bool) -> GroupView {
        GroupView {
            id: id.into(),
            self_ingress,
            tags: if ours { want() } else { BTreeMap::new() },
        }
    }

    #[test]
    fn no_group_is_created_then_opened_to_itself_then_ready() {
        assert_eq!(plan(&[], &owner(), &want()), Plan::Create);
        assert_eq!(
            plan(&[group("sg-1", true, false)], &owner(), &want()),
            Plan::AllowSelf("sg-1".into())
        );
        assert_eq!(
            plan(&[group("sg-1", true, true)], &owner(), &want()),
            Plan::Ready("sg-1".into())
        );
    }

    #[test]
    fn a_group_of_our_name_that_is_not_ours_is_a_conflict() {
        assert!(
            matches!(plan(&[group("sg-x", false, true)], &owner(), &want()), Plan::Conflict(m) if m.contains("sg-x"))
        );
    }

    #[test]
    fn new_additional_tags_reach_an_existing_group() {
        let mut w = want();
        w.insert("cost-center".into(), "42".into());
        assert_eq!(
            plan(&[group("sg-1", true, true)], &owner(), &w),
            Plan::Tag(
                "sg-1".into(),
                [("cost-center".to_string(), "42".to_string())].into()
            )
        );
    }
}
