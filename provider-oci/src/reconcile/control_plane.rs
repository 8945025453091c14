//! OKE's side of the ControlPlane role: where the cluster lives, its Container Engine calls, and
//! the mapping between OKE's shapes and the shared ones. Everything else (observe order, plan,
//! status, conditions, kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy)
//! is the generic reconciler's ([`provider_runtime::control_plane`]).
//!
//! OKE names are not unique: the cluster is read by its OCID once known (`status.cloudID`), else
//! found by name in the compartment, preferring the one tagged as ours. Every change answers a
//! work request (`opc-work-request-id`), remembered in `status.operation` and polled; OKE runs
//! one at a time per cluster and answers 409 `IncorrectState` to another, which is a wait. OKE
//! offers exact versions (`v1.33.1`): the newest patch it offers of the minor asked for is
//! used, or the exact patch when the spec names one OKE offers. The cluster's CA comes from its
//! kubeconfig (CreateKubeconfig), read once and cached.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{
    ControlPlaneSpecCommon, ControlPlaneStatusCommon, Endpoint, EndpointName, Operation,
    RequestOverridesStatus,
};
use contract::capi::Cluster;
use contract::conditions::Reason;
use contract::idempotency::OCI_RETRY_TOKEN;
use contract::kubeconfig::{ExecPlugin, Kubeconfig};
use contract::plan::{CloudStep, Lifecycle, OperationState};
use contract::version::KubeVersion;
use kube::ResourceExt;
use provider_runtime::control_plane::{
    ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Created, Deletion,
    ManagedCluster, ManagedControlPlane, Request, Started,
};
use provider_runtime::kubeconfig::{MintedToken, TokenSource};
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use reqwest::Method;
use serde_json::{Value, json};

use super::{Named, Seen, find_named, offered_version};
use crate::api::{
    ClusterType, CniType, OKEControlPlane, OKEControlPlaneObserved, OKEControlPlaneStatus,
};
use crate::oci::token::{cluster_token, signed_at};
use crate::oci::{Call, Oci, Service, q};
use crate::scope::{self, Infra, Shared};

/// The default pods' block of the flannel overlay.
pub const DEFAULT_PODS_CIDR: &str = "10.244.0.0/16";

/// The default Services' block.
pub const DEFAULT_SERVICES_CIDR: &str = "10.96.0.0/16";

/// The OKEControlPlane reconciler: the generic one over OKE.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<OkeControlPlane> {
    ControlPlaneReconciler::new(scope::PROVIDER, OkeControlPlane { shared })
}

impl ManagedControlPlane for OKEControlPlane {
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

/// OKE, for the generic ControlPlane reconciler.
pub struct OkeControlPlane {
    shared: Arc<Shared>,
}

/// One pass's OCI client, the cluster's name and infrastructure, and its OCID once seen.
pub struct OkeScope {
    oci: Oci,
    calls: CloudCalls,
    name: String,
    infra: Infra,
    recorded: Option<String>,
    seen: OnceLock<Seen>,
    token_lifetime: Duration,
    namespace: String,
    cluster: String,
}

impl OkeScope {
    fn cluster_id(&self) -> Result<&str, ProviderError> {
        self.seen.get().map(|s| s.id.as_str()).ok_or_else(|| {
            CloudError::NotFound(format!("OKE cluster {} is not known yet", self.name)).into()
        })
    }
}

/// What OKE says about a cluster, in the terms the diff needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedCluster {
    /// `lifecycleState`.
    pub state: String,
    /// `kubernetesVersion`.
    pub version: String,
    /// `endpointConfig.isPublicIpEnabled`.
    pub public: bool,
    /// `type`.
    pub cluster_type: String,
    /// `options.openIdConnectDiscovery.isOpenIdConnectDiscoveryEnabled`.
    pub oidc_discovery: bool,
    /// `availableKubernetesUpgrades`.
    pub upgrades: Vec<String>,
    /// `vcnId`.
    pub vcn: Option<String>,
}

/// One difference, one OKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The public endpoint on or off (UpdateClusterEndpointConfig).
    PublicEndpoint(bool),
    /// A basic cluster becomes enhanced (UpdateCluster).
    Enhanced,
    /// OIDC discovery on or off (UpdateCluster options).
    OidcDiscovery(bool),
}

