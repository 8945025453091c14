use contract::api::ClusterSpecCommon;

/// Where the cluster's AWS resources live: region, network (created from a CIDR or brought as
/// ids), credentials and tags. Never sets a control-plane endpoint: the EKSControlPlane owns it.
///
/// The network is either brought by the user (`network.id` and/or `network.subnetIDs`: the
/// provider only reads it, checks that it spans at least two availability zones, and never
/// changes or deletes it) or created by the provider (`network.cidrBlock`, or no `network` at all
/// for 10.0.0.0/16): a VPC, one public and one private subnet per zone, an internet gateway, one
/// NAT gateway, route tables and a security group, all tagged as this cluster's and deleted with
/// it. A VPC or subnet that carries the provider's name but not this cluster's ownership tag is
/// never adopted (`NameConflict`): to build on an existing network, bring it by id instead.
#[provider_runtime::kind(column("Region", "string", ".spec.region"))]
#[derive(Default)]
pub struct EKSClusterSpec {
    /// Region, network, identity and tags, as on every cloud.
    #[serde(flatten)]
    pub common: ClusterSpecCommon,
    /// What only EKS has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eks: Option<EKSClusterOptions>,
}

/// EKS-only infrastructure options.
#[provider_runtime::block]
pub struct EKSClusterOptions {
    /// How many availability zones a created VPC spans (EKS needs at least two). Default 2.
    /// The zones are the region's first available ones by name. Ignored for a brought network.
    #[schemars(range(min = 2, max = 6))]
    pub availability_zones: Option<i32>,
}

/// What only EKS reports of the network: the security group, gateways and route tables.
#[provider_runtime::block]
pub struct EKSClusterObserved {
    /// The security group the control plane and nodes share.
    #[serde(
        rename = "securityGroupID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 64))]
    pub security_group_id: Option<String>,
    /// The internet gateway of a created network.
    #[serde(
        rename = "internetGatewayID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 64))]
    pub internet_gateway_id: Option<String>,
    /// The NAT gateway of a created network (the private subnets' way out).
    #[serde(
        rename = "natGatewayID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 64))]
    pub nat_gateway_id: Option<String>,
    /// The route table of a created network's public subnets.
    #[serde(
        rename = "publicRouteTableID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 64))]
    pub public_route_table_id: Option<String>,
    /// The route table of a created network's private subnets.
    #[serde(
        rename = "privateRouteTableID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 64))]
    pub private_route_table_id: Option<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use kube::CustomResourceExt;

    use super::*;

    fn spec_rules() -> Vec<(String, String)> {
        let crd = serde_json::to_value(EKSCluster::crd()).unwrap();
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
        spec["x-kubernetes-validations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["rule"].as_str().unwrap_or_default().to_string(),
                    r["message"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn the_crd_bounds_the_cidr_block_and_freezes_the_zone_count() {
        let rules = spec_rules();
        assert!(
            rules
                .iter()
                .any(|(r, m)| r.contains("prefixLength()")
                    && m.starts_with("spec.network.cidrBlock")),
            "{rules:?}"
        );
        assert!(
            rules.iter().any(|(r, m)| r.contains("oldSelf.eks")
                && m.starts_with("spec.eks.availabilityZones is immutable")),
            "{rules:?}"
        );
    }

    #[test]
    fn the_eks_block_uses_the_api_spelling_of_ids() {
        let status = EKSClusterObserved {
            security_group_id: Some("sg-1".into()),
            internet_gateway_id: Some("igw-1".into()),
            nat_gateway_id: Some("nat-1".into()),
            public_route_table_id: Some("rtb-1".into()),
            private_route_table_id: Some("rtb-2".into()),
        };
        let v = serde_json::to_value(&status).unwrap();
        for key in [
            "securityGroupID",
            "internetGatewayID",
            "natGatewayID",
            "publicRouteTableID",
            "privateRouteTableID",
        ] {
            assert!(v.get(key).is_some(), "{key} in {v}");
        }
    }
}
