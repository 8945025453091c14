//! AKS's side of the ControlPlane role: where the managed cluster lives, its ARM calls, and the
//! mapping between AKS's shapes and the shared ones. Everything else (observe order, plan,
//! status, conditions, kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy)
//! is the generic reconciler's ([`provider_runtime::control_plane`]).
//!
//! ARM puts whole resources: a change is a PUT of the cluster as last read, with the desired
//! fields set, guarded by its `eTag` (`If-Match`: a write racing another is refused with 412 and
//! read again next pass) and without `agentPoolProfiles` (pools change only through their own
//! resource, so a PUT never reverts a pool's count). Every change is asynchronous: its
//! `Azure-AsyncOperation` status resource is remembered in `status.operation` and polled. AKS
//! runs one operation per cluster and answers 409 `OperationNotAllowed` to another, which is a
//! wait (`WaitingForCloud`), not a failure.
//!
//! AKS needs a System pool: the cluster is created with one named `system`
//! (`spec.aks.systemPool`), which this role keeps at the control plane's version and count.

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
use contract::idempotency::ARM_UNSENT_TOKEN;
use contract::kubeconfig::ExecPlugin;
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::{KubeVersion, normalize};
use kube::ResourceExt;
use provider_runtime::control_plane::{
    ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Created, Deletion,
    ManagedCluster, ManagedControlPlane, Request, Started,
};
use provider_runtime::kubeconfig::{MintedToken, TokenSource};
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::{aks_version, tags_of};
use crate::api::{
    AKSControlPlane, AKSControlPlaneObserved, AKSControlPlaneStatus, NetworkPlugin, NetworkPolicy,
    SkuTier,
};
use crate::arm::credentials::{AKS_SCOPE, AKS_SERVER_APP, jwt_expiry};
use crate::arm::{self, Arm, Tokens};
use crate::scope::{self, ClusterAccess, Infra, Shared};

/// The System pool the cluster is created with and the control plane keeps.
pub const SYSTEM_POOL: &str = "system";

/// How long an API server address and CA read from the user credential are reused.
const ACCESS_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// The AKSControlPlane reconciler: the generic one over AKS.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<AksControlPlane> {
    ControlPlaneReconciler::new(scope::PROVIDER, AksControlPlane { shared })
}

impl ManagedControlPlane for AKSControlPlane {
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

/// AKS, for the generic ControlPlane reconciler.
pub struct AksControlPlane {
    shared: Arc<Shared>,
}

/// One pass's ARM client, the cluster's name and its infrastructure.
pub struct AksScope {
    arm: Arm,
    calls: CloudCalls,
    name: String,
    infra: Infra,
    token_lifetime: std::time::Duration,
}

impl AksScope {
    fn path(&self) -> String {
        format!(
            "{}/providers/Microsoft.ContainerService/managedClusters/{}",
            self.arm.group_path(&self.infra.resource_group),
            self.name
        )
    }
}

/// The System pool as AKS reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemPoolView {
    /// Its profile as read (for a PUT of its resource).
    pub profile: Value,
    /// `currentOrchestratorVersion`.
    pub version: String,
    /// `count`.
    pub count: i64,
    /// `provisioningState`.
    pub state: String,
}

/// What AKS says about a managed cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// The cluster as read: the body of the next PUT.
    pub raw: Value,
    /// Its ETag.
    pub etag: String,
    /// `provisioningState`.
    pub state: String,
    /// Its location.
    pub location: String,
    /// The API server's name.
    pub fqdn: String,
    /// `nodeResourceGroup`.
    pub node_group: String,
    /// `currentKubernetesVersion`.
    pub full_version: String,
    /// The SKU tier.
    pub sku: String,
    /// `authorizedIPRanges`, sorted.
    pub authorized: Vec<String>,
    /// Azure RBAC on.
    pub azure_rbac: bool,
    /// Entra admin groups, sorted.
    pub admin_groups: Vec<String>,
    /// Local accounts off.
    pub local_disabled: bool,
    /// OIDC issuer on.
    pub oidc: bool,
    /// Workload identity on.
    pub workload_identity: bool,
    /// The Key Vault key encrypting Secrets ("" when none).
    pub kms_key: String,
    /// The System pool, if it exists.
    pub system_pool: Option<SystemPoolView>,
}

