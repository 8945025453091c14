//! The unit tests of the route tables: their routes, associations and ownership.

use super::*;

fn owner() -> Owner {
    Owner::new(crate::scope::PROVIDER, "ns", "c1")
}

fn tags(ours: bool) -> BTreeMap<String, String> {
    let mut t: BTreeMap<String, String> =
        [("Name".to_string(), "ns-c1-public-rt".to_string())].into();
    if ours {
        t.insert(owner().tag().0, owner().tag().1);
    }
    t
}

fn table(id: &str, ours: bool, subnets: &[&str], route: Option<RouteView>) -> TableView {
    TableView {
        id: id.into(),
        associations: subnets
            .iter()
            .enumerate()
            .map(|(i, s)| AssociationView {
                id: format!("rtbassoc-{id}-{i}"),
                subnet: Some(s.to_string()),
                main: false,
            })
            .collect(),
        routes: route.into_iter().collect(),
        tags: tags(ours),
    }
}

fn main_table(subnets: &[&str]) -> TableView {
    let mut t = table("rtb-main", false, subnets, None);
    t.tags.clear();
    t.associations.push(AssociationView {
        id: "rtbassoc-main".into(),
        subnet: None,
        main: true,
    });
    t
}

fn to_igw(id: &str) -> RouteView {
    RouteView {
        destination: DEFAULT_ROUTE.into(),
        gateway: Some(id.into()),
        nat_gateway: None,
        state: "active".into(),
    }
}

fn run(tables: &[TableView], target: Option<Target>, subnets: &[&str]) -> Step {
    let t = tags(true);
    let wanted = Wanted {
        public: true,
        name: "ns-c1-public-rt",
        tags: &t,
        target,
        subnets: subnets.iter().map(|s| s.to_string()).collect(),
        token: "tok".into(),
    };
    plan(tables, &owner(), &wanted)
}

fn igw() -> Option<Target> {
    Some(Target::InternetGateway("igw-1".into()))
}

#[test]
fn a_missing_table_is_created_with_its_token() {
    assert_eq!(
        run(&[main_table(&[])], igw(), &["s1"]),
        Step::Create {
            token: "tok".into()
        }
    );
}

#[test]
fn subnets_are_associated_one_at_a_time_before_the_route() {
    let tables = [main_table(&[]), table("rtb-1", true, &["s1"], None)];
    assert_eq!(
        run(&tables, igw(), &["s1", "s2"]),
        Step::Associate {
            table: "rtb-1".into(),
            subnet: "s2".into()
        }
    );
}

#[test]
fn a_subnet_explicitly_associated_elsewhere_is_moved() {
    let tables = [
        table("rtb-other", false, &["s1"], None),
        table("rtb-1", true, &[], None),
    ];
    let mut other = tables[0].clone();
    other.tags = [("Name".to_string(), "someone-else".to_string())].into();
    let step = run(&[other, tables[1].clone()], igw(), &["s1"]);
    assert_eq!(
        step,
        Step::Reassociate {
            association: "rtbassoc-rtb-other-0".into(),
            table: "rtb-1".into(),
            subnet: "s1".into()
        }
    );
}

#[test]
fn without_a_target_the_table_waits_for_it() {
    assert_eq!(
        run(&[table("rtb-1", true, &["s1"], None)], None, &["s1"]),
        Step::NoTarget("rtb-1".into())
    );
}

#[test]
fn the_default_route_is_added_then_the_table_is_ready() {
    assert_eq!(
        run(&[table("rtb-1", true, &["s1"], None)], igw(), &["s1"]),
        Step::AddRoute("rtb-1".into(), igw().unwrap())
    );
    assert_eq!(
        run(
            &[table("rtb-1", true, &["s1"], Some(to_igw("igw-1")))],
            igw(),
            &["s1"]
        ),
        Step::Ready("rtb-1".into())
    );
}

#[test]
fn a_route_to_an_old_or_dead_target_is_replaced() {
    let nat = Target::NatGateway("nat-2".into());
    let old = RouteView {
        destination: DEFAULT_ROUTE.into(),
        gateway: None,
        nat_gateway: Some("nat-1".into()),
        state: "blackhole".into(),
    };
    assert_eq!(
        run(
            &[table("rtb-1", true, &["s1"], Some(old))],
            Some(nat.clone()),
            &["s1"]
        ),
        Step::ReplaceRoute("rtb-1".into(), nat)
    );
    let dead = RouteView {
        state: "blackhole".into(),
        ..to_igw("igw-1")
    };
    assert!(matches!(
        run(&[table("rtb-1", true, &["s1"], Some(dead))], igw(), &["s1"]),
        Step::ReplaceRoute(..)
    ));
}

#[test]
fn a_namesake_table_that_is_not_ours_is_a_conflict() {
    assert!(
        matches!(run(&[table("rtb-x", false, &[], None)], igw(), &[]), Step::Conflict(m) if m.contains("rtb-x"))
    );
}

#[test]
fn missing_tags_come_before_associations() {
    let mut t = table("rtb-1", true, &[], None);
    t.tags.insert("Name".into(), "ns-c1-public-rt".into());
    let mut want = tags(true);
    want.insert("team".into(), "x".into());
    let wanted = Wanted {
        public: true,
        name: "ns-c1-public-rt",
        tags: &want,
        target: igw(),
        subnets: vec!["s1".into()],
        token: "t".into(),
    };
    assert_eq!(
        plan(&[t], &owner(), &wanted),
        Step::Tag(
            "rtb-1".into(),
            [("team".to_string(), "x".to_string())].into()
        )
    );
}

#[test]
fn one_turn_creates_associates_and_routes_a_table_without_reading_again() {
    let mut tables = vec![main_table(&[])];
    let mut steps = Vec::new();
    loop {
        let step = run(
            &tables,
            Some(Target::InternetGateway("igw-1".into())),
            &["subnet-a", "subnet-b"],
        );
        if matches!(step, Step::Ready(_)) {
            break;
        }
        assert!(steps.len() < 8, "{steps:?}");
        let answer = match &step {
            // CreateRouteTable answers with the table (its local route), not the tags.
            Step::Create { .. } => Answer::Table(TableView {
                id: "rtb-new".into(),
                associations: vec![],
                routes: vec![],
                tags: BTreeMap::new(),
            }),
            Step::Associate { subnet, .. } => Answer::Association(format!("rtbassoc-{subnet}")),
            _ => Answer::None,
        };
        fold(&mut tables, &step, answer, &tags(true));
        steps.push(step);
    }
    let kinds: Vec<&str> = steps
        .iter()
        .map(|s| match s {
            Step::Create { .. } => "create",
            Step::Associate { .. } => "associate",
            Step::AddRoute(..) => "route",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["create", "associate", "associate", "route"]);
}

#[test]
fn a_moved_subnet_leaves_its_old_table_in_the_fold() {
    let mut tables = vec![
        table("rtb-old", false, &["subnet-a"], None),
        table("rtb-1", true, &[], None),
    ];
    let step = run(&tables, None, &["subnet-a"]);
    assert!(matches!(step, Step::Reassociate { .. }), "{step:?}");
    fold(
        &mut tables,
        &step,
        Answer::Association("rtbassoc-new".into()),
        &tags(true),
    );
    assert!(tables[0].associations.is_empty());
    assert_eq!(
        run(&tables, None, &["subnet-a"]),
        Step::NoTarget("rtb-1".into())
    );
}
