//! Access entries (CreateAccessEntry, DescribeAccessEntry, ListAccessEntries, DeleteAccessEntry,
//! AssociateAccessPolicy, ListAssociatedAccessPolicies) and OIDC identity provider configs
//! (Associate/Describe/List/DisassociateIdentityProviderConfig).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{Call, paginate};
use super::clusters::{ensure_idle, with_next};
use super::error::EksError;
use super::state::{
    AccessEntry, AssociatedPolicy, Change, Cluster, IdentityProvider, Status, Tags, Update,
};
use super::{Eks, epoch_now, uuid};

/// The cluster-admin access policy: its holders are in `system:masters`.
pub const CLUSTER_ADMIN_POLICY: &str =
    "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy";

const ACCESS_POLICIES: [&str; 6] = [
    "AmazonEKSClusterAdminPolicy",
    "AmazonEKSAdminPolicy",
    "AmazonEKSEditPolicy",
    "AmazonEKSViewPolicy",
    "AmazonEKSAdminViewPolicy",
    "AmazonEKSAutoNodePolicy",
];

const ENTRY_TYPES: [&str; 7] = [
    "STANDARD",
    "EC2_LINUX",
    "EC2_WINDOWS",
    "FARGATE_LINUX",
    "EC2",
    "HYBRID_LINUX",
    "HYPERPOD_LINUX",
];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateEntryRequest {
    principal_arn: Option<String>,
    kubernetes_groups: Option<Vec<String>>,
    tags: Option<Tags>,
    client_request_token: Option<String>,
    username: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AssociatePolicyRequest {
    policy_arn: Option<String>,
    access_scope: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AssociateIdpRequest {
    oidc: Option<Value>,
    tags: Option<Tags>,
    client_request_token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdpRef {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdpRefRequest {
    identity_provider_config: Option<IdpRef>,
    client_request_token: Option<String>,
}

fn entry_not_found(cluster: &str) -> EksError {
    EksError::not_found(
        "The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'.",
    )
    .cluster(cluster)
}

fn require_api_mode(cluster: &Cluster) -> Result<(), EksError> {
    if cluster.authentication_mode == "CONFIG_MAP" {
        return Err(EksError::invalid_request(
            "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation.",
        )
        .cluster(&cluster.name));
    }
    Ok(())
}

/// `(account, "role"|"user", name)` of an IAM principal ARN (`arn:aws:iam::<12 digits>:role/path/name`).
pub fn parse_principal(arn: &str) -> Option<(&str, &str, &str)> {
    let rest = arn.strip_prefix("arn:aws:iam::")?;
    let (account, resource) = rest.split_once(':')?;
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (kind, path) = resource.split_once('/')?;
    if !matches!(kind, "role" | "user") {
        return None;
    }
    let name = path.rsplit('/').next().filter(|n| !n.is_empty())?;
    Some((account, kind, name))
}

impl Eks {
    pub(super) fn create_access_entry(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: CreateEntryRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let principal = req.principal_arn.clone().unwrap_or_default();
        let scope = format!("CreateAccessEntry/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(id) = self.replay(&scope, token, &call.body)?
            && let Some(e) = cluster
                .access_entries
                .get(&principal)
                .filter(|e| e.arn == id)
        {
            return Ok(json!({"accessEntry": e.json(cluster_name)}));
        }
        require_api_mode(cluster)?;
        let Some((account, kind, short)) = parse_principal(&principal) else {
            return Err(EksError::invalid_parameter(
                "The specified principalArn is invalid: invalid principal.",
            )
            .cluster(cluster_name));
        };
        let entry_type = req.kind.clone().unwrap_or_else(|| "STANDARD".into());
        if !ENTRY_TYPES.contains(&entry_type.as_str()) {
            return Err(EksError::invalid_parameter(format!(
                "The access entry type {entry_type} is not valid"
            ))
            .cluster(cluster_name));
        }
        let groups = req.kubernetes_groups.clone().unwrap_or_default();
        if entry_type != "STANDARD" && (!groups.is_empty() || req.username.is_some()) {
            return Err(EksError::invalid_parameter(format!(
                "kubernetesGroups and username can't be set for access entries of type {entry_type}"
            ))
            .cluster(cluster_name));
        }
        if let Some(g) = groups.iter().find(|g| g.starts_with("system:")) {
            return Err(EksError::invalid_parameter(format!(
                "The kubernetes group name {g} is invalid, it cannot start with system:"
            ))
            .cluster(cluster_name));
        }
        if let Some(u) = req.username.as_deref().filter(|u| u.starts_with("system:")) {
            return Err(EksError::invalid_parameter(format!(
                "The username {u} is invalid, it cannot start with system:"
            ))
            .cluster(cluster_name));
        }
        if cluster.access_entries.contains_key(&principal) {
            return Err(EksError::in_use(
                "The specified access entry resource is already in use on this cluster.",
            )
            .cluster(cluster_name));
        }
        let username = req
            .username
            .clone()
            .unwrap_or_else(|| match (entry_type.as_str(), kind) {
                ("EC2_LINUX" | "EC2_WINDOWS" | "EC2" | "HYBRID_LINUX" | "HYPERPOD_LINUX", _) => {
                    "system:node:{{EC2PrivateDNSName}}".into()
                }
                ("FARGATE_LINUX", _) => "system:node:{{SessionName}}".into(),
                (_, "role") => {
                    format!("arn:aws:sts::{account}:assumed-role/{short}/{{{{SessionName}}}}")
                }
                _ => principal.clone(),
            });
        let now = epoch_now();
        let entry = AccessEntry {
            arn: self.arn(&format!(
                "access-entry/{cluster_name}/{kind}/{account}/{short}/{}",
                uuid()
            )),
            principal: principal.clone(),
            groups,
            username,
            kind: entry_type,
            created_at: now,
            modified_at: now,
            tags: req.tags.clone().unwrap_or_default(),
            policies: BTreeMap::new(),
        };
        let out = json!({"accessEntry": entry.json(cluster_name)});
        self.remember(&scope, token, &call.body, &entry.arn);
        cluster.access_entries.insert(principal, entry);
        Ok(out)
    }

    pub(super) fn describe_access_entry(
        &self,
        cluster_name: &str,
        principal: &str,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let e = cluster
            .access_entries
            .get(principal)
            .ok_or_else(|| entry_not_found(cluster_name))?;
        Ok(json!({"accessEntry": e.json(cluster_name)}))
    }

    pub(super) fn list_access_entries(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let policy = call.param("associatedPolicyArn");
        let principals: Vec<String> = cluster
            .access_entries
            .values()
            .filter(|e| policy.is_none_or(|p| e.policies.contains_key(p)))
            .map(|e| e.principal.clone())
            .collect();
        let (page, next) = paginate(principals, call)?;
        Ok(with_next(json!({"accessEntries": page}), next))
    }

    pub(super) fn delete_access_entry(
        &self,
        cluster_name: &str,
        principal: &str,
    ) -> Result<Value, EksError> {
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        cluster
            .access_entries
            .remove(principal)
            .ok_or_else(|| entry_not_found(cluster_name))?;
        Ok(json!({}))
    }

    pub(super) fn associate_access_policy(
        &self,
        cluster_name: &str,
        principal: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: AssociatePolicyRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let entry = cluster
            .access_entries
            .get_mut(principal)
            .ok_or_else(|| entry_not_found(cluster_name))?;
        let policy = req.policy_arn.unwrap_or_default();
        let known = policy
            .strip_prefix("arn:aws:eks::aws:cluster-access-policy/")
            .is_some_and(|p| ACCESS_POLICIES.contains(&p));
        if !known {
            return Err(EksError::invalid_parameter(format!(
                "The specified policyArn {policy} is invalid"
            ))
            .cluster(cluster_name));
        }
        if entry.kind != "STANDARD" {
            return Err(EksError::invalid_parameter(
                "This operation can only be performed on Access Entries with a type of \"STANDARD\".",
            )
            .cluster(cluster_name));
        }
        let scope = req.access_scope.unwrap_or(Value::Null);
        match scope.get("type").and_then(Value::as_str) {
            Some("cluster") => {}
            Some("namespace") => {
                let empty = scope
                    .get("namespaces")
                    .and_then(Value::as_array)
                    .is_none_or(|n| n.is_empty());
                if empty {
                    return Err(EksError::invalid_parameter(
                        "An access scope of type namespace requires namespaces",
                    )
                    .cluster(cluster_name));
                }
            }
            _ => {
                return Err(EksError::invalid_parameter(
                    "accessScope.type must be cluster or namespace",
                )
                .cluster(cluster_name));
            }
        }
        let now = epoch_now();
        let associated_at = entry.policies.get(&policy).map_or(now, |p| p.associated_at);
        entry.policies.insert(
            policy.clone(),
            AssociatedPolicy {
                scope: scope.clone(),
                associated_at,
                modified_at: now,
            },
        );
        entry.modified_at = now;
        Ok(json!({
            "clusterName": cluster_name,
            "principalArn": principal,
            "associatedAccessPolicy": {"policyArn": policy, "accessScope": scope, "associatedAt": associated_at, "modifiedAt": now},
        }))
    }

    pub(super) fn list_associated_access_policies(
        &self,
        cluster_name: &str,
        principal: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let entry = cluster
            .access_entries
            .get(principal)
            .ok_or_else(|| entry_not_found(cluster_name))?;
        let (page, next) = paginate(entry.policies.keys().cloned().collect(), call)?;
        let policies: Vec<Value> = page
            .iter()
            .filter_map(|p| entry.policies.get(p).map(|a| (p, a)))
            .map(|(p, a)| json!({"policyArn": p, "accessScope": a.scope, "associatedAt": a.associated_at, "modifiedAt": a.modified_at}))
            .collect();
        Ok(with_next(
            json!({"clusterName": cluster_name, "principalArn": principal, "associatedAccessPolicies": policies}),
            next,
        ))
    }

    pub(super) fn associate_identity_provider_config(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: AssociateIdpRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let scope = format!("AssociateIdentityProviderConfig/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(id) = self.replay(&scope, token, &call.body)?
            && let Some(u) = cluster.updates.iter().find(|u| u.id == id)
        {
            let tags = match &u.change {
                Change::AssociateIdp(n) => cluster
                    .idps
                    .get(n)
                    .map(|i| json!(i.tags))
                    .unwrap_or(json!({})),
                _ => json!({}),
            };
            return Ok(json!({"update": u.json(), "tags": tags}));
        }
        let oidc = req.oidc.unwrap_or(Value::Null);
        let field = |k: &str| {
            oidc.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let name = field("identityProviderConfigName");
        if name.is_empty() || field("clientId").is_empty() {
            return Err(EksError::invalid_parameter(
                "oidc.identityProviderConfigName and oidc.clientId are required",
            )
            .cluster(cluster_name));
        }
        if !field("issuerUrl").starts_with("https://") {
            return Err(EksError::invalid_parameter(
                "The issuerUrl must be a URL using the https scheme",
            )
            .cluster(cluster_name));
        }
        if cluster.idps.contains_key(&name) {
            return Err(EksError::in_use(format!(
                "Identity provider config {name} already exists for cluster {cluster_name}"
            ))
            .cluster(cluster_name));
        }
        if !cluster.idps.is_empty() {
            return Err(EksError::invalid_request(
                "A cluster can have only one OIDC identity provider config associated",
            )
            .cluster(cluster_name));
        }
        ensure_idle(cluster, "AssociateIdentityProviderConfig")?;
        let tags = req.tags.clone().unwrap_or_default();
        let idp = IdentityProvider {
            arn: self.arn(&format!(
                "identityproviderconfig/{cluster_name}/oidc/{name}/{}",
                uuid()
            )),
            name: name.clone(),
            oidc: oidc.clone(),
            tags: tags.clone(),
            status: Status::Creating,
        };
        cluster.idps.insert(name.clone(), idp);
        let update = Update::new(
            "AssociateIdentityProviderConfig",
            vec![(
                "IdentityProviderConfig",
                json!([{"type": "oidc", "name": name}]).to_string(),
            )],
            Change::AssociateIdp(name),
            epoch_now(),
        );
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_cluster_update(cluster, update), "tags": tags}))
    }

    pub(super) fn describe_identity_provider_config(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: IdpRefRequest = call.parse()?;
        let st = self.lock();
        let cluster = st.cluster(cluster_name)?;
        let idp = find_idp(cluster, req.identity_provider_config.as_ref())?;
        Ok(json!({"identityProviderConfig": {"oidc": idp.json(cluster_name)}}))
    }

    pub(super) fn list_identity_provider_configs(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let st = self.lock();
        let names: Vec<String> = st.cluster(cluster_name)?.idps.keys().cloned().collect();
        let (page, next) = paginate(names, call)?;
        let configs: Vec<Value> = page
            .iter()
            .map(|n| json!({"type": "oidc", "name": n}))
            .collect();
        Ok(with_next(json!({"identityProviderConfigs": configs}), next))
    }

    pub(super) fn disassociate_identity_provider_config(
        &self,
        cluster_name: &str,
        call: &Call,
    ) -> Result<Value, EksError> {
        let req: IdpRefRequest = call.parse()?;
        let mut st = self.lock();
        let cluster = st.cluster_mut(cluster_name)?;
        let scope = format!("DisassociateIdentityProviderConfig/{}", cluster.workload_id);
        let token = req.client_request_token.as_deref();
        if let Some(u) = self
            .replay(&scope, token, &call.body)?
            .and_then(|id| super::clusters::find_update(&cluster.updates, &id))
        {
            return Ok(json!({"update": u}));
        }
        let name = find_idp(cluster, req.identity_provider_config.as_ref())?
            .name
            .clone();
        ensure_idle(cluster, "DisassociateIdentityProviderConfig")?;
        if let Some(idp) = cluster.idps.get_mut(&name) {
            if idp.status != Status::Active {
                return Err(EksError::in_use(format!(
                    "Identity provider config {name} is in {} status",
                    idp.status.as_str()
                ))
                .cluster(cluster_name));
            }
            idp.status = Status::Deleting;
        }
        let update = Update::new(
            "DisassociateIdentityProviderConfig",
            vec![(
                "IdentityProviderConfig",
                json!([{"type": "oidc", "name": name}]).to_string(),
            )],
            Change::DisassociateIdp(name),
            epoch_now(),
        );
        self.remember(&scope, token, &call.body, &update.id);
        Ok(json!({"update": self.begin_cluster_update(cluster, update)}))
    }
}

fn find_idp<'a>(
    cluster: &'a Cluster,
    r: Option<&IdpRef>,
) -> Result<&'a IdentityProvider, EksError> {
    let kind = r.and_then(|r| r.kind.as_deref()).unwrap_or_default();
    let name = r.and_then(|r| r.name.as_deref()).unwrap_or_default();
    if kind != "oidc" {
        return Err(EksError::invalid_parameter(format!(
            "The identity provider config type {kind} is not supported; use oidc"
        ))
        .cluster(&cluster.name));
    }
    cluster.idps.get(name).ok_or_else(|| {
        EksError::not_found(format!(
            "No identity provider config found for name: {name}"
        ))
        .cluster(&cluster.name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_parse_with_paths_and_reject_other_arns() {
        assert_eq!(
            parse_principal("arn:aws:iam::123456789012:role/admin"),
            Some(("123456789012", "role", "admin"))
        );
        assert_eq!(
            parse_principal("arn:aws:iam::123456789012:role/a/b/ops"),
            Some(("123456789012", "role", "ops"))
        );
        assert_eq!(
            parse_principal("arn:aws:iam::123456789012:user/AKID"),
            Some(("123456789012", "user", "AKID"))
        );
        assert_eq!(parse_principal("arn:aws:iam::12345:role/x"), None);
        assert_eq!(
            parse_principal("arn:aws:sts::123456789012:assumed-role/x/s"),
            None
        );
        assert_eq!(parse_principal("arn:aws:iam::123456789012:group/x"), None);
    }
}
