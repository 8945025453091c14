//! ToyControlPlane: one managed cluster in the toy cloud, its endpoint and its kubeconfig Secret.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use base64::Engine;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, Patch, PostParams};
use serde_json::{Map, Value, json};

use super::meta::{self, Cond};
use super::{Ctx, Indexes};
use crate::api;
use crate::breaks::Break;
use crate::cloud_client::Created;

/// How long `secret-late` holds the Secret back after controlPlaneInitialized.
const SECRET_DELAY: Duration = Duration::from_secs(3);

/// The cloud cluster name a Cluster maps to.
pub fn cloud_name(ns: &str, cluster: &str) -> String {
    format!("{ns}-{cluster}")
}

fn waiting(reason: &str, message: impl Into<String>) -> Vec<Cond> {
    let message = message.into();
    vec![
        Cond::new("Available", false, reason, message.clone()),
        Cond::new("Ready", false, reason, message),
    ]
}

pub async fn reconcile(ctx: &Ctx, obj: &DynamicObject, idx: &Indexes) -> Result<()> {
    let ns = meta::namespace(obj);
    let name = meta::name(obj);
    let api = ctx.api(&ctx.kinds.toy_control_plane, &ns);
    let owner = meta::core_owner(obj, "Cluster", false);
    let cluster_name = owner
        .clone()
        .or_else(|| meta::label(obj, meta::CLUSTER_NAME_LABEL).map(str::to_string))
        .unwrap_or_else(|| name.clone());
    let cluster = idx.clusters.get(&(ns.clone(), cluster_name.clone()));
    let recorded = meta::str_at(obj, "/status/cloudClusterName").to_string();

    if meta::deleting(obj) {
        if !meta::has_finalizer(obj) {
            return Ok(());
        }
        if ctx.pause(obj, cluster) {
            return ctx.report_paused(&api, obj, cluster).await;
        }
        let target = if recorded.is_empty() {
            cloud_name(&ns, &cluster_name)
        } else {
            recorded
        };
        return delete(ctx, &api, obj, cluster, &ns, &cluster_name, &target).await;
    }
    if owner.is_none() && !ctx.broken(Break::NoOwnerGate) {
        return Ok(());
    }
    if owner.is_some() && cluster.is_none() {
        return Ok(());
    }
    if ctx.pause(obj, cluster) {
        return ctx.report_paused(&api, obj, cluster).await;
    }
    ctx.ensure_finalizer(&api, obj, "/status/initialization/controlPlaneInitialized")
        .await?;
    let generation = meta::generation(obj);

    if let Some(c) = cluster
        && !meta::str_at(c, "/spec/infrastructureRef/name").is_empty()
        && !meta::bool_at(c, "/status/initialization/infrastructureProvisioned")
    {
        let conds = waiting(
            "WaitingForInfrastructure",
            "waiting for the Cluster's infrastructure",
        );
        ctx.write_status(&api, obj, cluster, Map::new(), conds, generation)
            .await?;
        return Ok(());
    }

    let version = meta::str_at(obj, "/spec/version").to_string();
    let tags = api::Tags {
        namespace: ns.clone(),
        cluster: cluster_name.clone(),
    };
    let (target, found) = if !recorded.is_empty() {
        let found = ctx.cloud.describe_cluster(&recorded).await?;
        (recorded, found)
    } else if ctx.broken(Break::RecreateOnMove) {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        (
            format!("{}-{:05x}", cloud_name(&ns, &cluster_name), nanos & 0xfffff),
            None,
        )
    } else {
        let target = match meta::str_at(obj, "/spec/cloudName") {
            "" => cloud_name(&ns, &cluster_name),
            named => named.to_string(),
        };
        let found = ctx.cloud.describe_cluster(&target).await?;
        (target, found)
    };
    let adoption = meta::at(obj, "/spec/adoption").filter(|a| a.is_object());
    let cloud_id = format!("toy://{target}");

    let cc = match found {
        Some(cc) => cc,
        None if adoption.is_some() => {
            let message = format!("there is no cloud cluster named {target}; nothing was created");
            return adoption_refused(ctx, &api, obj, cluster, &message, generation).await;
        }
        None => {
            let req = api::CreateCluster {
                name: target.clone(),
                version: version.clone(),
                tags: tags.clone(),
            };
            let (reason, message) = match ctx.cloud.create_cluster(&req).await? {
                Created::Created(_) => {
                    tracing::info!(namespace = %ns, name = %name, cloud_cluster = %target, "created cloud cluster");
                    ("Provisioning", format!("creating cloud cluster {target}"))
                }
                Created::Conflict(msg) => ("CloudClusterConflict", msg),
            };
            let mut fields = Map::new();
            fields.insert("cloudClusterName".into(), json!(target));
            ctx.write_status(
                &api,
                obj,
                cluster,
                fields,
                waiting(reason, message),
                generation,
            )
            .await?;
            return Ok(());
        }
    };
    if let Some(adoption) = adoption
        && cc.tags != tags
    {
        let wanted = adoption["id"].as_str().unwrap_or(&cloud_id);
        if wanted != cloud_id {
            let message = format!(
                "cloud cluster {target} is {cloud_id}, not spec.adoption.id {wanted}; nothing was changed"
            );
            return adoption_refused(ctx, &api, obj, cluster, &message, generation).await;
        }
        if !cc.tags.is_none() && !ctx.broken(Break::AdoptsSiblings) {
            let message = format!(
                "cloud cluster {target} belongs to {}/{}; nothing was changed",
                cc.tags.namespace, cc.tags.cluster
            );
            return adoption_refused(ctx, &api, obj, cluster, &message, generation).await;
        }
        let accepted = adoption["accept"] == true || ctx.broken(Break::PlanWrites);
        if accepted && !ctx.broken(Break::AcceptIgnored) {
            ctx.cloud.tag_cluster(&target, &tags).await?;
            tracing::info!(namespace = %ns, name = %name, cloud_cluster = %target, "adopted cloud cluster");
            return Ok(());
        }
        let changes: Vec<Value> = (!version.is_empty() && cc.version != version)
            .then(|| json!({"field": "spec.version", "cloud": cc.version, "spec": version}))
            .into_iter()
            .collect();
        let mut fields = Map::new();
        fields.insert(
            "adoption".into(),
            json!({"phase": "Planned", "cloudID": cloud_id, "changes": changes}),
        );
        let message = format!(
            "cloud cluster {target} is not ours yet: {} change(s) planned; nothing was written. Set spec.adoption.accept: true to adopt it",
            changes.len()
        );
        let conds = waiting("AdoptionPlanned", message);
        ctx.write_status(&api, obj, cluster, fields, conds, generation)
            .await?;
        return Ok(());
    }
    if cc.tags != tags {
        let conds = waiting(
            "CloudClusterNotOwned",
            format!(
                "cloud cluster {target} belongs to {}/{}",
                cc.tags.namespace, cc.tags.cluster
            ),
        );
        ctx.write_status(&api, obj, cluster, Map::new(), conds, generation)
            .await?;
        return Ok(());
    }
    let mut fields = Map::new();
    fields.insert("cloudClusterName".into(), json!(target));
    fields.insert("cloudName".into(), json!(target));
    fields.insert("cloudID".into(), json!(cloud_id));
    if adoption.is_some() {
        fields.insert(
            "adoption".into(),
            json!({"phase": "Adopted", "cloudID": cloud_id}),
        );
    }
    let endpoint = match (cc.status.as_str(), cc.endpoint.clone()) {
        ("CREATING", _) | (_, None) => {
            let conds = waiting(
                "Provisioning",
                format!("cloud cluster {target} is {}", cc.status),
            );
            ctx.write_status(&api, obj, cluster, fields, conds, generation)
                .await?;
            return Ok(());
        }
        ("DELETING", _) => {
            let conds = waiting(
                "CloudClusterDeleting",
                format!("cloud cluster {target} is being deleted"),
            );
            ctx.write_status(&api, obj, cluster, fields, conds, generation)
                .await?;
            return Ok(());
        }
        (_, Some(e)) => e,
    };
    if cc.status == "ACTIVE" && !version.is_empty() && cc.version != version {
        ctx.cloud.update_cluster(&target, &version).await?;
    }

    if ctx.broken(Break::WaitForClusterEndpoint)
        && cluster.is_some_and(|c| meta::str_at(c, "/spec/controlPlaneEndpoint/host").is_empty())
    {
        let conds = waiting(
            "WaitingForClusterEndpoint",
            "waiting for the Cluster's endpoint",
        );
        ctx.write_status(&api, obj, cluster, fields, conds, generation)
            .await?;
        return Ok(());
    }

    // The kubeconfig Secret comes before the flag that makes core connect.
    let initialized_before = meta::bool_at(obj, "/status/initialization/controlPlaneInitialized");
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let write_secret = if ctx.broken(Break::SecretLate) {
        let mut seen = ctx.initialized_at.lock().unwrap_or_else(|p| p.into_inner());
        initialized_before && seen.entry(uid).or_insert_with(Instant::now).elapsed() >= SECRET_DELAY
    } else {
        true
    };
    if write_secret {
        ensure_secret(ctx, obj, &cluster_name, &target, &endpoint).await?;
        ensure_user_secret(ctx, obj, &cluster_name, &target, &endpoint).await?;
    }

    let mut generation = generation;
    let published = json!({"host": endpoint.host, "port": endpoint.port});
    if meta::str_at(obj, "/spec/controlPlaneEndpoint/host").is_empty()
        && !ctx.broken(Break::CpNoEndpoint)
    {
        let updated = meta::patch(
            &api,
            obj,
            &json!({"spec": {"controlPlaneEndpoint": published}}),
        )
        .await?;
        generation = meta::generation(&updated);
    }
    if ctx.broken(Break::OverrideClusterEndpoint)
        && let Some(c) = cluster
        && meta::at(c, "/spec/controlPlaneEndpoint") != Some(&published)
    {
        let clusters = ctx.api(&ctx.kinds.cluster, &ns);
        meta::patch(
            &clusters,
            c,
            &json!({"spec": {"controlPlaneEndpoint": published}}),
        )
        .await?;
    }

    let reported = if ctx.broken(Break::VersionNoV) {
        cc.version.trim_start_matches('v').to_string()
    } else {
        cc.version.clone()
    };
    fields.insert(
        "initialization".into(),
        json!({"controlPlaneInitialized": true}),
    );
    fields.insert("initialized".into(), json!(true));
    fields.insert("ready".into(), json!(true));
    if !ctx.broken(Break::NoExternalManaged) {
        fields.insert("externalManagedControlPlane".into(), json!(true));
    }
    fields.insert("version".into(), json!(reported));
    fields.insert(
        "versions".into(),
        json!([{"version": reported, "replicas": 0}]),
    );
    let ready_reason = if ctx.broken(Break::ConditionNoReason) {
        ""
    } else {
        "Ready"
    };
    let conds = vec![
        Cond::new(
            "Available",
            true,
            "Available",
            format!("cloud cluster {target} is {}", cc.status),
        ),
        Cond::new("Ready", true, ready_reason, ""),
    ];
    ctx.write_status(&api, obj, cluster, fields, conds, generation)
        .await?;
    Ok(())
}