fn observed(c: &Value) -> ObservedCluster {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    ObservedCluster {
        state: s(&c["lifecycleState"]),
        version: s(&c["kubernetesVersion"]),
        public: c["endpointConfig"]["isPublicIpEnabled"] == true,
        cluster_type: s(&c["type"]),
        oidc_discovery: c["options"]["openIdConnectDiscovery"]["isOpenIdConnectDiscoveryEnabled"]
            == true,
        upgrades: c["availableKubernetesUpgrades"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        vcn: c["vcnId"].as_str().map(String::from),
    }
}

/// OKE's lifecycleState in the shared terms.
pub fn lifecycle(state: &str) -> Lifecycle {
    match state {
        "CREATING" => Lifecycle::Creating,
        "ACTIVE" => Lifecycle::Running,
        "UPDATING" => Lifecycle::Updating,
        "DELETING" => Lifecycle::Deleting,
        "FAILED" => Lifecycle::Failed,
        other => Lifecycle::Other(other.to_string()),
    }
}

fn cluster_type(t: ClusterType) -> &'static str {
    match t {
        ClusterType::Basic => "BASIC_CLUSTER",
        ClusterType::Enhanced => "ENHANCED_CLUSTER",
    }
}

/// The first difference (pure).
pub fn diff(o: &ObservedCluster, cp: &OKEControlPlane) -> CloudStep<Change> {
    let want_public = cp.spec.common.endpoint_access.public;
    if o.public != want_public {
        return CloudStep::Change(Change::PublicEndpoint(want_public));
    }
    let want_type = cluster_type(cp.spec.oke.cluster_type);
    if o.cluster_type != want_type {
        if want_type == "BASIC_CLUSTER" {
            return CloudStep::Invalid(
                "spec.oke.clusterType basic: the OKE cluster is enhanced, and OKE does not turn an enhanced cluster back into a basic one".into(),
            );
        }
        return CloudStep::Change(Change::Enhanced);
    }
    let want_oidc = cp
        .spec
        .common
        .oidc_issuer
        .as_ref()
        .is_some_and(|o| o.enabled);
    if o.oidc_discovery != want_oidc {
        return CloudStep::Change(Change::OidcDiscovery(want_oidc));
    }
    CloudStep::Nothing
}

impl Change {
    fn describe(&self, name: &str) -> String {
        match self {
            Change::PublicEndpoint(true) => {
                format!("giving OKE cluster {name} a public endpoint")
            }
            Change::PublicEndpoint(false) => {
                format!("removing the public endpoint of OKE cluster {name}")
            }
            Change::Enhanced => format!("making OKE cluster {name} an enhanced cluster"),
            Change::OidcDiscovery(on) => format!(
                "turning OIDC discovery {} on OKE cluster {name}",
                if *on { "on" } else { "off" }
            ),
        }
    }
}

/// A `host:port` endpoint of OKE as a shared one.
fn endpoint(name: EndpointName, text: &str) -> Option<Endpoint> {
    let url = contract::endpoint::parse_url(&format!("https://{}", text.trim()))?;
    Some(Endpoint {
        name,
        host: url.host,
        port: url.port,
    })
}

/// Reads a kubeconfig's CA (what CreateKubeconfig answers).
fn ca_of(kubeconfig: &str) -> Option<Vec<u8>> {
    let parsed = Kubeconfig::parse(kubeconfig.as_bytes()).ok()?;
    let data = parsed
        .clusters
        .first()?
        .cluster
        .certificate_authority_data
        .as_deref()?;
    STANDARD
        .decode(data.trim())
        .ok()
        .filter(|pem| !pem.is_empty())
}

