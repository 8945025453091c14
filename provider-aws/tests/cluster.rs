//! EKSCluster against the real management plane (kube-apiserver, Cluster API core v1.14) and
//! moto (EC2): a created network (VPC, two public and two private subnets, internet gateway,
//! NAT gateway, route tables, security group) is built, reported (status.network, failure
//! domains, provisioned) and copied by core into the Cluster; at rest the reconciler only reads;
//! a restart that lost the status creates nothing new; a brought network is read, never
//! changed; bad subnet ids are reported naming the field; a VPC that carries the cluster's name
//! but not its tag is a NameConflict, never adopted; deleting the Clusters removes every tagged
//! resource, waits while something not ours still depends on the VPC (and leaves that alone),
//! and leaves the brought network and an untagged bystander VPC alone.
//!
//! The provider reads its AWS endpoint from `AWS_ENDPOINT_URL`, so the test body runs as a child
//! process beside moto (see `support::run_in_child_with_moto`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_ec2::types::{Filter, Tag};
use contract::capi::Cluster;
use contract::naming;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::DynamicObject;
use kube::{Api, ResourceExt};
use provider_aws::api::EKSCluster;
use provider_aws::client::{AwsCredentials, Clients};
use provider_aws::network::AwsNetwork;
use provider_aws::reconcile::cluster;
use provider_aws::scope::{PROVIDER, Shared};
use serde_json::{Value, json};
use support::{condition, eventually, free_port};

const TEST: &str = "an_eks_cluster_builds_reports_and_removes_its_network_and_reads_a_brought_one";
const CHILD: &str = "EKS_CLUSTER_TEST_CHILD";
const REGION: &str = "eu-west-1";
const NS: &str = "net";
const SECRET: &str = "aws-credentials";
const MANAGED: &str = "managed";
const BYO: &str = "byo";
const BAD: &str = "byo-bad";
const UNKNOWN_SUBNET: &str = "subnet-0123456789abcdef0";
const CONFLICT: &str = "conflict";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eks_cluster_builds_reports_and_removes_its_network_and_reads_a_brought_one() {
    if support::is_child(CHILD) {
        child().await;
    } else {
        support::run_in_child_with_moto(TEST, CHILD, "eks-cluster-test", &[]).await;
    }
}

fn provisioned(c: &EKSCluster) -> bool {
    c.status
        .as_ref()
        .and_then(|s| s.common.initialization.as_ref())
        .and_then(|i| i.provisioned)
        == Some(true)
}

fn tags(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value()?.to_string())))
        .collect()
}

fn filter(name: &str, value: &str) -> Filter {
    Filter::builder().name(name).values(value).build()
}

/// Every EC2 resource carrying `cluster`'s ownership tag, by kind, as ids (NAT gateways: live
/// ones only).
async fn owned(
    ec2: &aws_sdk_ec2::Client,
    cluster: &str,
) -> BTreeMap<&'static str, BTreeSet<String>> {
    let (key, value) = naming::ownership_tag(PROVIDER, NS, cluster);
    let f = || filter(&format!("tag:{key}"), &value);
    let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    let vpcs = ec2.describe_vpcs().filters(f()).send().await.unwrap();
    out.insert(
        "vpc",
        vpcs.vpcs()
            .iter()
            .filter_map(|v| v.vpc_id().map(String::from))
            .collect(),
    );
    let subnets = ec2.describe_subnets().filters(f()).send().await.unwrap();
    out.insert(
        "subnet",
        subnets
            .subnets()
            .iter()
            .filter_map(|s| s.subnet_id().map(String::from))
            .collect(),
    );
    let igws = ec2
        .describe_internet_gateways()
        .filters(f())
        .send()
        .await
        .unwrap();
    out.insert(
        "igw",
        igws.internet_gateways()
            .iter()
            .filter_map(|g| g.internet_gateway_id().map(String::from))
            .collect(),
    );
    // moto ignores tag filters on NAT gateways: check the tags here.
    let nats = ec2.describe_nat_gateways().send().await.unwrap();
    out.insert(
        "nat",
        nats.nat_gateways()
            .iter()
            .filter(|n| tags(n.tags()).get(&key) == Some(&value))
            .filter(|n| matches!(n.state().map(|s| s.as_str()), Some("pending" | "available")))
            .filter_map(|n| n.nat_gateway_id().map(String::from))
            .collect(),
    );
    let eips = ec2.describe_addresses().filters(f()).send().await.unwrap();
    out.insert(
        "eip",
        eips.addresses()
            .iter()
            .filter_map(|a| a.allocation_id().map(String::from))
            .collect(),
    );
    let rts = ec2
        .describe_route_tables()
        .filters(f())
        .send()
        .await
        .unwrap();
    out.insert(
        "route-table",
        rts.route_tables()
            .iter()
            .filter_map(|t| t.route_table_id().map(String::from))
            .collect(),
    );
    let sgs = ec2
        .describe_security_groups()
        .filters(f())
        .send()
        .await
        .unwrap();
    out.insert(
        "security-group",
        sgs.security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(String::from))
            .collect(),
    );
    out
}

