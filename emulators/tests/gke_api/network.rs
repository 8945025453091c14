//! A provider's network built and guarded through Google's Compute Engine client.

use google_cloud_compute_v1::client::{Networks, Routers, Subnetworks};
use google_cloud_compute_v1::model as compute;
use google_cloud_container_v1::model::{self, Cluster, IPAllocationPolicy};
use google_cloud_gax::error::rpc::Code;
use google_cloud_lro::Poller as _;

use crate::support::*;

#[tokio::test]
async fn a_provider_network_is_built_and_guarded_through_googles_compute_client() {
    let bed = bed().await;
    let creds = credentials(&bed.key);
    let url = bed.server.url().to_string();
    let networks = Networks::builder()
        .with_endpoint(&url)
        .with_credentials(creds.clone())
        .build()
        .await
        .unwrap();
    let subnets = Subnetworks::builder()
        .with_endpoint(&url)
        .with_credentials(creds.clone())
        .build()
        .await
        .unwrap();
    let routers = Routers::builder()
        .with_endpoint(&url)
        .with_credentials(creds)
        .build()
        .await
        .unwrap();

    let op = networks
        .insert()
        .set_project(PROJECT)
        .set_body(
            compute::Network::new()
                .set_name("capi-net")
                .set_auto_create_subnetworks(false),
        )
        .poller()
        .until_done()
        .await
        .unwrap();
    assert_eq!(op.status, Some(compute::operation::Status::Done));
    op.to_result().unwrap();
    let legacy = networks
        .insert()
        .set_project(PROJECT)
        .set_body(compute::Network::new().set_name("legacy"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(legacy.status().map(|s| s.code), Some(Code::InvalidArgument));

    let subnet = |name: &str, primary: &str, pods: &str| {
        compute::Subnetwork::new()
            .set_name(name)
            .set_network(format!("projects/{PROJECT}/global/networks/capi-net"))
            .set_ip_cidr_range(primary)
            .set_secondary_ip_ranges([
                compute::SubnetworkSecondaryRange::new()
                    .set_range_name("pods")
                    .set_ip_cidr_range(pods),
                compute::SubnetworkSecondaryRange::new()
                    .set_range_name("services")
                    .set_ip_cidr_range("10.8.0.0/20"),
            ])
    };
    subnets
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(subnet("nodes", "10.0.0.0/20", "10.4.0.0/14"))
        .poller()
        .until_done()
        .await
        .unwrap()
        .to_result()
        .unwrap();
    let overlap = subnets
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(subnet("more", "10.0.8.0/24", "10.20.0.0/16"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        overlap.status().map(|s| s.code),
        Some(Code::InvalidArgument),
        "{overlap:?}"
    );
    let got = subnets
        .get()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_subnetwork("nodes")
        .send()
        .await
        .unwrap();
    assert_eq!(got.secondary_ip_ranges.len(), 2);
    assert!(
        got.network
            .as_deref()
            .unwrap()
            .ends_with("/global/networks/capi-net")
    );
    let net = networks
        .get()
        .set_project(PROJECT)
        .set_network("capi-net")
        .send()
        .await
        .unwrap();
    assert_eq!(net.subnetworks.len(), 1);

    routers
        .insert()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_body(
            compute::Router::new()
                .set_name("capi-nat-router")
                .set_network(format!("projects/{PROJECT}/global/networks/capi-net"))
                .set_nats([compute::RouterNat::new()
                    .set_name("capi-nat")
                    .set_nat_ip_allocate_option(compute::router_nat::NatIpAllocateOption::AutoOnly)
                    .set_source_subnetwork_ip_ranges_to_nat(compute::router_nat::SourceSubnetworkIpRangesToNat::AllSubnetworksAllIpRanges)]),
        )
        .poller()
        .until_done()
        .await
        .unwrap()
        .to_result()
        .unwrap();
    let router = routers
        .get()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_router("capi-nat-router")
        .send()
        .await
        .unwrap();
    assert_eq!(router.nats.len(), 1);

    // A VPC-native private cluster on it: the named ranges must exist.
    let private = |pods: &str| {
        Cluster::new()
            .set_name("private")
            .set_network("capi-net")
            .set_subnetwork("nodes")
            .set_initial_node_count(1)
            .set_ip_allocation_policy(
                IPAllocationPolicy::new()
                    .set_use_ip_aliases(true)
                    .set_cluster_secondary_range_name(pods)
                    .set_services_secondary_range_name("services"),
            )
            .set_network_config(model::NetworkConfig::new().set_default_enable_private_nodes(true))
            .set_control_plane_endpoints_config(
                model::ControlPlaneEndpointsConfig::new().set_ip_endpoints_config(
                    model::control_plane_endpoints_config::IPEndpointsConfig::new()
                        .set_enable_public_endpoint(false),
                ),
            )
    };
    let missing = bed
        .container
        .create_cluster()
        .set_parent(format!("projects/{PROJECT}/locations/{REGION}"))
        .set_cluster(private("pods-v2"))
        .send()
        .await
        .unwrap_err();
    assert!(
        message(&missing).contains("Secondary range \"pods-v2\" does not exist"),
        "{}",
        message(&missing)
    );
    let op = bed
        .container
        .create_cluster()
        .set_parent(format!("projects/{PROJECT}/locations/{REGION}"))
        .set_cluster(private("pods"))
        .send()
        .await
        .unwrap();
    assert!(
        op.target_link
            .contains("/locations/us-central1/clusters/private"),
        "{}",
        op.target_link
    );

    // What a cluster uses cannot be deleted.
    let e = subnets
        .delete()
        .set_project(PROJECT)
        .set_region(REGION)
        .set_subnetwork("nodes")
        .send()
        .await
        .unwrap_err();
    assert!(
        e.status()
            .unwrap()
            .message
            .contains("already being used by"),
        "{e:?}"
    );
    let e = networks
        .delete()
        .set_project(PROJECT)
        .set_network("capi-net")
        .send()
        .await
        .unwrap_err();
    assert!(
        e.status()
            .unwrap()
            .message
            .contains("already being used by"),
        "{e:?}"
    );
    let regional = bed
        .container
        .get_cluster()
        .set_name(format!(
            "projects/{PROJECT}/locations/{REGION}/clusters/private"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(regional.locations.len(), 3);
    assert_eq!(regional.node_pools[0].instance_group_urls.len(), 3);
    bed.server.shutdown().await;
}
