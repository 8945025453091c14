//! EKS's side of the ControlPlane role: where the EKS cluster lives, its calls, and the mapping
//! between EKS's shapes and the shared ones. Everything else (observe order, plan, status,
//! conditions, kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the
//! generic reconciler's ([`provider_runtime::control_plane`]).
//!
//! Long EKS operations are started, remembered in `status.operation` and polled on the next pass;
//! nothing waits on the cloud.

pub mod kubeconfig;
pub mod mapping;
pub mod plan;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_eks::types as eks;
use aws_smithy_runtime_api::http::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{
    ControlPlaneSpecCommon, ControlPlaneStatusCommon, Operation, RequestOverridesStatus,
};
use contract::capi::Cluster;
use contract::conditions::Reason;
use contract::idempotency::EKS_REQUEST_TOKEN;
use contract::kubeconfig::ExecPlugin;
use contract::plan::{CloudStep, OperationState};
use contract::version::KubeVersion;
use kube::ResourceExt;
use provider_runtime::control_plane::{
    ControlPlaneCloud, ControlPlaneProfile, ControlPlaneReconciler, Created, Deletion,
    ManagedCluster, ManagedControlPlane, Request, Started,
};
use provider_runtime::{CloudCalls, ProviderError};

use self::mapping::{ObservedAddon, ObservedCluster};
use self::plan::{Change, Extra};
use crate::api::{AuthenticationMode, EKSControlPlane, EKSControlPlaneStatus};
use crate::cloud::{Clients, CloudError, classify};
use crate::scope::{self, Infra, Shared};

/// The service name cloud calls are counted under.
const SERVICE: &str = "eks";

/// Pages read at most from a paginated EKS list (a guard against a looping `nextToken`).
const MAX_PAGES: usize = 100;

/// The EKSControlPlane reconciler: the generic one over EKS.
pub fn reconciler(shared: Arc<Shared>) -> ControlPlaneReconciler<EksControlPlane> {
    ControlPlaneReconciler::new(scope::PROVIDER, EksControlPlane { shared })
}

impl ManagedControlPlane for EKSControlPlane {
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

/// EKS, for the generic ControlPlane reconciler.
pub struct EksControlPlane {
    shared: Arc<Shared>,
}

/// One pass's EKS clients, the cluster's name in EKS and its infrastructure.
pub struct EksScope {
    clients: Clients,
    calls: CloudCalls,
    name: String,
    infra: Infra,
    token_lifetime: std::time::Duration,
}

impl EksScope {
    fn api(&self) -> EksApi<'_> {
        EksApi {
            client: &self.clients.eks,
            calls: &self.calls,
            name: &self.name,
        }
    }
}

/// The shared view of an EKS cluster.
fn managed(c: ObservedCluster) -> ManagedCluster<ObservedCluster> {
    // EKS returns the CA base64-encoded.
    let ca_pem = match c
        .ca_data
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        None => Ok(None),
        Some(data) => STANDARD
            .decode(data)
            .map(Some)
            .map_err(|e| format!("EKS returned a certificate authority that is not base64: {e}")),
    };
    ManagedCluster {
        id: c.arn.clone(),
        lifecycle: c.state.clone(),
        version: c.version.clone(),
        endpoints: c.endpoints(),
        ca_pem,
        tags: c.tags.clone(),
        detail: c,
    }
}

fn tags(request: &Request) -> HashMap<String, String> {
    request.tags.clone().into_iter().collect()
}

impl ControlPlaneCloud for EksControlPlane {
    type Object = EKSControlPlane;
    type Infra = Infra;
    type Scope = EksScope;
    type Detail = ObservedCluster;
    type Extra = Extra;
    type Change = Change;
    type Status = EKSControlPlaneStatus;
    type Tokens<'a> = kubeconfig::EksTokens<'a>;