fn counts(inventory: &BTreeMap<&'static str, BTreeSet<String>>) -> BTreeMap<&'static str, usize> {
    inventory.iter().map(|(k, v)| (*k, v.len())).collect()
}

async fn http_get(port: u16, path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.ok()?;
    let mut buf = String::new();
    stream.read_to_string(&mut buf).await.ok()?;
    Some(buf)
}

/// The sum of the provider's metric series whose line passes `keep`.
async fn metric(port: u16, keep: impl Fn(&str) -> bool) -> u64 {
    let body = http_get(port, "/metrics").await.unwrap();
    body.lines()
        .filter(|l| !l.starts_with('#') && keep(l))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// EC2 calls that change something, counted from the provider's metrics.
async fn ec2_writes(port: u16) -> u64 {
    metric(port, |l| {
        l.starts_with("capi_provider_cloud_calls_total{")
            && l.contains("service=\"ec2\"")
            && !l.contains("operation=\"Describe")
    })
    .await
}

/// EC2 Describe calls.
async fn ec2_reads(port: u16) -> u64 {
    metric(port, |l| {
        l.starts_with("capi_provider_cloud_calls_total{") && l.contains("operation=\"Describe")
    })
    .await
}

/// Finished EKSCluster passes.
async fn passes(port: u16) -> u64 {
    metric(port, |l| {
        l.starts_with("capi_provider_reconciles_total{") && l.contains("kind=\"EKSCluster\"")
    })
    .await
}

/// The provider with only the EKSCluster reconciler, in-process; returns its stop switch.
fn start_provider(
    client: &kube::Client,
    metrics_port: u16,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let shared = Arc::new(Shared {
        poll_interval: Duration::from_secs(1),
        rest_interval: Duration::from_secs(2),
        ..Shared::default()
    });
    support::spawn_provider(
        client,
        &[
            "--health-probe-bind-address=0".into(),
            format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
        ],
        |operator| operator.controller::<EKSCluster, _>(cluster::reconciler(shared)),
    )
}

fn eks_cluster(name: &str, network: Option<Value>) -> EKSCluster {
    let mut spec = json!({
        "region": REGION,
        "identityRef": {"kind": "Secret", "name": SECRET},
        "additionalTags": {"team": "network"},
    });
    if let Some(network) = network {
        spec["network"] = network;
    }
    serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
        "kind": "EKSCluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }))
    .unwrap()
}

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "EKSCluster", "name": name}
        }
    }))
    .unwrap()
}

/// Whether the object's spec ever held, or any of our writes touched, `controlPlaneEndpoint`.
async fn endpoint_untouched(api: &Api<DynamicObject>, name: &str) -> bool {
    let obj = api.get(name).await.unwrap();
    let spec_has = obj
        .data
        .get("spec")
        .and_then(|s| s.get("controlPlaneEndpoint"))
        .is_some();
    let ours_touched = obj.managed_fields().iter().any(|m| {
        m.manager.as_deref() == Some(PROVIDER)
            && m.fields_v1.as_ref().is_some_and(|f| {
                serde_json::to_string(&f.0)
                    .unwrap_or_default()
                    .contains("controlPlaneEndpoint")
            })
    });
    !spec_has && !ours_touched
}