/// One difference, one ARM call.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A PUT of the cluster with every desired setting (SKU, authorized ranges, Entra and RBAC,
    /// local accounts, OIDC issuer and workload identity, Key Vault encryption).
    Settings(Vec<&'static str>),
    /// The System pool follows the control plane to this minor.
    SystemPoolVersion(String),
    /// The System pool gets this many nodes.
    SystemPoolCount(i64),
}

fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().collect();
    v.sort();
    v.dedup();
    v
}

fn observed(c: &Value) -> ObservedCluster {
    let p = &c["properties"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let system_pool = p["agentPoolProfiles"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == SYSTEM_POOL)
        .map(|a| SystemPoolView {
            profile: a.clone(),
            version: s(&a["currentOrchestratorVersion"]),
            count: a["count"].as_i64().unwrap_or(0),
            state: s(&a["provisioningState"]),
        });
    ObservedCluster {
        raw: c.clone(),
        etag: s(&c["eTag"]),
        state: s(&p["provisioningState"]),
        location: s(&c["location"]),
        fqdn: match p["fqdn"].as_str() {
            Some(f) => f.to_string(),
            None => s(&p["privateFQDN"]),
        },
        node_group: s(&p["nodeResourceGroup"]),
        full_version: s(&p["currentKubernetesVersion"]),
        sku: s(&c["sku"]["tier"]),
        authorized: sorted(
            p["apiServerAccessProfile"]["authorizedIPRanges"]
                .as_array()
                .into_iter()
                .flatten()
                .map(s),
        ),
        azure_rbac: p["aadProfile"]["enableAzureRBAC"] == true,
        admin_groups: sorted(
            p["aadProfile"]["adminGroupObjectIDs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(s),
        ),
        local_disabled: p["disableLocalAccounts"] == true,
        oidc: p["oidcIssuerProfile"]["enabled"] == true,
        workload_identity: p["securityProfile"]["workloadIdentity"]["enabled"] == true,
        kms_key: if p["securityProfile"]["azureKeyVaultKms"]["enabled"] == true {
            s(&p["securityProfile"]["azureKeyVaultKms"]["keyId"])
        } else {
            String::new()
        },
        system_pool,
    }
}

fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "Creating" => Lifecycle::Creating,
        // A canceled operation leaves the cluster as it was.
        "Succeeded" | "Canceled" => Lifecycle::Running,
        "Updating" | "Upgrading" | "Scaling" | "Starting" | "Stopping" => Lifecycle::Updating,
        "Deleting" => Lifecycle::Deleting,
        "Failed" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

/// What the spec asks AKS for.
struct Desired {
    sku: &'static str,
    authorized: Vec<String>,
    azure_rbac: bool,
    admin_groups: Vec<String>,
    local_disabled: bool,
    oidc: bool,
    kms_key: String,
}

fn sku(t: SkuTier) -> &'static str {
    match t {
        SkuTier::Free => "Free",
        SkuTier::Standard => "Standard",
        SkuTier::Premium => "Premium",
    }
}

fn desired(cp: &AKSControlPlane) -> Desired {
    let c = &cp.spec.common;
    Desired {
        sku: sku(cp.spec.aks.sku),
        authorized: sorted(c.endpoint_access.public_cidrs.iter().cloned()),
        azure_rbac: cp.spec.aks.azure_rbac,
        admin_groups: sorted(cp.spec.aks.admin_group_object_ids.iter().cloned()),
        local_disabled: !cp.spec.aks.local_accounts,
        oidc: c.oidc_issuer.as_ref().is_some_and(|o| o.enabled),
        kms_key: c
            .encryption
            .as_ref()
            .map(|e| e.kms_key_id.clone())
            .unwrap_or_default(),
    }
}

/// The first difference (pure).
pub fn diff(o: &ObservedCluster, cp: &AKSControlPlane) -> CloudStep<Change> {
    let want = desired(cp);
    let mut fields = Vec::new();
    if o.sku != want.sku {
        fields.push("sku");
    }
    if o.authorized != want.authorized {
        fields.push("authorized IP ranges");
    }
    if o.azure_rbac != want.azure_rbac || o.admin_groups != want.admin_groups {
        fields.push("Entra ID and RBAC");
    }
    if o.local_disabled != want.local_disabled {
        fields.push("local accounts");
    }
    if o.oidc != want.oidc || o.workload_identity != want.oidc {
        fields.push("OIDC issuer and workload identity");
    }
    if o.kms_key != want.kms_key {
        fields.push("Key Vault encryption");
    }
    if !fields.is_empty() {
        return CloudStep::Change(Change::Settings(fields));
    }
    let Some(pool) = &o.system_pool else {
        return CloudStep::Failed(format!(
            "the managed cluster has no agent pool named {SYSTEM_POOL}, which this control plane keeps; recreate it with mode System"
        ));
    };
    if !matches!(pool.state.as_str(), "Succeeded" | "Canceled" | "Failed") {
        return CloudStep::Wait(format!("the System pool {SYSTEM_POOL} is {}", pool.state));
    }
    let minor = |v: &str| {
        KubeVersion::parse(&normalize(v))
            .ok()
            .map(|k| k.without_patch())
    };
    if let (Some(p), Some(c)) = (minor(&pool.version), minor(&o.full_version))
        && p < c
    {
        return CloudStep::Change(Change::SystemPoolVersion(aks_version(&c)));
    }
    if pool.count != i64::from(cp.spec.aks.system_pool.count) {
        return CloudStep::Change(Change::SystemPoolCount(i64::from(
            cp.spec.aks.system_pool.count,
        )));
    }
    CloudStep::Nothing
}

impl Change {
    fn describe(&self, name: &str) -> String {
        match self {
            Change::Settings(fields) => {
                format!("changing the {} of AKS cluster {name}", fields.join(", "))
            }
            Change::SystemPoolVersion(v) => {
                format!("upgrading the System pool {SYSTEM_POOL} of AKS cluster {name} to {v}")
            }
            Change::SystemPoolCount(n) => {
                format!("resizing the System pool {SYSTEM_POOL} of AKS cluster {name} to {n} nodes")
            }
        }
    }
}

/// Sets the desired settings into a cluster body (a create's or the last read's).
fn apply_settings(body: &mut Value, want: &Desired, private: bool) {
    body["sku"] = json!({ "name": "Base", "tier": want.sku });
    let p = &mut body["properties"];
    p["enableRBAC"] = json!(true);
    p["aadProfile"]["managed"] = json!(true);
    p["aadProfile"]["enableAzureRBAC"] = json!(want.azure_rbac);
    p["aadProfile"]["adminGroupObjectIDs"] = json!(want.admin_groups);
    p["disableLocalAccounts"] = json!(want.local_disabled);
    p["apiServerAccessProfile"]["enablePrivateCluster"] = json!(private);
    p["apiServerAccessProfile"]["authorizedIPRanges"] = json!(want.authorized);
    p["oidcIssuerProfile"]["enabled"] = json!(want.oidc);
    p["securityProfile"]["workloadIdentity"]["enabled"] = json!(want.oidc);
    p["securityProfile"]["azureKeyVaultKms"] = if want.kms_key.is_empty() {
        json!({ "enabled": false })
    } else {
        json!({ "enabled": true, "keyId": want.kms_key, "keyVaultNetworkAccess": "Public" })
    };
}

/// The cluster as last read, ready to be PUT back: without the pools and what ARM sets.
fn put_body(raw: &Value) -> Value {
    let mut body = json!({
        "location": raw["location"],
        "tags": raw["tags"],
        "sku": raw["sku"],
        "properties": raw["properties"],
    });
    if !raw["identity"].is_null() {
        body["identity"] = raw["identity"].clone();
    }
    if let Some(p) = body["properties"].as_object_mut() {
        for f in [
            "agentPoolProfiles",
            "provisioningState",
            "powerState",
            "currentKubernetesVersion",
            "fqdn",
            "azurePortalFQDN",
            "privateFQDN",
            "maxAgentPools",
            "resourceUID",
        ] {
            p.remove(f);
        }
    }
    body
}

fn started(answer: &arm::Answer) -> Started {
    match arm::tracked(answer) {
        Some(path) => Started::Operation(path),
        None => Started::Untracked,
    }
}

/// Reads a kubeconfig's server and CA (what `listClusterUserCredential` answers).
fn access_of(kubeconfig: &str) -> Option<(String, Option<Vec<u8>>)> {
    let v: Value = serde_saphyr::from_str(kubeconfig).ok()?;
    let cluster = &v["clusters"][0]["cluster"];
    let server = cluster["server"].as_str()?.to_string();
    let ca = cluster["certificate-authority-data"]
        .as_str()
        .and_then(|d| STANDARD.decode(d.trim()).ok());
    Some((server, ca))
}

impl AksControlPlane {
    /// The API server's address and CA, from the cluster's user credential (cached per cluster
    /// and FQDN for [`ACCESS_TTL`]).
    async fn access(&self, scope: &AksScope, id: &str, fqdn: &str) -> Option<ClusterAccess> {
        let cached = self
            .shared
            .access
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .filter(|a| a.fqdn == fqdn && a.read_at.elapsed() < ACCESS_TTL)
            .cloned();
        if cached.is_some() {
            return cached;
        }
        let answer = scope
            .arm
            .call(
                &scope.calls,
                "ManagedClusters_ListClusterUserCredentials",
                Method::POST,
                &format!("{}/listClusterUserCredential", scope.path()),
                arm::CONTAINER,
                None,
                None,
            )
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(f) => {
                tracing::debug!(cluster = %scope.name, error = %f.error, "the user credential is not readable yet");
                return None;
            }
        };
        let text = answer.body["kubeconfigs"][0]["value"]
            .as_str()
            .and_then(|v| STANDARD.decode(v).ok())
            .and_then(|b| String::from_utf8(b).ok())?;
        let (server, ca_pem) = access_of(&text)?;
        let access = ClusterAccess {
            server,
            ca_pem,
            fqdn: fqdn.to_string(),
            read_at: std::time::Instant::now(),
        };
        self.shared
            .access
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_string(), access.clone());
        Some(access)
    }
}

