//! Reading EKS: the cluster (DescribeCluster), mapped to the shared [`ManagedCluster`] with EKS's
//! own view ([`ObservedCluster`]); the state of the update the kernel tracks (DescribeUpdate);
//! the extras EKS compares while the cluster is idle ([`ClusterExtras`]: the spec's add-ons and
//! access entries); and `observe`, the one look a pass takes.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_eks::types as eks;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract::api::{Endpoint, EndpointName};
use contract::plan::{Lifecycle, OperationState};
use provider_runtime::ProviderError;
use provider_runtime::control_plane::{Look, ManagedCluster, Observed};

use super::desired::LogKind;
use super::{At, EksApi, MAX_PAGES, absent_if_not_found, counted};
use crate::api::{EKSControlPlane, EKSControlPlaneObserved};
use crate::client::CloudError;

/// An EKS cluster as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedCluster {
    /// The name in EKS.
    pub name: String,
    /// The ARN.
    pub arn: String,
    /// The lifecycle state.
    pub state: Lifecycle,
    /// The Kubernetes version as EKS writes it (`1.31`).
    pub version: String,
    /// `eks.N`.
    pub platform_version: Option<String>,
    /// The API server URL (`https://<id>.gr7.<region>.eks.amazonaws.com`), once known.
    pub endpoint_url: Option<String>,
    /// The base64 of the cluster CA's PEM, once known.
    pub ca_data: Option<String>,
    /// `endpointPublicAccess`.
    pub public_access: bool,
    /// `endpointPrivateAccess`.
    pub private_access: bool,
    /// `publicAccessCidrs`.
    pub public_cidrs: Vec<String>,
    /// Enabled control-plane log types.
    pub logging: BTreeSet<LogKind>,
    /// `accessConfig.authenticationMode`.
    pub authentication_mode: Option<String>,
    /// The OIDC issuer URL.
    pub oidc_issuer: Option<String>,
    /// The KMS key ARN encrypting Secrets, when EKS has one.
    pub kms_key_id: Option<String>,
    /// The cluster's tags.
    pub tags: BTreeMap<String, String>,
    /// What EKS compares besides the cluster, read only when it is ours and idle (empty
    /// otherwise).
    pub extras: ClusterExtras,
}

/// The lifecycle of an EKS cluster, from its status.
fn lifecycle(status: Option<&eks::ClusterStatus>) -> Lifecycle {
    match status {
        Some(eks::ClusterStatus::Creating) => Lifecycle::Creating,
        Some(eks::ClusterStatus::Active) => Lifecycle::Running,
        Some(eks::ClusterStatus::Updating) => Lifecycle::Updating,
        Some(eks::ClusterStatus::Deleting) => Lifecycle::Deleting,
        Some(eks::ClusterStatus::Failed) => Lifecycle::Failed,
        Some(other) => Lifecycle::Other(other.as_str().to_string()),
        None => Lifecycle::Other("UNKNOWN".into()),
    }
}

/// Reads an EKS cluster (DescribeCluster, CreateCluster, DeleteCluster all return one).
pub fn observed_cluster(c: &eks::Cluster) -> ObservedCluster {
    let vpc = c.resources_vpc_config();
    let logging = c
        .logging()
        .map(|l| {
            let mut on = BTreeSet::new();
            for setup in l.cluster_logging() {
                if setup.enabled() == Some(true) {
                    on.extend(setup.types().iter().filter_map(LogKind::of_sdk));
                }
            }
            on
        })
        .unwrap_or_default();
    ObservedCluster {
        name: c.name().unwrap_or_default().to_string(),
        arn: c.arn().unwrap_or_default().to_string(),
        state: lifecycle(c.status()),
        version: c.version().unwrap_or_default().to_string(),
        platform_version: c.platform_version().map(str::to_string),
        endpoint_url: c.endpoint().filter(|e| !e.is_empty()).map(str::to_string),
        ca_data: c
            .certificate_authority()
            .and_then(|ca| ca.data())
            .filter(|d| !d.is_empty())
            .map(str::to_string),
        public_access: vpc.is_some_and(|v| v.endpoint_public_access()),
        private_access: vpc.is_some_and(|v| v.endpoint_private_access()),
        public_cidrs: vpc
            .map(|v| v.public_access_cidrs().to_vec())
            .unwrap_or_default(),
        logging,
        authentication_mode: c
            .access_config()
            .and_then(|a| a.authentication_mode())
            .map(|m| m.as_str().to_string()),
        oidc_issuer: c
            .identity()
            .and_then(|i| i.oidc())
            .and_then(|o| o.issuer())
            .map(str::to_string),
        kms_key_id: c
            .encryption_config()
            .iter()
            .filter_map(|e| e.provider().and_then(|p| p.key_arn()))
            .next()
            .map(str::to_string),
        tags: c
            .tags()
            .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default(),
        extras: ClusterExtras::default(),
    }
}

