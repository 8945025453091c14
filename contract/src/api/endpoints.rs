//! Where the API server is and how it is reached: the endpoint a client dials, the public and
//! private reachability the user asks for, and the endpoints the cloud reports back.

use kube::KubeSchema;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::default_true;

/// Maximum number of CIDR blocks in `endpointAccess.publicCIDRs`.
pub const MAX_PUBLIC_CIDRS: usize = 40;

/// A Kubernetes API server endpoint: host and port.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiEndpoint {
    /// Host name or IP address the API server serves on, without scheme or port.
    #[schemars(length(min = 1, max = 512))]
    pub host: String,
    /// Port the API server serves on (443 on most clouds, 6443 on OKE).
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

impl ApiEndpoint {
    /// Valid as CAPI defines it: host non-empty and port non-zero.
    pub fn is_valid(&self) -> bool {
        !self.host.is_empty() && self.port != 0
    }

    /// `https://host:port`, with IPv6 hosts bracketed.
    pub fn https_url(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("https://[{}]:{}", self.host, self.port)
        } else {
            format!("https://{}:{}", self.host, self.port)
        }
    }
}

impl From<&crate::capi::ControlPlaneEndpoint> for ApiEndpoint {
    fn from(value: &crate::capi::ControlPlaneEndpoint) -> Self {
        ApiEndpoint {
            host: value.host.clone(),
            port: value.port,
        }
    }
}

/// Which endpoint clients should prefer when both exist.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum EndpointPreference {
    /// Prefer the public endpoint.
    Public,
    /// Prefer the private endpoint.
    Private,
}

/// The schema of `endpointAccess.preferred`, written out so the field keeps its own
/// description (kube's rewrite of optional enums would put the enum type's in its place).
fn preferred_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "enum": ["Public", "Private"], "nullable": true})
}

impl EndpointPreference {
    /// The name of the endpoint this preference selects.
    pub const fn endpoint_name(self) -> EndpointName {
        match self {
            EndpointPreference::Public => EndpointName::Public,
            EndpointPreference::Private => EndpointName::Private,
        }
    }
}

/// How the managed API server is reachable.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("self.public || self.private")
        .message("spec.endpointAccess: at least one of public and private must be true"),
    validation = Rule::new("!has(self.preferred) || (self.preferred == 'Public' ? self.public : self.private)")
        .message("spec.endpointAccess.preferred must name an enabled endpoint: Public needs public: true, Private needs private: true"),
    validation = Rule::new("!has(self.publicCIDRs) || size(self.publicCIDRs) == 0 || self.public")
        .message("spec.endpointAccess.publicCIDRs is only allowed when public is true"),
)]
pub struct EndpointAccess {
    /// Expose the API server on a public endpoint. Default true.
    #[serde(default = "default_true")]
    pub public: bool,
    /// Expose the API server on a private endpoint inside the cluster's network. Default false.
    #[serde(default)]
    pub private: bool,
    /// CIDR blocks allowed to reach the public endpoint; empty allows any address.
    #[serde(default, rename = "publicCIDRs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_PUBLIC_CIDRS), inner(length(max = 43)))]
    #[x_kube(validation = Rule::new("self.all(c, isCIDR(c))")
        .message("spec.endpointAccess.publicCIDRs must hold only CIDR blocks such as 203.0.113.0/24"))]
    pub public_cidrs: Vec<String>,
    /// The endpoint clients should prefer (the current context of the user kubeconfig, and the
    /// published `controlPlaneEndpoint`). Defaults to Public when public is true, else Private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preferred_schema")]
    pub preferred: Option<EndpointPreference>,
}

impl Default for EndpointAccess {
    fn default() -> Self {
        EndpointAccess {
            public: true,
            private: false,
            public_cidrs: Vec::new(),
            preferred: None,
        }
    }
}

impl EndpointAccess {
    /// The preferred endpoint: `preferred` if set, else Public when public is enabled, else Private.
    pub fn effective_preferred(&self) -> EndpointPreference {
        match self.preferred {
            Some(p) => p,
            None if self.public => EndpointPreference::Public,
            None => EndpointPreference::Private,
        }
    }
}

/// The name of an endpoint the cloud exposes.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EndpointName {
    /// The endpoint reachable from the internet.
    Public,
    /// The endpoint reachable only from the cluster's network.
    Private,
    /// A DNS name in front of the control plane, reachable where the cloud's policy allows
    /// (GKE's DNS-based endpoint); never preferred, listed beside the others.
    Dns,
}

impl EndpointName {
    /// `public` or `private`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndpointName::Public => "public",
            EndpointName::Private => "private",
            EndpointName::Dns => "dns",
        }
    }
}

/// One endpoint the cloud exposes for the API server (`status.endpoints[]`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Which endpoint this is: public, private or dns.
    pub name: EndpointName,
    /// Host name or IP address, without scheme or port.
    #[schemars(length(min = 1, max = 512))]
    pub host: String,
    /// Port, as the cloud reports it.
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

impl Endpoint {
    /// The host and port as an [`ApiEndpoint`].
    pub fn api_endpoint(&self) -> ApiEndpoint {
        ApiEndpoint {
            host: self.host.clone(),
            port: self.port,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::test_support::expect_rules;
    use crate::schema::crd_schema;
    use serde_json::json;

    #[test]
    fn endpoint_access_carries_its_rules() {
        let schema = crd_schema::<EndpointAccess>();
        assert_eq!(
            schema["properties"]["publicCIDRs"]["maxItems"],
            MAX_PUBLIC_CIDRS
        );
        expect_rules(
            &schema,
            &[
                (
                    ".",
                    "self.public || self.private",
                    "at least one of public and private",
                ),
                (
                    ".",
                    "self.preferred == 'Public'",
                    "preferred must name an enabled endpoint",
                ),
                (
                    ".",
                    "self.publicCIDRs",
                    "publicCIDRs is only allowed when public is true",
                ),
                (
                    ".publicCIDRs",
                    "isCIDR(c)",
                    "publicCIDRs must hold only CIDR blocks",
                ),
            ],
        );
    }

    #[test]
    fn the_preferred_endpoint_defaults_to_an_enabled_one() {
        let private_only = EndpointAccess {
            public: false,
            private: true,
            ..EndpointAccess::default()
        };
        assert_eq!(
            private_only.effective_preferred(),
            EndpointPreference::Private
        );
        assert_eq!(
            EndpointAccess::default().effective_preferred(),
            EndpointPreference::Public
        );
        let chosen = EndpointAccess {
            private: true,
            preferred: Some(EndpointPreference::Private),
            ..EndpointAccess::default()
        };
        assert_eq!(
            chosen.effective_preferred().endpoint_name(),
            EndpointName::Private
        );
    }

    #[test]
    fn the_preferred_field_keeps_its_own_description() {
        let schema = crd_schema::<EndpointAccess>();
        let preferred = &schema["properties"]["preferred"];
        assert_eq!(preferred["enum"], json!(["Public", "Private"]));
        let description = preferred["description"].as_str().unwrap_or_default();
        assert!(description.contains("Defaults to Public"), "{description}");
    }

    #[test]
    fn https_urls_bracket_ipv6_hosts() {
        let ep = |host: &str| ApiEndpoint {
            host: host.into(),
            port: 443,
        };
        assert_eq!(ep("h.example.com").https_url(), "https://h.example.com:443");
        assert_eq!(ep("::1").https_url(), "https://[::1]:443");
    }
}