/// Entra tokens for the kubeconfig Secret.
pub struct AksTokens<'a> {
    tokens: &'a Arc<Tokens>,
    lifetime: std::time::Duration,
}

impl TokenSource for AksTokens<'_> {
    fn lifetime(&self) -> std::time::Duration {
        self.lifetime
    }

    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        jwt_expiry(token)
    }

    async fn mint(&self, now: jiff::Timestamp) -> Result<MintedToken, ProviderError> {
        let t = self.tokens.exchange(AKS_SCOPE, now).await?;
        Ok(MintedToken {
            token: t.token,
            expires_at: t.expires_at,
        })
    }
}

/// `kubelogin`, the exec plugin of the user kubeconfig (Entra sign-in through the Azure CLI).
pub fn auth_plugin() -> ExecPlugin {
    let mut plugin = ExecPlugin::new(
        "kubelogin",
        [
            "get-token",
            "--login",
            "azurecli",
            "--server-id",
            AKS_SERVER_APP,
        ],
    );
    plugin.install_hint = Some(
        "Install kubelogin (az aks install-cli, or https://azure.github.io/kubelogin) and sign in with az login.".into(),
    );
    plugin
}

impl ControlPlaneCloud for AksControlPlane {
    type Object = AKSControlPlane;
    type Infra = Infra;
    type Scope = AksScope;
    type Detail = ObservedCluster;
    type Extra = ();
    type Change = Change;
    type Status = AKSControlPlaneStatus;
    type Tokens<'a> = AksTokens<'a>;