impl ObservedCluster {
    /// The endpoints EKS exposes: one DNS name, reachable publicly, privately, or both.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        let Some(api) = self
            .endpoint_url
            .as_deref()
            .and_then(contract::endpoint::parse_url)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if self.public_access {
            out.push(Endpoint {
                name: EndpointName::Public,
                host: api.host.clone(),
                port: api.port,
            });
        }
        if self.private_access {
            out.push(Endpoint {
                name: EndpointName::Private,
                host: api.host.clone(),
                port: api.port,
            });
        }
        out
    }
}

/// The shared view of an EKS cluster.
pub fn managed(c: ObservedCluster) -> ManagedCluster<ObservedCluster> {
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

/// Reads an EKS update.
pub fn update_state(u: &eks::Update) -> OperationState {
    let errors = || {
        let messages: Vec<String> = u
            .errors()
            .iter()
            .map(|e| match (e.error_code(), e.error_message()) {
                (Some(code), Some(message)) => format!("{}: {message}", code.as_str()),
                (Some(code), None) => code.as_str().to_string(),
                (None, Some(message)) => message.to_string(),
                (None, None) => String::new(),
            })
            .filter(|m| !m.is_empty())
            .collect();
        if messages.is_empty() {
            "no reason given".to_string()
        } else {
            messages.join("; ")
        }
    };
    match u.status() {
        Some(eks::UpdateStatus::Successful) => OperationState::Succeeded,
        Some(eks::UpdateStatus::Failed) => OperationState::Failed(format!("failed ({})", errors())),
        Some(eks::UpdateStatus::Cancelled) => {
            OperationState::Failed(format!("was cancelled ({})", errors()))
        }
        _ => OperationState::Running,
    }
}

/// The lifecycle state of an add-on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddonState {
    /// CREATING, UPDATING or DELETING.
    Busy(String),
    /// ACTIVE or DEGRADED: settled (DEGRADED is reported by EKS health, not fixed by us).
    Settled,
    /// CREATE_FAILED.
    CreateFailed(String),
    /// UPDATE_FAILED or DELETE_FAILED: settled, but the last change did not take.
    ChangeFailed(String),
}

/// An EKS add-on as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedAddon {
    /// Lifecycle state.
    pub state: AddonState,
    /// `addonVersion`.
    pub version: Option<String>,
    /// `configurationValues`.
    pub configuration: Option<String>,
}

