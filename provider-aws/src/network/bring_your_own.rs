//! A network the user brings (`spec.network.id` and/or `spec.network.subnetIDs`): read only.
//!
//! The provider checks that the VPC and every subnet exist, that the subnets share the VPC and
//! span at least two zones (EKS refuses fewer), and learns each subnet's zone, block and whether
//! it is public (its route table, explicit or the VPC's main one, has a default route to an
//! internet gateway, or it maps public IPs on launch). It creates, changes and deletes nothing.
//! With only `id`, every subnet of the VPC is used.

use provider_runtime::ProviderError;

use super::MIN_ZONES;
use super::ec2::{Ec2, filter};
use super::route_tables::{DEFAULT_ROUTE, TableView};
use super::subnets::SubnetView;
use super::{AwsNetwork, AwsSubnet};

/// A brought subnet, with its VPC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The subnet.
    pub subnet: SubnetView,
    /// Its VPC.
    pub vpc: String,
}

/// What the spec names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Brought<'a> {
    /// `spec.network.id`.
    pub vpc: Option<&'a str>,
    /// `spec.network.subnetIDs`.
    pub subnets: &'a [String],
    /// The region, for messages.
    pub region: &'a str,
}

/// Checks the brought network against what EC2 lists (pure).
///
/// `vpcs` are the VPCs found (id, CIDR block), `found` the subnets, `tables` the VPC's route
/// tables.
///
/// # Errors
/// A message naming the field and the id when something is missing or unusable.
pub fn assess(
    brought: &Brought<'_>,
    vpcs: &[(String, String)],
    found: &[Found],
    tables: &[TableView],
) -> Result<AwsNetwork, String> {
    let region = brought.region;
    if let Some(vpc) = brought.vpc
        && !vpcs.iter().any(|(id, _)| id == vpc)
    {
        return Err(format!(
            "spec.network.id: VPC {vpc} does not exist in region {region}"
        ));
    }
    let missing: Vec<&str> = brought
        .subnets
        .iter()
        .filter(|id| !found.iter().any(|f| f.subnet.id == **id))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let noun = if missing.len() == 1 {
            "subnet"
        } else {
            "subnets"
        };
        let verb = if missing.len() == 1 { "does" } else { "do" };
        return Err(format!(
            "spec.network.subnetIDs: {noun} {} {verb} not exist in region {region}",
            missing.join(", ")
        ));
    }
    let chosen: Vec<&Found> = if brought.subnets.is_empty() {
        let mut all: Vec<&Found> = found.iter().collect();
        all.sort_by(|a, b| a.subnet.id.cmp(&b.subnet.id));
        all
    } else {
        brought
            .subnets
            .iter()
            .filter_map(|id| found.iter().find(|f| f.subnet.id == *id))
            .collect()
    };
    let Some(first) = chosen.first() else {
        return Err(format!(
            "spec.network.id: VPC {} has no subnets; create subnets in at least {MIN_ZONES} zones or list them in spec.network.subnetIDs",
            brought.vpc.unwrap_or_default()
        ));
    };
    let vpc = brought.vpc.unwrap_or(&first.vpc).to_string();
    if let Some(stray) = chosen.iter().find(|f| f.vpc != vpc) {
        let whose = if brought.vpc.is_some() {
            "spec.network.id"
        } else {
            "the first subnet's"
        };
        return Err(format!(
            "spec.network.subnetIDs: subnet {} is in VPC {}, not in {whose} VPC {vpc}",
            stray.subnet.id, stray.vpc
        ));
    }
    let mut zones: Vec<&str> = chosen.iter().map(|f| f.subnet.zone.as_str()).collect();
    zones.sort_unstable();
    zones.dedup();
    if zones.len() < MIN_ZONES {
        let field = if brought.subnets.is_empty() {
            "spec.network.id"
        } else {
            "spec.network.subnetIDs"
        };
        return Err(format!(
            "{field}: the subnets span {} availability zone(s) ({}); EKS needs subnets in at least {MIN_ZONES}",
            zones.len(),
            zones.join(", ")
        ));
    }
    let subnets = chosen
        .iter()
        .map(|f| AwsSubnet {
            id: f.subnet.id.clone(),
            availability_zone: f.subnet.zone.clone(),
            public: f.subnet.map_public_ip || routes_to_internet(&f.subnet.id, tables),
            cidr_block: (!f.subnet.cidr.is_empty()).then(|| f.subnet.cidr.clone()),
        })
        .collect();
    Ok(AwsNetwork {
        cidr_block: vpcs
            .iter()
            .find(|(id, _)| *id == vpc)
            .map(|(_, c)| c.clone())
            .filter(|c| !c.is_empty()),
        vpc_id: Some(vpc),
        subnets,
        managed: false,
        ..AwsNetwork::default()
    })
}