    fn profile(&self) -> ControlPlaneProfile {
        ControlPlaneProfile {
            cloud: "AKS",
            // AKS picks the newest patch of a minor.
            minors_only: true,
            token_limits: &ARM_UNSENT_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    async fn infrastructure(
        &self,
        cp: &AKSControlPlane,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> Result<(Infra, bool), ProviderError> {
        let infra = scope::infra_for_control_plane(client, cluster, cp).await?;
        let ready = infra.ready;
        Ok((infra, ready))
    }

    async fn cleanup_infrastructure(
        &self,
        cp: &AKSControlPlane,
        cluster: Option<&Cluster>,
        client: &kube::Client,
        cluster_name: &str,
    ) -> Result<Option<Infra>, ProviderError> {
        provider_runtime::cluster_objects::control_plane_cleanup_infra::<crate::api::AKSCluster, _, _>(
            client,
            cluster,
            cp.spec.infrastructure.as_ref(),
            &cp.namespace().unwrap_or_default(),
            cluster_name,
            "AKSControlPlane",
        )
        .await
    }

    async fn connect(
        &self,
        cp: &AKSControlPlane,
        infra: Infra,
        client: &kube::Client,
        calls: &CloudCalls,
        cluster_name: &str,
    ) -> Result<AksScope, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let arm = scope::arm_for(&self.shared, client, &namespace, &infra).await?;
        Ok(AksScope {
            arm,
            calls: calls.clone(),
            name: scope::aks_cluster_name(cp, cluster_name),
            infra,
            token_lifetime: self.shared.token_lifetime,
        })
    }

    fn name<'s>(&self, scope: &'s AksScope) -> &'s str {
        &scope.name
    }