impl OkeControlPlane {
    /// The cluster's CA, from its kubeconfig (cached per cluster a while).
    async fn ca(&self, scope: &OkeScope, id: &str) -> Option<Vec<u8>> {
        if let Some(ca) = self.shared.cas.get(&id.to_string()) {
            return Some(ca);
        }
        let body = json!({ "tokenVersion": "2.0.0" });
        let path = format!("/clusters/{id}/kubeconfig/content");
        let call = Call::send(
            "CreateKubeconfig",
            Service::ContainerEngine,
            &Method::POST,
            &path,
            Some(&body),
        );
        let answer = match scope.oci.call(&scope.calls, call).await {
            Ok(a) => a,
            Err(f) => {
                tracing::debug!(cluster = %scope.name, error = %f.error, "the kubeconfig is not readable yet");
                return None;
            }
        };
        let ca = ca_of(&answer.text)?;
        self.shared.cas.put(id.to_string(), ca.clone());
        Some(ca)
    }

    /// The cluster, by its recorded OCID or else by name (ours first).
    async fn find(&self, scope: &OkeScope) -> Result<Option<(Value, Seen)>, ProviderError> {
        let named = Named {
            get: "GetCluster",
            list: "ListClusters",
            collection: "/clusters",
            filter: format!(
                "compartmentId={}&name={}",
                q(&scope.infra.compartment),
                q(&scope.name)
            ),
            name: &scope.name,
            recorded: scope.recorded.as_deref(),
        };
        let owner = scope::owner(&scope.namespace, &scope.cluster);
        find_named(&scope.oci, &scope.calls, &named, &owner).await
    }

    /// The exact version OKE offers for `want`.
    async fn version_for(
        &self,
        scope: &OkeScope,
        want: &KubeVersion,
    ) -> Result<String, ProviderError> {
        let path = format!(
            "/clusterOptions/all?compartmentId={}",
            q(&scope.infra.compartment)
        );
        let (options, _) = scope
            .oci
            .get(
                &scope.calls,
                "GetClusterOptions",
                Service::ContainerEngine,
                &path,
            )
            .await?
            .ok_or_else(|| CloudError::NotFound("OKE's cluster options".into()))?;
        offered_version(&options, want).map_err(|offered| {
            ProviderError::terminal(
                Reason::InvalidSpec,
                format!(
                    "spec.version {want}: OKE in {} offers no such version; it offers {offered}",
                    scope.oci.region(),
                ),
            )
        })
    }

    async fn change(
        &self,
        scope: &OkeScope,
        operation: &'static str,
        method: &Method,
        path: &str,
        body: &Value,
        etag: Option<&str>,
    ) -> Result<Started, ProviderError> {
        let call = Call::send(
            operation,
            Service::ContainerEngine,
            method,
            path,
            Some(body),
        )
        .if_match(etag);
        let answer = scope.oci.call(&scope.calls, call).await?;
        Ok(match answer.work_request {
            Some(w) => Started::Operation(w),
            None => Started::Untracked,
        })
    }
}

/// Tokens of `oci ce cluster generate-token`'s form for the kubeconfig Secret.
pub struct OkeTokens<'a> {
    scope: &'a OkeScope,
}

impl OkeTokens<'_> {
    /// How long after its signing a token is taken to hold.
    fn span(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::try_from(self.scope.token_lifetime).unwrap_or_default()
    }
}

impl TokenSource for OkeTokens<'_> {
    fn lifetime(&self) -> Duration {
        self.scope.token_lifetime
    }

    fn expires_at(&self, token: &str) -> Option<jiff::Timestamp> {
        signed_at(token).map(|t| t + self.span())
    }

    async fn mint(&self, now: jiff::Timestamp) -> Result<MintedToken, ProviderError> {
        let id = self.scope.cluster_id()?;
        let token = cluster_token(self.scope.oci.key(), self.scope.oci.region(), id, now)
            .map_err(|e| ProviderError::terminal(Reason::Unauthorized, e.to_string()))?;
        Ok(MintedToken {
            token,
            expires_at: now + self.span(),
        })
    }
}

/// `oci ce cluster generate-token`, the exec plugin of the user kubeconfig.
pub fn auth_plugin(cluster: &str, region: &str) -> ExecPlugin {
    let mut plugin = ExecPlugin::new(
        "oci",
        [
            "ce",
            "cluster",
            "generate-token",
            "--cluster-id",
            cluster,
            "--region",
            region,
        ],
    );
    plugin.install_hint = Some(
        "Install the OCI CLI (https://docs.oracle.com/iaas/Content/API/SDKDocs/cliinstall.htm) and configure it with oci setup config.".into(),
    );
    plugin
}

