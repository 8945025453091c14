//! The `emulator` binary as the conformance suite runs it (`conformance/PROFILE.md`):
//! `emulator eks --moto` prints `listening on <url>`, its `NAME=VALUE` variables and `ready`, and
//! stops moto on SIGTERM; `emulator aws-network` makes a network to bring and prints its ids;
//! `emulator eks-scale` resizes a Cluster API pool's node group from outside.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;
use test_support::eventually_true;

use aws_sdk_ec2::types::Filter;
use aws_sdk_eks::types::{
    ClusterStatus, NodegroupScalingConfig, NodegroupStatus, VpcConfigRequest,
};
use common::{AKID, SECRET};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const REGION: &str = "us-west-2";
const EMULATOR: &str = env!("CARGO_BIN_EXE_emulator");

/// A running `emulator eks`, its stdout lines up to `ready`, and the variables among them.
struct Running {
    child: Child,
    lines: Vec<String>,
    vars: BTreeMap<String, String>,
}

/// Starts `emulator <args>` with no AWS credentials in its environment and reads stdout up to
/// `ready` (moto's first install may take minutes).
async fn start(args: &[&str]) -> Running {
    let mut child = Command::new(EMULATOR)
        .args(args)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut lines = Vec::new();
    tokio::time::timeout(Duration::from_secs(600), async {
        while let Some(line) = reader.next_line().await.unwrap() {
            let done = line == "ready";
            lines.push(line);
            if done {
                return;
            }
        }
        panic!("the emulator exited before `ready`: {lines:?}");
    })
    .await
    .expect("`ready` in time");
    let vars = lines
        .iter()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Running { child, lines, vars }
}

impl Running {
    fn var(&self, name: &str) -> &str {
        self.vars
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", self.lines))
    }

    /// SIGTERM, and the exit status.
    async fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().unwrap();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the emulator stops on SIGTERM")
            .unwrap()
    }
}

