//! What the spec asks OKE for, taken once per pass and in OKE's terms: [`DesiredCluster`],
//! which create, update and diff all read, and [`validate`], which makes it. Pure.

use provider_runtime::ProviderError;

use crate::api::{ClusterType, CniType, OKEControlPlane};
use crate::scope::Infra;

/// The default pods' block of the flannel overlay.
pub const DEFAULT_PODS_CIDR: &str = "10.244.0.0/16";

/// The default Services' block.
pub const DEFAULT_SERVICES_CIDR: &str = "10.96.0.0/16";

/// What the spec asks OKE for, in OKE's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredCluster {
    /// `endpointConfig.isPublicIpEnabled`.
    pub public: bool,
    /// `type` (`BASIC_CLUSTER`, `ENHANCED_CLUSTER`).
    pub cluster_type: &'static str,
    /// `options.openIdConnectDiscovery.isOpenIdConnectDiscoveryEnabled`.
    pub oidc_discovery: bool,
    /// `clusterPodNetworkOptions[].cniType` (create only).
    pub cni: &'static str,
    /// The pods' block, with the flannel overlay only (create only).
    pub pods_cidr: Option<String>,
    /// The Services' block (create only).
    pub services_cidr: String,
    /// `kmsKeyId`, when the Secrets are encrypted (create only).
    pub kms_key: Option<String>,
    /// The user's `spec.oke.requestOverrides`, when they ask for anything (create only).
    pub request_overrides: Option<serde_json::Value>,
    /// Where the cluster is created.
    pub network: Network,
}

/// Where a cluster is created, from its infrastructure.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The VCN (empty: not known).
    pub vcn: String,
    /// The API endpoint's subnet (empty: not known).
    pub endpoint_subnet: String,
    /// The Service load balancers' subnets.
    pub lb_subnets: Vec<String>,
}

/// OKE's name of a cluster type.
pub fn cluster_type(t: ClusterType) -> &'static str {
    match t {
        ClusterType::Basic => "BASIC_CLUSTER",
        ClusterType::Enhanced => "ENHANCED_CLUSTER",
    }
}

/// The spec of `cp`, for the cluster in `infra`. OKE takes everything the CRD admits, so
/// nothing is refused here; a network the create needs and lacks is refused by the create, a
/// cluster type OKE cannot turn back by the diff.
///
/// # Errors
/// None today; the signature is the role's.
pub fn validate(cp: &OKEControlPlane, infra: &Infra) -> Result<DesiredCluster, ProviderError> {
    let oke = &cp.spec.oke;
    let common = &cp.spec.common;
    let (cni, pods_cidr) = match oke.cni_type {
        CniType::VcnNative => ("OCI_VCN_IP_NATIVE", None),
        CniType::Flannel => (
            "FLANNEL_OVERLAY",
            Some(
                oke.pods_cidr
                    .clone()
                    .unwrap_or_else(|| DEFAULT_PODS_CIDR.to_string()),
            ),
        ),
    };
    Ok(DesiredCluster {
        public: common.endpoint_access.public,
        cluster_type: cluster_type(oke.cluster_type),
        oidc_discovery: common.oidc_issuer.as_ref().is_some_and(|o| o.enabled),
        cni,
        pods_cidr,
        services_cidr: oke
            .services_cidr
            .clone()
            .unwrap_or_else(|| DEFAULT_SERVICES_CIDR.to_string()),
        kms_key: common.encryption.as_ref().map(|e| e.kms_key_id.clone()),
        request_overrides: contract::overrides::effective(oke.request_overrides.as_ref()).cloned(),
        network: Network {
            vcn: infra.vcn.clone(),
            endpoint_subnet: infra.endpoint_subnet.clone(),
            lb_subnets: infra.lb_subnets.clone(),
        },
    })
}