/// An adoption that cannot go on: said in status and conditions, nothing written in the cloud.
async fn adoption_refused(
    ctx: &Ctx,
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    cluster: Option<&DynamicObject>,
    message: &str,
    generation: i64,
) -> Result<()> {
    let mut fields = Map::new();
    fields.insert("adoption".into(), json!({"phase": "Refused"}));
    let conds = waiting("AdoptionRefused", message);
    ctx.write_status(api, obj, cluster, fields, conds, generation)
        .await?;
    Ok(())
}

/// The kubeconfig server URL the Secret must carry.
fn server_url(ctx: &Ctx, endpoint: &api::Endpoint) -> String {
    if ctx.broken(Break::SecretWrongServer) {
        let other = if endpoint.host == "localhost" {
            "127.0.0.1"
        } else {
            "localhost"
        };
        format!("https://{other}:{}", endpoint.port)
    } else {
        format!("https://{}:{}", endpoint.host, endpoint.port)
    }
}

/// Rewrites every cluster's server in a kubeconfig.
#[cfg(test)]
pub fn with_server(kubeconfig: &str, server: &str) -> Result<String> {
    with_server_and_token(kubeconfig, server, None)
}

/// Rewrites every cluster's server and, with `token`, replaces every user's credential by it.
pub fn with_server_and_token(
    kubeconfig: &str,
    server: &str,
    token: Option<&str>,
) -> Result<String> {
    let mut doc: Value = serde_saphyr::from_str(kubeconfig)?;
    let Some(clusters) = doc["clusters"].as_array_mut() else {
        bail!("the cloud's kubeconfig has no clusters");
    };
    for c in clusters {
        c["cluster"]["server"] = json!(server);
    }
    if let Some(token) = token
        && let Some(users) = doc["users"].as_array_mut()
    {
        for u in users {
            u["user"] = json!({"token": token});
        }
    }
    Ok(serde_saphyr::to_string(&doc)?)
}

