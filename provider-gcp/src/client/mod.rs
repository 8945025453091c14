//! The Google Cloud side: clients per (project, identity), the classification of Google API
//! errors, service-account credentials and the OAuth access token of the kubeconfig Secret.
//!
//! The clients are Google's own (`google-cloud-container-v1`, `google-cloud-compute-v1`) over
//! HTTP/JSON with rustls on ring (installed as the process's provider by [`install_crypto`]).
//! Their endpoints are Google's unless [`Endpoints`] names others (tests and local emulators).

pub mod credentials;
pub mod errors;
pub mod token;

use google_cloud_compute_v1::client::{InstanceGroupManagers, Networks, Routers, Subnetworks};
use google_cloud_container_v1::client::ClusterManager;

pub use credentials::ServiceAccountKey;
pub use errors::classify;

/// Installs ring as rustls's process-wide provider (Google's auth library signs with it); a
/// second call is harmless.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Endpoint overrides (tests and local emulators); `None` is Google's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// Kubernetes Engine, e.g. `http://127.0.0.1:4610`.
    pub container: Option<String>,
    /// Compute Engine.
    pub compute: Option<String>,
}

/// The clients for one project and one identity.
#[derive(Clone, Debug)]
pub struct Clients {
    /// Kubernetes Engine.
    pub container: ClusterManager,
    /// VPC networks.
    pub networks: Networks,
    /// Subnetworks.
    pub subnetworks: Subnetworks,
    /// Cloud Routers (Cloud NAT).
    pub routers: Routers,
    /// Node pools' managed instance groups.
    pub groups: InstanceGroupManagers,
    /// The identity, kept for minting access tokens.
    pub key: ServiceAccountKey,
}

// Google's clients retry idempotent calls themselves (up to 10 attempts in a minute, on their
// own backoff, blind to `Retry-After`); the kernel owns retries and holds a throttled object
// until its `Retry-After` is over, so the clients never retry. (The GKE fault run caught an
// instance group read sent 0.7 s before the `Retry-After` of its 429 was over.)
macro_rules! build_client {
    ($client:ty, $endpoint:expr, $credentials:expr) => {{
        let mut builder = <$client>::builder()
            .with_credentials($credentials.clone())
            .with_retry_policy(google_cloud_gax::retry_policy::NeverRetry);
        if let Some(url) = $endpoint {
            builder = builder.with_endpoint(url);
        }
        builder.build().await.map_err(|e| {
            provider_runtime::ProviderError::cloud(
                "client",
                format!("could not build the Google Cloud client: {e}"),
            )
        })?
    }};
}

impl Clients {
    /// Clients authenticating as `key`, talking to `endpoints` where given.
    ///
    /// # Errors
    /// When the key cannot be turned into credentials or a client cannot be built.
    pub async fn new(
        key: ServiceAccountKey,
        endpoints: &Endpoints,
    ) -> Result<Self, provider_runtime::ProviderError> {
        install_crypto();
        let credentials = key.credentials()?;
        let container = endpoints.container.as_deref();
        let compute = endpoints.compute.as_deref();
        Ok(Self {
            container: build_client!(ClusterManager, container, credentials),
            networks: build_client!(Networks, compute, credentials),
            subnetworks: build_client!(Subnetworks, compute, credentials),
            routers: build_client!(Routers, compute, credentials),
            groups: build_client!(InstanceGroupManagers, compute, credentials),
            key,
        })
    }
}

/// Awaits a Google client call, counts it under `service`/`operation` by outcome, and
/// classifies its error. A `Retry-After` holds the method (the client hides its paths; Google
/// meters a project's calls per method).
pub async fn counted<T>(
    calls: &provider_runtime::CloudCalls,
    service: &'static str,
    operation: &'static str,
    call: impl std::future::Future<Output = Result<T, google_cloud_gax::error::Error>>,
) -> Result<T, Failure> {
    let sent = calls.admit(service, operation).map_err(|error| Failure {
        error,
        already_exists: false,
    })?;
    match call.await {
        Ok(out) => {
            sent.answered(operation, Ok(()));
            Ok(out)
        }
        Err(e) => {
            let failure = Failure {
                already_exists: e
                    .status()
                    .is_some_and(|s| s.code == google_cloud_gax::error::rpc::Code::AlreadyExists),
                error: classify(&e),
            };
            sent.answered(operation, Err(&failure.error));
            Err(failure)
        }
    }
}

/// A failed call: its classification, and whether Google answered ALREADY_EXISTS (a create
/// that an earlier pass made, or one still being made).
#[derive(Debug, Clone)]
pub struct Failure {
    /// What it means for the reconciler.
    pub error: provider_runtime::CloudError,
    /// Google's ALREADY_EXISTS.
    pub already_exists: bool,
}

impl From<Failure> for provider_runtime::ProviderError {
    fn from(f: Failure) -> Self {
        f.error.into()
    }
}

/// `Ok(None)` for a not-found.
pub fn absent_if_not_found<T>(result: Result<T, Failure>) -> Result<Option<T>, Failure> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(f) if f.error.is_not_found() => Ok(None),
        Err(f) => Err(f),
    }
}
