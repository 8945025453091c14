//! GKE's side of the ControlPlane role: where the GKE cluster lives, its calls, and the mapping
//! between GKE's shapes and the shared ones. Everything else (observe order, plan, status,
//! conditions, kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the
//! generic reconciler's ([`provider_runtime::control_plane`]).
//!
//! Every GKE change is a long-running Operation; its name is remembered in `status.operation`
//! and polled on the next pass. GKE runs one operation per cluster at a time and refuses others
//! with FAILED_PRECONDITION, which is a wait (`WaitingForCloud`), not a failure. A
//! `ClusterUpdate` carries one field, so each difference is its own step.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{
    ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint, EndpointName, Operation,
    RequestOverridesStatus,
};
use contract::capi::Cluster;
use contract::conditions::Reason;
use contract::idempotency::GKE_UNSENT_TOKEN;
use contract::kubeconfig::ExecPlugin;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use google_cloud_container_v1::model as gke;
use kube::ResourceExt;
use provider_runtime::control_plane::{
    ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Created, Deletion,
    ManagedCluster, ManagedControlPlane, Request, Started,
};
use provider_runtime::kubeconfig::{MintedToken, TokenSource};
use provider_runtime::{CloudCalls, CloudError, ProviderError};

use crate::api::{GKEControlPlane, GKEControlPlaneObserved, GKEControlPlaneStatus, ReleaseChannel};
use crate::cloud::{Clients, ServiceAccountKey, absent_if_not_found, counted};
use crate::scope::{self, Infra, Shared};

/// The service name cloud calls are counted under.
const SERVICE: &str = "container";

/// The node pool a cluster is created with (GKE refuses a cluster without nodes), removed
/// once the cluster runs.
pub const BOOTSTRAP_POOL: &str = "capi-bootstrap";

/// The GKEControlPlane reconciler: the generic one over GKE.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<GkeControlPlane> {
    ControlPlaneReconciler::new(scope::PROVIDER, GkeControlPlane { shared })
}

impl ManagedControlPlane for GKEControlPlane {
    fn spec_common(&self) -> &ControlPlaneSpecCommon {
        &self.spec.common
    }

    fn status_common(&self) -> Option<&ControlPlaneStatusCommon> {
        self.status.as_ref().map(|s| &s.common)
    }

    fn request_overrides_status(&self) -> Option<&RequestOverridesStatus> {
        self.status.as_ref()?.request_overrides.as_ref()
    }
}

/// GKE, for the generic ControlPlane reconciler.
pub struct GkeControlPlane {
    shared: Arc<Shared>,
}

/// One pass's clients, the cluster's name and its infrastructure.
pub struct GkeScope {
    clients: Clients,
    calls: CloudCalls,
    name: String,
    infra: Infra,
    http: reqwest::Client,
    token_lifetime: std::time::Duration,
}

impl GkeScope {
    fn parent(&self) -> String {
        format!(
            "projects/{}/locations/{}",
            self.infra.project, self.infra.region
        )
    }

    fn path(&self) -> String {
        format!("{}/clusters/{}", self.parent(), self.name)
    }
}

/// What GKE says about a cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// GKE's status word.
    pub state: String,
    /// Why it is in error.
    pub status_message: String,
    /// `currentMasterVersion`.
    pub master_version: String,
    /// The location.
    pub location: String,
    /// The node pools' names.
    pub pools: Vec<String>,
    /// Whether the public endpoint is on.
    pub public: bool,
    /// The authorized networks, sorted.
    pub authorized: Vec<(String, String)>,
    /// The logging components on.
    pub logging: Vec<gke::logging_component_config::Component>,
    /// The workload pool.
    pub workload_pool: String,
    /// The Secrets encryption key (empty: none).
    pub kms_key: String,
    /// The release channel.
    pub channel: gke::release_channel::Channel,
    /// Whether the DNS endpoint takes outside traffic.
    pub dns_external: bool,
    /// The label fingerprint.
    pub fingerprint: String,
}

/// One difference, one GKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Remove the node pool the cluster was created with.
    RemoveBootstrapPool,
    /// `desiredControlPlaneEndpointsConfig`: public endpoint, authorized networks, DNS
    /// endpoint access.
    Endpoints,
    /// `desiredLoggingConfig`.
    Logging,
    /// `desiredWorkloadIdentityConfig`.
    WorkloadIdentity,
    /// `desiredDatabaseEncryption`.
    Encryption,
    /// `desiredReleaseChannel`.
    ReleaseChannel,
}

