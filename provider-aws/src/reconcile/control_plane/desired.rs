//! What the spec asks EKS for, taken once per pass and in EKS's terms: [`DesiredCluster`], which
//! the create, the updates and the diff all read, and [`validate`], which makes it from the
//! EKSControlPlane and its infrastructure. Pure: no client, no clock.

use std::collections::BTreeSet;

use aws_sdk_eks::types as eks;
use contract::api::{Addon, EndpointAccess, Logging};
use contract::conditions::Reason;
use provider_runtime::ProviderError;
use serde_json::Value;

use crate::api::{AccessEntry, AuthenticationMode, EKSControlPlane};
use crate::scope::Infra;

/// What the spec asks EKS for.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredCluster {
    /// `spec.eks.roleARN` (only a create needs it: an adopted cluster keeps its role).
    pub role_arn: Option<String>,
    /// The subnets to create the cluster in (the infrastructure's).
    pub subnet_ids: Vec<String>,
    /// The control plane's security groups: the infrastructure's, then `spec.eks.securityGroupIDs`
    /// not already among them.
    pub security_group_ids: Vec<String>,
    /// Endpoint access.
    pub endpoint_access: EndpointAccess,
    /// Enabled log types.
    pub logging: BTreeSet<LogKind>,
    /// The authentication mode, when the user set one (a create without one asks for API).
    pub authentication_mode: Option<AuthenticationMode>,
    /// Whether the identity that creates the cluster is made its administrator (default true).
    pub bootstrap_cluster_creator_admin: bool,
    /// The KMS key encrypting Secrets, when set.
    pub kms_key_id: Option<String>,
    /// `spec.eks.serviceCIDR`.
    pub service_cidr: Option<String>,
    /// `spec.eks.requestOverrides`, when it asks for anything.
    pub request_overrides: Option<Value>,
    /// Add-ons.
    pub addons: Vec<Addon>,
    /// Access entries.
    pub access_entries: Vec<AccessEntry>,
}

impl DesiredCluster {
    /// The subnets to create the cluster in.
    ///
    /// # Errors
    /// Terminal `InvalidSpec` when none is known.
    pub fn subnets(&self) -> Result<&[String], ProviderError> {
        if self.subnet_ids.is_empty() {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "no subnets to create the EKS cluster in: set spec.infrastructure.network.subnetIDs (at least two zones), or use an EKSCluster",
            ));
        }
        Ok(&self.subnet_ids)
    }

    /// The role to create the cluster with.
    ///
    /// # Errors
    /// Terminal `InvalidSpec` when the spec names none (admission lets only an adoption leave
    /// it out, and an adoption never creates).
    pub fn role(&self) -> Result<&str, ProviderError> {
        self.role_arn.as_deref().ok_or_else(|| {
            ProviderError::terminal(
                Reason::InvalidSpec,
                "no IAM role to create the EKS cluster with: set spec.eks.roleARN",
            )
        })
    }
}

/// The spec of `cp` in `infra`, as EKS will be asked for it. What EKS cannot take is refused at
/// admission (the CRD's rules) or by the diff (an authentication mode going back); a create
/// without subnets is refused when it is asked for ([`DesiredCluster::subnets`]), so a cluster
/// that exists is still looked after.
///
/// # Errors
/// None today: the signature is the kernel's.
pub fn validate(cp: &EKSControlPlane, infra: &Infra) -> Result<DesiredCluster, ProviderError> {
    let common = &cp.spec.common;
    let eks = &cp.spec.eks;
    let access = eks.access.as_ref();
    let mut security_group_ids = infra.security_group_ids.clone();
    for group in &eks.security_group_ids {
        if !security_group_ids.contains(group) {
            security_group_ids.push(group.clone());
        }
    }
    Ok(DesiredCluster {
        role_arn: eks.role_arn.clone(),
        subnet_ids: infra.subnet_ids.clone(),
        security_group_ids,
        endpoint_access: common.endpoint_access.clone(),
        logging: wanted_logs(&common.logging),
        authentication_mode: access.and_then(|a| a.authentication_mode),
        bootstrap_cluster_creator_admin: access
            .and_then(|a| a.bootstrap_cluster_creator_admin)
            .unwrap_or(true),
        kms_key_id: common.encryption.as_ref().map(|e| e.kms_key_id.clone()),
        service_cidr: eks.service_cidr.clone(),
        request_overrides: contract::overrides::effective(eks.request_overrides.as_ref()).cloned(),
        addons: common.addons.clone(),
        access_entries: access.map(|a| a.entries.clone()).unwrap_or_default(),
    })
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

    /// EKS's log type.
    pub fn sdk(self) -> eks::LogType {
        match self {
            Self::ApiServer => eks::LogType::Api,
            Self::Audit => eks::LogType::Audit,
            Self::Authenticator => eks::LogType::Authenticator,
            Self::ControllerManager => eks::LogType::ControllerManager,
            Self::Scheduler => eks::LogType::Scheduler,
        }
    }

    /// Ours, for EKS's log type `t`.
    pub fn of_sdk(t: &eks::LogType) -> Option<Self> {
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

/// Our authentication mode as EKS names it.
pub fn authentication_mode_name(mode: AuthenticationMode) -> &'static str {
    match mode {
        AuthenticationMode::Api => "API",
        AuthenticationMode::ApiAndConfigMap => "API_AND_CONFIG_MAP",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use provider_runtime::cluster_objects::InfraOf as _;

    use super::*;

    #[test]
    fn the_spec_is_taken_once_with_eks_s_defaults() {
        let cp: EKSControlPlane = serde_json::from_value(serde_json::json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
            "kind": "EKSControlPlane",
            "metadata": {"name": "cp", "namespace": "ns"},
            "spec": {
                "version": "v1.31",
                "logging": {"audit": true},
                "eks": {
                    "roleARN": "arn:aws:iam::123456789012:role/eks",
                    "securityGroupIDs": ["sg-infra", "sg-mine"],
                    "requestOverrides": {},
                },
            },
        }))
        .unwrap();
        let infra = Infra {
            security_group_ids: vec!["sg-infra".into()],
            ..Infra::from_own(&crate::api::EKSClusterSpec::default())
        };
        let desired = validate(&cp, &infra).unwrap();
        assert_eq!(desired.security_group_ids, ["sg-infra", "sg-mine"]);
        assert_eq!(desired.logging, BTreeSet::from([LogKind::Audit]));
        assert!(desired.bootstrap_cluster_creator_admin);
        assert_eq!(desired.authentication_mode, None);
        assert_eq!(
            desired.request_overrides, None,
            "an empty patch asks nothing"
        );
        let refused = desired.subnets().unwrap_err();
        assert!(refused.to_string().contains("subnetIDs"), "{refused}");
    }
}
