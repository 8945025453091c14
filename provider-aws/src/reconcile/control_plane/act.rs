//! The EKS calls that change something: create, tag (adopt), untag (orphan), upgrade, update (configuration,
//! add-ons, access entries), delete, the request pieces they send, and `act`, which asks for
//! the one [`Step`] of a pass. Version and configuration updates answer an update id the kernel
//! tracks; EKS refuses a version step while node groups lag behind, which is a wait.

use provider_runtime::control_plane::ManagedCluster;
use std::collections::{BTreeSet, HashMap};

use aws_sdk_eks::types as eks;
use contract::api::EndpointAccess;
use contract::version::KubeVersion;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Request, Started, Step};

use super::desired::{DesiredCluster, LogKind, authentication_mode_name};
use super::diff::{ANY_IPV4, ClusterChange};
use super::observe::{ObservedCluster, managed, observed_cluster};
use super::{At, EksApi, counted};
use crate::api::AuthenticationMode;
use crate::client::CloudError;

/// EKS's name of the call that creates a cluster (the one that takes `requestOverrides`).
pub const CREATE_CALL: &str = "CreateCluster";

/// Asks EKS for `step`.
pub(super) async fn act(
    connected: &At,
    step: Step<'_, DesiredCluster, ClusterChange>,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let api = EksApi::of(connected);
    match step {
        Step::Create { desired, version } => create(&api, desired, version, request).await,
        Step::Tag { id } => {
            api.tag(id, tags(request)).await?;
            Ok(Started::Done)
        }
        Step::Untag { id, key } => {
            api.untag(id, key).await?;
            Ok(Started::Done)
        }
        Step::Upgrade { to } => upgrade(&api, to, request).await,
        Step::Update { desired, change } => update(&api, desired, change, request).await,
        // Node groups still attached (core deletes the MachinePools first) or an update running
        // is a wait.
        Step::Delete => {
            Started::after_delete(api.delete_cluster().await.map(|()| Started::Untracked))
        }
    }
}

fn tags(request: &Request) -> HashMap<String, String> {
    request.tags.clone().into_iter().collect()
}

async fn create(
    api: &EksApi<'_>,
    desired: &DesiredCluster,
    version: &KubeVersion,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let subnets = desired.subnets()?;
    let role = desired.role()?;
    let mode = desired
        .authentication_mode
        .unwrap_or(AuthenticationMode::Api);
    let mut call = api
        .client
        .create_cluster()
        .name(api.name)
        .version(eks_version(version))
        .role_arn(role)
        .resources_vpc_config(create_vpc_request(
            subnets,
            &desired.security_group_ids,
            &desired.endpoint_access,
        ))
        .logging(logging_request(&desired.logging))
        .access_config(
            eks::CreateAccessConfigRequest::builder()
                .authentication_mode(sdk_authentication_mode(mode))
                .bootstrap_cluster_creator_admin_permissions(
                    desired.bootstrap_cluster_creator_admin,
                )
                .build(),
        )
        .set_tags(Some(tags(request)))
        .client_request_token(request.create_token("create"));
    if let Some(key) = &desired.kms_key_id {
        call = call.encryption_config(encryption_request(key));
    }
    if let Some(cidr) = &desired.service_cidr {
        call = call.kubernetes_network_config(
            eks::KubernetesNetworkConfigRequest::builder()
                .service_ipv4_cidr(cidr)
                .build(),
        );
    }
    let sent = match desired.request_overrides.clone() {
        Some(patch) => {
            counted(
                api.calls,
                CREATE_CALL,
                api.name,
                call.customize()
                    .mutate_request(move |r| crate::client::overrides::rewrite(r, &patch))
                    .send(),
            )
            .await
        }
        None => counted(api.calls, CREATE_CALL, api.name, call.send()).await,
    }?;
    let cluster = sent.cluster().map(observed_cluster);
    Ok(Started::Created {
        id: cluster.as_ref().map(|c| c.arn.clone()).unwrap_or_default(),
        observed: cluster.map(managed),
        overrides: desired.request_overrides.is_some(),
    })
}

async fn upgrade(
    api: &EksApi<'_>,
    to: &KubeVersion,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let version = eks_version(to);
    let token = request.update_token(&format!("upgrade-{version}"));
    match api.update_version(&version, token).await {
        Ok(id) => Ok(Started::Operation(id)),
        // EKS wants node groups on the running minor before the next step.
        Err(CloudError::Invalid { message, .. })
            if message.to_ascii_lowercase().contains("nodegroup") =>
        {
            Ok(Started::Busy(message))
        }
        Err(e) => Err(e.into()),
    }
}