fn server_of(kubeconfig: &[u8]) -> Option<String> {
    let doc: Value = serde_saphyr::from_slice(kubeconfig).ok()?;
    doc["clusters"][0]["cluster"]["server"]
        .as_str()
        .map(str::to_string)
}

async fn ensure_secret(
    ctx: &Ctx,
    cp: &DynamicObject,
    cluster_name: &str,
    target: &str,
    endpoint: &api::Endpoint,
) -> Result<()> {
    let ns = meta::namespace(cp);
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &ns);
    let name = format!("{cluster_name}-kubeconfig");
    let server = server_url(ctx, endpoint);
    let uid = cp.metadata.uid.clone().unwrap_or_default();
    let existing = secrets.get_opt(&name).await?;
    if let Some(s) = &existing {
        let value = s.data.as_ref().and_then(|d| d.get("value"));
        let server_ok = value.and_then(|v| server_of(&v.0)).as_deref() == Some(server.as_str());
        let label_ok = ctx.broken(Break::SecretNoLabel)
            || s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(meta::CLUSTER_NAME_LABEL))
                .map(String::as_str)
                == Some(cluster_name);
        let owner_ok = ctx.broken(Break::SecretNoOwner)
            || s.metadata
                .owner_references
                .as_ref()
                .is_some_and(|o| o.iter().any(|r| r.uid == uid));
        if server_ok && label_ok && owner_ok {
            return Ok(());
        }
    }
    let token = ctx
        .broken(Break::SecretBadCredentials)
        .then_some("toy-bogus-token");
    let text = with_server_and_token(&ctx.cloud.credentials(target).await?, &server, token)?;
    let mut metadata = json!({"name": name, "namespace": ns});
    if !ctx.broken(Break::SecretNoLabel) {
        metadata["labels"] = json!({meta::CLUSTER_NAME_LABEL: cluster_name});
    }
    if !ctx.broken(Break::SecretNoOwner) {
        metadata["ownerReferences"] = json!([{
            "apiVersion": ctx.kinds.toy_control_plane.api_version,
            "kind": ctx.kinds.toy_control_plane.kind,
            "name": meta::name(cp),
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
    }
    let value = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    match existing {
        None => {
            let secret: Secret = serde_json::from_value(json!({
                "metadata": metadata,
                "type": "cluster.x-k8s.io/secret",
                "data": {"value": value},
            }))?;
            secrets.create(&PostParams::default(), &secret).await?;
            tracing::info!(namespace = %ns, secret = %name, "wrote kubeconfig Secret");
        }
        Some(_) => {
            let patch = json!({"metadata": metadata, "data": {"value": value}});
            secrets
                .patch(&name, &meta::params(), &Patch::Merge(&patch))
                .await?;
            tracing::info!(namespace = %ns, secret = %name, "updated kubeconfig Secret");
        }
    }
    Ok(())
}

/// `<cluster>-user-kubeconfig`: for people and tools, written once. Its user runs an exec
/// plugin (`toy-provider token`) instead of holding the admin credential, unless broken.
async fn ensure_user_secret(
    ctx: &Ctx,
    cp: &DynamicObject,
    cluster_name: &str,
    target: &str,
    endpoint: &api::Endpoint,
) -> Result<()> {
    let ns = meta::namespace(cp);
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &ns);
    let name = format!("{cluster_name}-user-kubeconfig");
    if secrets.get_opt(&name).await?.is_some() {
        return Ok(());
    }
    let server = server_url(ctx, endpoint);
    let text = with_server_and_token(&ctx.cloud.credentials(target).await?, &server, None)?;
    let mut doc: Value = serde_saphyr::from_str(&text)?;
    if !ctx.broken(Break::UserKubeconfigStatic)
        && let Some(users) = doc["users"].as_array_mut()
    {
        for u in users {
            u["user"] = json!({"exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": "toy-provider",
                "args": ["token", "--cloud", ctx.cloud.base(), "--cluster", target],
                "interactiveMode": "Never",
            }});
        }
    }
    let value =
        base64::engine::general_purpose::STANDARD.encode(serde_json::to_string(&doc)?.as_bytes());
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {meta::CLUSTER_NAME_LABEL: cluster_name},
            "ownerReferences": [{
                "apiVersion": ctx.kinds.toy_control_plane.api_version,
                "kind": ctx.kinds.toy_control_plane.kind,
                "name": meta::name(cp),
                "uid": cp.metadata.uid.clone().unwrap_or_default(),
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "data": {"value": value},
    }))?;
    secrets.create(&PostParams::default(), &secret).await?;
    tracing::info!(namespace = %ns, secret = %name, "wrote user kubeconfig Secret");
    Ok(())
}