async fn child() {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.unwrap();
    plane
        .install_crds(&provider_aws::api::crds())
        .await
        .expect("provider CRDs install");
    support::create_namespace(&client, NS).await;
    support::create_credentials_secret(&client, NS, SECRET, "testing", "testing").await;

    let aws = Clients::new(REGION, AwsCredentials::new("testing", "testing", None)).await;
    let ec2 = aws.ec2.clone();

    // A VPC that is nobody's business: untagged by us, and must survive everything.
    let bystander = support::create_vpc(&ec2, "192.168.0.0/16").await;

    // A brought network: a VPC, a public subnet (routed to an internet gateway) and a private one.
    let byo_vpc = support::create_vpc(&ec2, "10.50.0.0/16").await;
    let byo_subnets = vec![
        support::create_subnet(&ec2, &byo_vpc, "10.50.1.0/24", "eu-west-1a").await,
        support::create_subnet(&ec2, &byo_vpc, "10.50.2.0/24", "eu-west-1b").await,
    ];
    let igw = ec2.create_internet_gateway().send().await.unwrap();
    let igw = igw
        .internet_gateway()
        .and_then(|g| g.internet_gateway_id())
        .unwrap()
        .to_string();
    ec2.attach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&byo_vpc)
        .send()
        .await
        .unwrap();
    let rt = ec2
        .create_route_table()
        .vpc_id(&byo_vpc)
        .send()
        .await
        .unwrap();
    let rt = rt
        .route_table()
        .and_then(|t| t.route_table_id())
        .unwrap()
        .to_string();
    ec2.create_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    ec2.associate_route_table()
        .route_table_id(&rt)
        .subnet_id(&byo_subnets[0])
        .send()
        .await
        .unwrap();

    let metrics_port = free_port();
    let (stop, provider) = start_provider(&client, metrics_port);

    let eks: Api<EKSCluster> = Api::namespaced(client.clone(), NS);
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    let dynamic: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NS,
        &kube::discovery::ApiResource::erase::<EKSCluster>(&()),
    );
    // Admission: the CRD's own rules for this kind.
    for (i, block) in ["10.0.0.0/8", "10.0.0.0/26", "fd00::/56"]
        .into_iter()
        .enumerate()
    {
        let bad = eks_cluster(&format!("wide-{i}"), Some(json!({"cidrBlock": block})));
        let err = eks.create(&PostParams::default(), &bad).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.network.cidrBlock must be an IPv4 block from /16 to /24"),
            "{block}: {err}"
        );
    }
    eks.create(&PostParams::default(), &eks_cluster(MANAGED, None))
        .await
        .unwrap();
    let err = eks
        .patch(
            MANAGED,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"eks": {"availabilityZones": 3}}})),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.eks.availabilityZones is immutable"),
        "{err}"
    );
    clusters
        .create(&PostParams::default(), &cluster(MANAGED))
        .await
        .expect("Cluster managed");

    // --- A created network, built and reported.
    let managed = eventually(
        "the managed EKSCluster to be provisioned",
        Duration::from_secs(240),
        || async {
            let c = eks.get(MANAGED).await.ok()?;
            (provisioned(&c) && condition(&c, "NetworkReady")?.status == "True").then_some(c)
        },
    )
    .await;
    assert!(
        endpoint_untouched(&dynamic, MANAGED).await,
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
    let sg = network.security_group_id.clone().expect("securityGroupID");
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

    // What moto holds, all tagged as ours.
    let (key, value) = naming::ownership_tag(PROVIDER, NS, MANAGED);
    let inventory = owned(&ec2, MANAGED).await;
    assert_eq!(
        counts(&inventory),
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
    let vpc = ec2.describe_vpcs().vpc_ids(&vpc_id).send().await.unwrap();
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
    let hostnames = ec2
        .describe_vpc_attribute()
        .vpc_id(&vpc_id)
        .attribute(aws_sdk_ec2::types::VpcAttributeName::EnableDnsHostnames)
        .send()
        .await
        .unwrap();
    assert_eq!(
        hostnames.enable_dns_hostnames().and_then(|v| v.value()),
        Some(true)
    );
    let subnets = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &vpc_id))
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
    let igw_id = inventory["igw"].first().unwrap().clone();
    let gws = ec2
        .describe_internet_gateways()
        .internet_gateway_ids(&igw_id)
        .send()
        .await
        .unwrap();
    assert!(
        gws.internet_gateways()[0]
            .attachments()
            .iter()
            .any(|a| a.vpc_id() == Some(vpc_id.as_str()))
    );
    let nat_id = inventory["nat"].first().unwrap().clone();
    let nats = ec2
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
    let tables = ec2
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
    let groups = ec2
        .describe_security_groups()
        .group_ids(&sg)
        .send()
        .await
        .unwrap();
    assert_eq!(groups.security_groups()[0].vpc_id(), Some(vpc_id.as_str()));

    // Core copies what it needs into the Cluster.
    let c = eventually(
        "the Cluster to show infrastructureProvisioned and our failure domains",
        Duration::from_secs(60),
        || async {
            let c = clusters.get(MANAGED).await.ok()?;
            let s = c.status.as_ref()?;
            (s.initialization.as_ref()?.infrastructure_provisioned == Some(true)
                && !s.failure_domains.is_empty())
            .then_some(c)
        },
    )
    .await;
    assert_eq!(
        c.status.as_ref().unwrap().failure_domains,
        status.common.failure_domains,
        "C19"
    );
    eventually(
        "the Cluster's InfrastructureReady to follow our Ready",
        Duration::from_secs(60),
        || async {
            let c = clusters.get(MANAGED).await.ok()?;
            c.status?
                .conditions
                .iter()
                .find(|x| x.type_ == "InfrastructureReady" && x.status == "True")
                .map(|_| ())
        },
    )
    .await;

    // --- At rest: passes run (rest interval 2 s), read eight times each, write nothing.
    let (writes, reads, before) = (
        ec2_writes(metrics_port).await,
        ec2_reads(metrics_port).await,
        passes(metrics_port).await,
    );
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(
        ec2_writes(metrics_port).await,
        writes,
        "no EC2 write at rest"
    );
    let runs = passes(metrics_port).await - before;
    let read = ec2_reads(metrics_port).await - reads;
    assert!(runs >= 2, "passes at rest: {runs}");
    assert!(
        read + 8 >= 8 * runs && read <= 8 * (runs + 1),
        "{read} Describe calls in {runs} passes at rest"
    );
    assert!(endpoint_untouched(&dynamic, MANAGED).await);

    // --- A restart that lost the status (as after clusterctl move) finds everything by its tags.
    stop.send(()).unwrap();
    provider.await.unwrap().unwrap();
    eks.patch_status(
        MANAGED,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"network": null}})),
    )
    .await
    .unwrap();
    assert!(
        eks.get(MANAGED)
            .await
            .unwrap()
            .status
            .unwrap()
            .common
            .network
            .is_none()
    );
    let metrics_port = free_port();
    let (stop, provider) = start_provider(&client, metrics_port);
    eventually(
        "the restarted reconciler to rebuild status.network",
        Duration::from_secs(60),
        || async {
            let c = eks.get(MANAGED).await.ok()?;
            (AwsNetwork::of(&c)?.vpc_id.as_deref() == Some(vpc_id.as_str())).then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        owned(&ec2, MANAGED).await,
        inventory,
        "the restart created nothing"
    );
    assert_eq!(
        ec2_writes(metrics_port).await,
        0,
        "the restart wrote nothing to EC2"
    );
    assert_eq!(
        AwsNetwork::of(&eks.get(MANAGED).await.unwrap()),
        Some(network.clone())
    );

    // --- A brought network: read, reported, never changed.
    let byo_network = json!({"subnetIDs": byo_subnets});
    eks.create(&PostParams::default(), &eks_cluster(BYO, Some(byo_network)))
        .await
        .unwrap();
    clusters
        .create(&PostParams::default(), &cluster(BYO))
        .await
        .unwrap();
    let byo = eventually(
        "the brought-network EKSCluster to be provisioned",
        Duration::from_secs(60),
        || async {
            let c = eks.get(BYO).await.ok()?;
            provisioned(&c).then_some(c)
        },
    )
    .await;
    let byo_status = byo.status.clone().unwrap();
    let n = AwsNetwork::of(&byo).unwrap();
    assert!(!n.managed);
    assert_eq!(n.vpc_id.as_deref(), Some(byo_vpc.as_str()));
    assert_eq!(n.security_group_id, None);
    let seen: Vec<(&str, &str, bool)> = n
        .subnets
        .iter()
        .map(|s| (s.id.as_str(), s.availability_zone.as_str(), s.public))
        .collect();
    assert_eq!(
        seen,
        [
            (byo_subnets[0].as_str(), "eu-west-1a", true),
            (byo_subnets[1].as_str(), "eu-west-1b", false)
        ]
    );
    assert_eq!(byo_status.common.failure_domains.len(), 2);
    assert!(endpoint_untouched(&dynamic, BYO).await);
    eventually(
        "the brought-network Cluster to show infrastructureProvisioned",
        Duration::from_secs(60),
        || async {
            let c = clusters.get(BYO).await.ok()?;
            let s = c.status?;
            (s.initialization?.infrastructure_provisioned == Some(true)
                && s.failure_domains == byo_status.common.failure_domains)
                .then_some(())
        },
    )
    .await;
    assert!(
        counts(&owned(&ec2, BYO).await).values().all(|n| *n == 0),
        "nothing created for a brought network"
    );

    // --- Unknown subnet ids: a terminal InvalidSpec naming the field and the id.
    let bad_network = json!({"subnetIDs": [byo_subnets[0], UNKNOWN_SUBNET]});
    eks.create(&PostParams::default(), &eks_cluster(BAD, Some(bad_network)))
        .await
        .unwrap();
    clusters
        .create(&PostParams::default(), &cluster(BAD))
        .await
        .unwrap();
    let bad = eventually(
        "the bad EKSCluster to report InvalidSpec",
        Duration::from_secs(60),
        || async {
            let c = eks.get(BAD).await.ok()?;
            let n = condition(&c, "NetworkReady")?;
            (n.status == "False" && n.reason == "InvalidSpec").then_some(c)
        },
    )
    .await;
    let message = &condition(&bad, "NetworkReady").unwrap().message;
    assert!(
        message.contains("spec.network.subnetIDs") && message.contains(UNKNOWN_SUBNET),
        "{message}"
    );
    assert_eq!(condition(&bad, "Ready").unwrap().reason, "InvalidSpec");
    assert!(!provisioned(&bad));

    // --- A VPC with the name the provider would use, not tagged as ours: NameConflict.
    let squatter = ec2
        .create_vpc()
        .cidr_block("10.60.0.0/16")
        .tag_specifications(
            aws_sdk_ec2::types::TagSpecification::builder()
                .resource_type(aws_sdk_ec2::types::ResourceType::Vpc)
                .tags(Tag::builder().key("Name").value("net-conflict-vpc").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    let squatter = squatter.vpc().and_then(|v| v.vpc_id()).unwrap().to_string();
    eks.create(&PostParams::default(), &eks_cluster(CONFLICT, None))
        .await
        .unwrap();
    clusters
        .create(&PostParams::default(), &cluster(CONFLICT))
        .await
        .unwrap();
    let conflict = eventually(
        "the conflicting EKSCluster to report NameConflict",
        Duration::from_secs(60),
        || async {
            let c = eks.get(CONFLICT).await.ok()?;
            let n = condition(&c, "NetworkReady")?;
            (n.status == "False" && n.reason == "NameConflict").then_some(c)
        },
    )
    .await;
    let message = &condition(&conflict, "NetworkReady").unwrap().message;
    assert!(message.contains(&squatter), "{message}");
    assert!(
        counts(&owned(&ec2, CONFLICT).await)
            .values()
            .all(|n| *n == 0),
        "nothing created beside a conflict"
    );

    // --- Something that is not ours inside our VPC: deletion waits for it, never deletes it.
    let intruder = support::create_subnet(&ec2, &vpc_id, "10.0.250.0/24", "eu-west-1c").await;
    clusters
        .delete(MANAGED, &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the managed EKSCluster to wait on the VPC's foreign dependency",
        Duration::from_secs(120),
        || async {
            let c = eks.get(MANAGED).await.ok()?;
            let ready = condition(&c, "Ready")?;
            (ready.reason == "Deleting" && ready.message.contains("still has dependencies"))
                .then_some(())
        },
    )
    .await;
    let still = ec2
        .describe_subnets()
        .filters(filter("subnet-id", &intruder))
        .send()
        .await
        .unwrap();
    assert_eq!(
        still.subnets().len(),
        1,
        "a subnet that is not ours is never deleted"
    );
    ec2.delete_subnet()
        .subnet_id(&intruder)
        .send()
        .await
        .unwrap();

    // --- Deletion: every tagged resource goes; the brought network and the bystander stay.
    for name in [BYO, BAD, CONFLICT] {
        clusters
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    for name in [MANAGED, BYO, BAD, CONFLICT] {
        eventually(
            &format!("EKSCluster {name} and its Cluster to be gone"),
            Duration::from_secs(240),
            || async {
                let gone = eks.get_opt(name).await.ok()?.is_none()
                    && clusters.get_opt(name).await.ok()?.is_none();
                gone.then_some(())
            },
        )
        .await;
    }
    let left = owned(&ec2, MANAGED).await;
    assert!(
        left.values().all(BTreeSet::is_empty),
        "tagged resources left behind: {left:?}"
    );
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    let remaining: BTreeSet<&str> = vpcs.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
    assert!(
        remaining.contains(bystander.as_str()),
        "the untagged bystander VPC is left alone"
    );
    assert!(
        remaining.contains(byo_vpc.as_str()),
        "the brought VPC is left alone"
    );
    assert!(
        remaining.contains(squatter.as_str()),
        "the VPC that was in the way is left alone"
    );
    assert!(!remaining.contains(vpc_id.as_str()));
    let byo_left = ec2
        .describe_subnets()
        .filters(filter("vpc-id", &byo_vpc))
        .send()
        .await
        .unwrap();
    assert_eq!(
        byo_left.subnets().len(),
        2,
        "the brought subnets are left alone"
    );

    stop.send(()).unwrap();
    provider.await.unwrap().unwrap();
    plane.stop().await;
}
