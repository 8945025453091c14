//! The two kubeconfig Secrets every provider writes (`contract.md` §2, `api.md` "Kubeconfigs").
//!
//! - `<cluster>-kubeconfig` ([`cluster_kubeconfig_secret`]): the contract Secret core reads.
//!   A short-lived token minted by the provider, refreshed before it expires.
//! - `<cluster>-user-kubeconfig` ([`user_kubeconfig_secret`]): for people and tools. An exec
//!   plugin fetches credentials on use; the Secret never holds a static credential. One context
//!   per endpoint the cloud exposes, the preferred one current.
//!
//! Both: type `cluster.x-k8s.io/secret`, label `cluster.x-k8s.io/cluster-name=<cluster>`, the
//! kubeconfig under data key `value`, and a controller owner reference to the ControlPlane so
//! the garbage collector removes them with it.
//!
//! [`Kubeconfig`] is our own serde model of the file, enough to write these two and to read
//! any kubeconfig back in tests and in the conformance suite.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde::{Deserialize, Serialize};

use crate::api::{ApiEndpoint, Endpoint, EndpointName};
use crate::capi::{CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE};

/// The Secret data key holding the kubeconfig.
pub const KUBECONFIG_DATA_KEY: &str = "value";

/// The exec credential API version written by default.
pub const EXEC_API_VERSION: &str = "client.authentication.k8s.io/v1beta1";

/// `<cluster>-kubeconfig`: the contract Secret's name.
pub fn kubeconfig_secret_name(cluster_name: &str) -> String {
    format!("{cluster_name}-kubeconfig")
}

/// `<cluster>-user-kubeconfig`: the user Secret's name.
pub fn user_kubeconfig_secret_name(cluster_name: &str) -> String {
    format!("{cluster_name}-user-kubeconfig")
}

/// A kubeconfig file (`apiVersion: v1`, `kind: Config`), as much of it as these Secrets use.
/// Unknown fields are ignored when reading.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Kubeconfig {
    /// `apiVersion`: `v1`.
    #[serde(rename = "apiVersion", default)]
    pub api_version: String,
    /// `kind`: `Config`.
    #[serde(default)]
    pub kind: String,
    /// `clusters`.
    #[serde(default)]
    pub clusters: Vec<NamedCluster>,
    /// `contexts`.
    #[serde(default)]
    pub contexts: Vec<NamedContext>,
    /// `users`.
    #[serde(default)]
    pub users: Vec<NamedUser>,
    /// `current-context`.
    #[serde(rename = "current-context", default)]
    pub current_context: String,
}

/// An entry of `clusters`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NamedCluster {
    /// The entry's name.
    pub name: String,
    /// The cluster.
    pub cluster: ClusterEntry,
}

/// A cluster: where the API server is and which CA signs its certificate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterEntry {
    /// `server`: `https://host:port`.
    pub server: String,
    /// `certificate-authority-data`: the CA bundle, PEM, base64-encoded.
    #[serde(
        rename = "certificate-authority-data",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub certificate_authority_data: Option<String>,
}

/// An entry of `contexts`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NamedContext {
    /// The entry's name.
    pub name: String,
    /// The context.
    pub context: ContextEntry,
}

/// A context: a cluster entry and a user entry, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextEntry {
    /// The cluster entry's name.
    pub cluster: String,
    /// The user entry's name.
    pub user: String,
    /// Default namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// An entry of `users`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NamedUser {
    /// The entry's name.
    pub name: String,
    /// The credentials.
    pub user: UserEntry,
}

/// A user's credentials: a bearer token or an exec plugin (client certificates are read so
/// tests can prove their absence).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct UserEntry {
    /// `token`: a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `exec`: a credential plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecPlugin>,
    /// `client-certificate-data` (never written here).
    #[serde(
        rename = "client-certificate-data",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_certificate_data: Option<String>,
    /// `client-key-data` (never written here).
    #[serde(
        rename = "client-key-data",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_key_data: Option<String>,
}

/// Whether an exec plugin may prompt the user.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InteractiveMode {
    /// Never read standard input.
    Never,
    /// Read standard input when it is a terminal.
    #[default]
    IfAvailable,
    /// Require standard input.
    Always,
}

