//! The spec and status blocks every provider composes into its CRDs (`api.md`).
//!
//! The same concept has the same name, shape and admission rules on every cloud; only the block
//! named after the cloud (`eks:`, `aks:`, `gke:`, `oke:`) differs, and that lives in the
//! provider crate.
//!
//! Every type here serializes with camelCase names and has a JSON schema whose descriptions come
//! from the `///` comments (they are what `kubectl explain` shows). Admission rules are CEL
//! (`x-kubernetes-validations`), kept to what Kubernetes 1.33 accepts and bounded (`maxItems`,
//! `maxLength`, `maxProperties`) so the estimated CEL cost stays within the apiserver's budget.
//! Every rule's message names the field it is about, as the user writes it under `spec`.
//!
//! # Composing
//! [`ClusterSpecCommon`], [`ControlPlaneSpecCommon`], [`MachinePoolSpecCommon`] and the three
//! `…StatusCommon` blocks are meant to be embedded with `#[serde(flatten)]` in a provider's spec
//! and status. Flattening works with the schema generation kube uses: the block's properties,
//! `required` list and object-level CEL rules land on the provider's object (see the tests in
//! [`crate::schema`]).

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::KubeSchema;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::naming::OWNERSHIP_TAG_PREFIX;

/// Maximum number of CIDR blocks in `endpointAccess.publicCIDRs`.
pub const MAX_PUBLIC_CIDRS: usize = 40;
/// Maximum number of entries in `additionalTags`.
pub const MAX_ADDITIONAL_TAGS: usize = 50;
/// Maximum length of an `additionalTags` key.
pub const MAX_TAG_KEY_LEN: usize = 128;
/// Maximum length of an `additionalTags` value.
pub const MAX_TAG_VALUE_LEN: usize = 256;

fn default_true() -> bool {
    true
}

fn is_false(value: &bool) -> bool {
    !*value
}

// ---------------------------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Control plane blocks
// ---------------------------------------------------------------------------------------------

/// Control plane log types the cloud ships to its logging service.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Logging {
    /// Ship API server logs.
    #[serde(default)]
    pub api_server: bool,
    /// Ship audit logs.
    #[serde(default)]
    pub audit: bool,
    /// Ship authenticator logs.
    #[serde(default)]
    pub authenticator: bool,
    /// Ship controller manager logs.
    #[serde(default)]
    pub controller_manager: bool,
    /// Ship scheduler logs.
    #[serde(default)]
    pub scheduler: bool,
}

/// Envelope encryption of Kubernetes Secrets with a key from the cloud's key management service.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Encryption {
    /// The key's identifier in the cloud's KMS (AWS KMS key ARN, Azure Key Vault key ID,
    /// OCI Vault key OCID).
    #[serde(rename = "kmsKeyID")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: String,
}

/// A managed add-on the cloud installs into the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addon {
    /// The add-on's name in the cloud, e.g. `vpc-cni` or `coredns`.
    #[schemars(length(min = 1, max = 128))]
    pub name: String,
    /// The add-on version; empty lets the cloud choose its default for the cluster version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub version: Option<String>,
    /// Add-on configuration as the cloud accepts it (a JSON or YAML document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 65536))]
    pub configuration: Option<String>,
}

/// The cluster's OIDC issuer for workload identity federation (IRSA-style).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcIssuer {
    /// Enable the OIDC issuer.
    #[serde(default)]
    pub enabled: bool,
}

/// Where the provider's cloud credentials come from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum IdentityKind {
    /// A Secret in the object's namespace, named by `name`.
    Secret,
    /// The controller's own identity (instance role, workload identity, …).
    Controller,
}

/// The credentials the provider uses for this cluster.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("self.kind != 'Secret' || (has(self.name) && size(self.name) > 0)")
        .message("spec.identityRef.name is required when spec.identityRef.kind is Secret"),
    validation = Rule::new("self.kind != 'Controller' || !has(self.name)")
        .message("spec.identityRef.name must be empty when spec.identityRef.kind is Controller"),
)]
pub struct IdentityRef {
    /// Secret: a Secret in this namespace holds the credentials. Controller: use the
    /// controller's own identity.
    pub kind: IdentityKind,
    /// The Secret's name (kind Secret only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub name: Option<String>,
}

/// Tags added to every cloud resource the provider creates (AWS tags, Azure tags, GCP labels,
/// OCI freeform tags).
///
/// At most 50 entries, keys 1–128 characters, values up to 256; keys under the ownership tag
/// prefix are reserved for the provider. A cloud with tighter limits adds its own rules.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(transparent)]
pub struct AdditionalTags(pub BTreeMap<String, String>);

