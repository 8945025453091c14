//! The difference between what the spec asks and the OKE cluster: [`diff`], pure, the first
//! difference as one [`ClusterChange`] (one OKE call each), said for the conditions by its
//! [`DescribeChange`].

use contract::plan::CloudStep;
use provider_runtime::control_plane::DescribeChange;
use serde_json::{Value, json};

use super::desired::DesiredCluster;
use super::observe::ObservedCluster;
use crate::api::ClusterType;

/// One difference, one OKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterChange {
    /// The public endpoint on or off (UpdateClusterEndpointConfig).
    PublicEndpoint(bool),
    /// A basic cluster becomes enhanced (UpdateCluster).
    Enhanced,
    /// OIDC discovery on or off (UpdateCluster options).
    OidcDiscovery(bool),
}

/// The OKE cluster as an OKEControlPlane's spec would ask for it, for an adoption's plan: the
/// public endpoint, the cluster type and OIDC discovery.
pub fn as_spec(o: &ObservedCluster) -> Value {
    let cluster_type = match o.cluster_type.as_str() {
        "ENHANCED_CLUSTER" => Some(ClusterType::Enhanced),
        "BASIC_CLUSTER" => Some(ClusterType::Basic),
        _ => None,
    };
    json!({
        "endpointAccess": {"public": o.public},
        "oidcIssuer": {"enabled": o.oidc_discovery},
        "oke": {"clusterType": cluster_type},
    })
}

/// The first difference (pure).
pub fn diff(want: &DesiredCluster, o: &ObservedCluster) -> CloudStep<ClusterChange> {
    if o.public != want.public {
        return CloudStep::Change(ClusterChange::PublicEndpoint(want.public));
    }
    if o.cluster_type != want.cluster_type {
        if want.cluster_type == "BASIC_CLUSTER" {
            return CloudStep::Invalid(
                "spec.oke.clusterType basic: the OKE cluster is enhanced, and OKE does not turn an enhanced cluster back into a basic one".into(),
            );
        }
        return CloudStep::Change(ClusterChange::Enhanced);
    }
    if o.oidc_discovery != want.oidc_discovery {
        return CloudStep::Change(ClusterChange::OidcDiscovery(want.oidc_discovery));
    }
    CloudStep::Nothing
}

impl DescribeChange for ClusterChange {
    fn describe(&self, name: &str) -> String {
        match self {
            ClusterChange::PublicEndpoint(true) => {
                format!("giving OKE cluster {name} a public endpoint")
            }
            ClusterChange::PublicEndpoint(false) => {
                format!("removing the public endpoint of OKE cluster {name}")
            }
            ClusterChange::Enhanced => format!("making OKE cluster {name} an enhanced cluster"),
            ClusterChange::OidcDiscovery(on) => format!(
                "turning OIDC discovery {} on OKE cluster {name}",
                if *on { "on" } else { "off" }
            ),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::reconcile::control_plane::Network;

    fn want(public: bool, cluster_type: &'static str, oidc_discovery: bool) -> DesiredCluster {
        DesiredCluster {
            public,
            cluster_type,
            oidc_discovery,
            cni: "OCI_VCN_IP_NATIVE",
            pods_cidr: None,
            services_cidr: "10.96.0.0/16".into(),
            kms_key: None,
            request_overrides: None,
            network: Network {
                vcn: String::new(),
                endpoint_subnet: String::new(),
                lb_subnets: Vec::new(),
            },
        }
    }

    #[test]
    fn the_first_difference_is_one_call_and_an_enhanced_cluster_stays_enhanced() {
        let o = ObservedCluster {
            public: true,
            cluster_type: "ENHANCED_CLUSTER".into(),
            ..ObservedCluster::default()
        };
        assert_eq!(
            diff(&want(true, "ENHANCED_CLUSTER", false), &o),
            CloudStep::Nothing
        );
        assert_eq!(
            diff(&want(false, "ENHANCED_CLUSTER", true), &o),
            CloudStep::Change(ClusterChange::PublicEndpoint(false))
        );
        assert_eq!(
            diff(&want(true, "ENHANCED_CLUSTER", true), &o),
            CloudStep::Change(ClusterChange::OidcDiscovery(true))
        );
        assert!(matches!(
            diff(&want(true, "BASIC_CLUSTER", false), &o),
            CloudStep::Invalid(m) if m.starts_with("spec.oke.clusterType basic")
        ));
        let basic = ObservedCluster {
            cluster_type: "BASIC_CLUSTER".into(),
            ..o
        };
        assert_eq!(
            diff(&want(true, "ENHANCED_CLUSTER", false), &basic),
            CloudStep::Change(ClusterChange::Enhanced)
        );
    }
}