    fn profile(&self) -> ControlPlaneProfile {
        ControlPlaneProfile {
            cloud: "EKS",
            // EKS picks patch versions itself.
            minors_only: true,
            token_limits: &EKS_REQUEST_TOKEN,
            poll: self.shared.poll_interval,
            rest: self.shared.rest_interval,
        }
    }

    async fn infrastructure(
        &self,
        cp: &EKSControlPlane,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> Result<(Infra, bool), ProviderError> {
        let infra = scope::infra_for_control_plane(client, cluster, cp).await?;
        let ready = infra.ready;
        Ok((infra, ready))
    }

    async fn cleanup_infrastructure(
        &self,
        cp: &EKSControlPlane,
        cluster: Option<&Cluster>,
        client: &kube::Client,
        cluster_name: &str,
    ) -> Result<Option<Infra>, ProviderError> {
        provider_runtime::cluster_objects::control_plane_cleanup_infra::<crate::api::EKSCluster, _, _>(
            client,
            cluster,
            cp.spec.infrastructure.as_ref(),
            &cp.namespace().unwrap_or_default(),
            cluster_name,
            "EKSControlPlane",
        )
        .await
    }

    async fn connect(
        &self,
        cp: &EKSControlPlane,
        infra: Infra,
        client: &kube::Client,
        calls: &CloudCalls,
        cluster_name: &str,
    ) -> Result<EksScope, ProviderError> {
        let namespace = cp.namespace().unwrap_or_default();
        let clients = scope::clients_for(&self.shared.clients, client, &namespace, &infra).await?;
        Ok(EksScope {
            clients,
            calls: calls.clone(),
            name: scope::eks_cluster_name(cp, cluster_name),
            infra,
            token_lifetime: self.shared.token_lifetime,
        })
    }

    fn name<'s>(&self, scope: &'s EksScope) -> &'s str {
        &scope.name
    }

    fn additional_tags<'s>(&self, scope: &'s EksScope) -> &'s BTreeMap<String, String> {
        &scope.infra.additional_tags
    }

    async fn describe(
        &self,
        scope: &EksScope,
    ) -> Result<Option<ManagedCluster<ObservedCluster>>, ProviderError> {
        Ok(scope.api().describe_cluster().await?.map(managed))
    }

    async fn operation_state(
        &self,
        scope: &EksScope,
        operation: &Operation,
    ) -> Result<Option<OperationState>, ProviderError> {
        Ok(scope.api().describe_update(&operation.id).await?)
    }

    async fn observe_more(
        &self,
        scope: &EksScope,
        cp: &EKSControlPlane,
    ) -> Result<Extra, ProviderError> {
        let api = scope.api();
        let mut extra = Extra::default();
        for addon in &cp.spec.common.addons {
            if let Some(found) = api.describe_addon(&addon.name).await? {
                extra.addons.insert(addon.name.clone(), found);
            }
        }
        let entries = cp
            .spec
            .eks
            .access
            .as_ref()
            .map(|a| &a.entries[..])
            .unwrap_or_default();
        if !entries.is_empty() {
            let principals = api.access_entries().await?;
            let mut access = BTreeMap::new();
            for entry in entries {
                if principals.contains(&entry.principal_arn) {
                    access.insert(
                        entry.principal_arn.clone(),
                        api.access_policies(&entry.principal_arn).await?,
                    );
                }
            }
            extra.access = Some(access);
        }
        Ok(extra)
    }

    fn diff(
        &self,
        cp: &EKSControlPlane,
        cluster: &ManagedCluster<ObservedCluster>,
        extra: &Extra,
    ) -> CloudStep<Change> {
        let access = cp.spec.eks.access.as_ref();
        let desired = plan::Desired {
            endpoint_access: cp.spec.common.endpoint_access.clone(),
            logging: mapping::wanted_logs(&cp.spec.common.logging),
            authentication_mode: access.and_then(|a| a.authentication_mode),
            addons: cp.spec.common.addons.clone(),
            access_entries: access.map(|a| a.entries.clone()).unwrap_or_default(),
        };
        plan::diff(&cluster.detail, extra, &desired)
    }

    fn describe_change(&self, change: &Change, name: &str) -> String {
        change.describe(name)
    }

    async fn create(
        &self,
        scope: &EksScope,
        cp: &EKSControlPlane,
        version: &KubeVersion,
        request: &Request,
    ) -> Result<Created<ObservedCluster>, ProviderError> {
        let infra = &scope.infra;
        if infra.subnet_ids.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no subnets to create the EKS cluster in: set spec.infrastructure.network.subnetIDs (at least two zones), or use an EKSCluster",
            ));
        }
        let mut security_groups: Vec<String> = infra.security_group_ids.clone();
        for group in &cp.spec.eks.security_group_ids {
            if !security_groups.contains(group) {
                security_groups.push(group.clone());
            }
        }
        let access = cp.spec.eks.access.as_ref();
        let mode = access
            .and_then(|a| a.authentication_mode)
            .unwrap_or(AuthenticationMode::Api);
        let bootstrap_admin = access
            .and_then(|a| a.bootstrap_cluster_creator_admin)
            .unwrap_or(true);
        let common = &cp.spec.common;
        let api = scope.api();
        let mut call = api
            .client
            .create_cluster()
            .name(api.name)
            .version(mapping::eks_version(version))
            .role_arn(&cp.spec.eks.role_arn)
            .resources_vpc_config(mapping::create_vpc_request(
                &infra.subnet_ids,
                &security_groups,
                &common.endpoint_access,
            ))
            .logging(mapping::logging_request(&mapping::wanted_logs(
                &common.logging,
            )))
            .access_config(
                eks::CreateAccessConfigRequest::builder()
                    .authentication_mode(mapping::sdk_authentication_mode(mode))
                    .bootstrap_cluster_creator_admin_permissions(bootstrap_admin)
                    .build(),
            )
            .set_tags(Some(tags(request)))
            .client_request_token(request.create_token("create"));
        if let Some(encryption) = &common.encryption {
            call = call.encryption_config(mapping::encryption_request(&encryption.kms_key_id));
        }
        if let Some(cidr) = &cp.spec.eks.service_cidr {
            call = call.kubernetes_network_config(
                eks::KubernetesNetworkConfigRequest::builder()
                    .service_ipv4_cidr(cidr)
                    .build(),
            );
        }
        let patch = contract::overrides::effective(cp.spec.eks.request_overrides.as_ref()).cloned();
        let sent = match patch.clone() {
            Some(patch) => {
                counted(
                    api.calls,
                    "CreateCluster",
                    api.name,
                    call.customize()
                        .mutate_request(move |r| crate::cloud::overrides::rewrite(r, &patch))
                        .send(),
                )
                .await
            }
            None => counted(api.calls, "CreateCluster", api.name, call.send()).await,
        }?;
        let cluster = sent.cluster().map(mapping::observed_cluster);
        Ok(Created {
            id: cluster.as_ref().map(|c| c.arn.clone()).unwrap_or_default(),
            overrides: patch.map(|_| request.overrides_applied("CreateCluster")),
            cluster: cluster.map(managed),
        })
    }

    async fn adopt(
        &self,
        scope: &EksScope,
        id: &str,
        request: &Request,
    ) -> Result<(), ProviderError> {
        Ok(scope.api().tag(id, tags(request)).await?)
    }

    async fn upgrade(
        &self,
        scope: &EksScope,
        to: &KubeVersion,
        request: &Request,
    ) -> Result<Started, ProviderError> {
        let version = mapping::eks_version(to);
        let token = request.update_token(&format!("upgrade-{version}"));
        match scope.api().update_version(&version, token).await {
            Ok(id) => Ok(Started::Operation(id)),
            // EKS wants node groups on the running minor before the next step.
            Err(CloudError::Invalid { message, .. })
                if message.to_ascii_lowercase().contains("nodegroup") =>
            {
                Ok(Started::BlockedOnPools(message))
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn update(
        &self,
        scope: &EksScope,
        cp: &EKSControlPlane,
        change: &Change,
        request: &Request,
    ) -> Result<Started, ProviderError> {
        let api = scope.api();
        let config = |what: &str| request.update_token(&format!("config-{what}"));
        let started = match change {
            Change::EndpointAccess => {
                let vpc = mapping::endpoint_access_request(&cp.spec.common.endpoint_access);
                let id = api
                    .update_config(ConfigUpdate::EndpointAccess(vpc), config("endpoint"))
                    .await?;
                Started::Operation(id)
            }
            Change::Logging => {
                let logging =
                    mapping::logging_request(&mapping::wanted_logs(&cp.spec.common.logging));
                let id = api
                    .update_config(ConfigUpdate::Logging(logging), config("logging"))
                    .await?;
                Started::Operation(id)
            }
            Change::AuthenticationMode(mode) => {
                let access = eks::UpdateAccessConfigRequest::builder()
                    .authentication_mode(mapping::sdk_authentication_mode(*mode))
                    .build();
                let id = api
                    .update_config(ConfigUpdate::Access(access), config("auth"))
                    .await?;
                Started::Operation(id)
            }
            Change::CreateAddon(addon) => {
                let token = request.create_token(&format!("addon-{}", addon.name));
                api.create_addon(addon, tags(request), token).await?;
                Started::Untracked
            }
            Change::UpdateAddon(addon) => {
                let token = request.update_token(&format!("addon-{}", addon.name));
                api.update_addon(addon, token).await?;
                Started::Untracked
            }
            Change::CreateAccessEntry(entry) => {
                let token = request.create_token(&format!("entry-{}", entry.principal_arn));
                api.create_access_entry(entry, tags(request), token).await?;
                Started::Done
            }
            Change::AssociateAccessPolicy { principal, policy } => {
                api.associate_policy(principal, policy).await?;
                Started::Done
            }
        };
        Ok(started)
    }

    async fn delete(&self, scope: &EksScope) -> Result<Deletion, ProviderError> {
        // Node groups still attached (core deletes the MachinePools first) or an update running
        // is a blocked deletion.
        Deletion::after(
            scope
                .api()
                .delete_cluster()
                .await
                .map(|()| Deletion::Started),
        )
    }

    fn tokens<'a>(&'a self, scope: &'a EksScope) -> kubeconfig::EksTokens<'a> {
        kubeconfig::EksTokens {
            credentials: &scope.clients.credentials,
            region: &scope.clients.region,
            eks_name: &scope.name,
            lifetime: scope.token_lifetime,
        }
    }

    fn exec_plugin(&self, scope: &EksScope) -> ExecPlugin {
        kubeconfig::get_token_plugin(&scope.name, &scope.clients.region)
    }

    fn status(
        &self,
        common: ControlPlaneStatusCommon,
        request_overrides: Option<RequestOverridesStatus>,
        cluster: Option<&ManagedCluster<ObservedCluster>>,
    ) -> EKSControlPlaneStatus {
        EKSControlPlaneStatus {
            common,
            observed_generation: None,
            platform_version: cluster.and_then(|c| c.detail.platform_version.clone()),
            oidc_issuer_url: cluster.and_then(|c| c.detail.oidc_issuer.clone()),
            request_overrides,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// EKS calls
// ---------------------------------------------------------------------------------------------

/// Awaits an SDK call of `operation` on `cluster`, counts it by outcome, and classifies its
/// error. A `Retry-After` holds the request it answered, method and path: EKS's paths name the
/// operation's cluster (calls on one cluster's add-ons or access entries share its hold), except
/// CreateCluster's, `POST /clusters`, which every create shares.
async fn counted<T, E>(
    calls: &CloudCalls,
    operation: &'static str,
    cluster: &str,
    call: impl Future<Output = Result<T, SdkError<E, Response>>>,
) -> Result<T, CloudError>
where
    E: ProvideErrorMetadata + std::error::Error,
{
    let target = if operation == "CreateCluster" {
        operation.to_owned()
    } else {
        format!("{operation} {cluster}")
    };
    let sent = calls.admit(SERVICE, target)?;
    match call.await {
        Ok(out) => {
            sent.answered(operation, Ok(()));
            Ok(out)
        }
        Err(e) => {
            let e = classify(e);
            sent.answered(operation, Err(&e));
            Err(e)
        }
    }
}

/// The id of the update an `Update*` call started ([`crate::cloud::started_update`]).
fn update_id(operation: &str, update: Option<&eks::Update>) -> Result<String, CloudError> {
    crate::cloud::started_update(operation, update).map(|u| u.id().unwrap_or_default().to_string())
}

/// `Ok(None)` for a not-found.
fn absent_if_not_found<T>(result: Result<T, CloudError>) -> Result<Option<T>, CloudError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(CloudError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One kind of cluster configuration update (EKS refuses mixing kinds).
enum ConfigUpdate {
    EndpointAccess(eks::VpcConfigRequest),
    Logging(eks::Logging),
    Access(eks::UpdateAccessConfigRequest),
}

/// The EKS operations this reconciler uses, on one cluster.
struct EksApi<'a> {
    client: &'a aws_sdk_eks::Client,
    calls: &'a CloudCalls,
    name: &'a str,
}

impl EksApi<'_> {
    async fn describe_cluster(&self) -> Result<Option<ObservedCluster>, CloudError> {
        let out = absent_if_not_found(
            counted(
                self.calls,
                "DescribeCluster",
                self.name,
                self.client.describe_cluster().name(self.name).send(),
            )
            .await,
        )?;
        Ok(out.and_then(|o| o.cluster().map(mapping::observed_cluster)))
    }

    async fn describe_update(&self, id: &str) -> Result<Option<OperationState>, CloudError> {
        let call = self
            .client
            .describe_update()
            .name(self.name)
            .update_id(id)
            .send();
        let out =
            absent_if_not_found(counted(self.calls, "DescribeUpdate", self.name, call).await)?;
        Ok(out.and_then(|o| o.update().map(mapping::update_state)))
    }

    async fn describe_addon(&self, addon: &str) -> Result<Option<ObservedAddon>, CloudError> {
        let call = self
            .client
            .describe_addon()
            .cluster_name(self.name)
            .addon_name(addon)
            .send();
        let out = absent_if_not_found(counted(self.calls, "DescribeAddon", self.name, call).await)?;
        Ok(out.and_then(|o| o.addon().map(mapping::observed_addon)))
    }

    async fn access_entries(&self) -> Result<BTreeSet<String>, CloudError> {
        let mut principals = BTreeSet::new();
        let mut next = None;
        for _ in 0..MAX_PAGES {
            let call = self
                .client
                .list_access_entries()
                .cluster_name(self.name)
                .set_next_token(next.take())
                .send();
            let page = counted(self.calls, "ListAccessEntries", self.name, call).await?;
            principals.extend(page.access_entries().iter().cloned());
            match page.next_token() {
                Some(token) if !token.is_empty() => next = Some(token.to_string()),
                _ => break,
            }
        }
        Ok(principals)
    }

    async fn access_policies(&self, principal: &str) -> Result<BTreeSet<String>, CloudError> {
        let mut policies = BTreeSet::new();
        let mut next = None;
        for _ in 0..MAX_PAGES {
            let call = self
                .client
                .list_associated_access_policies()
                .cluster_name(self.name)
                .principal_arn(principal)
                .set_next_token(next.take())
                .send();
            let page = counted(self.calls, "ListAssociatedAccessPolicies", self.name, call).await?;
            policies.extend(
                page.associated_access_policies()
                    .iter()
                    .filter_map(|p| p.policy_arn().map(str::to_string)),
            );
            match page.next_token() {
                Some(token) if !token.is_empty() => next = Some(token.to_string()),
                _ => break,
            }
        }
        Ok(policies)
    }

    async fn tag(&self, arn: &str, tags: HashMap<String, String>) -> Result<(), CloudError> {
        counted(
            self.calls,
            "TagResource",
            self.name,
            self.client
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags))
                .send(),
        )
        .await?;
        Ok(())
    }

    /// Returns the update's id.
    async fn update_version(&self, version: &str, token: String) -> Result<String, CloudError> {
        let call = self
            .client
            .update_cluster_version()
            .name(self.name)
            .version(version)
            .client_request_token(token)
            .send();
        let out = counted(self.calls, "UpdateClusterVersion", self.name, call).await?;
        update_id("UpdateClusterVersion", out.update())
    }

    /// Returns the update's id.
    async fn update_config(
        &self,
        update: ConfigUpdate,
        token: String,
    ) -> Result<String, CloudError> {
        let request = self
            .client
            .update_cluster_config()
            .name(self.name)
            .client_request_token(token);
        let request = match update {
            ConfigUpdate::EndpointAccess(vpc) => request.resources_vpc_config(vpc),
            ConfigUpdate::Logging(logging) => request.logging(logging),
            ConfigUpdate::Access(access) => request.access_config(access),
        };
        let out = counted(self.calls, "UpdateClusterConfig", self.name, request.send()).await?;
        update_id("UpdateClusterConfig", out.update())
    }

    async fn create_addon(
        &self,
        addon: &contract::api::Addon,
        tags: HashMap<String, String>,
        token: String,
    ) -> Result<(), CloudError> {
        let call = self
            .client
            .create_addon()
            .cluster_name(self.name)
            .addon_name(&addon.name)
            .set_addon_version(addon.version.clone())
            .set_configuration_values(addon.configuration.clone())
            .resolve_conflicts(eks::ResolveConflicts::Overwrite)
            .set_tags(Some(tags))
            .client_request_token(token)
            .send();
        counted(self.calls, "CreateAddon", self.name, call).await?;
        Ok(())
    }

    async fn update_addon(
        &self,
        addon: &contract::api::Addon,
        token: String,
    ) -> Result<(), CloudError> {
        let call = self
            .client
            .update_addon()
            .cluster_name(self.name)
            .addon_name(&addon.name)
            .set_addon_version(addon.version.clone())
            .set_configuration_values(addon.configuration.clone())
            .resolve_conflicts(eks::ResolveConflicts::Overwrite)
            .client_request_token(token)
            .send();
        counted(self.calls, "UpdateAddon", self.name, call).await?;
        Ok(())
    }

    async fn create_access_entry(
        &self,
        entry: &crate::api::AccessEntry,
        tags: HashMap<String, String>,
        token: String,
    ) -> Result<(), CloudError> {
        let groups = (!entry.kubernetes_groups.is_empty()).then(|| entry.kubernetes_groups.clone());
        let call = self
            .client
            .create_access_entry()
            .cluster_name(self.name)
            .principal_arn(&entry.principal_arn)
            .set_kubernetes_groups(groups)
            .set_username(entry.username.clone())
            .r#type("STANDARD")
            .set_tags(Some(tags))
            .client_request_token(token)
            .send();
        counted(self.calls, "CreateAccessEntry", self.name, call).await?;
        Ok(())
    }

    async fn associate_policy(&self, principal: &str, policy: &str) -> Result<(), CloudError> {
        let scope = eks::AccessScope::builder()
            .r#type(eks::AccessScopeType::Cluster)
            .build();
        let call = self
            .client
            .associate_access_policy()
            .cluster_name(self.name)
            .principal_arn(principal)
            .policy_arn(policy)
            .access_scope(scope)
            .send();
        counted(self.calls, "AssociateAccessPolicy", self.name, call).await?;
        Ok(())
    }

    async fn delete_cluster(&self) -> Result<(), CloudError> {
        counted(
            self.calls,
            "DeleteCluster",
            self.name,
            self.client.delete_cluster().name(self.name).send(),
        )
        .await?;
        Ok(())
    }
}