/// An environment variable passed to an exec plugin.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ExecEnvVar {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// A credential exec plugin (`users[].user.exec`), e.g. `aws eks get-token`, `kubelogin`,
/// `gke-gcloud-auth-plugin`, `oci ce cluster generate-token`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ExecPlugin {
    /// The credential API version; [`EXEC_API_VERSION`] by default.
    pub api_version: String,
    /// The command to run.
    pub command: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<ExecEnvVar>,
    /// Shown when the command is not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_hint: Option<String>,
    /// Whether the plugin may prompt.
    #[serde(default)]
    pub interactive_mode: InteractiveMode,
    /// Pass the cluster's details to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub provide_cluster_info: bool,
}

impl ExecPlugin {
    /// A plugin running `command args…`, with the default API version, no extra environment,
    /// no install hint and interactive mode `IfAvailable`.
    pub fn new(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ExecPlugin {
            api_version: EXEC_API_VERSION.to_owned(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            install_hint: None,
            interactive_mode: InteractiveMode::IfAvailable,
            provide_cluster_info: false,
        }
    }
}

/// Why a kubeconfig could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    /// A user kubeconfig needs at least one endpoint.
    #[error(
        "the cloud reports no endpoint for cluster {cluster}; cannot write its user kubeconfig yet"
    )]
    NoEndpoints {
        /// The cluster's name.
        cluster: String,
    },
    /// The bytes are not a kubeconfig.
    #[error("not a kubeconfig: {0}")]
    Parse(String),
}

impl Kubeconfig {
    /// Reads a kubeconfig (YAML or JSON).
    ///
    /// # Errors
    /// [`KubeconfigError::Parse`] when the bytes are not a kubeconfig.
    pub fn parse(bytes: &[u8]) -> Result<Kubeconfig, KubeconfigError> {
        serde_saphyr::from_slice(bytes).map_err(|e| KubeconfigError::Parse(e.to_string()))
    }

    /// Renders the kubeconfig as YAML.
    ///
    /// Falls back to JSON (which is YAML, and which every kubeconfig loader reads) in the
    /// unexpected case that the YAML writer fails.
    pub fn to_yaml(&self) -> String {
        serde_saphyr::to_string(self)
            .or_else(|_| serde_json::to_string_pretty(self))
            .unwrap_or_default()
    }

    /// The context named `current-context`, if present.
    pub fn current(&self) -> Option<&NamedContext> {
        self.context(&self.current_context)
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&NamedContext> {
        self.contexts.iter().find(|c| c.name == name)
    }

    /// The cluster entry named `name`.
    pub fn cluster(&self, name: &str) -> Option<&ClusterEntry> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.cluster)
    }

    /// The user entry named `name`.
    pub fn user(&self, name: &str) -> Option<&UserEntry> {
        self.users.iter().find(|u| u.name == name).map(|u| &u.user)
    }

    /// The server of the context named `context`.
    pub fn server_of(&self, context: &str) -> Option<&str> {
        let ctx = self.context(context)?;
        self.cluster(&ctx.context.cluster)
            .map(|c| c.server.as_str())
    }

    /// The server of the current context.
    pub fn current_server(&self) -> Option<&str> {
        self.server_of(&self.current_context)
    }

    /// The user entry of the current context.
    pub fn current_user(&self) -> Option<&UserEntry> {
        let ctx = self.current()?;
        self.user(&ctx.context.user)
    }

    /// Whether any user entry holds a static credential (token, client key or certificate).
    pub fn has_static_credential(&self) -> bool {
        self.users.iter().any(|u| {
            u.user.token.is_some()
                || u.user.client_key_data.is_some()
                || u.user.client_certificate_data.is_some()
        })
    }
}

fn kubeconfig_secret(
    name: String,
    cluster_name: &str,
    namespace: &str,
    mut owner: OwnerReference,
    config: &Kubeconfig,
) -> Secret {
    owner.controller = Some(true);
    Secret {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                CLUSTER_NAME_LABEL.to_owned(),
                cluster_name.to_owned(),
            )])),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        type_: Some(CLUSTER_SECRET_TYPE.to_owned()),
        data: Some(BTreeMap::from([(
            KUBECONFIG_DATA_KEY.to_owned(),
            ByteString(config.to_yaml().into_bytes()),
        )])),
        ..Secret::default()
    }
}