impl Deref for AdditionalTags {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for AdditionalTags {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl AdditionalTags {
    /// Whether there are no tags (for `skip_serializing_if`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl JsonSchema for AdditionalTags {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AdditionalTags".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let key_rule = format!(
            "self.all(k, size(k) >= 1 && size(k) <= {MAX_TAG_KEY_LEN} && !k.startsWith('{OWNERSHIP_TAG_PREFIX}'))"
        );
        let key_message = format!(
            "spec.additionalTags keys must be 1 to {MAX_TAG_KEY_LEN} characters and must not start with {OWNERSHIP_TAG_PREFIX} (reserved for the provider's ownership tag)"
        );
        json_schema!({
            "description": "Tags added to every cloud resource the provider creates (AWS tags, Azure tags, GCP labels, OCI freeform tags). At most 50 entries; keys 1-128 characters, values up to 256.",
            "type": "object",
            "maxProperties": MAX_ADDITIONAL_TAGS,
            "additionalProperties": {"type": "string", "maxLength": MAX_TAG_VALUE_LEN},
            "x-kubernetes-validations": [{"rule": key_rule, "message": key_message}],
        })
    }
}

/// The network the cluster runs in: bring your own (ids) or let the provider create one (a CIDR).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("!((has(self.id) || (has(self.subnetIDs) && size(self.subnetIDs) > 0)) && has(self.cidrBlock))")
        .message("spec.network: set either id/subnetIDs (bring your own network) or cidrBlock (the provider creates one), not both"),
    validation = Rule::new("self == oldSelf")
        .message("spec.network is immutable once set"),
)]
pub struct NetworkSpec {
    /// An existing network to use: AWS VPC ID, Azure VNet resource ID, GCP network name or
    /// self link, OCI VCN OCID.
    #[serde(default, rename = "id", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub id: Option<String>,
    /// Existing subnets to use (cloud ids, resource IDs or self links).
    #[serde(default, rename = "subnetIDs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 512)))]
    pub subnet_ids: Vec<String>,
    /// The CIDR block of a network the provider creates (with its subnets), e.g. 10.0.0.0/16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 43))]
    #[x_kube(validation = Rule::new("isCIDR(self)")
        .message("spec.network.cidrBlock must be a CIDR block such as 10.0.0.0/16"))]
    pub cidr_block: Option<String>,
}

impl NetworkSpec {
    /// Whether the user brings an existing network (an id or subnet ids).
    pub fn is_bring_your_own(&self) -> bool {
        self.id.is_some() || !self.subnet_ids.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// Machine pool blocks
// ---------------------------------------------------------------------------------------------

/// Autoscaling bounds; when present the cloud's autoscaler owns the node count.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.minReplicas <= self.maxReplicas")
    .message("spec.scaling.minReplicas must not be greater than spec.scaling.maxReplicas"))]
pub struct NodeScaling {
    /// The fewest nodes the autoscaler may scale to (0 or more).
    #[schemars(range(min = 0, max = 1000))]
    pub min_replicas: i32,
    /// The most nodes the autoscaler may scale to.
    #[schemars(range(min = 1, max = 1000))]
    pub max_replicas: i32,
}

/// The effect of a node taint.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum TaintEffect {
    /// Pods that do not tolerate the taint are not scheduled.
    NoSchedule,
    /// The scheduler avoids the node for pods that do not tolerate the taint.
    PreferNoSchedule,
    /// Pods that do not tolerate the taint are evicted.
    NoExecute,
}

/// The syntax of a Kubernetes qualified name (label keys, taint keys): an optional DNS
/// subdomain prefix and `/`, then a name of letters, digits, `-`, `_` and `.` that starts and
/// ends with a letter or digit.
/// (Written without backslashes, so it reads the same in a JSON-schema pattern and in a CEL
/// string literal.)
pub const QUALIFIED_NAME_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";

/// The lengths of a Kubernetes qualified name: a prefix of at most 253 characters, a name of at
/// most 63.
pub const QUALIFIED_NAME_LENGTHS: &str = "^([-a-z0-9.]{1,253}/)?[^/]{1,63}$";

/// The syntax of a Kubernetes label value: empty, or at most 63 letters, digits, `-`, `_` and
/// `.`, starting and ending with a letter or digit.
pub const LABEL_VALUE_PATTERN: &str = "^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$";

/// A taint put on every node of the pool.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key, a qualified name such as `example.com/dedicated`.
    #[schemars(length(min = 1, max = 317))]
    #[x_kube(validation = Rule::new(format!("self.matches('{QUALIFIED_NAME_PATTERN}') && self.matches('{QUALIFIED_NAME_LENGTHS}')"))
        .message("spec.taints[].key must be a qualified name such as example.com/dedicated: an optional DNS subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"))]
    pub key: String,
    /// The taint value (may be empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 63),
        pattern(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
    )]
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: TaintEffect,
}

