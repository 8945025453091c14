//! The route table service: a public table (default route → internet gateway) for the public
//! subnets and a private one (default route → NAT gateway) for the private subnets.
//!
//! Each table is created and its subnets associated as soon as the VPC and subnets exist; the
//! default route follows once its target is there (the NAT gateway takes minutes). A turn
//! writes, public table first, until both tables are as desired or wait for a target.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::ResourceType;
use contract::conditions::Reason;
use provider_runtime::ProviderError;

use super::ec2::{self, filter, missing_tags, tags_of};
use super::{Built, Owner, Progress, Removal, Scope, Teardown, Turn, client_token};

/// The default route.
pub const DEFAULT_ROUTE: &str = "0.0.0.0/0";

/// A route table's association with a subnet (or the VPC's main association).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssociationView {
    /// Association id.
    pub id: String,
    /// The subnet, for a subnet association.
    pub subnet: Option<String>,
    /// Whether this is the VPC's main association.
    pub main: bool,
}

/// A route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteView {
    /// Destination block.
    pub destination: String,
    /// Internet (or other) gateway target.
    pub gateway: Option<String>,
    /// NAT gateway target.
    pub nat_gateway: Option<String>,
    /// `active` or `blackhole`.
    pub state: String,
}

/// A route table as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableView {
    /// Route table id.
    pub id: String,
    /// Associations.
    pub associations: Vec<AssociationView>,
    /// Routes.
    pub routes: Vec<RouteView>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

impl TableView {
    /// From the SDK's shape.
    pub fn from_sdk(t: &aws_sdk_ec2::types::RouteTable) -> Self {
        Self {
            id: t.route_table_id().unwrap_or_default().to_string(),
            associations: t
                .associations()
                .iter()
                .filter(|a| {
                    a.association_state()
                        .and_then(|s| s.state())
                        .is_none_or(|s| {
                            !matches!(s.as_str(), "disassociating" | "disassociated" | "failed")
                        })
                })
                .map(|a| AssociationView {
                    id: a
                        .route_table_association_id()
                        .unwrap_or_default()
                        .to_string(),
                    subnet: a.subnet_id().map(str::to_string),
                    main: a.main().unwrap_or(false),
                })
                .collect(),
            routes: t
                .routes()
                .iter()
                .map(|r| RouteView {
                    destination: r.destination_cidr_block().unwrap_or_default().to_string(),
                    gateway: r.gateway_id().map(str::to_string),
                    nat_gateway: r.nat_gateway_id().map(str::to_string),
                    state: r
                        .state()
                        .map(|s| s.as_str().to_string())
                        .unwrap_or_default(),
                })
                .collect(),
            tags: tags_of(t.tags()),
        }
    }
}

/// Where a table's default route goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An internet gateway.
    InternetGateway(String),
    /// A NAT gateway.
    NatGateway(String),
}

impl Target {
    fn matches(&self, r: &RouteView) -> bool {
        r.state != "blackhole"
            && match self {
                Target::InternetGateway(id) => r.gateway.as_deref() == Some(id),
                Target::NatGateway(id) => r.nat_gateway.as_deref() == Some(id),
            }
    }

    fn describe(&self) -> String {
        match self {
            Target::InternetGateway(id) => format!("internet gateway {id}"),
            Target::NatGateway(id) => format!("NAT gateway {id}"),
        }
    }
}

/// What one table should be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted<'a> {
    /// Public or private.
    pub public: bool,
    /// Name tag.
    pub name: &'a str,
    /// Every tag.
    pub tags: &'a BTreeMap<String, String>,
    /// The default route's target, once it exists.
    pub target: Option<Target>,
    /// The subnets to associate.
    pub subnets: Vec<String>,
    /// The idempotency token for its creation.
    pub token: String,
}

/// The next step for one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Create it.
    Create {
        /// Idempotency token.
        token: String,
    },
    /// Add missing tags.
    Tag(String, BTreeMap<String, String>),
    /// Associate a subnet that has no explicit association.
    Associate {
        /// Table.
        table: String,
        /// Subnet.
        subnet: String,
    },
    /// Move a subnet's explicit association from another table to this one.
    Reassociate {
        /// The subnet's current association.
        association: String,
        /// Table.
        table: String,
        /// Subnet.
        subnet: String,
    },
    /// Add the default route.
    AddRoute(String, Target),
    /// Point the default route at the target.
    ReplaceRoute(String, Target),
    /// Waits for the route's target.
    NoTarget(String),
    /// As desired.
    Ready(String),
    /// A table with our name in our VPC is not ours.
    Conflict(String),
}