async fn update(
    api: &EksApi<'_>,
    desired: &DesiredCluster,
    change: &ClusterChange,
    request: &Request,
) -> Result<Started<ManagedCluster<ObservedCluster>>, ProviderError> {
    let config = |what: &str| request.update_token(&format!("config-{what}"));
    let started = match change {
        ClusterChange::EndpointAccess => {
            let vpc = endpoint_access_request(&desired.endpoint_access);
            let id = api
                .update_config(ConfigUpdate::EndpointAccess(vpc), config("endpoint"))
                .await?;
            Started::Operation(id)
        }
        ClusterChange::Logging => {
            let logging = logging_request(&desired.logging);
            let id = api
                .update_config(ConfigUpdate::Logging(logging), config("logging"))
                .await?;
            Started::Operation(id)
        }
        ClusterChange::AuthenticationMode(mode) => {
            let access = eks::UpdateAccessConfigRequest::builder()
                .authentication_mode(sdk_authentication_mode(*mode))
                .build();
            let id = api
                .update_config(ConfigUpdate::Access(access), config("auth"))
                .await?;
            Started::Operation(id)
        }
        ClusterChange::CreateAddon(addon) => {
            let token = request.create_token(&format!("addon-{}", addon.name));
            api.create_addon(addon, tags(request), token).await?;
            Started::Untracked
        }
        ClusterChange::UpdateAddon(addon) => {
            let token = request.update_token(&format!("addon-{}", addon.name));
            api.update_addon(addon, token).await?;
            Started::Untracked
        }
        ClusterChange::CreateAccessEntry(entry) => {
            let token = request.create_token(&format!("entry-{}", entry.principal_arn));
            api.create_access_entry(entry, tags(request), token).await?;
            Started::Done
        }
        ClusterChange::AssociateAccessPolicy { principal, policy } => {
            api.associate_policy(principal, policy).await?;
            Started::Done
        }
    };
    Ok(started)
}

/// EKS's logging block for exactly `enabled`: one setup enabling those, one disabling the rest
/// (EKS keeps whatever a request does not mention, so both are sent).
pub fn logging_request(enabled: &BTreeSet<LogKind>) -> eks::Logging {
    let (on, off): (Vec<LogKind>, Vec<LogKind>) =
        LogKind::ALL.into_iter().partition(|k| enabled.contains(k));
    let setup = |kinds: Vec<LogKind>, enabled: bool| {
        eks::LogSetup::builder()
            .set_types(Some(kinds.into_iter().map(LogKind::sdk).collect()))
            .enabled(enabled)
            .build()
    };
    let mut setups = Vec::new();
    if !on.is_empty() {
        setups.push(setup(on, true));
    }
    if !off.is_empty() {
        setups.push(setup(off, false));
    }
    eks::Logging::builder()
        .set_cluster_logging(Some(setups))
        .build()
}

/// The endpoint part of a `resourcesVpcConfig` (for UpdateClusterConfig: nothing else, since
/// EKS refuses mixing endpoint and network changes in one update).
pub fn endpoint_access_request(access: &EndpointAccess) -> eks::VpcConfigRequest {
    let mut vpc = eks::VpcConfigRequest::builder()
        .endpoint_public_access(access.public)
        .endpoint_private_access(access.private);
    if access.public {
        let cidrs = if access.public_cidrs.is_empty() {
            vec![ANY_IPV4.to_string()]
        } else {
            access.public_cidrs.clone()
        };
        vpc = vpc.set_public_access_cidrs(Some(cidrs));
    }
    vpc.build()
}

/// The `resourcesVpcConfig` of CreateCluster: subnets, security groups, endpoint access.
pub fn create_vpc_request(
    subnet_ids: &[String],
    security_group_ids: &[String],
    access: &EndpointAccess,
) -> eks::VpcConfigRequest {
    let mut vpc = eks::VpcConfigRequest::builder()
        .set_subnet_ids(Some(subnet_ids.to_vec()))
        .endpoint_public_access(access.public)
        .endpoint_private_access(access.private);
    if !security_group_ids.is_empty() {
        vpc = vpc.set_security_group_ids(Some(security_group_ids.to_vec()));
    }
    if access.public && !access.public_cidrs.is_empty() {
        vpc = vpc.set_public_access_cidrs(Some(access.public_cidrs.clone()));
    }
    vpc.build()
}