const INT_OR_PERCENT_RULE: &str =
    "type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')";

/// How many nodes an update may add or take away at a time.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.maxSurge) || !has(self.maxUnavailable) || !(string(self.maxSurge) in ['0', '0%'] && string(self.maxUnavailable) in ['0', '0%'])")
    .message("spec.update.maxSurge and spec.update.maxUnavailable must not both be 0"))]
pub struct UpdateStrategy {
    /// Nodes added above the desired count during an update: a number (e.g. 1) or a percentage
    /// of the desired count (e.g. 25%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(INT_OR_PERCENT_RULE)
        .message("spec.update.maxSurge must be a number of 0 or more, or a percentage from 0% to 100%, e.g. 1 or 25%"))]
    pub max_surge: Option<IntOrString>,
    /// Nodes that may be unavailable during an update: a number (e.g. 1) or a percentage of the
    /// desired count (e.g. 25%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new(INT_OR_PERCENT_RULE)
        .message("spec.update.maxUnavailable must be a number of 0 or more, or a percentage from 0% to 100%, e.g. 1 or 25%"))]
    pub max_unavailable: Option<IntOrString>,
}

// ---------------------------------------------------------------------------------------------
// Version
// ---------------------------------------------------------------------------------------------

/// A Kubernetes version as written in `spec.version`: `v1.31` or `v1.31.2`.
///
/// The schema rejects a value without the leading `v` with a message showing the right form.
/// The Rust type does not re-validate on deserialization; use [`Version::parse`] (or
/// [`crate::version::KubeVersion::parse`]) to get the numbers.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(transparent)]
pub struct Version(pub String);

impl Version {
    /// Parses the numbers out of the version.
    ///
    /// # Errors
    /// [`crate::version::VersionError`] when the value is not `vMAJOR.MINOR[.PATCH]`.
    pub fn parse(&self) -> Result<crate::version::KubeVersion, crate::version::VersionError> {
        crate::version::KubeVersion::parse(&self.0)
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// CEL for `spec.version`: must start with `v`.
pub const VERSION_PREFIX_RULE: &str = "self.startsWith('v')";
/// CEL for `spec.version`: `vMAJOR.MINOR` or `vMAJOR.MINOR.PATCH`.
pub const VERSION_FORM_RULE: &str = r"self.matches('^v[0-9]+\\.[0-9]+(\\.[0-9]+)?$')";

/// CEL transition rule for `spec.version`: no lower major, or same major and no lower minor,
/// than the stored value. Values that do not parse are left to the form rules.
pub const VERSION_NO_DOWNGRADE_RULE: &str = concat!(
    "self == oldSelf",
    " || !self.matches('^v[0-9]+\\\\.[0-9]+(\\\\.[0-9]+)?$')",
    " || !oldSelf.matches('^v[0-9]+\\\\.[0-9]+(\\\\.[0-9]+)?$')",
    " || int(self.substring(1).split('.')[0]) > int(oldSelf.substring(1).split('.')[0])",
    " || (int(self.substring(1).split('.')[0]) == int(oldSelf.substring(1).split('.')[0])",
    " && int(self.split('.')[1]) >= int(oldSelf.split('.')[1]))"
);

impl JsonSchema for Version {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Version".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Kubernetes version, v-prefixed: \"v1.31\" (the cloud picks the patch) or \"v1.31.2\".",
            "type": "string",
            "minLength": 1,
            "maxLength": 32,
            "x-kubernetes-validations": [
                {
                    "rule": VERSION_PREFIX_RULE,
                    "messageExpression": "'spec.version \"' + self + '\" must start with \"v\", e.g. \"v1.31\" or \"v1.31.2\"'",
                },
                {
                    "rule": format!("!self.startsWith('v') || {VERSION_FORM_RULE}"),
                    "messageExpression": "'spec.version \"' + self + '\" must have the form vMAJOR.MINOR or vMAJOR.MINOR.PATCH, e.g. \"v1.31\" or \"v1.31.2\"'",
                },
                {
                    "rule": VERSION_NO_DOWNGRADE_RULE,
                    "messageExpression": "'spec.version cannot go down from ' + oldSelf + ' to ' + self + ': downgrades are not supported'",
                },
            ],
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Status blocks
// ---------------------------------------------------------------------------------------------

/// A cloud operation in flight, remembered so the next pass picks it up instead of waiting.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// The cloud's identifier of the operation (update ID, operation name, work request OCID, …).
    #[schemars(length(max = 1024))]
    pub id: String,
    /// What the operation does: Create, Update, Upgrade or Delete.
    pub kind: OperationKind,
    /// When the provider started the operation.
    pub started: Time,
}

impl Operation {
    /// The operation `id` of `kind`, started at `now`.
    pub fn new(id: impl Into<String>, kind: OperationKind, now: jiff::Timestamp) -> Self {
        Self {
            id: id.into(),
            kind,
            started: Time(now),
        }
    }

    /// How long ago it started (zero if `now` is before that).
    pub fn age(&self, now: jiff::Timestamp) -> std::time::Duration {
        let nanos = now
            .as_nanosecond()
            .saturating_sub(self.started.0.as_nanosecond());
        std::time::Duration::from_nanos(u64::try_from(nanos).unwrap_or(0))
    }

    /// How soon to look again while the cloud works on it: after as long as it has run so far,
    /// no sooner than `first` and no later than `poll`. An operation the cloud finishes at once
    /// is seen within `first`; a long one (an EKS create takes ten minutes) costs a few reads
    /// more than polling at `poll` from the start (5, 5, 10, 20 s, then every `poll`).
    pub fn look_again_after(
        &self,
        now: jiff::Timestamp,
        first: std::time::Duration,
        poll: std::time::Duration,
    ) -> std::time::Duration {
        self.age(now).clamp(first.min(poll), poll)
    }
}

/// What a cloud operation does; the same four kinds on every cloud.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum OperationKind {
    /// Creates the resource.
    Create,
    /// Changes its configuration (endpoint access, logging, scaling, labels, …).
    Update,
    /// Moves it to another Kubernetes version.
    Upgrade,
    /// Deletes it.
    Delete,
}

impl OperationKind {
    /// The name in `status.operation.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Update => "Update",
            Self::Upgrade => "Upgrade",
            Self::Delete => "Delete",
        }
    }
}