    fn additional_tags<'s>(&self, scope: &'s AksScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    async fn describe(
        &self,
        scope: &AksScope,
    ) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
        let Some(c) = scope
            .arm
            .get(
                &scope.calls,
                "ManagedClusters_Get",
                &scope.path(),
                arm::CONTAINER,
            )
            .await?
        else {
            return Ok(None);
        };
        let detail = observed(&c);
        let id = c["id"].as_str().unwrap_or_default().to_string();
        let life = lifecycle(&detail.state);
        let access = if matches!(
            life,
            Lifecycle::Creating | Lifecycle::Deleting | Lifecycle::Failed
        ) || detail.fqdn.is_empty()
        {
            None
        } else {
            self.access(scope, &id, &detail.fqdn).await
        };
        let private = c["properties"]["apiServerAccessProfile"]["enablePrivateCluster"] == true;
        let endpoints = access
            .as_ref()
            .and_then(|a| contract::endpoint::parse_url(&a.server))
            .map(|u| Endpoint {
                name: if private {
                    EndpointName::Private
                } else {
                    EndpointName::Public
                },
                host: u.host,
                port: u.port,
            })
            .into_iter()
            .collect();
        Ok(Some(ManagedCluster {
            id,
            lifecycle: life,
            version: detail.full_version.clone(),
            endpoints,
            ca_pem: Ok(access.and_then(|a| a.ca_pem)),
            tags: tags_of(&c),
            detail,
        }))
    }

    async fn operation_state(
        &self,
        scope: &AksScope,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        scope.arm.operation_state(&scope.calls, &operation.id).await
    }

    async fn observe_more(
        &self,
        _scope: &AksScope,
        _cp: &AKSControlPlane,
    ) -> Result<(), ProviderError> {
        Ok(())
    }

    fn diff(
        &self,
        cp: &AKSControlPlane,
        cluster: &ManagedCluster<ObservedCluster>,
        _extra: &(),
    ) -> CloudStep<Change> {
        diff(&cluster.detail, cp)
    }

    fn describe_change(&self, change: &Change, name: &str) -> String {
        change.describe(name)
    }

    async fn create(
        &self,
        scope: &AksScope,
        cp: &AKSControlPlane,
        version: &KubeVersion,
        request: &Request,
    ) -> Result<Created<ObservedCluster>, ProviderError> {
        let infra = &scope.infra;
        if infra.subnet.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no subnet to create the AKS cluster in: set spec.infrastructure.network.subnetIDs, or use an AKSCluster",
            ));
        }
        let want = desired(cp);
        let aks = &cp.spec.aks;
        let private = cp.spec.common.endpoint_access.private;
        let dns_prefix = aks
            .dns_prefix
            .clone()
            .unwrap_or_else(|| dns_prefix_of(&scope.name));
        let plugin = match aks.network_plugin {
            NetworkPlugin::Azure => "azure",
            NetworkPlugin::Kubenet => "kubenet",
            NetworkPlugin::None => "none",
        };
        let mut network = json!({ "networkPlugin": plugin, "loadBalancerSku": "standard", "outboundType": "loadBalancer" });
        if aks.network_plugin == NetworkPlugin::Azure {
            network["networkPluginMode"] = json!("overlay");
        }
        match aks.network_policy {
            Some(NetworkPolicy::Azure) => network["networkPolicy"] = json!("azure"),
            Some(NetworkPolicy::Calico) => network["networkPolicy"] = json!("calico"),
            Some(NetworkPolicy::Cilium) => {
                network["networkPolicy"] = json!("cilium");
                network["networkDataplane"] = json!("cilium");
            }
            None => {}
        }
        let mut body = json!({
            "location": infra.location,
            "tags": request.tags,
            "identity": { "type": "SystemAssigned" },
            "properties": {
                "kubernetesVersion": aks_version(version),
                "dnsPrefix": dns_prefix,
                "networkProfile": network,
                "agentPoolProfiles": [{
                    "name": SYSTEM_POOL,
                    "mode": "System",
                    "count": aks.system_pool.count,
                    "vmSize": aks.system_pool.vm_size,
                    "osType": "Linux",
                    "type": "VirtualMachineScaleSets",
                    "vnetSubnetID": infra.subnet,
                    "availabilityZones": infra.zones,
                    "nodeTaints": ["CriticalAddonsOnly=true:NoSchedule"],
                    "tags": request.tags,
                }],
            }
        });
        apply_settings(&mut body, &want, private);
        let patch = contract::overrides::effective(aks.request_overrides.as_ref()).cloned();
        if let Some(patch) = &patch {
            body = super::overridden(&body, patch)?;
        }
        // A cluster an earlier pass created is found by describe; only a missing one is PUT,
        // without If-Match (it does not exist).
        let answer = scope
            .arm
            .call(
                &scope.calls,
                "ManagedClusters_CreateOrUpdate",
                Method::PUT,
                &scope.path(),
                arm::CONTAINER,
                Some(&body),
                None,
            )
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(f) if matches!(f.error, CloudError::InUse(_)) => return Err(f.error.into()),
            Err(f) => return Err(f.into()),
        };
        Ok(Created {
            id: arm::tracked(&answer)
                .unwrap_or_else(|| answer.body["id"].as_str().unwrap_or_default().to_string()),
            overrides: patch.map(|_| request.overrides_applied("ManagedClusters_CreateOrUpdate")),
            cluster: None,
        })
    }

    async fn adopt(
        &self,
        scope: &AksScope,
        _id: &str,
        request: &Request,
    ) -> Result<(), ProviderError> {
        let Some(current) = self.describe(scope).await? else {
            return Err(CloudError::NotFound(format!("AKS cluster {} is gone", scope.name)).into());
        };
        let mut tags = current.tags.clone();
        tags.extend(request.tags.clone());
        scope
            .arm
            .call(
                &scope.calls,
                "ManagedClusters_UpdateTags",
                Method::PATCH,
                &scope.path(),
                arm::CONTAINER,
                Some(&json!({ "tags": tags })),
                None,
            )
            .await?;
        Ok(())
    }

    async fn upgrade(
        &self,
        scope: &AksScope,
        to: &KubeVersion,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let Some(current) = self.describe(scope).await? else {
            return Err(CloudError::NotFound(format!("AKS cluster {} is gone", scope.name)).into());
        };
        let mut body = put_body(&current.detail.raw);
        body["properties"]["kubernetesVersion"] = json!(aks_version(to));
        let answer = scope
            .arm
            .call(
                &scope.calls,
                "ManagedClusters_CreateOrUpdate",
                Method::PUT,
                &scope.path(),
                arm::CONTAINER,
                Some(&body),
                Some(&current.detail.etag),
            )
            .await;
        match answer {
            Ok(a) => Ok(started(&a)),
            Err(f) if f.code == "NodePoolMcVersionIncompatible" => {
                Ok(Started::BlockedOnPools(f.error.to_string()))
            }
            Err(f) => Err(f.into()),
        }
    }

    async fn update(
        &self,
        scope: &AksScope,
        cp: &AKSControlPlane,
        change: &Change,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let Some(current) = self.describe(scope).await? else {
            return Err(CloudError::NotFound(format!("AKS cluster {} is gone", scope.name)).into());
        };
        let o = &current.detail;
        let answer = match change {
            Change::Settings(_) => {
                let mut body = put_body(&o.raw);
                apply_settings(
                    &mut body,
                    &desired(cp),
                    cp.spec.common.endpoint_access.private,
                );
                scope
                    .arm
                    .call(
                        &scope.calls,
                        "ManagedClusters_CreateOrUpdate",
                        Method::PUT,
                        &scope.path(),
                        arm::CONTAINER,
                        Some(&body),
                        Some(&o.etag),
                    )
                    .await?
            }
            Change::SystemPoolVersion(_) | Change::SystemPoolCount(_) => {
                let Some(pool) = &o.system_pool else {
                    return Err(CloudError::NotFound(format!(
                        "the System pool {SYSTEM_POOL} is gone"
                    ))
                    .into());
                };
                let mut props = pool.profile.clone();
                if let Some(p) = props.as_object_mut() {
                    for f in [
                        "name",
                        "provisioningState",
                        "powerState",
                        "currentOrchestratorVersion",
                        "nodeImageVersion",
                        "eTag",
                    ] {
                        p.remove(f);
                    }
                }
                match change {
                    Change::SystemPoolVersion(v) => props["orchestratorVersion"] = json!(v),
                    Change::SystemPoolCount(n) => props["count"] = json!(n),
                    Change::Settings(_) => {}
                }
                let etag = pool.profile["eTag"].as_str().map(String::from);
                scope
                    .arm
                    .call(
                        &scope.calls,
                        "AgentPools_CreateOrUpdate",
                        Method::PUT,
                        &format!("{}/agentPools/{SYSTEM_POOL}", scope.path()),
                        arm::CONTAINER,
                        Some(&json!({ "properties": props })),
                        etag.as_deref(),
                    )
                    .await?
            }
        };
        Ok(started(&answer))
    }

    async fn delete(&self, scope: &AksScope) -> Result<Deletion, ProviderError> {
        match scope
            .arm
            .call(
                &scope.calls,
                "ManagedClusters_Delete",
                Method::DELETE,
                &scope.path(),
                arm::CONTAINER,
                None,
                None,
            )
            .await
        {
            Ok(a) if a.status == 204 => Ok(Deletion::Gone),
            Ok(_) => Ok(Deletion::Started),
            Err(f) => Deletion::after(Err(f.error)),
        }
    }

    fn tokens<'a>(&'a self, scope: &'a AksScope) -> AksTokens<'a> {
        AksTokens {
            tokens: scope.arm.tokens(),
            lifetime: scope.token_lifetime,
        }
    }

    fn exec_plugin(&self, _scope: &AksScope) -> ExecPlugin {
        auth_plugin()
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> AKSControlPlaneStatus {
        AKSControlPlaneStatus {
            common,
            observed_generation: None,
            aks: cluster.map(|c| AKSControlPlaneObserved {
                location: c.detail.location.clone(),
                node_resource_group: Some(c.detail.node_group.clone()).filter(|g| !g.is_empty()),
                fqdn: Some(c.detail.fqdn.clone()).filter(|f| !f.is_empty()),
                kubernetes_version: Some(c.detail.full_version.clone()).filter(|v| !v.is_empty()),
                provisioning_state: Some(c.detail.state.clone()),
                system_pool_version: c
                    .detail
                    .system_pool
                    .as_ref()
                    .map(|p| p.version.clone())
                    .filter(|v| !v.is_empty()),
            }),
            request_overrides,
        }
    }
}

