//! Recording the provisioned cluster: its objects as read once settled, every version the
//! watches delivered, and what the workload API server answers a client built from the
//! kubeconfig Secret. The judges of [`crate::run::judge`] decide from this record alone.

use std::time::Duration;

use anyhow::Result;
use k8s_openapi::api::core::v1::{Namespace, Node};
use kube::api::{Api, ListParams};

use super::{Names, State};
use crate::objects::Recorder;
use crate::run::Ctx;
use crate::run::judge::{Provisioned, Workload, WorkloadNode, kubeconfig_of};

/// Takes the recorder's versions, then asks the workload cluster what the judges need.
pub(super) async fn record(
    ctx: &Ctx,
    names: &Names,
    state: State,
    recorder: &Recorder,
    not_settled: Option<&String>,
) -> Provisioned {
    // The versions first: what the watches had delivered when the state was read.
    let recorded = recorder.recorded();
    let workload = match kubeconfig_of(&state.secret) {
        Some((text, _)) => Some(Workload {
            namespaces: reach(&text).await,
            nodes: nodes(&text).await,
        }),
        None => None,
    };
    Provisioned {
        names: names.clone(),
        state,
        recorded,
        not_settled: not_settled.cloned(),
        failure_domains: ctx.profile.failure_domains,
        workload,
    }
}

/// A client for the workload cluster from a kubeconfig's text.
pub(super) async fn workload_client(text: &str) -> Result<kube::Client> {
    let raw = kube::config::Kubeconfig::from_yaml(text)?;
    let mut config =
        kube::Config::from_custom_kubeconfig(raw, &kube::config::KubeConfigOptions::default())
            .await?;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(20));
    Ok(kube::Client::try_from(config)?)
}

/// How many namespaces (at most 50) a client from the kubeconfig lists, or why it cannot.
pub(super) async fn reach(text: &str) -> std::result::Result<usize, String> {
    let client = workload_client(text).await.map_err(|e| format!("{e:#}"))?;
    let api: Api<Namespace> = Api::all(client);
    api.list(&ListParams::default().limit(50))
        .await
        .map(|l| l.items.len())
        .map_err(|e| e.to_string())
}

/// The workload's Nodes, or why they cannot be listed.
async fn nodes(text: &str) -> std::result::Result<Vec<WorkloadNode>, String> {
    let client = workload_client(text).await.map_err(|e| format!("{e:#}"))?;
    let nodes = Api::<Node>::all(client)
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?;
    Ok(nodes
        .items
        .into_iter()
        .map(|n| WorkloadNode {
            name: n.metadata.name,
            provider_id: n.spec.and_then(|s| s.provider_id),
        })
        .collect())
}