/// Decides one table's next step (pure). `tables` are all the VPC's route tables.
pub fn plan(tables: &[TableView], owner: &Owner, wanted: &Wanted<'_>) -> Step {
    let named = |t: &&TableView| t.tags.get("Name").map(String::as_str) == Some(wanted.name);
    let Some(table) = tables
        .iter()
        .filter(named)
        .filter(|t| owner.owns(&t.tags))
        .min_by(|a, b| a.id.cmp(&b.id))
    else {
        return match tables.iter().find(named) {
            Some(other) => Step::Conflict(format!(
                "route table {} in the cluster's VPC is named {} but does not carry this cluster's ownership tag; delete or rename it",
                other.id, wanted.name
            )),
            None => Step::Create {
                token: wanted.token.clone(),
            },
        };
    };
    let missing = missing_tags(&table.tags, wanted.tags);
    if !missing.is_empty() {
        return Step::Tag(table.id.clone(), missing);
    }
    for subnet in &wanted.subnets {
        if table
            .associations
            .iter()
            .any(|a| a.subnet.as_ref() == Some(subnet))
        {
            continue;
        }
        let elsewhere = tables
            .iter()
            .flat_map(|t| t.associations.iter())
            .find(|a| a.subnet.as_ref() == Some(subnet));
        return match elsewhere {
            Some(a) => Step::Reassociate {
                association: a.id.clone(),
                table: table.id.clone(),
                subnet: subnet.clone(),
            },
            None => Step::Associate {
                table: table.id.clone(),
                subnet: subnet.clone(),
            },
        };
    }
    let Some(target) = &wanted.target else {
        return Step::NoTarget(table.id.clone());
    };
    match table.routes.iter().find(|r| r.destination == DEFAULT_ROUTE) {
        None => Step::AddRoute(table.id.clone(), target.clone()),
        Some(r) if !target.matches(r) => Step::ReplaceRoute(table.id.clone(), target.clone()),
        Some(_) => Step::Ready(table.id.clone()),
    }
}

/// The id of our table with this name, if listed.
fn ours_named(tables: &[TableView], owner: &Owner, name: &str) -> Option<String> {
    tables
        .iter()
        .filter(|t| t.tags.get("Name").map(String::as_str) == Some(name) && owner.owns(&t.tags))
        .map(|t| t.id.clone())
        .min()
}