fn strip_gke_build(version: &str) -> String {
    version.split("-gke.").next().unwrap_or(version).to_string()
}

/// A GKE endpoint (`34.1.2.3`, `127.0.0.1:30123`, a DNS name), read by the shared URL rule
/// (443 when no port is written).
fn endpoint(name: EndpointName, text: &str) -> Option<Endpoint> {
    let parsed = contract::endpoint::parse_url(text)?;
    Some(Endpoint {
        name,
        host: parsed.host,
        port: parsed.port,
    })
}

/// The shared view of a GKE cluster.
fn managed(c: &gke::Cluster) -> ManagedCluster<ObservedCluster> {
    use gke::cluster::Status;
    let lifecycle = match &c.status {
        Status::Provisioning => Lifecycle::Creating,
        Status::Running => Lifecycle::Running,
        Status::Reconciling => Lifecycle::Updating,
        Status::Stopping => Lifecycle::Deleting,
        Status::Error => Lifecycle::Failed,
        Status::Degraded => Lifecycle::Degraded,
        other => Lifecycle::Other(other.name().unwrap_or("UNKNOWN").to_string()),
    };
    let cpe = c.control_plane_endpoints_config.as_ref();
    let ip = cpe.and_then(|e| e.ip_endpoints_config.as_ref());
    let dns = cpe.and_then(|e| e.dns_endpoint_config.as_ref());
    let public = ip.and_then(|i| i.enable_public_endpoint).unwrap_or(true);
    let mut endpoints = Vec::new();
    if public {
        let text = ip
            .map(|i| i.public_endpoint.as_str())
            .filter(|p| !p.is_empty())
            .unwrap_or(&c.endpoint);
        endpoints.extend(endpoint(EndpointName::Public, text));
    }
    let private = ip.map(|i| i.private_endpoint.clone()).unwrap_or_default();
    endpoints.extend(endpoint(EndpointName::Private, &private));
    endpoints.extend(dns.and_then(|d| endpoint(EndpointName::Dns, &d.endpoint)));
    let ca = c
        .master_auth
        .as_ref()
        .map(|m| m.cluster_ca_certificate.trim())
        .filter(|d| !d.is_empty());
    let ca_pem = match ca {
        None => Ok(None),
        Some(data) => STANDARD
            .decode(data)
            .map(Some)
            .map_err(|e| format!("GKE returned a cluster CA that is not base64: {e}")),
    };
    let mut authorized: Vec<(String, String)> = ip
        .and_then(|i| i.authorized_networks_config.as_ref())
        .filter(|m| m.enabled)
        .map(|m| {
            m.cidr_blocks
                .iter()
                .map(|b| (b.cidr_block.clone(), b.display_name.clone()))
                .collect()
        })
        .unwrap_or_default();
    authorized.sort();
    let detail = ObservedCluster {
        state: c.status.name().unwrap_or("UNKNOWN").to_string(),
        status_message: c
            .conditions
            .iter()
            .map(|c| c.message.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        master_version: c.current_master_version.clone(),
        location: c.location.clone(),
        pools: c.node_pools.iter().map(|p| p.name.clone()).collect(),
        public,
        authorized,
        logging: c
            .logging_config
            .as_ref()
            .and_then(|l| l.component_config.as_ref())
            .map(|cc| cc.enable_components.clone())
            .unwrap_or_default(),
        workload_pool: c
            .workload_identity_config
            .as_ref()
            .map(|w| w.workload_pool.clone())
            .unwrap_or_default(),
        kms_key: c
            .database_encryption
            .as_ref()
            .filter(|d| d.state == gke::database_encryption::State::Encrypted)
            .map(|d| d.key_name.clone())
            .unwrap_or_default(),
        channel: c
            .release_channel
            .as_ref()
            .map(|r| r.channel.clone())
            .unwrap_or_default(),
        dns_external: dns.and_then(|d| d.allow_external_traffic).unwrap_or(false),
        fingerprint: c.label_fingerprint.clone(),
    };
    ManagedCluster {
        id: c.self_link.clone(),
        lifecycle,
        version: strip_gke_build(&c.current_master_version),
        endpoints,
        ca_pem,
        tags: c
            .resource_labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        detail,
    }
}

/// What the spec asks GKE for, in GKE's terms.
struct Desired {
    public: bool,
    authorized: Vec<(String, String)>,
    logging: Vec<gke::logging_component_config::Component>,
    workload_pool: String,
    kms_key: String,
    channel: gke::release_channel::Channel,
    dns_external: bool,
}

fn channel(c: Option<ReleaseChannel>) -> gke::release_channel::Channel {
    use gke::release_channel::Channel;
    match c {
        None => Channel::default(),
        Some(ReleaseChannel::Rapid) => Channel::Rapid,
        Some(ReleaseChannel::Regular) => Channel::Regular,
        Some(ReleaseChannel::Stable) => Channel::Stable,
        Some(ReleaseChannel::Extended) => Channel::Extended,
    }
}

fn desired(cp: &GKEControlPlane, project: &str) -> Desired {
    use gke::logging_component_config::Component;
    let common = &cp.spec.common;
    let mut authorized: Vec<(String, String)> = common
        .endpoint_access
        .public_cidrs
        .iter()
        .map(|c| (c.clone(), String::new()))
        .chain(cp.spec.gke.authorized_networks.iter().map(|n| {
            (
                n.cidr_block.clone(),
                n.display_name.clone().unwrap_or_default(),
            )
        }))
        .collect();
    authorized.sort();
    authorized.dedup_by(|a, b| a.0 == b.0);
    let log = &common.logging;
    let mut logging = Vec::new();
    if log.api_server || log.controller_manager || log.scheduler {
        logging.push(Component::SystemComponents);
    }
    for (on, c) in [
        (log.api_server, Component::Apiserver),
        (log.controller_manager, Component::ControllerManager),
        (log.scheduler, Component::Scheduler),
    ] {
        if on {
            logging.push(c);
        }
    }
    let workload_pool = if common.oidc_issuer.as_ref().is_some_and(|o| o.enabled) {
        cp.spec
            .gke
            .workload_identity_pool
            .clone()
            .unwrap_or_else(|| format!("{project}.svc.id.goog"))
    } else {
        String::new()
    };
    Desired {
        public: common.endpoint_access.public,
        authorized,
        logging,
        workload_pool,
        kms_key: common
            .encryption
            .as_ref()
            .map(|e| e.kms_key_id.clone())
            .unwrap_or_default(),
        channel: channel(cp.spec.gke.release_channel),
        dns_external: cp.spec.gke.dns_endpoint_external_traffic,
    }
}

/// The first difference (pure).
pub fn diff(observed: &ObservedCluster, cp: &GKEControlPlane, project: &str) -> Option<Change> {
    let want = desired(cp, project);
    let mut logging = observed.logging.clone();
    logging.sort_by_key(|c| c.value());
    let mut wanted_logging = want.logging.clone();
    wanted_logging.sort_by_key(|c| c.value());
    if observed.pools.iter().any(|p| p == BOOTSTRAP_POOL) {
        Some(Change::RemoveBootstrapPool)
    } else if observed.public != want.public
        || observed.dns_external != want.dns_external
        || observed.authorized != want.authorized
    {
        Some(Change::Endpoints)
    } else if logging != wanted_logging {
        Some(Change::Logging)
    } else if observed.workload_pool != want.workload_pool {
        Some(Change::WorkloadIdentity)
    } else if observed.kms_key != want.kms_key {
        Some(Change::Encryption)
    } else if observed.channel != want.channel {
        Some(Change::ReleaseChannel)
    } else {
        None
    }
}

impl Change {
    fn describe(&self, name: &str) -> String {
        match self {
            Change::RemoveBootstrapPool => {
                format!("removing the bootstrap node pool {BOOTSTRAP_POOL} of GKE cluster {name}")
            }
            Change::Endpoints => {
                format!("changing the endpoint access or authorized networks of GKE cluster {name}")
            }
            Change::Logging => format!("changing the control plane logging of GKE cluster {name}"),
            Change::WorkloadIdentity => format!("changing workload identity of GKE cluster {name}"),
            Change::Encryption => format!("changing the Secrets encryption of GKE cluster {name}"),
            Change::ReleaseChannel => format!("changing the release channel of GKE cluster {name}"),
        }
    }
}

fn authorized_config(want: &Desired) -> gke::MasterAuthorizedNetworksConfig {
    gke::MasterAuthorizedNetworksConfig::new()
        .set_enabled(!want.authorized.is_empty())
        .set_cidr_blocks(want.authorized.iter().map(|(cidr, name)| {
            gke::master_authorized_networks_config::CidrBlock::new()
                .set_cidr_block(cidr)
                .set_display_name(name)
        }))
}

fn endpoints_config(want: &Desired) -> gke::ControlPlaneEndpointsConfig {
    gke::ControlPlaneEndpointsConfig::new()
        .set_ip_endpoints_config(
            gke::control_plane_endpoints_config::IPEndpointsConfig::new()
                .set_enabled(true)
                .set_enable_public_endpoint(want.public)
                .set_authorized_networks_config(authorized_config(want)),
        )
        .set_dns_endpoint_config(
            gke::control_plane_endpoints_config::DNSEndpointConfig::new()
                .set_allow_external_traffic(want.dns_external),
        )
}

fn logging_config(want: &Desired) -> gke::LoggingConfig {
    gke::LoggingConfig::new().set_component_config(
        gke::LoggingComponentConfig::new().set_enable_components(want.logging.clone()),
    )
}

fn encryption(want: &Desired) -> gke::DatabaseEncryption {
    if want.kms_key.is_empty() {
        gke::DatabaseEncryption::new().set_state(gke::database_encryption::State::Decrypted)
    } else {
        gke::DatabaseEncryption::new()
            .set_state(gke::database_encryption::State::Encrypted)
            .set_key_name(&want.kms_key)
    }
}

/// The Operation GKE answered a change with, as what the kernel tracks.
fn started(op: &gke::Operation) -> Result<Started, ProviderError> {
    if op.name.is_empty() {
        return Err(ProviderError::cloud(
            "cloud_response",
            "GKE answered without an operation name",
        ));
    }
    Ok(Started::Operation(op.name.clone()))
}

/// A GKE operation in the shared terms.
pub fn operation_state(op: &gke::Operation) -> OperationState {
    use gke::operation::Status;
    match op.status {
        Status::Done => match &op.error {
            Some(e) if e.code != 0 || !e.message.is_empty() => OperationState::Failed(format!(
                "failed ({})",
                if e.message.is_empty() {
                    "no message given"
                } else {
                    e.message.as_str()
                }
            )),
            _ => OperationState::Succeeded,
        },
        Status::Aborting => OperationState::Failed("is being aborted".into()),
        _ => OperationState::Running,
    }
}

/// Reads an operation by name in the cluster's location.
pub async fn get_operation(
    clients: &Clients,
    calls: &CloudCalls,
    parent: &str,
    id: &str,
) -> Result<Option<OperationState>, ProviderError> {
    let op = absent_if_not_found(
        counted(
            calls,
            SERVICE,
            "GetOperation",
            clients
                .container
                .get_operation()
                .set_name(format!("{parent}/operations/{id}"))
                .send(),
        )
        .await,
    )?;
    Ok(op.as_ref().map(operation_state))
}

/// OAuth access tokens for the kubeconfig Secret.
pub struct GkeTokens<'a> {
    http: &'a reqwest::Client,
    key: &'a ServiceAccountKey,
    lifetime: std::time::Duration,
}

