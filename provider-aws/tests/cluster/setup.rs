//! The bed the scenario runs on: the management plane with the provider's CRDs, the test's
//! namespace and credentials, and the networks made beforehand in moto (a bystander VPC and a
//! brought network).

use kube::Api;
use kube::core::DynamicObject;
use provider_aws::api::EKSCluster;
use provider_aws::client::{AwsCredentials, Clients};

use contract::capi::Cluster;

use crate::support;
use crate::{NS, REGION, SECRET};

/// What every phase works with: the management plane's client and APIs, and EC2.
pub struct Ctx {
    /// The management plane.
    pub client: kube::Client,
    /// EC2 (moto).
    pub ec2: aws_sdk_ec2::Client,
    /// EKSClusters in the test's namespace.
    pub eks: Api<EKSCluster>,
    /// Core's Clusters in the test's namespace.
    pub clusters: Api<Cluster>,
    /// EKSClusters, untyped (to read their managed fields and raw spec).
    pub dynamic: Api<DynamicObject>,
}

/// Networks that are not the provider's: an untagged bystander VPC, and a brought network (a
/// VPC, a public subnet routed to an internet gateway and a private one).
pub struct OtherNetworks {
    /// The bystander VPC, which must survive everything.
    pub bystander: String,
    /// The brought network's VPC.
    pub byo_vpc: String,
    /// Its subnets: public in eu-west-1a, private in eu-west-1b.
    pub byo_subnets: Vec<String>,
}

/// Starts the management plane, installs the provider's CRDs and makes the namespace and the
/// credentials Secret.
pub async fn start() -> (testbed::ManagementPlane, Ctx) {
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
    let ctx = Ctx {
        ec2: aws.ec2.clone(),
        eks: Api::namespaced(client.clone(), NS),
        clusters: Api::namespaced(client.clone(), NS),
        dynamic: Api::namespaced_with(
            client.clone(),
            NS,
            &kube::discovery::ApiResource::erase::<EKSCluster>(&()),
        ),
        client,
    };
    (plane, ctx)
}

/// Makes the bystander VPC and the brought network in moto.
pub async fn make_other_networks(ec2: &aws_sdk_ec2::Client) -> OtherNetworks {
    // A VPC that is nobody's business: untagged by us, and must survive everything.
    let bystander = support::create_vpc(ec2, "192.168.0.0/16").await;

    // A brought network: a VPC, a public subnet (routed to an internet gateway) and a private one.
    let byo_vpc = support::create_vpc(ec2, "10.50.0.0/16").await;
    let byo_subnets = vec![
        support::create_subnet(ec2, &byo_vpc, "10.50.1.0/24", "eu-west-1a").await,
        support::create_subnet(ec2, &byo_vpc, "10.50.2.0/24", "eu-west-1b").await,
    ];
    route_to_the_internet(ec2, &byo_vpc, &byo_subnets[0]).await;
    OtherNetworks {
        bystander,
        byo_vpc,
        byo_subnets,
    }
}

/// Gives `vpc` an internet gateway and routes `subnet` to it, making that subnet public.
async fn route_to_the_internet(ec2: &aws_sdk_ec2::Client, vpc: &str, subnet: &str) {
    let igw = ec2.create_internet_gateway().send().await.unwrap();
    let igw = igw
        .internet_gateway()
        .and_then(|g| g.internet_gateway_id())
        .unwrap()
        .to_string();
    ec2.attach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(vpc)
        .send()
        .await
        .unwrap();
    let rt = ec2.create_route_table().vpc_id(vpc).send().await.unwrap();
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
        .subnet_id(subnet)
        .send()
        .await
        .unwrap();
}