/// One build turn of the route table service.
pub async fn reconcile(scope: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let Some((vpc_id, _)) = built.vpc.clone() else {
        return Ok(Progress::Blocked("waiting for the VPC".into()));
    };
    let ec2 = scope.ec2;
    let desired = scope.desired;
    let out = ec2
        .call(
            "DescribeRouteTables",
            ec2.sdk()
                .describe_route_tables()
                .filters(filter("vpc-id", [&vpc_id]))
                .send(),
        )
        .await?;
    let mut tables: Vec<TableView> = out.route_tables().iter().map(TableView::from_sdk).collect();

    let names = [
        desired.names.route_table(true),
        desired.names.route_table(false),
    ];
    let tags = [desired.tags_named(&names[0]), desired.tags_named(&names[1])];
    let previous = [
        scope
            .previous
            .and_then(|p| p.public_route_table_id.as_deref()),
        scope
            .previous
            .and_then(|p| p.private_route_table_id.as_deref()),
    ];
    let wanted: Vec<Wanted<'_>> = [true, false]
        .into_iter()
        .enumerate()
        .map(|(i, public)| Wanted {
            public,
            name: &names[i],
            tags: &tags[i],
            target: if public {
                built.internet_gateway.clone().map(Target::InternetGateway)
            } else {
                built.nat_gateway.clone().map(Target::NatGateway)
            },
            subnets: built
                .subnets_of(public)
                .map(|s| s.status.id.clone())
                .collect(),
            token: client_token(
                "CreateRouteTable",
                &desired.uid,
                &[&vpc_id, &names[i], previous[i].unwrap_or_default()],
            ),
        })
        .collect();

    let role = |public: bool| if public { "public" } else { "private" };
    let mut turn = Turn::new();
    loop {
        built.route_tables = (
            ours_named(&tables, &desired.owner, &names[0]),
            ours_named(&tables, &desired.owner, &names[1]),
        );
        let steps: Vec<(bool, Step)> = wanted
            .iter()
            .map(|w| (w.public, plan(&tables, &desired.owner, w)))
            .collect();
        if let Some((_, Step::Conflict(message))) =
            steps.iter().find(|(_, s)| matches!(s, Step::Conflict(_)))
        {
            return Err(ProviderError::terminal(
                Reason::NameConflict,
                message.clone(),
            ));
        }
        // The next write: the first table with something to do.
        let Some((public, step)) = steps
            .iter()
            .find(|(_, s)| !matches!(s, Step::Ready(_) | Step::NoTarget(_) | Step::Conflict(_)))
            .cloned()
        else {
            let waiting: Vec<String> = steps
                .iter()
                .filter_map(|(public, s)| match s {
                    Step::NoTarget(table) => Some(format!(
                        "{} route table {table} waits for its {}",
                        role(*public),
                        if *public {
                            "internet gateway"
                        } else {
                            "NAT gateway"
                        }
                    )),
                    _ => None,
                })
                .collect();
            return Ok(if waiting.is_empty() {
                Progress::Ready
            } else {
                Progress::Blocked(waiting.join("; "))
            });
        };
        if !turn.may_take(&step) {
            return Ok(turn.end(Progress::updating("route tables")));
        }
        let role = role(public);
        let mut answer = Answer::None;
        let progress = match &step {
            Step::Ready(_) | Step::NoTarget(_) | Step::Conflict(_) => {
                return Ok(turn.end(Progress::updating("route tables")));
            }
            Step::Create { token } => {
                let name = &names[usize::from(!public)];
                let want = desired.tags_named(name);
                let request = ec2
                    .sdk()
                    .create_route_table()
                    .vpc_id(&vpc_id)
                    .client_token(token)
                    .tag_specifications(ec2::tag_spec(ResourceType::RouteTable, &want));
                let out = ec2.call("CreateRouteTable", request.send()).await?;
                let id = out
                    .route_table()
                    .and_then(|t| t.route_table_id())
                    .unwrap_or_default()
                    .to_string();
                if let Some(table) = out.route_table().map(TableView::from_sdk) {
                    answer = Answer::Table(table);
                }
                Progress::creating(format!("created {role} route table {id}"))
            }
            Step::Tag(table, tags) => {
                ec2.add_tags(table, tags).await?;
                Progress::updating(format!("tagged {role} route table {table}"))
            }
            Step::Associate { table, subnet } => {
                let request = ec2
                    .sdk()
                    .associate_route_table()
                    .route_table_id(table)
                    .subnet_id(subnet);
                let out = ec2.call("AssociateRouteTable", request.send()).await?;
                if let Some(id) = out.association_id() {
                    answer = Answer::Association(id.to_string());
                }
                Progress::creating(format!(
                    "associated subnet {subnet} with {role} route table {table}"
                ))
            }
            Step::Reassociate {
                association,
                table,
                subnet,
            } => {
                let request = ec2
                    .sdk()
                    .replace_route_table_association()
                    .association_id(association)
                    .route_table_id(table);
                let out = ec2
                    .call("ReplaceRouteTableAssociation", request.send())
                    .await?;
                if let Some(id) = out.new_association_id() {
                    answer = Answer::Association(id.to_string());
                }
                Progress::updating(format!(
                    "moved subnet {subnet} to {role} route table {table}"
                ))
            }
            Step::AddRoute(table, target) | Step::ReplaceRoute(table, target) => {
                let describe = target.describe();
                if matches!(step, Step::ReplaceRoute(..)) {
                    let mut request = ec2
                        .sdk()
                        .replace_route()
                        .route_table_id(table)
                        .destination_cidr_block(DEFAULT_ROUTE);
                    request = match target {
                        Target::InternetGateway(id) => request.gateway_id(id),
                        Target::NatGateway(id) => request.nat_gateway_id(id),
                    };
                    ec2.call("ReplaceRoute", request.send()).await?;
                } else {
                    let mut request = ec2
                        .sdk()
                        .create_route()
                        .route_table_id(table)
                        .destination_cidr_block(DEFAULT_ROUTE);
                    request = match target {
                        Target::InternetGateway(id) => request.gateway_id(id),
                        Target::NatGateway(id) => request.nat_gateway_id(id),
                    };
                    ec2.call("CreateRoute", request.send()).await?;
                }
                Progress::creating(format!("routed {role} route table {table} to {describe}"))
            }
        };
        fold(&mut tables, &step, answer, &tags[usize::from(!public)]);
        turn.took(step, progress);
    }
}

