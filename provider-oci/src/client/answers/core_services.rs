//! Core Services' answers (networking, API 20160918).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Tags, tags_of};

/// What every network resource the provider finds by name gives: its OCID, display name,
/// lifecycle state and freeform tags.
pub trait NetworkResource: serde::de::DeserializeOwned + Clone {
    /// The OCID.
    fn id(&self) -> &str;
    /// The display name.
    fn display_name(&self) -> &str;
    /// The lifecycle state.
    fn lifecycle_state(&self) -> &str;
    /// The freeform tags.
    fn tags(&self) -> BTreeMap<String, String>;
}

macro_rules! network_resource {
    ($($t:ty),*) => {$(
        impl NetworkResource for $t {
            fn id(&self) -> &str {
                &self.id
            }
            fn display_name(&self) -> &str {
                &self.display_name
            }
            fn lifecycle_state(&self) -> &str {
                &self.lifecycle_state
            }
            fn tags(&self) -> BTreeMap<String, String> {
                tags_of(&self.freeform_tags)
            }
        }
    )*};
}

network_resource!(
    Vcn,
    Subnet,
    InternetGateway,
    NatGateway,
    ServiceGateway,
    RouteTable,
    SecurityList
);

/// A VCN (GetVcn, ListVcns).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vcn {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// `PROVISIONING`, `AVAILABLE`, `TERMINATING`, `TERMINATED`, `UPDATING`.
    pub lifecycle_state: String,
    /// The first CIDR block.
    pub cidr_block: String,
    /// Every CIDR block.
    pub cidr_blocks: Vec<String>,
    /// The display name (beyond the SDK: network resources are found by it; without it, a
    /// second one would be made).
    pub display_name: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// A subnet (GetSubnet, ListSubnets).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subnet {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// Its IPv4 block (the SDK leaves it optional: a subnet may be IPv6 only).
    pub cidr_block: Option<String>,
    /// Its route table.
    pub route_table_id: String,
    /// The MAC address of its virtual router.
    pub virtual_router_mac: String,
    /// The display name (beyond the SDK, for the reason of [`Vcn::display_name`]).
    pub display_name: String,
    /// Whether its VNICs may have public IPs; needed to tell whether an endpoint subnet is public.
    pub prohibit_public_ip_on_vnic: Option<bool>,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// An internet gateway (ListInternetGateways).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InternetGateway {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// The display name (beyond the SDK, for the reason of [`Vcn::display_name`]).
    pub display_name: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// A NAT gateway (ListNatGateways).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NatGateway {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// Whether it blocks traffic.
    pub block_traffic: bool,
    /// Its public IP.
    pub nat_ip: String,
    /// When it was made (RFC 3339).
    pub time_created: String,
    /// The display name (beyond the SDK, for the reason of [`Vcn::display_name`]).
    pub display_name: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// A service gateway (ListServiceGateways).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceGateway {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// Whether it blocks traffic.
    pub block_traffic: bool,
    /// The services it reaches.
    pub services: Vec<ServiceIdResponseDetails>,
    /// The display name (beyond the SDK, for the reason of [`Vcn::display_name`]).
    pub display_name: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// One service a service gateway reaches.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceIdResponseDetails {
    /// The service's OCID.
    pub service_id: String,
    /// The service's name.
    pub service_name: String,
}

/// One service of the Oracle Services Network (ListServices).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    /// The OCID.
    pub id: String,
    /// The name.
    pub name: String,
    /// Its service CIDR label (`all-iad-services-in-oracle-services-network`).
    pub cidr_block: String,
    /// What it is.
    pub description: String,
}

/// A route table (ListRouteTables).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteTable {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// Its rules.
    pub route_rules: Vec<RouteRule>,
    /// The display name (beyond the SDK, for the reason of [`Vcn::display_name`]).
    pub display_name: String,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// One route.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteRule {
    /// Where it routes to.
    pub network_entity_id: String,
}

/// A security list (ListSecurityLists).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityList {
    /// The OCID.
    pub id: String,
    /// The compartment.
    pub compartment_id: String,
    /// The display name.
    pub display_name: String,
    /// The lifecycle state.
    pub lifecycle_state: String,
    /// Its VCN.
    pub vcn_id: String,
    /// When it was made (RFC 3339).
    pub time_created: String,
    /// Its rules for traffic in.
    pub ingress_security_rules: Vec<IngressSecurityRule>,
    /// Its rules for traffic out.
    pub egress_security_rules: Vec<EgressSecurityRule>,
    /// Freeform tags.
    pub freeform_tags: Tags,
}

/// One rule for traffic in.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngressSecurityRule {
    /// The protocol (`6`, `all`).
    pub protocol: String,
    /// Where the traffic comes from.
    pub source: String,
}

/// One rule for traffic out.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EgressSecurityRule {
    /// The protocol (`6`, `all`).
    pub protocol: String,
    /// Where the traffic goes.
    pub destination: String,
}