/// Runs `emulator <args>` with `env` to the end; its stdout, or a panic with its stderr.
async fn run(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run_status(args, env).await;
    assert!(
        out.status.success(),
        "emulator {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

async fn run_status(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(EMULATOR);
    cmd.args(args)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_REGION")
        .env_remove("EKS_ENDPOINT")
        .env_remove("EC2_ENDPOINT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("the command ends")
        .unwrap()
}

fn assignments(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn http_client() -> aws_sdk_eks::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https()
}

fn eks_client(url: &str) -> aws_sdk_eks::Client {
    aws_sdk_eks::Client::from_conf(
        aws_sdk_eks::config::Builder::new()
            .behavior_version_latest()
            .endpoint_url(url)
            .region(aws_sdk_eks::config::Region::new(REGION))
            .credentials_provider(aws_sdk_eks::config::Credentials::new(
                AKID, SECRET, None, None, "test",
            ))
            .http_client(http_client())
            .build(),
    )
}

fn ec2_client(url: &str) -> aws_sdk_ec2::Client {
    aws_sdk_ec2::Client::from_conf(
        aws_sdk_ec2::config::Builder::new()
            .behavior_version_latest()
            .endpoint_url(url)
            .region(aws_sdk_ec2::config::Region::new(REGION))
            .credentials_provider(aws_sdk_ec2::config::Credentials::new(
                AKID, SECRET, None, None, "test",
            ))
            .http_client(http_client())
            .build(),
    )
}

async fn running_instances(ec2: &aws_sdk_ec2::Client, nodegroup: &str) -> usize {
    ec2.describe_instances()
        .filters(
            Filter::builder()
                .name("tag:eks:nodegroup-name")
                .values(nodegroup)
                .build(),
        )
        .filters(
            Filter::builder()
                .name("instance-state-name")
                .values("pending")
                .values("running")
                .build(),
        )
        .send()
        .await
        .unwrap()
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum()
}

async fn answers(url: &str) -> bool {
    emulators::kit::http_client(std::time::Duration::from_secs(30))
        .get(format!("{url}/moto-api/"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

#[tokio::test]
async fn without_moto_the_emulator_prints_its_endpoint_and_region_then_ready() {
    let e = start(&["eks", "--cluster-delay", "0", "--token-ttl", "60"]).await;
    let url = e.lines[0]
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    assert_eq!(
        e.lines[1..],
        [
            format!("EKS_ENDPOINT={url}"),
            format!("AWS_REGION={REGION}"),
            "ready".to_string()
        ]
    );
    assert!(!e.vars.contains_key("EC2_ENDPOINT"));
    // The call counters the suite reads.
    emulators::kit::http_client(std::time::Duration::from_secs(30))
        .get(format!("{url}/clusters"))
        .send()
        .await
        .unwrap();
    let metrics = emulators::kit::http_client(std::time::Duration::from_secs(30))
        .get(format!("{url}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(
            r#"emulator_calls_total{cloud="eks",operation="ListClusters",outcome="ok"} 1"#
        ),
        "{metrics}"
    );
    assert!(e.terminate().await.success());

    // moto is either started or named, not both.
    let both = run_status(
        &["eks", "--moto", "--ec2-endpoint", "http://127.0.0.1:1"],
        &[],
    )
    .await;
    assert!(!both.status.success());
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
}

#[tokio::test]
async fn with_moto_the_emulator_serves_a_brought_network_an_outside_scale_and_stops_moto() {
    let dir = tempfile::tempdir().unwrap();
    let credential = format!("{AKID}:{SECRET}");
    let e = start(&[
        "eks",
        "--moto",
        "--cluster-delay=0",
        "--pool-delay=0.2",
        "--token-ttl=60",
        "--credential",
        &credential,
        "--workload-dir",
        dir.path().to_str().unwrap(),
    ])
    .await;
    let names: Vec<&str> = e
        .lines
        .iter()
        .map(|l| l.split_once('=').map_or(l.as_str(), |(k, _)| k))
        .collect();
    assert!(e.lines[0].starts_with("listening on http://127.0.0.1:"));
    assert_eq!(
        names[1..],
        ["EKS_ENDPOINT", "EC2_ENDPOINT", "AWS_REGION", "ready"]
    );
    let eks_url = e.var("EKS_ENDPOINT").to_string();
    let ec2_url = e.var("EC2_ENDPOINT").to_string();
    assert_eq!(e.lines[0], format!("listening on {eks_url}"));
    assert_ne!(eks_url, ec2_url);
    assert!(answers(&ec2_url).await, "moto serves at {ec2_url}");

    // A network to bring, made in moto.
    let out = run(
        &[
            "aws-network",
            "--ec2-url",
            &ec2_url,
            "--region",
            REGION,
            "--name",
            "cli-test",
        ],
        &[],
    )
    .await;
    let net = assignments(&out);
    assert_eq!(
        net.keys().collect::<Vec<_>>(),
        [
            "AWS_SUBNET_IDS",
            "AWS_SUBNET_ID_A",
            "AWS_SUBNET_ID_B",
            "AWS_VPC_ID"
        ]
    );
    let (a, b) = (&net["AWS_SUBNET_ID_A"], &net["AWS_SUBNET_ID_B"]);
    assert!(net["AWS_VPC_ID"].starts_with("vpc-"), "{out}");
    assert!(a.starts_with("subnet-") && b.starts_with("subnet-") && a != b);
    assert_eq!(net["AWS_SUBNET_IDS"], format!("[{a}, {b}]"));
    let ec2 = ec2_client(&ec2_url);
    let subnets = ec2
        .describe_subnets()
        .subnet_ids(a)
        .subnet_ids(b)
        .send()
        .await
        .unwrap();
    let mut seen: Vec<(String, String)> = subnets
        .subnets()
        .iter()
        .map(|s| {
            (
                s.availability_zone().unwrap().to_string(),
                s.vpc_id().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let vpc = net["AWS_VPC_ID"].clone();
    assert_eq!(
        seen,
        [
            ("us-west-2a".to_string(), vpc.clone()),
            ("us-west-2b".to_string(), vpc)
        ]
    );

    // A cluster and pool as the provider makes them, on that network; instances land in moto.
    let eks = eks_client(&eks_url);
    let owner =
        std::collections::HashMap::from([("capi-managed-eks".to_string(), "ns1_c1".to_string())]);
    eks.create_cluster()
        .name("ns1-c1")
        .version("1.31")
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(
            VpcConfigRequest::builder()
                .subnet_ids(a)
                .subnet_ids(b)
                .build(),
        )
        .set_tags(Some(owner.clone()))
        .send()
        .await
        .unwrap();
    eventually_true("the cluster ACTIVE", Duration::from_secs(60), || async {
        eks.describe_cluster()
            .name("ns1-c1")
            .send()
            .await
            .unwrap()
            .cluster()
            .and_then(|c| c.status().cloned())
            == Some(ClusterStatus::Active)
    })
    .await;
    eks.create_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .node_role("arn:aws:iam::123456789012:role/eks-nodes")
        .subnets(a)
        .subnets(b)
        .scaling_config(
            NodegroupScalingConfig::builder()
                .min_size(0)
                .max_size(1)
                .desired_size(1)
                .build(),
        )
        .set_tags(Some(owner))
        .send()
        .await
        .unwrap();
    eventually_true("one instance in moto", Duration::from_secs(60), || async {
        running_instances(&ec2, "ns1-c1-pool-0").await == 1
    })
    .await;

    // The outside scale, as the suite runs it: the pool from the environment.
    let out = run(
        &["eks-scale", "--url", &eks_url, "--region", REGION],
        &[
            ("CLUSTER_NAMESPACE", "ns1"),
            ("CLUSTER_NAME", "c1"),
            ("POOL_NAME", "c1-pool-0"),
            ("REPLICAS", "2"),
            ("AWS_ACCESS_KEY_ID", AKID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
        ],
    )
    .await;
    let scaled = assignments(&out);
    assert_eq!(scaled["EKS_CLUSTER"], "ns1-c1");
    assert_eq!(scaled["EKS_NODEGROUP"], "ns1-c1-pool-0");
    let ng = eks
        .describe_nodegroup()
        .cluster_name("ns1-c1")
        .nodegroup_name("ns1-c1-pool-0")
        .send()
        .await
        .unwrap()
        .nodegroup
        .unwrap();
    assert_eq!(ng.scaling_config().unwrap().desired_size(), Some(2));
    assert_eq!(ng.status(), Some(&NodegroupStatus::Active));
    eventually_true("two instances in moto", Duration::from_secs(60), || async {
        running_instances(&ec2, "ns1-c1-pool-0").await == 2
    })
    .await;

    // Flags win over the environment; unsigned calls are refused.
    let refused = run_status(
        &[
            "eks-scale",
            "--url",
            &eks_url,
            "--cluster-namespace=ns1",
            "--cluster-name=c1",
            "--pool=c1-pool-0",
            "--replicas=1",
            "--timeout=5",
        ],
        &[],
    )
    .await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("MissingAuthenticationTokenException"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // SIGTERM stops the emulator and moto with it.
    assert!(e.terminate().await.success());
    eventually_true("moto stopped", Duration::from_secs(60), || async {
        !answers(&ec2_url).await
    })
    .await;
    assert!(dir.path().join("moto").join("moto.log").is_file());
}
