//! Who a bearer token presented to a cluster's workload API server is, as EKS decides it: the
//! token must be a valid presigned STS URL for this cluster (see [`super::token`]) not older than
//! the configured lifetime ([`super::EksConfig::token_lifetime`]); the cluster's
//! creator is `kubernetes-admin` in `system:masters` unless `bootstrapClusterCreatorAdminPermissions`
//! was false; other principals need an access entry (with `system:masters` when the
//! `AmazonEKSClusterAdminPolicy` is associated); everyone else is refused.

use std::sync::{Arc, Weak};

use jiff::Timestamp;

use super::Eks;
use super::access::{CLUSTER_ADMIN_POLICY, parse_principal};
use super::token::{self, CallerIdentity};
use crate::kit::{TokenVerifier, UserInfo};

/// The kit's [`TokenVerifier`] for EKS clusters.
#[derive(Debug)]
pub struct EksTokenVerifier {
    eks: Weak<Eks>,
}

impl EksTokenVerifier {
    /// A verifier for the clusters of `eks`.
    pub fn new(eks: &Arc<Eks>) -> Self {
        Self {
            eks: Arc::downgrade(eks),
        }
    }
}

impl TokenVerifier for EksTokenVerifier {
    fn verify(&self, cluster_id: &str, token: &str) -> Result<UserInfo, String> {
        let eks = self.eks.upgrade().ok_or("the EKS emulator has stopped")?;
        eks.authenticate(cluster_id, token, Timestamp::now())
    }
}

/// A snapshot of what decides a caller's identity on one cluster.
struct Entry {
    principal: String,
    kind: String,
    username: String,
    groups: Vec<String>,
    admin: bool,
}

impl Eks {
    /// Authenticates `token` for the cluster whose workload id is `cluster_id` at time `now`.
    ///
    /// # Errors
    /// Why the token is refused (never echoing it).
    pub fn authenticate(
        &self,
        cluster_id: &str,
        token: &str,
        now: Timestamp,
    ) -> Result<UserInfo, String> {
        let (name, creator, bootstrap, api_mode, entries) = {
            let st = self.lock();
            let c = st
                .clusters
                .values()
                .find(|c| c.workload_id == cluster_id)
                .ok_or_else(|| format!("no cluster has id {cluster_id}"))?;
            let entries: Vec<Entry> = c
                .access_entries
                .values()
                .map(|e| Entry {
                    principal: e.principal.clone(),
                    kind: e.kind.clone(),
                    username: e.username.clone(),
                    groups: e.groups.clone(),
                    admin: e.policies.get(CLUSTER_ADMIN_POLICY).is_some_and(|p| {
                        p.scope.get("type").and_then(|t| t.as_str()) == Some("cluster")
                    }),
                })
                .collect();
            (
                c.name.clone(),
                c.creator.clone(),
                c.bootstrap_admin,
                c.authentication_mode != "CONFIG_MAP",
                entries,
            )
        };
        let secret_of = |k: &str| self.secret_of(k);
        let who = token::verify_within(
            token,
            &name,
            &secret_of,
            now,
            self.config.token_lifetime,
            &self.config.sts_endpoints,
        )
        .map_err(|e| e.to_string())?;
        if bootstrap && creator.as_deref() == Some(who.access_key_id.as_str()) {
            return Ok(UserInfo {
                username: "kubernetes-admin".into(),
                groups: vec!["system:masters".into()],
            });
        }
        if api_mode && let Some(e) = entries.iter().find(|e| self.matches(&e.principal, &who)) {
            return Ok(user_of(e, &who));
        }
        Err(format!(
            "{} has no access to cluster {name}: it is not the creator and has no access entry",
            who.arn
        ))
    }

    /// Whether an access entry's principal is the token's signer.
    fn matches(&self, principal: &str, who: &CallerIdentity) -> bool {
        if principal == who.arn {
            return true;
        }
        parse_principal(principal).is_some_and(|(account, kind, name)| {
            kind == "user"
                && name == who.access_key_id
                && (account == who.account_id || account == self.config.account_id)
        })
    }
}

fn user_of(e: &Entry, who: &CallerIdentity) -> UserInfo {
    let username = e
        .username
        .replace("{{SessionName}}", &who.access_key_id)
        .replace("{{AccessKeyID}}", &who.access_key_id)
        .replace("{{AccountID}}", &who.account_id)
        .replace("{{EC2PrivateDNSName}}", &who.access_key_id);
    let mut groups = e.groups.clone();
    if e.kind == "STANDARD" {
        if e.admin {
            groups.push("system:masters".into());
        }
    } else {
        groups.extend([
            "system:bootstrappers".to_string(),
            "system:nodes".to_string(),
        ]);
    }
    UserInfo { username, groups }
}