/// Reads an EKS add-on.
pub fn observed_addon(a: &eks::Addon) -> ObservedAddon {
    let issues = || {
        let list: Vec<String> = a
            .health()
            .map(|h| {
                h.issues()
                    .iter()
                    .filter_map(|i| i.message().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if list.is_empty() {
            "EKS gives no reason".to_string()
        } else {
            list.join("; ")
        }
    };
    let state = match a.status() {
        Some(eks::AddonStatus::Active | eks::AddonStatus::Degraded) => AddonState::Settled,
        Some(eks::AddonStatus::CreateFailed) => AddonState::CreateFailed(issues()),
        Some(eks::AddonStatus::UpdateFailed | eks::AddonStatus::DeleteFailed) => {
            AddonState::ChangeFailed(issues())
        }
        Some(other) => AddonState::Busy(other.as_str().to_string()),
        None => AddonState::Busy("UNKNOWN".into()),
    };
    ObservedAddon {
        state,
        version: a.addon_version().map(str::to_string),
        configuration: a
            .configuration_values()
            .filter(|c| !c.trim().is_empty())
            .map(str::to_string),
    }
}

/// What EKS compares besides the cluster, read only when it is ours and idle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterExtras {
    /// The desired add-ons EKS has, by name.
    pub addons: BTreeMap<String, ObservedAddon>,
    /// Access entries by principal ARN with their associated policy ARNs; `None` when not
    /// looked at (no entries desired).
    pub access: Option<BTreeMap<String, BTreeSet<String>>>,
}

/// Which extras a look reads, named by the spec: its add-ons, and its access entries'
/// principals, in the spec's order.
#[derive(Debug, Clone, Default)]
pub struct ExtrasToRead {
    addons: Vec<String>,
    principals: Vec<String>,
}

impl ExtrasToRead {
    /// What the spec of `cp` names.
    pub fn of(cp: &EKSControlPlane) -> Self {
        let entries = cp
            .spec
            .eks
            .access
            .as_ref()
            .map(|a| &a.entries[..])
            .unwrap_or_default();
        Self {
            addons: cp
                .spec
                .common
                .addons
                .iter()
                .map(|a| a.name.clone())
                .collect(),
            principals: entries.iter().map(|e| e.principal_arn.clone()).collect(),
        }
    }
}

/// One look at EKS: the cluster; the tracked update's state when [`Look::operation`] names one;
/// the add-ons and access entries (in the cluster's [`ObservedCluster::extras`]) when
/// [`Look::idle`] allows.
pub(super) async fn observe(
    connected: &At,
    look: Look<'_>,
) -> Result<Observed<ObservedCluster>, ProviderError> {
    let api = EksApi::of(connected);
    let Some(cluster) = api.describe_cluster().await? else {
        return Ok(Observed::nothing());
    };
    let mut cluster = managed(cluster);
    let operation = match look.operation(&cluster) {
        Some(op) => api.describe_update(&op.id).await?,
        None => None,
    };
    if look.idle(&cluster, operation.as_ref()) {
        cluster.detail.extras = extras(&api, &connected.clients.extras).await?;
    }
    Ok(Observed::found(cluster, operation))
}

/// The spec's add-ons as EKS has them, then its access entries with their policies (only those
/// EKS has; none listed when the spec names none).
async fn extras(api: &EksApi<'_>, wanted: &ExtrasToRead) -> Result<ClusterExtras, ProviderError> {
    let mut extra = ClusterExtras::default();
    for addon in &wanted.addons {
        if let Some(found) = api.describe_addon(addon).await? {
            extra.addons.insert(addon.clone(), found);
        }
    }
    if !wanted.principals.is_empty() {
        let principals = api.access_entries().await?;
        let mut access = BTreeMap::new();
        for principal in &wanted.principals {
            if principals.contains(principal) {
                access.insert(principal.clone(), api.access_policies(principal).await?);
            }
        }
        extra.access = Some(access);
    }
    Ok(extra)
}

/// The reads.
impl EksApi<'_> {
    /// The cluster, `None` when EKS has none of that name.
    pub(super) async fn describe_cluster(&self) -> Result<Option<ObservedCluster>, CloudError> {
        let out = absent_if_not_found(
            counted(
                self.calls,
                "DescribeCluster",
                self.name,
                self.client.describe_cluster().name(self.name).send(),
            )
            .await,
        )?;
        Ok(out.and_then(|o| o.cluster().map(observed_cluster)))
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
        Ok(out.and_then(|o| o.update().map(update_state)))
    }

    async fn describe_addon(&self, addon: &str) -> Result<Option<ObservedAddon>, CloudError> {
        let call = self
            .client
            .describe_addon()
            .cluster_name(self.name)
            .addon_name(addon)
            .send();
        let out = absent_if_not_found(counted(self.calls, "DescribeAddon", self.name, call).await)?;
        Ok(out.and_then(|o| o.addon().map(observed_addon)))
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
}

/// What only EKS reports of the cluster: `status.eks`.
pub(super) fn report(cluster: &ObservedCluster) -> EKSControlPlaneObserved {
    EKSControlPlaneObserved {
        platform_version: cluster.platform_version.clone(),
        oidc_issuer_url: cluster.oidc_issuer.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use contract::api::EndpointAccess;

    use super::*;

    fn sdk_cluster() -> eks::Cluster {
        eks::Cluster::builder()
            .name("ns-c1")
            .arn("arn:aws:eks:us-west-2:123456789012:cluster/ns-c1")
            .status(eks::ClusterStatus::Active)
            .version("1.31")
            .platform_version("eks.7")
            .endpoint("https://ABCDEF.gr7.us-west-2.eks.amazonaws.com")
            .certificate_authority(eks::Certificate::builder().data("Q0E=").build())
            .resources_vpc_config(
                eks::VpcConfigResponse::builder()
                    .endpoint_public_access(true)
                    .endpoint_private_access(true)
                    .public_access_cidrs("0.0.0.0/0")
                    .build(),
            )
            .logging(
                eks::Logging::builder()
                    .cluster_logging(
                        eks::LogSetup::builder()
                            .types(eks::LogType::Api)
                            .types(eks::LogType::Audit)
                            .enabled(true)
                            .build(),
                    )
                    .cluster_logging(
                        eks::LogSetup::builder()
                            .types(eks::LogType::Scheduler)
                            .enabled(false)
                            .build(),
                    )
                    .build(),
            )
            .identity(
                eks::Identity::builder()
                    .oidc(
                        eks::Oidc::builder()
                            .issuer("https://oidc.eks.us-west-2.amazonaws.com/id/X")
                            .build(),
                    )
                    .build(),
            )
            .tags("team", "a")
            .build()
    }

    #[test]
    fn an_eks_cluster_reads_into_what_the_planner_needs() {
        let c = observed_cluster(&sdk_cluster());
        assert_eq!(c.state, Lifecycle::Running);
        assert_eq!(
            c.logging,
            BTreeSet::from([LogKind::ApiServer, LogKind::Audit])
        );
        assert_eq!(c.ca_data.as_deref(), Some("Q0E="));
        assert_eq!(
            c.oidc_issuer.as_deref(),
            Some("https://oidc.eks.us-west-2.amazonaws.com/id/X")
        );
        assert_eq!(c.tags.get("team").map(String::as_str), Some("a"));
        assert!(c.public_access && c.private_access);
    }

    #[test]
    fn eks_gives_one_dns_name_listed_once_per_enabled_access() {
        let c = observed_cluster(&sdk_cluster());
        let endpoints = c.endpoints();
        assert_eq!(endpoints.len(), 2);
        assert_eq!(endpoints[0].name, EndpointName::Public);
        assert_eq!(endpoints[1].name, EndpointName::Private);
        assert!(
            endpoints
                .iter()
                .all(|e| e.host == "ABCDEF.gr7.us-west-2.eks.amazonaws.com" && e.port == 443)
        );
        let private_first = EndpointAccess {
            private: true,
            preferred: Some(contract::api::EndpointPreference::Private),
            ..Default::default()
        };
        let preferred = contract::endpoint::preferred(&endpoints, &private_first).unwrap();
        assert_eq!(preferred.port, 443);
        let only_public = &endpoints[..1];
        assert_eq!(
            contract::endpoint::preferred(only_public, &private_first)
                .unwrap()
                .host,
            "ABCDEF.gr7.us-west-2.eks.amazonaws.com"
        );
        assert!(contract::endpoint::preferred(&[], &EndpointAccess::default()).is_none());
    }

    #[test]
    fn updates_and_addons_read_into_states() {
        let u = eks::Update::builder()
            .id("u1")
            .status(eks::UpdateStatus::InProgress)
            .build();
        assert_eq!(update_state(&u), OperationState::Running);
        let u = eks::Update::builder()
            .status(eks::UpdateStatus::Failed)
            .errors(
                eks::ErrorDetail::builder()
                    .error_code(eks::ErrorCode::AccessDenied)
                    .error_message("role cannot be assumed")
                    .build(),
            )
            .build();
        match update_state(&u) {
            OperationState::Failed(m) => {
                assert!(m.contains("AccessDenied: role cannot be assumed"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let a = eks::Addon::builder()
            .status(eks::AddonStatus::Creating)
            .addon_version("v1.19.0-eksbuild.1")
            .build();
        let o = observed_addon(&a);
        assert_eq!(o.state, AddonState::Busy("CREATING".into()));
        assert_eq!(o.version.as_deref(), Some("v1.19.0-eksbuild.1"));
        let a = eks::Addon::builder()
            .status(eks::AddonStatus::Degraded)
            .configuration_values(" ")
            .build();
        assert_eq!(
            observed_addon(&a),
            ObservedAddon {
                state: AddonState::Settled,
                version: None,
                configuration: None
            }
        );
    }
}