/// The kubeconfig of the contract Secret: one cluster, one token user, one context
/// (`<cluster>-admin@<cluster>`), server `https://host:port` of `endpoint`.
pub fn cluster_kubeconfig(
    cluster_name: &str,
    endpoint: &ApiEndpoint,
    ca_pem: &[u8],
    token: &str,
) -> Kubeconfig {
    let user = format!("{cluster_name}-admin");
    let context = format!("{user}@{cluster_name}");
    Kubeconfig {
        api_version: "v1".into(),
        kind: "Config".into(),
        clusters: vec![NamedCluster {
            name: cluster_name.to_owned(),
            cluster: ClusterEntry {
                server: endpoint.https_url(),
                certificate_authority_data: Some(STANDARD.encode(ca_pem)),
            },
        }],
        contexts: vec![NamedContext {
            name: context.clone(),
            context: ContextEntry {
                cluster: cluster_name.to_owned(),
                user: user.clone(),
                namespace: None,
            },
        }],
        users: vec![NamedUser {
            name: user,
            user: UserEntry {
                token: Some(token.to_owned()),
                ..UserEntry::default()
            },
        }],
        current_context: context,
    }
}

/// The `<cluster>-kubeconfig` Secret core reads (`contract.md` §2).
///
/// Guarantees: name `<cluster>-kubeconfig` in `namespace`; type `cluster.x-k8s.io/secret`;
/// label `cluster.x-k8s.io/cluster-name=<cluster>`; data key `value` holding a YAML kubeconfig
/// whose current context's server is `https://<endpoint.host>:<endpoint.port>`, trusting
/// `ca_pem`, authenticating with `token`; `owner` as the only owner reference, with
/// `controller: true` (set here whatever the caller passed).
pub fn cluster_kubeconfig_secret(
    cluster_name: &str,
    namespace: &str,
    owner: OwnerReference,
    endpoint: &ApiEndpoint,
    ca_pem: &[u8],
    token: &str,
) -> Secret {
    let config = cluster_kubeconfig(cluster_name, endpoint, ca_pem, token);
    kubeconfig_secret(
        kubeconfig_secret_name(cluster_name),
        cluster_name,
        namespace,
        owner,
        &config,
    )
}

/// The kubeconfig of the user Secret: per endpoint a cluster and a context named
/// `<cluster>-<endpoint name>`, one exec user `<cluster>-user`; current context the preferred
/// endpoint's, or the first endpoint's when the preferred one is not among `endpoints`.
///
/// # Errors
/// [`KubeconfigError::NoEndpoints`] when `endpoints` is empty.
pub fn user_kubeconfig(
    cluster_name: &str,
    endpoints: &[Endpoint],
    preferred: EndpointName,
    ca_pem: &[u8],
    exec: ExecPlugin,
) -> Result<Kubeconfig, KubeconfigError> {
    let current = endpoints
        .iter()
        .find(|e| e.name == preferred)
        .or_else(|| endpoints.first())
        .ok_or_else(|| KubeconfigError::NoEndpoints {
            cluster: cluster_name.to_owned(),
        })?;
    let entry_name = |e: &Endpoint| format!("{cluster_name}-{}", e.name.as_str());
    let user = format!("{cluster_name}-user");
    let ca = STANDARD.encode(ca_pem);
    Ok(Kubeconfig {
        api_version: "v1".into(),
        kind: "Config".into(),
        clusters: endpoints
            .iter()
            .map(|e| NamedCluster {
                name: entry_name(e),
                cluster: ClusterEntry {
                    server: e.api_endpoint().https_url(),
                    certificate_authority_data: Some(ca.clone()),
                },
            })
            .collect(),
        contexts: endpoints
            .iter()
            .map(|e| NamedContext {
                name: entry_name(e),
                context: ContextEntry {
                    cluster: entry_name(e),
                    user: user.clone(),
                    namespace: None,
                },
            })
            .collect(),
        users: vec![NamedUser {
            name: user,
            user: UserEntry {
                exec: Some(exec),
                ..UserEntry::default()
            },
        }],
        current_context: entry_name(current),
    })
}