/// What a route table write answered, for [`fold`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Nothing the turn needs.
    None,
    /// A created table.
    Table(TableView),
    /// A new association's id.
    Association(String),
}

/// Folds a write's answer into the tables the turn observed (pure): a created table with the
/// tags its request sent, tags added, a subnet associated (or moved from another table), the
/// default route set.
pub fn fold(
    tables: &mut Vec<TableView>,
    step: &Step,
    answer: Answer,
    want: &BTreeMap<String, String>,
) {
    fn of<'t>(tables: &'t mut [TableView], id: &str) -> Option<&'t mut TableView> {
        tables.iter_mut().find(|t| t.id == id)
    }
    match (step, answer) {
        (Step::Create { .. }, Answer::Table(mut table)) => {
            table.tags.extend(want.clone());
            tables.push(table);
        }
        (Step::Tag(table, tags), _) => {
            if let Some(t) = of(tables, table) {
                t.tags.extend(tags.clone());
            }
        }
        (Step::Associate { table, subnet }, Answer::Association(id))
        | (Step::Reassociate { table, subnet, .. }, Answer::Association(id)) => {
            for t in tables.iter_mut() {
                t.associations
                    .retain(|a| a.subnet.as_deref() != Some(subnet.as_str()));
            }
            if let Some(t) = of(tables, table) {
                t.associations.push(AssociationView {
                    id,
                    subnet: Some(subnet.clone()),
                    main: false,
                });
            }
        }
        (Step::AddRoute(table, target), _) | (Step::ReplaceRoute(table, target), _) => {
            if let Some(t) = of(tables, table) {
                t.routes.retain(|r| r.destination != DEFAULT_ROUTE);
                let (gateway, nat_gateway) = match target {
                    Target::InternetGateway(id) => (Some(id.clone()), None),
                    Target::NatGateway(id) => (None, Some(id.clone())),
                };
                t.routes.push(RouteView {
                    destination: DEFAULT_ROUTE.into(),
                    gateway,
                    nat_gateway,
                    state: "active".into(),
                });
            }
        }
        _ => {}
    }
}

/// One tear-down turn: disassociates the subnets of a table of ours one by one, then deletes it.
pub async fn delete(scope: &Teardown<'_>) -> Result<Removal, ProviderError> {
    let ec2 = scope.ec2;
    let out = ec2
        .call(
            "DescribeRouteTables",
            ec2.sdk()
                .describe_route_tables()
                .filters(super::owner_filter(scope.owner))
                .send(),
        )
        .await?;
    // A table of ours that became the VPC's main table goes with the VPC.
    let tables: Vec<TableView> = out
        .route_tables()
        .iter()
        .map(TableView::from_sdk)
        .filter(|t| scope.owner.owns(&t.tags) && !t.associations.iter().any(|a| a.main))
        .collect();
    let Some(table) = tables.first() else {
        return Ok(Removal::Gone);
    };
    if let Some(association) = table.associations.first() {
        let request = ec2
            .sdk()
            .disassociate_route_table()
            .association_id(&association.id);
        return match ec2.call("DisassociateRouteTable", request.send()).await {
            Ok(_) => Ok(Removal::deleting(format!(
                "disassociated subnet {} from route table {}",
                association.subnet.as_deref().unwrap_or("?"),
                table.id
            ))),
            Err(e) if ec2::is_gone(&e) => Ok(Removal::deleting(format!(
                "association {} is gone",
                association.id
            ))),
            Err(e) => Err(e.into()),
        };
    }
    let result = ec2
        .call(
            "DeleteRouteTable",
            ec2.sdk()
                .delete_route_table()
                .route_table_id(&table.id)
                .send(),
        )
        .await;
    super::after_delete(
        result,
        tables.len() == 1,
        format!("deleted route table {}", table.id),
        format!("route table {} is gone", table.id),
        &format!("route table {} is still in use", table.id),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