impl std::fmt::Display for OperationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The last time `requestOverrides` went out with a cloud request (the same on every kind).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestOverridesStatus {
    /// The cloud operation whose request body was patched, e.g. CreateCluster.
    #[schemars(length(max = 64))]
    pub operation: String,
    /// When the patched request was sent.
    pub applied_at: Time,
    /// The object generation whose overrides were applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// The state of the `<cluster>-kubeconfig` Secret's credential.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeconfigStatus {
    /// When the credential in the Secret expires; the provider refreshes it well before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Time>,
}

/// A failure domain (zone) the cloud offers (v1beta2 shape: an entry of a list).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomain {
    /// The zone's name, e.g. us-east-1a.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Whether the control plane may use this zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Free-form attributes of the zone.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

/// How many replicas run one version (`status.versions[]` of a control plane).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionReplicas {
    /// The Kubernetes version, v-prefixed.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
    /// How many replicas run it (a managed control plane reports 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// `status.initialization` of an InfraCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfraClusterInitialization {
    /// True once the base infrastructure (network, resource group, …) exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

/// `status.initialization` of a ControlPlane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneInitialization {
    /// True once the API server accepts requests and the kubeconfig Secret exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_initialized: Option<bool>,
}

/// `status.initialization` of an InfraMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolInitialization {
    /// True once the node pool exists in the cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

// ---------------------------------------------------------------------------------------------
// Composed blocks
// ---------------------------------------------------------------------------------------------

/// The spec fields every `XCluster` (InfraCluster) shares; flatten into the provider's spec.
///
/// The account scope (AKS subscription and resource group, GKE project, OKE compartment) is
/// cloud-specific and lives in the cloud's block.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpecCommon {
    /// The cloud region (AWS region, Azure location, GCP region, OCI region).
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.region is immutable"))]
    pub region: String,
    /// The network: bring your own (ids) or a CIDR for the provider to create one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
    /// Where the credentials come from; absent means the controller's own identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_ref: Option<IdentityRef>,
    /// Tags added to every cloud resource the provider creates.
    #[serde(default, skip_serializing_if = "AdditionalTags::is_empty")]
    pub additional_tags: AdditionalTags,
}

/// The spec fields every `XControlPlane` shares; flatten into the provider's spec.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cloudName) || has(self.cloudName)")
    .message("spec.cloudName cannot be removed once set"))]
pub struct ControlPlaneSpecCommon {
    /// Kubernetes version, v-prefixed: v1.31 or v1.31.2. Upgrades go one minor version at a
    /// time; a downgrade is rejected.
    pub version: Version,
    /// The endpoint clients use. Leave empty and the provider publishes the preferred endpoint;
    /// set it (e.g. a DNS name in front of a private endpoint) and it is kept as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// Public and private reachability of the API server.
    #[serde(default)]
    pub endpoint_access: EndpointAccess,
    /// Control plane logs shipped to the cloud's logging service.
    #[serde(default)]
    pub logging: Logging,
    /// Envelope encryption of Secrets with a cloud KMS key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<Encryption>,
    /// Managed add-ons, at most one per name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub addons: Vec<Addon>,
    /// The cluster's OIDC issuer for workload identity federation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc_issuer: Option<OidcIssuer>,
    /// The cluster's name in the cloud. Default: derived from namespace and name within the
    /// cloud's limits. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.cloudName is immutable"))]
    pub cloud_name: Option<String>,
    /// Adopt an existing cloud cluster of the same name that is not tagged as ours, instead of
    /// stopping with NameConflict.
    #[serde(default, skip_serializing_if = "is_false")]
    pub adopt: bool,
}

