//! Our serde model of a kubeconfig file (`apiVersion: v1`, `kind: Config`): clusters, contexts,
//! users and exec credential plugins, as much as the provider's Secrets use, read as YAML or
//! JSON and written as YAML.

use serde::{Deserialize, Serialize};

/// The exec credential API version written by default.
pub const EXEC_API_VERSION: &str = "client.authentication.k8s.io/v1beta1";

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