/// The `<cluster>-user-kubeconfig` Secret (`api.md` "Kubeconfigs"): same type, label and owner
/// as the contract Secret; the kubeconfig of [`user_kubeconfig`]. It holds no token, client
/// key or client certificate: credentials come from `exec` at use.
///
/// # Errors
/// [`KubeconfigError::NoEndpoints`] when `endpoints` is empty.
pub fn user_kubeconfig_secret(
    cluster_name: &str,
    namespace: &str,
    owner: OwnerReference,
    endpoints: &[Endpoint],
    preferred: EndpointName,
    ca_pem: &[u8],
    exec: ExecPlugin,
) -> Result<Secret, KubeconfigError> {
    let config = user_kubeconfig(cluster_name, endpoints, preferred, ca_pem, exec)?;
    Ok(kubeconfig_secret(
        user_kubeconfig_secret_name(cluster_name),
        cluster_name,
        namespace,
        owner,
        &config,
    ))
}

/// Reads the kubeconfig under data key `value` of a kubeconfig Secret.
///
/// # Errors
/// [`KubeconfigError::Parse`] when the key is missing or does not hold a kubeconfig.
pub fn kubeconfig_from_secret(secret: &Secret) -> Result<Kubeconfig, KubeconfigError> {
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get(KUBECONFIG_DATA_KEY))
        .ok_or_else(|| KubeconfigError::Parse(format!("no data key \"{KUBECONFIG_DATA_KEY}\"")))?;
    Kubeconfig::parse(&bytes.0)
}

// ---------------------------------------------------------------------------------------------
// When to write them (the same on every cloud; the runtime does the writing)
// ---------------------------------------------------------------------------------------------

/// The part of a token's lifetime still left when the provider replaces it: one over this (five
/// minutes of EKS's fifteen; 20 s of a 60 s lifetime).
pub const REFRESH_LEAD_DIVISOR: u32 = 3;

/// How long before it expires a token of `lifetime` is replaced: a third of the lifetime.
pub fn refresh_lead(lifetime: std::time::Duration) -> std::time::Duration {
    lifetime / REFRESH_LEAD_DIVISOR
}

/// When a token of `lifetime` expiring at `expires_at` is to be replaced.
pub fn refresh_at(expires_at: jiff::Timestamp, lifetime: std::time::Duration) -> jiff::Timestamp {
    let lead = jiff::SignedDuration::try_from(refresh_lead(lifetime))
        .unwrap_or(jiff::SignedDuration::ZERO);
    expires_at.checked_sub(lead).unwrap_or(expires_at)
}

/// How long from `now` until that token is due for refresh (at least a second, so a requeue is
/// never immediate).
pub fn until_refresh(
    expires_at: jiff::Timestamp,
    now: jiff::Timestamp,
    lifetime: std::time::Duration,
) -> std::time::Duration {
    let left = refresh_at(expires_at, lifetime).duration_since(now);
    std::time::Duration::try_from(left)
        .unwrap_or(std::time::Duration::ZERO)
        .max(std::time::Duration::from_secs(1))
}

/// Whether `secret` has the type, label and controller owner both Secrets must carry.
fn well_formed(secret: &Secret, cluster_name: &str, owner_uid: &str) -> bool {
    let labels = secret.metadata.labels.as_ref();
    secret.type_.as_deref() == Some(CLUSTER_SECRET_TYPE)
        && labels
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
            .map(String::as_str)
            == Some(cluster_name)
        && secret
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid && o.controller == Some(true))
}

/// What the contract Secret should hold: its Cluster, owner, server and CA, and how its token
/// is read.
#[derive(Clone, Copy, Debug)]
pub struct ContractSecretSpec<'a> {
    /// The Cluster's name (the Secret's label).
    pub cluster_name: &'a str,
    /// The ControlPlane's UID (the Secret's controller owner).
    pub owner_uid: &'a str,
    /// The API server.
    pub server: &'a ApiEndpoint,
    /// The cluster CA, PEM.
    pub ca_pem: &'a [u8],
    /// How long the cloud accepts a token.
    pub lifetime: std::time::Duration,
}