/// The spec fields every `XMachinePool` shares; flatten into the provider's spec.
///
/// Count, version and zones come from the owning `MachinePool`, not from here.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cloudName) || has(self.cloudName)")
    .message("spec.cloudName cannot be removed once set"))]
pub struct MachinePoolSpecCommon {
    /// The instance type / VM size / machine type / shape of the nodes.
    #[schemars(length(min = 1, max = 128))]
    pub machine_type: String,
    /// Boot disk size in GB; empty uses the cloud's default.
    #[serde(
        default,
        rename = "diskSizeGB",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = 65536))]
    pub disk_size_gb: Option<i32>,
    /// The node image (AMI type, OS SKU, image type, image OCID); empty uses the cloud's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image: Option<String>,
    /// Kubernetes labels put on every node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 64, "additionalProperties" = {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE_PATTERN}))]
    #[x_kube(validation = Rule::new(format!("self.all(k, k.matches('{QUALIFIED_NAME_PATTERN}') && k.matches('{QUALIFIED_NAME_LENGTHS}'))"))
        .message("spec.labels keys must be Kubernetes label keys such as example.com/role: an optional DNS subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"))]
    pub labels: BTreeMap<String, String>,
    /// Taints put on every node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["key", "effect"]))]
    pub taints: Vec<Taint>,
    /// Autoscaling bounds. When set, the cloud's autoscaler owns the node count and the provider
    /// writes it back to MachinePool.spec.replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<NodeScaling>,
    /// Run the nodes on spot / preemptible capacity.
    #[serde(default, skip_serializing_if = "is_false")]
    pub spot: bool,
    /// How many nodes an update may add or take away at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateStrategy>,
    /// Subnets for the nodes; empty uses the cluster's.
    #[serde(default, rename = "subnetIDs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 512)))]
    pub subnet_ids: Vec<String>,
    /// The node pool's name in the cloud. Default: derived within the cloud's limits. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.cloudName is immutable"))]
    pub cloud_name: Option<String>,
    /// Adopt an existing node pool of the same name that is not tagged as ours.
    #[serde(default, skip_serializing_if = "is_false")]
    pub adopt: bool,
    /// Written by the provider: the provider IDs of the pool's nodes, exactly as the cloud
    /// writes them into Node.spec.providerID.
    #[serde(
        default,
        rename = "providerIDList",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 10000), inner(length(min = 1, max = 512)))]
    pub provider_id_list: Vec<String>,
}

/// The status fields every `XCluster` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfraClusterStatusCommon {
    /// Contract milestones: provisioned once the base infrastructure exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<InfraClusterInitialization>,
    /// v1beta1 contract: true once provisioned (kept for older Cluster API cores).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// The zones the cloud offers in the region.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub failure_domains: Vec<FailureDomain>,
    /// Conditions: Ready, NetworkReady, Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

fn always_true() -> bool {
    true
}

/// The status fields every `XControlPlane` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneStatusCommon {
    /// Contract milestones: controlPlaneInitialized once the API server accepts requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<ControlPlaneInitialization>,
    /// v1beta1 contract: true once the API server accepts requests.
    #[serde(default, skip_serializing_if = "is_false")]
    pub initialized: bool,
    /// v1beta1 contract: true once the control plane is ready.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// Always true: the cloud runs the control plane, so Cluster API drains and deletes worker
    /// Nodes itself.
    #[serde(default = "always_true")]
    pub external_managed_control_plane: bool,
    /// The Kubernetes version running, v-prefixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub version: Option<String>,
    /// Versions running and how many replicas run each (read by Cluster API topology).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub versions: Vec<VersionReplicas>,
    /// Every endpoint the cloud exposes for the API server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub endpoints: Vec<Endpoint>,
    /// The cluster's identifier in the cloud (ARN, resource ID, self link, OCID).
    #[serde(default, rename = "cloudID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub cloud_id: Option<String>,
    /// The cloud operation in flight, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    /// The state of the kubeconfig Secret's credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig: Option<KubeconfigStatus>,
    /// Conditions: Ready, Available, KubeconfigReady, Upgrading, Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

impl ControlPlaneStatusCommon {
    /// Whether the control plane reports itself initialized (either contract's field).
    pub fn control_plane_initialized(&self) -> bool {
        self.initialized
            || self
                .initialization
                .as_ref()
                .and_then(|i| i.control_plane_initialized)
                == Some(true)
    }
}