impl ControlPlaneCloud for OkeControlPlane {
    type Object = OKEControlPlane;
    type Infra = Infra;
    type Scope = OkeScope;
    type Detail = ObservedCluster;
    type Extra = ();
    type Change = Change;
    type Status = OKEControlPlaneStatus;
    type Tokens<'a> = OkeTokens<'a>;

    fn profile(&self) -> ControlPlaneProfile {
        ControlPlaneProfile {
            cloud: "OKE",
            // OKE offers exact patches; the newest of the minor asked for is used.
            minors_only: true,
            token_limits: &OCI_RETRY_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    async fn infrastructure(
        &self,
        cp: &OKEControlPlane,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> Result<(Infra, bool), ProviderError> {
        let infra = scope::infra_for_control_plane(client, cluster, cp).await?;
        let ready = infra.ready;
        Ok((infra, ready))
    }

    async fn cleanup_infrastructure(
        &self,
        cp: &OKEControlPlane,
        cluster: Option<&Cluster>,
        client: &kube::Client,
        cluster_name: &str,
    ) -> Result<Option<Infra>, ProviderError> {
        provider_runtime::cluster_objects::control_plane_cleanup_infra::<crate::api::OKECluster, _, _>(
            client,
            cluster,
            cp.spec.infrastructure.as_ref(),
            &cp.namespace().unwrap_or_default(),
            cluster_name,
            "OKEControlPlane",
        )
        .await
    }

    async fn connect(
        &self,
        cp: &OKEControlPlane,
        infra: Infra,
        client: &kube::Client,
        calls: &CloudCalls,
        cluster_name: &str,
    ) -> Result<OkeScope, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let oci = scope::oci_for(&self.shared, client, &namespace, &infra).await?;
        Ok(OkeScope {
            oci,
            calls: calls.clone(),
            name: scope::oke_cluster_name(cp, cluster_name),
            infra,
            recorded: cp
                .status
                .as_ref()
                .and_then(|s| s.common.cloud_id.clone())
                .filter(|id| id.starts_with("ocid1.cluster.")),
            seen: OnceLock::new(),
            token_lifetime: self.shared.token_lifetime,
            namespace,
            cluster: cluster_name.to_string(),
        })
    }

    fn name<'s>(&self, scope: &'s OkeScope) -> &'s str {
        &scope.name
    }