/// The annotation on `<cluster>-kubeconfig` saying when its token expires (RFC 3339), written
/// with every token: an opaque token (an OAuth access token) does not say itself.
pub const TOKEN_EXPIRY_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/token-expires-at";

/// `secret` with [`TOKEN_EXPIRY_ANNOTATION`] set to `expires_at`.
pub fn with_token_expiry(mut secret: Secret, expires_at: jiff::Timestamp) -> Secret {
    secret
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(TOKEN_EXPIRY_ANNOTATION.to_owned(), expires_at.to_string());
    secret
}

/// When the token in an existing `<cluster>-kubeconfig` expires, if the Secret can stay as it is
/// at `now`: right shape, server and CA, and a token not yet due for refresh. `expiry_of` reads
/// a token's expiry the cloud's way; when it cannot (`None`, an opaque token), the expiry the
/// Secret was written with ([`TOKEN_EXPIRY_ANNOTATION`]) is used; with neither, the Secret is
/// replaced. `None` means write it.
pub fn contract_secret_good_until(
    existing: Option<&Secret>,
    spec: &ContractSecretSpec<'_>,
    now: jiff::Timestamp,
    expiry_of: impl Fn(&str) -> Option<jiff::Timestamp>,
) -> Option<jiff::Timestamp> {
    let secret = existing?;
    if !well_formed(secret, spec.cluster_name, spec.owner_uid) {
        return None;
    }
    let config = kubeconfig_from_secret(secret).ok()?;
    let cluster = config
        .current()
        .and_then(|c| config.cluster(&c.context.cluster))?;
    if cluster.server != spec.server.https_url()
        || cluster.certificate_authority_data.as_deref()
            != Some(STANDARD.encode(spec.ca_pem).as_str())
    {
        return None;
    }
    let token = config.current_user()?.token.as_deref()?;
    let expires_at = expiry_of(token).or_else(|| {
        secret
            .metadata
            .annotations
            .as_ref()?
            .get(TOKEN_EXPIRY_ANNOTATION)?
            .parse::<jiff::Timestamp>()
            .ok()
    })?;
    (now < refresh_at(expires_at, spec.lifetime)).then_some(expires_at)
}

/// Whether an existing user Secret already is `desired` (shape and kubeconfig bytes).
pub fn user_secret_current(
    existing: Option<&Secret>,
    desired: &Secret,
    cluster_name: &str,
    owner_uid: &str,
) -> bool {
    let value = |s: &Secret| {
        s.data
            .as_ref()
            .and_then(|d| d.get(KUBECONFIG_DATA_KEY))
            .map(|v| v.0.clone())
    };
    existing.is_some_and(|s| {
        well_formed(s, cluster_name, owner_uid) && value(s).is_some() && value(s) == value(desired)
    })
}