/// Envelope encryption of Secrets with `key_arn`.
// The SDK marks `resources` deprecated (EKS now encrypts all API data), but the EKS API
// reference still lists `["secrets"]` as the value to send, and older regions require it.
#[allow(deprecated)]
pub fn encryption_request(key_arn: &str) -> eks::EncryptionConfig {
    eks::EncryptionConfig::builder()
        .resources("secrets")
        .provider(eks::Provider::builder().key_arn(key_arn).build())
        .build()
}

/// The SDK's authentication mode.
pub fn sdk_authentication_mode(mode: AuthenticationMode) -> eks::AuthenticationMode {
    eks::AuthenticationMode::from(authentication_mode_name(mode))
}

/// EKS's version string for a Kubernetes version: `1.31` (EKS has no patch versions to ask for).
pub fn eks_version(v: &KubeVersion) -> String {
    format!("{}.{}", v.major, v.minor)
}

/// The id of the update an `Update*` call started ([`crate::client::started_update`]).
fn update_id(operation: &str, update: Option<&eks::Update>) -> Result<String, CloudError> {
    crate::client::started_update(operation, update).map(|u| u.id().unwrap_or_default().to_string())
}

/// One kind of cluster configuration update (EKS refuses mixing kinds).
enum ConfigUpdate {
    EndpointAccess(eks::VpcConfigRequest),
    Logging(eks::Logging),
    Access(eks::UpdateAccessConfigRequest),
}

/// The changes.
impl EksApi<'_> {
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

    async fn untag(&self, arn: &str, key: &str) -> Result<(), CloudError> {
        counted(
            self.calls,
            "UntagResource",
            self.name,
            self.client
                .untag_resource()
                .resource_arn(arn)
                .tag_keys(key)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::Logging;

    use super::super::desired::wanted_logs;
    use super::*;

    #[test]
    fn logging_maps_our_names_to_eks_types_and_disables_the_rest() {
        let wanted = wanted_logs(&Logging {
            api_server: true,
            controller_manager: true,
            ..Default::default()
        });
        assert_eq!(
            wanted,
            BTreeSet::from([LogKind::ApiServer, LogKind::ControllerManager])
        );
        let req = logging_request(&wanted);
        let setups = req.cluster_logging();
        assert_eq!(setups.len(), 2);
        assert_eq!(setups[0].enabled(), Some(true));
        assert_eq!(
            setups[0].types(),
            &[eks::LogType::Api, eks::LogType::ControllerManager]
        );
        assert_eq!(setups[1].enabled(), Some(false));
        assert_eq!(setups[1].types().len(), 3);
        let none = logging_request(&BTreeSet::new());
        assert_eq!(none.cluster_logging().len(), 1);
        assert_eq!(none.cluster_logging()[0].enabled(), Some(false));
    }

    #[test]
    fn an_endpoint_access_update_carries_only_the_endpoints() {
        let private = EndpointAccess {
            public: false,
            private: true,
            ..Default::default()
        };
        let req = endpoint_access_request(&private);
        assert_eq!(req.endpoint_public_access(), Some(false));
        assert!(req.public_access_cidrs().is_empty());
        let req = endpoint_access_request(&EndpointAccess::default());
        assert_eq!(req.public_access_cidrs(), &[ANY_IPV4.to_string()]);
        assert!(
            req.subnet_ids().is_empty(),
            "endpoint updates carry no network change"
        );
    }

    #[test]
    #[allow(deprecated)] // `resources`, see encryption_request
    fn create_requests_carry_network_encryption_and_an_eks_version_without_patch() {
        let vpc = create_vpc_request(
            &["subnet-a".into(), "subnet-b".into()],
            &[],
            &EndpointAccess::default(),
        );
        assert_eq!(vpc.subnet_ids().len(), 2);
        assert!(vpc.security_group_ids().is_empty());
        assert_eq!(vpc.endpoint_public_access(), Some(true));
        let enc = encryption_request("arn:aws:kms:us-west-2:1:key/k");
        assert_eq!(enc.resources(), &["secrets".to_string()]);
        assert_eq!(
            enc.provider().and_then(|p| p.key_arn()),
            Some("arn:aws:kms:us-west-2:1:key/k")
        );
        assert_eq!(eks_version(&KubeVersion::with_patch(1, 31, 2)), "1.31");
        assert_eq!(
            sdk_authentication_mode(AuthenticationMode::ApiAndConfigMap).as_str(),
            "API_AND_CONFIG_MAP"
        );
    }
}