impl Default for ControlPlaneStatusCommon {
    fn default() -> Self {
        ControlPlaneStatusCommon {
            initialization: None,
            initialized: false,
            ready: false,
            external_managed_control_plane: true,
            version: None,
            versions: Vec::new(),
            endpoints: Vec::new(),
            cloud_id: None,
            operation: None,
            kubeconfig: None,
            conditions: Vec::new(),
        }
    }
}

/// The status fields every `XMachinePool` shares; flatten into the provider's status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatusCommon {
    /// Contract milestones: provisioned once the node pool exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<MachinePoolInitialization>,
    /// v1beta1 contract (still read by Cluster API v1.14 for pools): true once provisioned.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready: bool,
    /// The observed node count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The Kubernetes version the nodes run, v-prefixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub version: Option<String>,
    /// The cloud operation in flight, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    /// Conditions: Ready, Upgrading, NodesVisible (whether Cluster API core reaches the workload API
    /// server to see the nodes: False for a private-only cluster, never part of Ready), Paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{crd_schema, structural_problems, unbounded_values, validation_rules};
    use kube::{CustomResource, CustomResourceExt};
    use serde_json::{Value, json};

    fn assert_structural(name: &str, schema: &Value) {
        let problems = structural_problems(schema);
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }

    #[test]
    fn every_block_has_a_structural_schema() {
        let schemas = [
            ("ApiEndpoint", crd_schema::<ApiEndpoint>()),
            ("EndpointAccess", crd_schema::<EndpointAccess>()),
            ("Endpoint", crd_schema::<Endpoint>()),
            ("Logging", crd_schema::<Logging>()),
            ("Encryption", crd_schema::<Encryption>()),
            ("Addon", crd_schema::<Addon>()),
            ("OidcIssuer", crd_schema::<OidcIssuer>()),
            ("IdentityRef", crd_schema::<IdentityRef>()),
            ("AdditionalTags", crd_schema::<AdditionalTags>()),
            ("NetworkSpec", crd_schema::<NetworkSpec>()),
            ("NodeScaling", crd_schema::<NodeScaling>()),
            ("Taint", crd_schema::<Taint>()),
            ("UpdateStrategy", crd_schema::<UpdateStrategy>()),
            ("Version", crd_schema::<Version>()),
            ("Operation", crd_schema::<Operation>()),
            ("KubeconfigStatus", crd_schema::<KubeconfigStatus>()),
            ("FailureDomain", crd_schema::<FailureDomain>()),
            ("VersionReplicas", crd_schema::<VersionReplicas>()),
            ("ClusterSpecCommon", crd_schema::<ClusterSpecCommon>()),
            (
                "ControlPlaneSpecCommon",
                crd_schema::<ControlPlaneSpecCommon>(),
            ),
            (
                "MachinePoolSpecCommon",
                crd_schema::<MachinePoolSpecCommon>(),
            ),
            (
                "InfraClusterStatusCommon",
                crd_schema::<InfraClusterStatusCommon>(),
            ),
            (
                "ControlPlaneStatusCommon",
                crd_schema::<ControlPlaneStatusCommon>(),
            ),
            (
                "MachinePoolStatusCommon",
                crd_schema::<MachinePoolStatusCommon>(),
            ),
        ];
        for (name, schema) in &schemas {
            assert_structural(name, schema);
        }
    }

    #[test]
    fn spec_blocks_bound_every_value_cel_rules_can_see() {
        for (name, schema) in [
            ("ClusterSpecCommon", crd_schema::<ClusterSpecCommon>()),
            (
                "ControlPlaneSpecCommon",
                crd_schema::<ControlPlaneSpecCommon>(),
            ),
            (
                "MachinePoolSpecCommon",
                crd_schema::<MachinePoolSpecCommon>(),
            ),
        ] {
            let unbounded = unbounded_values(&schema);
            assert!(unbounded.is_empty(), "{name}: {unbounded:?}");
        }
    }

    /// `(path, rule fragment, message fragment)` for every rule a block must carry.
    fn expect_rules(schema: &Value, expected: &[(&str, &str, &str)]) {
        let rules = validation_rules(schema);
        for (path, rule, message) in expected {
            let hit = rules.iter().any(|r| {
                r.path == *path
                    && r.rule.contains(rule)
                    && r.message
                        .as_deref()
                        .or(r.message_expression.as_deref())
                        .is_some_and(|m| m.contains(message))
            });
            assert!(
                hit,
                "missing rule at {path}: {rule} / {message} in {rules:#?}"
            );
        }
    }

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
    fn identity_network_and_tags_carry_their_rules() {
        expect_rules(
            &crd_schema::<ClusterSpecCommon>(),
            &[
                (".region", "self == oldSelf", "spec.region is immutable"),
                (
                    ".identityRef",
                    "self.kind != 'Secret'",
                    "name is required when spec.identityRef.kind is Secret",
                ),
                (".network", "has(self.cidrBlock)", "not both"),
                (".network", "self == oldSelf", "spec.network is immutable"),
                (
                    ".network.cidrBlock",
                    "isCIDR(self)",
                    "spec.network.cidrBlock must be a CIDR",
                ),
                (
                    ".additionalTags",
                    OWNERSHIP_TAG_PREFIX,
                    "must not start with capi-managed-",
                ),
            ],
        );
    }

    #[test]
    fn control_plane_spec_carries_version_and_immutability_rules() {
        expect_rules(
            &crd_schema::<ControlPlaneSpecCommon>(),
            &[
                (
                    ".version",
                    VERSION_PREFIX_RULE,
                    r#"must start with "v", e.g. "v1.31" or "v1.31.2""#,
                ),
                (
                    ".version",
                    "self.matches('^v[0-9]+",
                    "must have the form vMAJOR.MINOR",
                ),
                (
                    ".version",
                    "oldSelf.split('.')[1]",
                    "downgrades are not supported",
                ),
                (
                    ".cloudName",
                    "self == oldSelf",
                    "spec.cloudName is immutable",
                ),
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
                (
                    ".endpointAccess",
                    "self.public || self.private",
                    "at least one of",
                ),
            ],
        );
    }

    #[test]
    fn machine_pool_spec_carries_scaling_update_and_immutability_rules() {
        expect_rules(
            &crd_schema::<MachinePoolSpecCommon>(),
            &[
                (
                    ".scaling",
                    "self.minReplicas <= self.maxReplicas",
                    "spec.scaling.minReplicas must not be greater",
                ),
                (
                    ".update.maxSurge",
                    "type(self) == int",
                    "spec.update.maxSurge must be a number",
                ),
                (
                    ".update.maxUnavailable",
                    "type(self) == int",
                    "spec.update.maxUnavailable must be a number",
                ),
                (".update", "string(self.maxSurge)", "must not both be 0"),
                (
                    ".cloudName",
                    "self == oldSelf",
                    "spec.cloudName is immutable",
                ),
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
            ],
        );
    }

    #[test]
    fn every_rule_message_names_the_spec_field() {
        for schema in [
            crd_schema::<ClusterSpecCommon>(),
            crd_schema::<ControlPlaneSpecCommon>(),
            crd_schema::<MachinePoolSpecCommon>(),
        ] {
            for rule in validation_rules(&schema) {
                let message = rule.message.or(rule.message_expression).unwrap_or_default();
                assert!(
                    message.contains("spec."),
                    "{} at {} has message {message:?}",
                    rule.rule,
                    rule.path
                );
            }
        }
    }

    #[test]
    fn list_fields_keyed_by_name_are_list_maps() {
        let schema = crd_schema::<ControlPlaneSpecCommon>();
        assert_eq!(
            schema["properties"]["addons"]["x-kubernetes-list-type"],
            "map"
        );
        assert_eq!(
            schema["properties"]["addons"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );
        let pool = crd_schema::<MachinePoolSpecCommon>();
        assert_eq!(
            pool["properties"]["taints"]["x-kubernetes-list-map-keys"],
            json!(["key", "effect"])
        );
        let status = crd_schema::<ControlPlaneStatusCommon>();
        assert_eq!(
            status["properties"]["conditions"]["x-kubernetes-list-map-keys"],
            json!(["type"])
        );
    }

    /// A provider's control plane composing the shared blocks as `api.md` intends.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "controlplane.cluster.x-k8s.io",
        version = "v1alpha1",
        kind = "DemoControlPlane",
        namespaced,
        status = "DemoControlPlaneStatus"
    )]
    struct DemoControlPlaneSpec {
        #[serde(flatten)]
        common: ControlPlaneSpecCommon,
        /// The cloud's own block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        demo: Option<BTreeMap<String, String>>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    struct DemoControlPlaneStatus {
        #[serde(flatten)]
        common: ControlPlaneStatusCommon,
    }

    #[test]
    fn flattened_blocks_keep_their_fields_required_list_and_rules_in_a_crd() {
        let crd = DemoControlPlane::crd();
        let version = &crd.spec.versions[0];
        let schema = serde_json::to_value(
            version
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap();
        assert_structural("DemoControlPlane", &schema);
        let spec = &schema["properties"]["spec"];
        for field in [
            "version",
            "endpointAccess",
            "logging",
            "addons",
            "cloudName",
            "demo",
        ] {
            assert!(
                spec["properties"].get(field).is_some(),
                "spec.{field} missing"
            );
        }
        assert_eq!(spec["required"], json!(["version"]));
        expect_rules(
            spec,
            &[
                (
                    ".",
                    "has(oldSelf.cloudName)",
                    "spec.cloudName cannot be removed",
                ),
                (".version", VERSION_PREFIX_RULE, "must start with"),
            ],
        );
        let status = &schema["properties"]["status"];
        assert_eq!(
            status["properties"]["externalManagedControlPlane"]["type"],
            "boolean"
        );
    }

    #[test]
    fn a_flattened_spec_round_trips_through_json_with_api_md_field_names() {
        let spec: DemoControlPlaneSpec = serde_json::from_value(json!({
            "version": "v1.31",
            "endpointAccess": {"private": true, "publicCIDRs": ["203.0.113.0/24"]},
            "encryption": {"kmsKeyID": "arn:aws:kms:k"},
            "demo": {"roleARN": "r"}
        }))
        .unwrap();
        assert_eq!(spec.common.version.parse().unwrap().minor, 31);
        assert!(
            spec.common.endpoint_access.public,
            "public defaults to true"
        );
        assert_eq!(spec.common.endpoint_access.public_cidrs, ["203.0.113.0/24"]);
        assert_eq!(
            spec.common.encryption.as_ref().unwrap().kms_key_id,
            "arn:aws:kms:k"
        );
        let back = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            back["endpointAccess"]["publicCIDRs"],
            json!(["203.0.113.0/24"])
        );
        assert_eq!(back["encryption"]["kmsKeyID"], "arn:aws:kms:k");
        assert_eq!(back["demo"]["roleARN"], "r");
    }

    #[test]
    fn status_names_follow_the_contract() {
        let status = ControlPlaneStatusCommon {
            initialization: Some(ControlPlaneInitialization {
                control_plane_initialized: Some(true),
            }),
            initialized: true,
            cloud_id: Some("arn".into()),
            versions: vec![VersionReplicas {
                version: "v1.31.2".into(),
                replicas: Some(1),
            }],
            ..ControlPlaneStatusCommon::default()
        };
        let v = serde_json::to_value(&status).unwrap();
        assert_eq!(v["initialization"]["controlPlaneInitialized"], true);
        assert_eq!(v["externalManagedControlPlane"], true);
        assert_eq!(v["cloudID"], "arn");
        assert_eq!(v["versions"][0]["version"], "v1.31.2");
        let pool = serde_json::to_value(MachinePoolStatusCommon {
            initialization: Some(MachinePoolInitialization {
                provisioned: Some(true),
            }),
            ready: true,
            replicas: Some(3),
            ..MachinePoolStatusCommon::default()
        })
        .unwrap();
        assert_eq!(
            crate::capi::accessors::infra_machine_pool::provisioned(&json!({"status": pool})),
            Some(true)
        );
        let pool_spec = serde_json::to_value(MachinePoolSpecCommon {
            machine_type: "m5.large".into(),
            disk_size_gb: Some(50),
            subnet_ids: vec!["s".into()],
            provider_id_list: vec!["aws:///a/i-1".into()],
            ..MachinePoolSpecCommon::default()
        })
        .unwrap();
        assert_eq!(pool_spec["diskSizeGB"], 50);
        assert_eq!(pool_spec["subnetIDs"], json!(["s"]));
        assert_eq!(pool_spec["providerIDList"], json!(["aws:///a/i-1"]));
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

    #[test]
    fn additional_tags_serialize_as_a_plain_map() {
        let tags = AdditionalTags(BTreeMap::from([("team".to_string(), "a".to_string())]));
        assert_eq!(serde_json::to_value(&tags).unwrap(), json!({"team": "a"}));
        let schema = crd_schema::<AdditionalTags>();
        assert_eq!(schema["maxProperties"], MAX_ADDITIONAL_TAGS);
    }

    #[test]
    fn an_operation_is_looked_at_again_after_as_long_as_it_has_run_between_first_and_poll() {
        let start: jiff::Timestamp = "2026-12-04T00:00:00Z".parse().unwrap();
        let op = Operation::new("op-1", OperationKind::Create, start);
        use std::time::Duration;
        let (first, poll) = (Duration::from_secs(5), Duration::from_secs(30));
        let at = |secs: i64| start + jiff::SignedDuration::from_secs(secs);
        let after: Vec<u64> = [0, 5, 10, 20, 40, 600]
            .into_iter()
            .map(|s| op.look_again_after(at(s), first, poll).as_secs())
            .collect();
        assert_eq!(after, [5, 5, 10, 20, 30, 30]);
        // A poll interval below `first` wins; a clock behind the start looks again soon.
        assert_eq!(
            op.look_again_after(at(100), first, Duration::from_secs(2)),
            Duration::from_secs(2)
        );
        assert_eq!(op.look_again_after(at(-60), first, poll), first);
    }
}