/// The user kubeconfig's current context: the preferred endpoint when the cloud exposes it,
/// else the first it lists.
pub fn preferred_name(endpoints: &[Endpoint], preferred: EndpointName) -> EndpointName {
    if endpoints.iter().any(|e| e.name == preferred) {
        preferred
    } else {
        endpoints.first().map(|e| e.name).unwrap_or(preferred)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn owner() -> OwnerReference {
        OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1alpha1".into(),
            kind: "EKSControlPlane".into(),
            name: "c1-cp".into(),
            uid: "1234".into(),
            controller: None,
            block_owner_deletion: None,
        }
    }

    fn endpoint(name: EndpointName, host: &str, port: i32) -> Endpoint {
        Endpoint {
            name,
            host: host.into(),
            port,
        }
    }

    fn eks_exec() -> ExecPlugin {
        ExecPlugin {
            install_hint: Some("install the AWS CLI".into()),
            env: vec![ExecEnvVar {
                name: "AWS_PROFILE".into(),
                value: "dev".into(),
            }],
            ..ExecPlugin::new("aws", ["eks", "get-token", "--cluster-name", "ns-c1"])
        }
    }

    #[test]
    fn the_cluster_secret_has_the_contract_name_type_label_and_owner() {
        let ep = ApiEndpoint {
            host: "abc.eks.amazonaws.com".into(),
            port: 443,
        };
        let s = cluster_kubeconfig_secret("c1", "ns", owner(), &ep, CA, "tok");
        assert_eq!(s.metadata.name.as_deref(), Some("c1-kubeconfig"));
        assert_eq!(s.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(s.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
        assert_eq!(
            s.metadata
                .labels
                .as_ref()
                .unwrap()
                .get(CLUSTER_NAME_LABEL)
                .map(String::as_str),
            Some("c1")
        );
        let owners = s.metadata.owner_references.as_ref().unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].kind, "EKSControlPlane");
        assert_eq!(owners[0].controller, Some(true));
    }

    #[test]
    fn the_cluster_kubeconfig_server_is_the_endpoint_and_the_token_is_used() {
        let ep = ApiEndpoint {
            host: "abc.eks.amazonaws.com".into(),
            port: 443,
        };
        let s = cluster_kubeconfig_secret("c1", "ns", owner(), &ep, CA, "k8s-aws-v1.tok");
        let cfg = kubeconfig_from_secret(&s).unwrap();
        assert_eq!(
            cfg.current_server(),
            Some("https://abc.eks.amazonaws.com:443")
        );
        assert_eq!(
            cfg.current_user().unwrap().token.as_deref(),
            Some("k8s-aws-v1.tok")
        );
        let ca = cfg
            .cluster("c1")
            .unwrap()
            .certificate_authority_data
            .clone()
            .unwrap();
        assert_eq!(STANDARD.decode(ca).unwrap(), CA);
        assert_eq!(cfg.api_version, "v1");
        assert_eq!(cfg.kind, "Config");
    }

    #[test]
    fn the_kubeconfig_is_written_as_yaml_with_kubeconfig_key_names() {
        let ep = ApiEndpoint {
            host: "h".into(),
            port: 6443,
        };
        let yaml = cluster_kubeconfig("c1", &ep, CA, "t").to_yaml();
        assert!(!yaml.trim_start().starts_with('{'), "{yaml}");
        for key in [
            "current-context:",
            "certificate-authority-data:",
            "apiVersion:",
        ] {
            assert!(yaml.contains(key), "{key} missing in {yaml}");
        }
    }

    #[test]
    fn an_ipv6_endpoint_is_bracketed_in_the_server_url() {
        let ep = ApiEndpoint {
            host: "2001:db8::1".into(),
            port: 443,
        };
        assert_eq!(
            cluster_kubeconfig("c", &ep, CA, "t").current_server(),
            Some("https://[2001:db8::1]:443")
        );
    }

    #[test]
    fn the_user_secret_has_one_context_per_endpoint_and_the_preferred_one_current() {
        let eps = [
            endpoint(EndpointName::Public, "pub.example.com", 443),
            endpoint(EndpointName::Private, "10.0.0.5", 443),
        ];
        let s = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &eps,
            EndpointName::Private,
            CA,
            eks_exec(),
        )
        .unwrap();
        assert_eq!(s.metadata.name.as_deref(), Some("c1-user-kubeconfig"));
        assert_eq!(s.type_.as_deref(), Some(CLUSTER_SECRET_TYPE));
        assert_eq!(
            s.metadata.owner_references.as_ref().unwrap()[0].controller,
            Some(true)
        );
        let cfg = kubeconfig_from_secret(&s).unwrap();
        let names: Vec<&str> = cfg.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["c1-public", "c1-private"]);
        assert_eq!(cfg.current_context, "c1-private");
        assert_eq!(cfg.current_server(), Some("https://10.0.0.5:443"));
        assert_eq!(
            cfg.server_of("c1-public"),
            Some("https://pub.example.com:443")
        );
    }

    #[test]
    fn the_user_kubeconfig_holds_no_static_credential_only_the_exec_plugin() {
        let eps = [endpoint(EndpointName::Public, "pub.example.com", 443)];
        let s = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &eps,
            EndpointName::Public,
            CA,
            eks_exec(),
        )
        .unwrap();
        let raw =
            String::from_utf8(s.data.as_ref().unwrap()[KUBECONFIG_DATA_KEY].0.clone()).unwrap();
        assert!(!raw.contains("token:"), "{raw}");
        assert!(!raw.contains("client-key-data"), "{raw}");
        assert!(!raw.contains("client-certificate-data"), "{raw}");
        let cfg = Kubeconfig::parse(raw.as_bytes()).unwrap();
        assert!(!cfg.has_static_credential());
        let exec = cfg.current_user().unwrap().exec.clone().unwrap();
        assert_eq!(exec.command, "aws");
        assert_eq!(exec.api_version, EXEC_API_VERSION);
        assert_eq!(exec.args[..2], ["eks", "get-token"]);
        assert_eq!(exec.install_hint.as_deref(), Some("install the AWS CLI"));
        assert_eq!(exec.env[0].name, "AWS_PROFILE");
        assert!(raw.contains("interactiveMode: IfAvailable"), "{raw}");
    }

    #[test]
    fn a_missing_preferred_endpoint_falls_back_to_the_first() {
        let eps = [endpoint(EndpointName::Private, "10.0.0.5", 443)];
        let cfg = user_kubeconfig("c1", &eps, EndpointName::Public, CA, eks_exec()).unwrap();
        assert_eq!(cfg.current_context, "c1-private");
    }

    #[test]
    fn a_user_kubeconfig_without_endpoints_is_refused() {
        let err = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &[],
            EndpointName::Public,
            CA,
            eks_exec(),
        )
        .unwrap_err();
        assert!(matches!(err, KubeconfigError::NoEndpoints { .. }));
    }

    #[test]
    fn the_cluster_kubeconfig_counts_as_a_static_credential() {
        let ep = ApiEndpoint {
            host: "h".into(),
            port: 443,
        };
        assert!(cluster_kubeconfig("c", &ep, CA, "t").has_static_credential());
    }

    #[test]
    fn a_secret_without_the_value_key_is_not_a_kubeconfig() {
        assert!(kubeconfig_from_secret(&Secret::default()).is_err());
        assert!(Kubeconfig::parse(b"- just\n- a list\n").is_err());
    }

    mod freshness {
        use std::time::Duration;

        use super::super::*;

        const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        /// EKS's lifetime.
        const L: Duration = Duration::from_secs(15 * 60);

        fn owner() -> OwnerReference {
            OwnerReference {
                api_version: "controlplane.cluster.x-k8s.io/v1alpha1".into(),
                kind: "XControlPlane".into(),
                name: "c1-cp".into(),
                uid: "uid-1".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }
        }

        fn server() -> ApiEndpoint {
            ApiEndpoint {
                host: "x.example".into(),
                port: 443,
            }
        }

        fn t(seconds: i64) -> jiff::Timestamp {
            jiff::Timestamp::from_second(1_800_000_000 + seconds).unwrap()
        }

        /// A test token that says when it was signed: `signed-<unix seconds>`.
        fn token_signed_at(at: jiff::Timestamp) -> String {
            format!("signed-{}", at.as_second())
        }

        /// Reads a test token as a cloud reads its own: signing time + `lifetime`.
        fn expiry(lifetime: Duration) -> impl Fn(&str) -> Option<jiff::Timestamp> {
            move |token| {
                let signed: i64 = token.strip_prefix("signed-")?.parse().ok()?;
                jiff::Timestamp::from_second(signed)
                    .ok()?
                    .checked_add(jiff::SignedDuration::try_from(lifetime).ok()?)
                    .ok()
            }
        }

        fn secret_signed_at(at: jiff::Timestamp) -> Secret {
            cluster_kubeconfig_secret("c1", "ns", owner(), &server(), CA, &token_signed_at(at))
        }

        fn spec<'a>(
            server: &'a ApiEndpoint,
            ca: &'a [u8],
            uid: &'a str,
            lifetime: Duration,
        ) -> ContractSecretSpec<'a> {
            ContractSecretSpec {
                cluster_name: "c1",
                owner_uid: uid,
                server,
                ca_pem: ca,
                lifetime,
            }
        }

        #[test]
        fn a_fresh_token_keeps_the_secret_until_a_third_of_its_lifetime_is_left() {
            let secret = secret_signed_at(t(0));
            let s = server();
            let good = |now| {
                contract_secret_good_until(Some(&secret), &spec(&s, CA, "uid-1", L), now, expiry(L))
            };
            assert_eq!(good(t(60)), Some(t(900)));
            assert_eq!(until_refresh(t(900), t(60), L), Duration::from_secs(540));
            assert_eq!(good(t(599)), Some(t(900)));
            assert_eq!(good(t(600)), None, "due for refresh");
            assert_eq!(
                until_refresh(t(900), t(899), L),
                Duration::from_secs(1),
                "never a zero requeue"
            );
            let minute = Duration::from_secs(60);
            assert_eq!(refresh_at(t(60), minute), t(40));
            assert_eq!(refresh_lead(minute), Duration::from_secs(20));
            assert_eq!(refresh_lead(Duration::ZERO), Duration::ZERO);
        }

        #[test]
        fn a_secret_is_rewritten_when_missing_moved_misshapen_or_unreadable() {
            let secret = secret_signed_at(t(0));
            let s = server();
            let moved = ApiEndpoint {
                host: "y.example".into(),
                port: 443,
            };
            let check = |secret: Option<&Secret>, spec: ContractSecretSpec<'_>| {
                contract_secret_good_until(secret, &spec, t(1), expiry(L))
            };
            assert_eq!(check(None, spec(&s, CA, "uid-1", L)), None);
            assert_eq!(check(Some(&secret), spec(&moved, CA, "uid-1", L)), None);
            assert_eq!(
                check(Some(&secret), spec(&s, b"other CA", "uid-1", L)),
                None
            );
            assert_eq!(
                check(Some(&secret), spec(&s, CA, "uid-2", L)),
                None,
                "another owner"
            );
            let mut unlabelled = secret.clone();
            unlabelled.metadata.labels = None;
            assert_eq!(check(Some(&unlabelled), spec(&s, CA, "uid-1", L)), None);
            let unreadable = cluster_kubeconfig_secret("c1", "ns", owner(), &s, CA, "static-token");
            assert_eq!(check(Some(&unreadable), spec(&s, CA, "uid-1", L)), None);
            // An opaque token is good until the expiry it was written with, refreshed as any.
            let opaque = with_token_expiry(unreadable.clone(), t(900));
            assert_eq!(check(Some(&opaque), spec(&s, CA, "uid-1", L)), Some(t(900)));
            assert_eq!(
                contract_secret_good_until(
                    Some(&opaque),
                    &spec(&s, CA, "uid-1", L),
                    t(600),
                    expiry(L)
                ),
                None,
                "due for refresh"
            );
            let mut garbled = opaque.clone();
            garbled.metadata.annotations = Some(BTreeMap::from([(
                TOKEN_EXPIRY_ANNOTATION.to_owned(),
                "soon".to_owned(),
            )]));
            assert_eq!(check(Some(&garbled), spec(&s, CA, "uid-1", L)), None);
            assert_eq!(check(Some(&secret), spec(&s, CA, "uid-1", L)), Some(t(900)));
        }

        #[test]
        fn the_user_secret_is_current_only_with_the_same_content_and_shape() {
            let endpoints = vec![Endpoint {
                name: EndpointName::Public,
                host: "x.example".into(),
                port: 443,
            }];
            let build = |arg: &str| {
                user_kubeconfig_secret(
                    "c1",
                    "ns",
                    owner(),
                    &endpoints,
                    EndpointName::Public,
                    CA,
                    ExecPlugin::new("cloud-cli", ["get-token", arg]),
                )
                .unwrap()
            };
            let desired = build("a");
            assert!(user_secret_current(
                Some(&build("a")),
                &desired,
                "c1",
                "uid-1"
            ));
            assert!(!user_secret_current(
                Some(&build("b")),
                &desired,
                "c1",
                "uid-1"
            ));
            assert!(!user_secret_current(None, &desired, "c1", "uid-1"));
            assert!(!user_secret_current(
                Some(&build("a")),
                &desired,
                "c1",
                "uid-2"
            ));
        }

        #[test]
        fn the_current_context_falls_back_to_an_endpoint_that_exists() {
            let public = vec![Endpoint {
                name: EndpointName::Public,
                host: "h".into(),
                port: 443,
            }];
            assert_eq!(
                preferred_name(&public, EndpointName::Private),
                EndpointName::Public
            );
            assert_eq!(
                preferred_name(&public, EndpointName::Public),
                EndpointName::Public
            );
            assert_eq!(
                preferred_name(&[], EndpointName::Private),
                EndpointName::Private
            );
        }
    }
}
