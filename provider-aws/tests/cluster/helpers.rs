//! What several phases share: the objects the test creates, and views of what moto and the
//! management plane hold.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::{Filter, Tag};
use contract::capi::Cluster;
use contract::naming;
use kube::core::DynamicObject;
use kube::{Api, ResourceExt};
use provider_aws::api::EKSCluster;
use provider_aws::scope::PROVIDER;
use serde_json::{Value, json};

use crate::{NS, REGION, SECRET};

/// Every EC2 resource of a cluster, by kind, as ids.
pub type Inventory = BTreeMap<&'static str, BTreeSet<String>>;

/// Whether the EKSCluster says its infrastructure is provisioned.
pub fn provisioned(c: &EKSCluster) -> bool {
    c.status
        .as_ref()
        .and_then(|s| s.common.initialization.as_ref())
        .and_then(|i| i.provisioned)
        == Some(true)
}

/// EC2 tags as a map.
pub fn tags(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value()?.to_string())))
        .collect()
}

/// An EC2 filter of one value.
pub fn filter(name: &str, value: &str) -> Filter {
    Filter::builder().name(name).values(value).build()
}

/// Every EC2 resource carrying `cluster`'s ownership tag, by kind, as ids (NAT gateways: live
/// ones only).
pub async fn owned(ec2: &aws_sdk_ec2::Client, cluster: &str) -> Inventory {
    let (key, value) = naming::ownership_tag(PROVIDER, NS, cluster);
    let f = || filter(&format!("tag:{key}"), &value);
    let mut out: Inventory = BTreeMap::new();
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

/// How many resources of each kind an inventory holds.
pub fn counts(inventory: &Inventory) -> BTreeMap<&'static str, usize> {
    inventory.iter().map(|(k, v)| (*k, v.len())).collect()
}

/// An EKSCluster `name` in the test's region with its credentials and a team tag, on `network`
/// if given (else a created one).
pub fn eks_cluster(name: &str, network: Option<Value>) -> EKSCluster {
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

/// Core's Cluster `name`, its infrastructure the EKSCluster `name`.
pub fn cluster(name: &str) -> Cluster {
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
pub async fn endpoint_untouched(api: &Api<DynamicObject>, name: &str) -> bool {
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