/// Whether the subnet's route table (its explicit one, else the VPC's main one) has a default
/// route to an internet gateway.
pub fn routes_to_internet(subnet: &str, tables: &[TableView]) -> bool {
    let explicit = tables.iter().find(|t| {
        t.associations
            .iter()
            .any(|a| a.subnet.as_deref() == Some(subnet))
    });
    let table = explicit.or_else(|| {
        tables
            .iter()
            .find(|t| t.associations.iter().any(|a| a.main))
    });
    table.is_some_and(|t| {
        t.routes.iter().any(|r| {
            r.destination == DEFAULT_ROUTE
                && r.state != "blackhole"
                && r.gateway.as_deref().is_some_and(|g| g.starts_with("igw-"))
        })
    })
}

/// Reads the brought network: DescribeVpcs, DescribeSubnets, DescribeRouteTables.
///
/// # Errors
/// Cloud errors; a spec that does not hold is `Ok(Err(message))`.
pub async fn observe(
    ec2: &Ec2,
    brought: &Brought<'_>,
) -> Result<Result<AwsNetwork, String>, ProviderError> {
    let mut vpc_filter = brought.vpc.map(|v| vec![v.to_string()]);
    let subnet_request = if brought.subnets.is_empty() {
        let vpc = brought.vpc.unwrap_or_default();
        ec2.sdk()
            .describe_subnets()
            .filters(filter("vpc-id", [vpc]))
    } else {
        // A filter, not SubnetIds: unknown ids are then simply absent, and all are named at once.
        ec2.sdk()
            .describe_subnets()
            .filters(filter("subnet-id", brought.subnets.iter().cloned()))
    };
    let out = ec2.call("DescribeSubnets", subnet_request.send()).await?;
    let found: Vec<Found> = out
        .subnets()
        .iter()
        .map(|s| Found {
            subnet: SubnetView::from_sdk(s),
            vpc: s.vpc_id().unwrap_or_default().to_string(),
        })
        .collect();
    if vpc_filter.is_none() {
        vpc_filter = found.first().map(|f| vec![f.vpc.clone()]);
    }
    let Some(vpc_ids) = vpc_filter else {
        return Ok(assess(brought, &[], &found, &[]));
    };
    let out = ec2
        .call(
            "DescribeVpcs",
            ec2.sdk()
                .describe_vpcs()
                .filters(filter("vpc-id", vpc_ids.clone()))
                .send(),
        )
        .await?;
    let vpcs: Vec<(String, String)> = out
        .vpcs()
        .iter()
        .map(|v| {
            (
                v.vpc_id().unwrap_or_default().to_string(),
                v.cidr_block().unwrap_or_default().to_string(),
            )
        })
        .collect();
    if vpcs.is_empty() {
        return Ok(assess(brought, &vpcs, &found, &[]));
    }
    let out = ec2
        .call(
            "DescribeRouteTables",
            ec2.sdk()
                .describe_route_tables()
                .filters(filter("vpc-id", vpc_ids))
                .send(),
        )
        .await?;
    let tables: Vec<TableView> = out.route_tables().iter().map(TableView::from_sdk).collect();
    Ok(assess(brought, &vpcs, &found, &tables))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::network::route_tables::{AssociationView, RouteView};

    fn subnet(id: &str, vpc: &str, zone: &str, map_public: bool) -> Found {
        Found {
            subnet: SubnetView {
                id: id.into(),
                zone: zone.into(),
                cidr: format!("10.9.{}.0/24", id.len()),
                state: "available".into(),
                map_public_ip: map_public,
                tags: Default::default(),
            },
            vpc: vpc.into(),
        }
    }

    fn vpcs() -> Vec<(String, String)> {
        vec![("vpc-1".into(), "10.9.0.0/16".into())]
    }

    fn table(id: &str, subnets: &[&str], main: bool, gateway: Option<&str>) -> TableView {
        let mut associations: Vec<AssociationView> = subnets
            .iter()
            .map(|s| AssociationView {
                id: format!("a-{s}"),
                subnet: Some(s.to_string()),
                main: false,
            })
            .collect();
        if main {
            associations.push(AssociationView {
                id: "a-main".into(),
                subnet: None,
                main: true,
            });
        }
        TableView {
            id: id.into(),
            associations,
            routes: gateway
                .map(|g| RouteView {
                    destination: DEFAULT_ROUTE.into(),
                    gateway: Some(g.into()),
                    nat_gateway: None,
                    state: "active".into(),
                })
                .into_iter()
                .collect(),
            tags: Default::default(),
        }
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn two_subnets_in_two_zones_are_used_as_given_with_their_zones_and_blocks() {
        let s = ids(&["subnet-b", "subnet-a"]);
        let brought = Brought {
            vpc: None,
            subnets: &s,
            region: "r",
        };
        let found = [
            subnet("subnet-a", "vpc-1", "z1", false),
            subnet("subnet-b", "vpc-1", "z2", false),
        ];
        let status = assess(&brought, &vpcs(), &found, &[]).unwrap();
        assert_eq!(status.vpc_id.as_deref(), Some("vpc-1"));
        assert_eq!(status.cidr_block.as_deref(), Some("10.9.0.0/16"));
        assert!(!status.managed);
        assert_eq!(
            status
                .subnets
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>(),
            ["subnet-b", "subnet-a"]
        );
        assert_eq!(status.subnets[0].availability_zone, "z2");
        assert!(status.security_group_id.is_none());
    }

    #[test]
    fn an_unknown_vpc_is_named_with_its_field() {
        let brought = Brought {
            vpc: Some("vpc-nope"),
            subnets: &[],
            region: "eu-west-1",
        };
        let err = assess(&brought, &[], &[], &[]).unwrap_err();
        assert_eq!(
            err,
            "spec.network.id: VPC vpc-nope does not exist in region eu-west-1"
        );
    }

    #[test]
    fn unknown_subnets_are_all_named_with_their_field() {
        let s = ids(&["subnet-a", "subnet-x", "subnet-y"]);
        let brought = Brought {
            vpc: None,
            subnets: &s,
            region: "r",
        };
        let err = assess(
            &brought,
            &vpcs(),
            &[subnet("subnet-a", "vpc-1", "z1", false)],
            &[],
        )
        .unwrap_err();
        assert_eq!(
            err,
            "spec.network.subnetIDs: subnets subnet-x, subnet-y do not exist in region r"
        );
    }

    #[test]
    fn subnets_in_one_zone_are_refused_because_eks_needs_two() {
        let s = ids(&["subnet-a", "subnet-b"]);
        let brought = Brought {
            vpc: None,
            subnets: &s,
            region: "r",
        };
        let found = [
            subnet("subnet-a", "vpc-1", "z1", false),
            subnet("subnet-b", "vpc-1", "z1", false),
        ];
        let err = assess(&brought, &vpcs(), &found, &[]).unwrap_err();
        assert!(
            err.starts_with("spec.network.subnetIDs: the subnets span 1 availability zone(s) (z1)"),
            "{err}"
        );
    }

    #[test]
    fn subnets_outside_the_named_vpc_are_refused() {
        let s = ids(&["subnet-a", "subnet-b"]);
        let brought = Brought {
            vpc: Some("vpc-1"),
            subnets: &s,
            region: "r",
        };
        let found = [
            subnet("subnet-a", "vpc-1", "z1", false),
            subnet("subnet-b", "vpc-2", "z2", false),
        ];
        let err = assess(&brought, &vpcs(), &found, &[]).unwrap_err();
        assert_eq!(
            err,
            "spec.network.subnetIDs: subnet subnet-b is in VPC vpc-2, not in spec.network.id VPC vpc-1"
        );
    }

    #[test]
    fn a_vpc_alone_brings_all_its_subnets_and_an_empty_one_is_refused() {
        let brought = Brought {
            vpc: Some("vpc-1"),
            subnets: &[],
            region: "r",
        };
        let found = [
            subnet("subnet-b", "vpc-1", "z2", false),
            subnet("subnet-a", "vpc-1", "z1", false),
        ];
        let status = assess(&brought, &vpcs(), &found, &[]).unwrap();
        assert_eq!(
            status
                .subnets
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>(),
            ["subnet-a", "subnet-b"]
        );
        let err = assess(&brought, &vpcs(), &[], &[]).unwrap_err();
        assert!(
            err.starts_with("spec.network.id: VPC vpc-1 has no subnets"),
            "{err}"
        );
    }

    #[test]
    fn a_subnet_is_public_by_its_route_table_or_its_public_ip_flag() {
        let tables = [
            table("rtb-main", &[], true, None),
            table("rtb-pub", &["subnet-a"], false, Some("igw-1")),
        ];
        assert!(routes_to_internet("subnet-a", &tables));
        assert!(
            !routes_to_internet("subnet-b", &tables),
            "the main table has no internet route"
        );
        let main_public = [
            table("rtb-main", &[], true, Some("igw-1")),
            table("rtb-priv", &["subnet-b"], false, None),
        ];
        assert!(
            routes_to_internet("subnet-c", &main_public),
            "no explicit table: the main one counts"
        );
        assert!(
            !routes_to_internet("subnet-b", &main_public),
            "an explicit table overrides the main one"
        );
        let nat_only = [table("rtb-main", &[], true, Some("nat-1"))];
        assert!(!routes_to_internet("subnet-a", &nat_only));

        let s = ids(&["subnet-a", "subnet-b"]);
        let brought = Brought {
            vpc: None,
            subnets: &s,
            region: "r",
        };
        let found = [
            subnet("subnet-a", "vpc-1", "z1", false),
            subnet("subnet-b", "vpc-1", "z2", true),
        ];
        let status = assess(&brought, &vpcs(), &found, &tables).unwrap();
        assert_eq!(
            status.subnets.iter().map(|s| s.public).collect::<Vec<_>>(),
            [true, true]
        );
    }
}