impl TokenSource for GkeTokens<'_> {
    fn lifetime(&self) -> std::time::Duration {
        self.lifetime
    }

    fn expires_at(&self, _token: &str) -> Option<jiff::Timestamp> {
        // An access token is opaque: the Secret's recorded expiry is used.
        None
    }

    async fn mint(&self, now: jiff::Timestamp) -> Result<MintedToken, ProviderError> {
        crate::cloud::token::mint(self.http, self.key, now).await
    }
}

/// `gke-gcloud-auth-plugin`, the exec plugin of the user kubeconfig.
pub fn auth_plugin() -> ExecPlugin {
    let mut plugin = ExecPlugin::new("gke-gcloud-auth-plugin", Vec::<String>::new());
    plugin.install_hint = Some(
        "Install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin) and log in with gcloud auth login.".into(),
    );
    plugin.provide_cluster_info = true;
    plugin
}

impl ControlPlaneCloud for GkeControlPlane {
    type Object = GKEControlPlane;
    type Infra = Infra;
    type Scope = GkeScope;
    type Detail = ObservedCluster;
    type Extra = ();
    type Change = Change;
    type Status = GKEControlPlaneStatus;
    type Tokens<'a> = GkeTokens<'a>;

    fn profile(&self) -> ControlPlaneProfile {
        ControlPlaneProfile {
            cloud: "GKE",
            // GKE picks the patch and build for a minor.
            minors_only: true,
            token_limits: &GKE_UNSENT_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    async fn infrastructure(
        &self,
        cp: &GKEControlPlane,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> Result<(Infra, bool), ProviderError> {
        let infra = scope::infra_for_control_plane(client, cluster, cp).await?;
        let ready = infra.ready;
        Ok((infra, ready))
    }

    async fn cleanup_infrastructure(
        &self,
        cp: &GKEControlPlane,
        cluster: Option<&Cluster>,
        client: &kube::Client,
        cluster_name: &str,
    ) -> Result<Option<Infra>, ProviderError> {
        provider_runtime::cluster_objects::control_plane_cleanup_infra::<crate::api::GKECluster, _, _>(
            client,
            cluster,
            cp.spec.infrastructure.as_ref(),
            &cp.namespace().unwrap_or_default(),
            cluster_name,
            "GKEControlPlane",
        )
        .await
    }

    async fn connect(
        &self,
        cp: &GKEControlPlane,
        infra: Infra,
        client: &kube::Client,
        calls: &CloudCalls,
        cluster_name: &str,
    ) -> Result<GkeScope, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let clients = scope::clients_for(&self.shared, client, &namespace, &infra).await?;
        Ok(GkeScope {
            clients,
            calls: calls.clone(),
            name: scope::gke_cluster_name(cp, cluster_name),
            infra,
            http: self.shared.http.clone(),
            token_lifetime: self.shared.token_lifetime,
        })
    }

    fn name<'s>(&self, scope: &'s GkeScope) -> &'s str {
        &scope.name
    }

