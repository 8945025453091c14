//! Between our API and EKS's shapes: what we read from an EKS cluster, and the request pieces we
//! send. Pure functions; no client, no clock.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_eks::types as eks;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use contract::api::{Endpoint, EndpointAccess, EndpointName, Logging};
use contract::plan::{Lifecycle, OperationState};
use contract::version::KubeVersion;

use crate::api::AuthenticationMode;

/// What EKS allows from anywhere when no public CIDR is given.
pub const ANY_IPV4: &str = "0.0.0.0/0";

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

/// A control-plane log type, named as our API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogKind {
    /// `apiServer` / EKS `api`.
    ApiServer,
    /// `audit`.
    Audit,
    /// `authenticator`.
    Authenticator,
    /// `controllerManager`.
    ControllerManager,
    /// `scheduler`.
    Scheduler,
}

impl LogKind {
    /// Every log type.
    pub const ALL: [LogKind; 5] = [
        Self::ApiServer,
        Self::Audit,
        Self::Authenticator,
        Self::ControllerManager,
        Self::Scheduler,
    ];

    fn sdk(self) -> eks::LogType {
        match self {
            Self::ApiServer => eks::LogType::Api,
            Self::Audit => eks::LogType::Audit,
            Self::Authenticator => eks::LogType::Authenticator,
            Self::ControllerManager => eks::LogType::ControllerManager,
            Self::Scheduler => eks::LogType::Scheduler,
        }
    }

    fn of_sdk(t: &eks::LogType) -> Option<Self> {
        Self::ALL.into_iter().find(|k| &k.sdk() == t)
    }
}

/// The log types `spec.logging` enables.
pub fn wanted_logs(logging: &Logging) -> BTreeSet<LogKind> {
    let flags = [
        (logging.api_server, LogKind::ApiServer),
        (logging.audit, LogKind::Audit),
        (logging.authenticator, LogKind::Authenticator),
        (logging.controller_manager, LogKind::ControllerManager),
        (logging.scheduler, LogKind::Scheduler),
    ];
    flags
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, k)| k)
        .collect()
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
    /// The cluster's tags.
    pub tags: BTreeMap<String, String>,
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
        tags: c
            .tags()
            .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default(),
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

/// Whether EKS's endpoint settings differ from what `access` asks for. Public CIDRs count only
/// while the public endpoint is on; an empty list means "anywhere", as EKS reports it.
pub fn endpoint_access_differs(c: &ObservedCluster, access: &EndpointAccess) -> bool {
    if c.public_access != access.public || c.private_access != access.private {
        return true;
    }
    access.public && cidr_set(&access.public_cidrs) != cidr_set(&c.public_cidrs)
}

fn cidr_set(cidrs: &[String]) -> BTreeSet<&str> {
    if cidrs.is_empty() {
        BTreeSet::from([ANY_IPV4])
    } else {
        cidrs.iter().map(String::as_str).collect()
    }
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

/// Our authentication mode as EKS names it.
pub fn authentication_mode_name(mode: AuthenticationMode) -> &'static str {
    match mode {
        AuthenticationMode::Api => "API",
        AuthenticationMode::ApiAndConfigMap => "API_AND_CONFIG_MAP",
    }
}

/// The SDK's authentication mode.
pub fn sdk_authentication_mode(mode: AuthenticationMode) -> eks::AuthenticationMode {
    eks::AuthenticationMode::from(authentication_mode_name(mode))
}

/// EKS's version string for a Kubernetes version: `1.31` (EKS has no patch versions to ask for).
pub fn eks_version(v: &KubeVersion) -> String {
    format!("{}.{}", v.major, v.minor)
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

/// When an EKS token stops working: its signing time (`X-Amz-Date` of the presigned URL inside)
/// plus `lifetime`. `None` when the token is not one this provider minted.
pub fn token_expiry(token: &str, lifetime: std::time::Duration) -> Option<jiff::Timestamp> {
    let encoded = token.strip_prefix("k8s-aws-v1.")?;
    let url =
        String::from_utf8(URL_SAFE_NO_PAD.decode(encoded.trim_end_matches('=')).ok()?).ok()?;
    let query = url.split_once('?')?.1;
    let date = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("X-Amz-Date="))?;
    let signed = jiff::civil::DateTime::strptime("%Y%m%dT%H%M%SZ", date)
        .ok()?
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()?
        .timestamp();
    signed
        .checked_add(jiff::SignedDuration::try_from(lifetime).ok()?)
        .ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::cloud::AwsCredentials;

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
    fn endpoint_access_compares_cidrs_as_sets_and_only_while_public() {
        let mut c = observed_cluster(&sdk_cluster());
        c.private_access = false;
        assert!(
            !endpoint_access_differs(&c, &EndpointAccess::default()),
            "no CIDRs means 0.0.0.0/0"
        );
        let narrowed = EndpointAccess {
            public_cidrs: vec!["203.0.113.0/24".into()],
            ..Default::default()
        };
        assert!(endpoint_access_differs(&c, &narrowed));
        c.public_cidrs = vec!["198.51.100.0/24".into(), "203.0.113.0/24".into()];
        let both = EndpointAccess {
            public_cidrs: vec!["203.0.113.0/24".into(), "198.51.100.0/24".into()],
            ..Default::default()
        };
        assert!(!endpoint_access_differs(&c, &both));
        c.public_access = false;
        c.private_access = true;
        let private = EndpointAccess {
            public: false,
            private: true,
            ..Default::default()
        };
        assert!(
            !endpoint_access_differs(&c, &private),
            "CIDRs do not matter without a public endpoint"
        );
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

    #[test]
    fn a_minted_token_says_when_it_expires() {
        let creds = AwsCredentials::new("AKIDEXAMPLE", "secret", None);
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let minted = crate::cloud::token::mint(
            &creds,
            "us-west-2",
            "ns-c1",
            at,
            crate::cloud::token::TOKEN_LIFETIME,
        )
        .unwrap();
        let expiry = token_expiry(&minted.token, crate::cloud::token::TOKEN_LIFETIME).unwrap();
        assert_eq!(expiry, minted.expires_at);
        assert_eq!(token_expiry("not-a-token", Duration::from_secs(1)), None);
        assert_eq!(token_expiry("k8s-aws-v1.!!!", Duration::from_secs(1)), None);
    }
}
