//! The two kubeconfig Secrets every provider writes, and when to write them again.
//!
//! - `<cluster>-kubeconfig` ([`cluster_kubeconfig_secret`]): the Secret Cluster API core reads
//!   to reach the workload cluster. A short-lived token minted by the provider, refreshed
//!   before it expires.
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
//!
//! # Layout
//! Every item is re-exported here, so `contract::kubeconfig::X` is the path to use:
//! - [`model`]: the kubeconfig file model, read and written;
//! - [`secrets`]: building the two Secrets and reading one back;
//! - [`refresh`]: whether an existing Secret can stay, and when its token is replaced.

pub mod model;
pub mod refresh;
pub mod secrets;

pub use model::{
    ClusterEntry, ContextEntry, EXEC_API_VERSION, ExecEnvVar, ExecPlugin, InteractiveMode,
    Kubeconfig, KubeconfigError, NamedCluster, NamedContext, NamedUser, UserEntry,
};
pub use refresh::{
    ContractSecretSpec, REFRESH_LEAD_DIVISOR, TOKEN_EXPIRY_ANNOTATION, contract_secret_good_until,
    preferred_name, refresh_at, refresh_lead, until_refresh, user_secret_current,
    with_token_expiry,
};
pub use secrets::{
    KUBECONFIG_DATA_KEY, cluster_kubeconfig, cluster_kubeconfig_secret, kubeconfig_from_secret,
    kubeconfig_secret_name, user_kubeconfig, user_kubeconfig_secret, user_kubeconfig_secret_name,
};