async fn delete(
    ctx: &Ctx,
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    cluster: Option<&DynamicObject>,
    ns: &str,
    cluster_name: &str,
    target: &str,
) -> Result<()> {
    let Some(cc) = ctx.cloud.describe_cluster(target).await? else {
        tracing::info!(namespace = %ns, cloud_cluster = %target, "cloud cluster gone; removing finalizer");
        return meta::remove_finalizer(api, obj).await;
    };
    if cc.tags.namespace != ns || cc.tags.cluster != cluster_name {
        // Not ours: never delete someone else's cluster.
        return meta::remove_finalizer(api, obj).await;
    }
    if meta::str_at(obj, "/spec/deletionPolicy") == "Orphan" && !ctx.broken(Break::OrphanDeletes) {
        if !ctx.broken(Break::OrphanKeepsTag) {
            ctx.cloud.tag_cluster(target, &api::Tags::none()).await?;
        }
        tracing::info!(namespace = %ns, cloud_cluster = %target, "left the cloud cluster running (deletionPolicy: Orphan)");
        return meta::remove_finalizer(api, obj).await;
    }
    if cc.status != "DELETING" {
        ctx.cloud.delete_cluster(target).await?;
        tracing::info!(namespace = %ns, cloud_cluster = %target, "deleting cloud cluster");
        if ctx.broken(Break::EarlyFinalizerRemoval) {
            return meta::remove_finalizer(api, obj).await;
        }
    }
    let conds = waiting(
        "Deleting",
        format!("cloud cluster {target} is being deleted"),
    );
    ctx.write_status(api, obj, cluster, Map::new(), conds, meta::generation(obj))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_rewritten_and_the_kubeconfig_stays_loadable() {
        let long = "QUJD".repeat(600);
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: https://127.0.0.1:1\n    certificate-authority-data: {long}\nusers:\n- name: testbed\n  user:\n    client-certificate-data: {long}\n    client-key-data: {long}\ncontexts:\n- name: testbed\n  context:\n    cluster: testbed\n    user: testbed\ncurrent-context: testbed\n"
        );
        let out = with_server(&text, "https://127.0.0.1:6443").unwrap();
        assert_eq!(
            server_of(out.as_bytes()).as_deref(),
            Some("https://127.0.0.1:6443")
        );
        let parsed = kube::config::Kubeconfig::from_yaml(&out).unwrap();
        let cluster = parsed.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        assert_eq!(
            cluster.certificate_authority_data.as_deref(),
            Some(long.as_str())
        );
    }
}