/// The DNS prefix derived from a cluster's name: AKS allows 54 letters, digits and hyphens,
/// starting and ending with a letter or digit (`_` becomes `-`).
pub fn dns_prefix_of(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(54)
        .collect();
    let trimmed = mapped.trim_matches('-');
    if trimmed.is_empty() {
        "aks".into()
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_user_kubeconfig_gives_the_server_and_the_ca() {
        let ca = STANDARD.encode("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let text = format!(
            "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: https://c-dns-1234.hcp.eastus.azmk8s.io:443\n  name: c\nkind: Config\n"
        );
        let (server, pem) = access_of(&text).unwrap();
        assert_eq!(server, "https://c-dns-1234.hcp.eastus.azmk8s.io:443");
        assert!(
            String::from_utf8(pem.unwrap())
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
    }

    #[test]
    fn dns_prefixes_follow_aks_rules() {
        assert_eq!(dns_prefix_of("default-prod_1"), "default-prod-1");
        assert_eq!(dns_prefix_of(&"a".repeat(63)).len(), 54);
        assert_eq!(dns_prefix_of("_"), "aks");
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("Creating"), Lifecycle::Creating);
        assert_eq!(lifecycle("Upgrading"), Lifecycle::Updating);
        assert_eq!(lifecycle("Canceled"), Lifecycle::Running);
        assert_eq!(lifecycle("Failed"), Lifecycle::Failed);
    }

    #[test]
    fn a_put_body_carries_no_pools_and_nothing_arm_sets() {
        let raw = json!({
            "id": "x", "name": "c", "location": "eastus", "tags": {"a": "b"}, "sku": {"tier": "Free"}, "eTag": "e",
            "properties": {"kubernetesVersion": "1.32", "currentKubernetesVersion": "1.32.7", "provisioningState": "Succeeded", "agentPoolProfiles": [{"name": "system"}], "dnsPrefix": "d"}
        });
        let body = put_body(&raw);
        assert!(body["properties"]["agentPoolProfiles"].is_null());
        assert!(body["properties"]["provisioningState"].is_null());
        assert_eq!(body["properties"]["dnsPrefix"], "d");
        assert!(body["id"].is_null() && body["eTag"].is_null());
    }
}