    fn additional_tags<'s>(&self, scope: &'s OkeScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    async fn describe(
        &self,
        scope: &OkeScope,
    ) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
        let Some((c, seen)) = self.find(scope).await? else {
            return Ok(None);
        };
        let detail = observed(&c);
        let id = seen.id.clone();
        let tags = seen.tags.clone();
        let _ = scope.seen.set(seen);
        let life = lifecycle(&detail.state);
        let mut endpoints: Vec<Endpoint> = Vec::new();
        if let Some(p) = c["endpoints"]["publicEndpoint"].as_str() {
            endpoints.extend(endpoint(EndpointName::Public, p));
        }
        if let Some(p) = c["endpoints"]["privateEndpoint"].as_str() {
            endpoints.extend(endpoint(EndpointName::Private, p));
        }
        let ca = if life.serving() && !endpoints.is_empty() {
            self.ca(scope, &id).await
        } else {
            None
        };
        Ok(Some(ManagedCluster {
            id,
            lifecycle: life,
            version: detail.version.clone(),
            endpoints,
            ca_pem: Ok(ca),
            tags,
            detail,
        }))
    }

    async fn operation_state(
        &self,
        scope: &OkeScope,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        scope
            .oci
            .work_request_state(&scope.calls, &operation.id)
            .await
    }

    async fn observe_more(
        &self,
        _scope: &OkeScope,
        _cp: &OKEControlPlane,
    ) -> Result<(), ProviderError> {
        Ok(())
    }

    fn diff(
        &self,
        cp: &OKEControlPlane,
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
        scope: &OkeScope,
        cp: &OKEControlPlane,
        version: &KubeVersion,
        request: &Request,
    ) -> Result<Created<ObservedCluster>, ProviderError> {
        let infra = &scope.infra;
        if infra.vcn.is_empty() || infra.endpoint_subnet.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no VCN or endpoint subnet to create the OKE cluster in: set spec.infrastructure.network.id and subnetIDs, or use an OKECluster",
            ));
        }
        let oke = &cp.spec.oke;
        let common = &cp.spec.common;
        let exact = self.version_for(scope, version).await?;
        let mut network = json!({
            "servicesCidr": oke.services_cidr.as_deref().unwrap_or(DEFAULT_SERVICES_CIDR),
        });
        let cni = match oke.cni_type {
            CniType::VcnNative => "OCI_VCN_IP_NATIVE",
            CniType::Flannel => {
                network["podsCidr"] = json!(oke.pods_cidr.as_deref().unwrap_or(DEFAULT_PODS_CIDR));
                "FLANNEL_OVERLAY"
            }
        };
        let mut options = json!({
            "serviceLbSubnetIds": infra.lb_subnets,
            "kubernetesNetworkConfig": network,
        });
        if common.oidc_issuer.as_ref().is_some_and(|o| o.enabled) {
            options["openIdConnectDiscovery"] = json!({ "isOpenIdConnectDiscoveryEnabled": true });
        }
        let mut body = json!({
            "name": scope.name,
            "compartmentId": infra.compartment,
            "vcnId": infra.vcn,
            "kubernetesVersion": exact,
            "endpointConfig": {
                "subnetId": infra.endpoint_subnet,
                "isPublicIpEnabled": common.endpoint_access.public,
            },
            "options": options,
            "freeformTags": request.tags,
            "type": cluster_type(oke.cluster_type),
            "clusterPodNetworkOptions": [{ "cniType": cni }],
        });
        if let Some(e) = &common.encryption {
            body["kmsKeyId"] = json!(e.kms_key_id);
        }
        let patch = contract::overrides::effective(oke.request_overrides.as_ref()).cloned();
        if let Some(patch) = &patch {
            body = super::overridden(&body, patch)?;
        }
        let token = request.create_token("CreateCluster");
        let call = Call::send(
            "CreateCluster",
            Service::ContainerEngine,
            &Method::POST,
            "/clusters",
            Some(&body),
        )
        .retry_token(&token);
        let answer = scope.oci.call(&scope.calls, call).await?;
        Ok(Created {
            id: answer.work_request.unwrap_or_default(),
            overrides: patch.map(|_| request.overrides_applied("CreateCluster")),
            cluster: None,
        })
    }

    async fn adopt(
        &self,
        scope: &OkeScope,
        id: &str,
        request: &Request,
    ) -> Result<(), ProviderError> {
        let Some(seen) = scope.seen.get().filter(|s| s.id == id) else {
            return Err(CloudError::NotFound(format!("OKE cluster {} is gone", scope.name)).into());
        };
        let mut tags = seen.tags.clone();
        tags.extend(request.tags.clone());
        self.change(
            scope,
            "UpdateCluster",
            &Method::PUT,
            &format!("/clusters/{id}"),
            &json!({ "freeformTags": tags }),
            seen.etag.as_deref(),
        )
        .await?;
        Ok(())
    }

    async fn upgrade(
        &self,
        scope: &OkeScope,
        to: &KubeVersion,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let exact = self.version_for(scope, to).await?;
        let id = scope.cluster_id()?.to_string();
        let path = format!("/clusters/{id}");
        let body = json!({ "kubernetesVersion": exact });
        let call = Call::send(
            "UpdateCluster",
            Service::ContainerEngine,
            &Method::PUT,
            &path,
            Some(&body),
        );
        match scope.oci.call(&scope.calls, call).await {
            Ok(a) => Ok(match a.work_request {
                Some(w) => Started::Operation(w),
                None => Started::Untracked,
            }),
            Err(f) if f.code == "InvalidParameter" && f.error.to_string().contains("node pool") => {
                Ok(Started::BlockedOnPools(f.error.to_string()))
            }
            Err(f) => Err(f.into()),
        }
    }

    async fn update(
        &self,
        scope: &OkeScope,
        _cp: &OKEControlPlane,
        change: &Change,
        _request: &Request,
    ) -> Result<Started, ProviderError> {
        let id = scope.cluster_id()?.to_string();
        let path = format!("/clusters/{id}");
        match change {
            Change::PublicEndpoint(public) => {
                self.change(
                    scope,
                    "UpdateClusterEndpointConfig",
                    &Method::POST,
                    &format!("{path}/actions/updateEndpointConfig"),
                    &json!({ "isPublicIpEnabled": public }),
                    None,
                )
                .await
            }
            Change::Enhanced => {
                self.change(
                    scope,
                    "UpdateCluster",
                    &Method::PUT,
                    &path,
                    &json!({ "type": "ENHANCED_CLUSTER" }),
                    None,
                )
                .await
            }
            Change::OidcDiscovery(on) => {
                self.change(
                    scope,
                    "UpdateCluster",
                    &Method::PUT,
                    &path,
                    &json!({ "options": { "openIdConnectDiscovery": { "isOpenIdConnectDiscoveryEnabled": on } } }),
                    None,
                )
                .await
            }
        }
    }

    async fn delete(&self, scope: &OkeScope) -> Result<Deletion, ProviderError> {
        let Ok(id) = scope.cluster_id() else {
            return Ok(Deletion::Gone);
        };
        let path = format!("/clusters/{id}");
        super::delete(&scope.oci, &scope.calls, "DeleteCluster", &path).await
    }

    fn tokens<'a>(&'a self, scope: &'a OkeScope) -> OkeTokens<'a> {
        OkeTokens { scope }
    }

    fn exec_plugin(&self, scope: &OkeScope) -> ExecPlugin {
        auth_plugin(
            scope.seen.get().map_or("", |s| s.id.as_str()),
            scope.oci.region(),
        )
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> OKEControlPlaneStatus {
        OKEControlPlaneStatus {
            common,
            observed_generation: None,
            oke: cluster.map(|c| OKEControlPlaneObserved {
                lifecycle_state: Some(c.detail.state.clone()).filter(|s| !s.is_empty()),
                kubernetes_version: Some(c.detail.version.clone()).filter(|v| !v.is_empty()),
                available_upgrades: c.detail.upgrades.clone(),
                cluster_type: Some(c.detail.cluster_type.clone()).filter(|t| !t.is_empty()),
                vcn_id: c.detail.vcn.clone(),
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
    fn oke_endpoints_are_host_and_port() {
        let e = endpoint(EndpointName::Public, "150.136.1.2:6443").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("150.136.1.2", 6443));
        let e = endpoint(EndpointName::Private, "10.0.0.5:6443").unwrap();
        assert_eq!(e.name, EndpointName::Private);
        assert!(endpoint(EndpointName::Public, "").is_none());
    }

    #[test]
    fn a_kubeconfig_gives_the_ca() {
        let ca = STANDARD.encode("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        let text = format!(
            "---\napiVersion: v1\nkind: \"\"\nclusters:\n- name: cluster-c\n  cluster:\n    server: https://1.2.3.4:6443\n    certificate-authority-data: {ca}\n"
        );
        assert!(
            String::from_utf8(ca_of(&text).unwrap())
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
    }

    #[test]
    fn states_map_to_the_shared_lifecycle() {
        assert_eq!(lifecycle("CREATING"), Lifecycle::Creating);
        assert_eq!(lifecycle("ACTIVE"), Lifecycle::Running);
        assert_eq!(lifecycle("UPDATING"), Lifecycle::Updating);
        assert_eq!(lifecycle("FAILED"), Lifecycle::Failed);
        assert_eq!(lifecycle("DELETED"), Lifecycle::Other("DELETED".into()));
    }

    #[test]
    fn the_plugin_is_the_oci_cli_s() {
        let p = auth_plugin("ocid1.cluster.oc1.iad.x", "us-ashburn-1");
        assert_eq!(p.command, "oci");
        assert_eq!(p.args[4], "ocid1.cluster.oc1.iad.x");
        assert_eq!(p.args[6], "us-ashburn-1");
    }
}