    fn additional_tags<'s>(&self, scope: &'s GkeScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    async fn describe(
        &self,
        scope: &GkeScope,
    ) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
        let found = absent_if_not_found(
            counted(
                &scope.calls,
                SERVICE,
                "GetCluster",
                scope
                    .clients
                    .container
                    .get_cluster()
                    .set_name(scope.path())
                    .send(),
            )
            .await,
        )?;
        Ok(found.as_ref().map(managed))
    }

    async fn operation_state(
        &self,
        scope: &GkeScope,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        get_operation(&scope.clients, &scope.calls, &scope.parent(), &operation.id).await
    }

    async fn observe_more(
        &self,
        _scope: &GkeScope,
        _cp: &GKEControlPlane,
    ) -> Result<(), ProviderError> {
        Ok(())
    }

    fn diff(
        &self,
        cp: &GKEControlPlane,
        cluster: &ManagedCluster<ObservedCluster>,
        _extra: &(),
    ) -> CloudStep<Change> {
        let project = cp
            .spec
            .infrastructure
            .as_ref()
            .map(|i| i.gke.project.clone())
            .unwrap_or_default();
        // The project is the cluster's; its pool name tells it where the spec has none.
        let project = if project.is_empty() {
            cluster
                .id
                .split("/projects/")
                .nth(1)
                .and_then(|r| r.split('/').next())
                .unwrap_or_default()
                .to_string()
        } else {
            project
        };
        match diff(&cluster.detail, cp, &project) {
            Some(change) => CloudStep::Change(change),
            None => CloudStep::Nothing,
        }
    }

    fn describe_change(&self, change: &Change, name: &str) -> String {
        change.describe(name)
    }

    async fn create(
        &self,
        scope: &GkeScope,
        cp: &GKEControlPlane,
        version: &KubeVersion,
        request: &Request,
    ) -> Result<Created<ObservedCluster>, ProviderError> {
        let infra = &scope.infra;
        if infra.network.is_empty() || infra.subnetwork.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no network to create the GKE cluster in: set spec.infrastructure.network.id and spec.infrastructure.network.subnetIDs, or use a GKECluster",
            ));
        }
        let want = desired(cp, &infra.project);
        let first_zone = infra.zones.first().cloned().unwrap_or_default();
        let bootstrap = gke::NodePool::new()
            .set_name(BOOTSTRAP_POOL)
            .set_initial_node_count(1)
            .set_locations([first_zone])
            .set_config(
                gke::NodeConfig::new()
                    .set_machine_type("e2-small")
                    .set_resource_labels(request.tags.clone()),
            )
            .set_management(
                gke::NodeManagement::new()
                    .set_auto_repair(true)
                    .set_auto_upgrade(false),
            );
        let mut cluster = gke::Cluster::new()
            .set_name(&scope.name)
            .set_description(format!(
                "Cluster API cluster {}/{}",
                cp.namespace().unwrap_or_default(),
                cp.labels()
                    .get(contract::capi::CLUSTER_NAME_LABEL)
                    .cloned()
                    .unwrap_or_default()
            ))
            .set_initial_cluster_version(crate::reconcile::gke_version(version))
            .set_resource_labels(request.tags.clone())
            .set_network(&infra.network)
            .set_subnetwork(&infra.subnetwork)
            .set_locations(infra.zones.clone())
            .set_ip_allocation_policy(
                gke::IPAllocationPolicy::new()
                    .set_use_ip_aliases(true)
                    .set_cluster_secondary_range_name(&infra.pods_range)
                    .set_services_secondary_range_name(&infra.services_range),
            )
            .set_node_pools([bootstrap])
            .set_logging_config(logging_config(&want))
            .set_control_plane_endpoints_config(endpoints_config(&want))
            .set_network_config(
                gke::NetworkConfig::new()
                    .set_default_enable_private_nodes(cp.spec.gke.private_nodes),
            )
            .set_database_encryption(encryption(&want));
        if !want.workload_pool.is_empty() {
            cluster = cluster.set_workload_identity_config(
                gke::WorkloadIdentityConfig::new().set_workload_pool(&want.workload_pool),
            );
        }
        if want.channel != gke::release_channel::Channel::default() {
            cluster = cluster
                .set_release_channel(gke::ReleaseChannel::new().set_channel(want.channel.clone()));
        }
        let patch = contract::overrides::effective(cp.spec.gke.request_overrides.as_ref()).cloned();
        if let Some(patch) = &patch {
            cluster = crate::reconcile::overridden(&cluster, patch)?;
        }
        let op = counted(
            &scope.calls,
            SERVICE,
            "CreateCluster",
            scope
                .clients
                .container
                .create_cluster()
                .set_parent(scope.parent())
                .set_cluster(cluster)
                .send(),
        )
        .await;
        let op = match op {
            Ok(op) => op,
            // Made by a pass that crashed before recording it: the next pass finds it.
            Err(f) if f.already_exists => return Err(CloudError::InUse(f.error.to_string()).into()),
            Err(f) => return Err(f.into()),
        };
        Ok(Created {
            id: op.name.clone(),
            overrides: patch.map(|_| request.overrides_applied("CreateCluster")),
            cluster: None,
        })
    }

    async fn adopt(
        &self,
        scope: &GkeScope,
        _id: &str,
        request: &Request,
    ) -> Result<(), ProviderError> {
        let Some(current) = self.describe(scope).await? else {
            return Err(CloudError::NotFound(format!("GKE cluster {} is gone", scope.name)).into());
        };
        let mut labels = current.tags.clone();
        labels.extend(request.tags.clone());
        counted(
            &scope.calls,
            SERVICE,
            "SetLabels",
            scope
                .clients
                .container
                .set_labels()
                .set_name(scope.path())
                .set_resource_labels(labels)
                .set_label_fingerprint(current.detail.fingerprint.clone())
                .send(),
        )
        .await?;
        Ok(())
    }

    async fn upgrade(
        &self,
        scope: &GkeScope,
        to: &KubeVersion,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let update =
            gke::ClusterUpdate::new().set_desired_master_version(crate::reconcile::gke_version(to));
        match counted(
            &scope.calls,
            SERVICE,
            "UpdateCluster",
            scope
                .clients
                .container
                .update_cluster()
                .set_name(scope.path())
                .set_update(update)
                .send(),
        )
        .await
        {
            Ok(op) => started(&op),
            Err(f) => match f.error {
                CloudError::Invalid { message, .. } if message.contains("node pool") => {
                    Ok(Started::BlockedOnPools(message))
                }
                e => Err(e.into()),
            },
        }
    }

    async fn update(
        &self,
        scope: &GkeScope,
        cp: &GKEControlPlane,
        change: &Change,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let want = desired(cp, &scope.infra.project);
        let c = &scope.clients.container;
        let update = match change {
            Change::RemoveBootstrapPool => None,
            Change::Endpoints => Some(
                gke::ClusterUpdate::new()
                    .set_desired_control_plane_endpoints_config(endpoints_config(&want)),
            ),
            Change::Logging => {
                Some(gke::ClusterUpdate::new().set_desired_logging_config(logging_config(&want)))
            }
            Change::WorkloadIdentity => Some(
                gke::ClusterUpdate::new().set_desired_workload_identity_config(
                    gke::WorkloadIdentityConfig::new().set_workload_pool(&want.workload_pool),
                ),
            ),
            Change::Encryption => {
                Some(gke::ClusterUpdate::new().set_desired_database_encryption(encryption(&want)))
            }
            Change::ReleaseChannel => Some(gke::ClusterUpdate::new().set_desired_release_channel(
                gke::ReleaseChannel::new().set_channel(want.channel.clone()),
            )),
        };
        let op = match update {
            // The pool the cluster was created with goes once it runs.
            None => {
                counted(
                    &scope.calls,
                    SERVICE,
                    "DeleteNodePool",
                    c.delete_node_pool()
                        .set_name(format!("{}/nodePools/{BOOTSTRAP_POOL}", scope.path()))
                        .send(),
                )
                .await?
            }
            Some(update) => {
                counted(
                    &scope.calls,
                    SERVICE,
                    "UpdateCluster",
                    c.update_cluster()
                        .set_name(scope.path())
                        .set_update(update)
                        .send(),
                )
                .await?
            }
        };
        started(&op)
    }

    async fn delete(&self, scope: &GkeScope) -> Result<Deletion, ProviderError> {
        match counted(
            &scope.calls,
            SERVICE,
            "DeleteCluster",
            scope
                .clients
                .container
                .delete_cluster()
                .set_name(scope.path())
                .send(),
        )
        .await
        {
            Ok(_) => Ok(Deletion::Started),
            Err(f) => Deletion::after(Err(f.error)),
        }
    }

    fn tokens<'a>(&'a self, scope: &'a GkeScope) -> GkeTokens<'a> {
        GkeTokens {
            http: &scope.http,
            key: &scope.clients.key,
            lifetime: scope.token_lifetime,
        }
    }

    fn exec_plugin(&self, _scope: &GkeScope) -> ExecPlugin {
        auth_plugin()
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> GKEControlPlaneStatus {
        GKEControlPlaneStatus {
            common,
            observed_generation: None,
            gke: cluster.map(|c| GKEControlPlaneObserved {
                location: c.detail.location.clone(),
                master_version: Some(c.detail.master_version.clone()).filter(|v| !v.is_empty()),
                state: Some(c.detail.state.clone()),
            }),
            request_overrides,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn gke_endpoints_read_with_and_without_a_port() {
        let e = endpoint(EndpointName::Public, "34.1.2.3").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("34.1.2.3", 443));
        let e = endpoint(EndpointName::Public, "127.0.0.1:30123").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 30123));
        assert!(endpoint(EndpointName::Private, "").is_none());
        assert_eq!(strip_gke_build("1.33.5-gke.1201000"), "1.33.5");
    }

    #[test]
    fn a_done_operation_with_an_error_is_a_failure_with_googles_words() {
        let mut op = gke::Operation::new().set_status(gke::operation::Status::Done);
        assert_eq!(operation_state(&op), OperationState::Succeeded);
        op.error = Some(
            google_cloud_rpc::model::Status::new()
                .set_code(8)
                .set_message("Quota 'CPUS' exceeded."),
        );
        assert_eq!(
            operation_state(&op),
            OperationState::Failed("failed (Quota 'CPUS' exceeded.)".into())
        );
        let running = gke::Operation::new().set_status(gke::operation::Status::Running);
        assert_eq!(operation_state(&running), OperationState::Running);
    }
}
