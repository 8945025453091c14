//! The cluster's kubeconfig Secret: there before the control plane initialized (C27), typed and
//! labelled (C28), pointing at the Cluster's endpoint (C29), getting a client in (C30), core's
//! probe through it (C31), owned by the control plane (C32, its ownership half), no static
//! credential in a user kubeconfig (C34); and its credential sampled over time (C33).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Provisioned, Verdicts, endpoint, kubeconfig_of, label};
use crate::checks::{CheckId, Outcome, verdict};
use crate::objects::{self, CLUSTER_NAME_LABEL, condition, owner, rv};
use crate::run::lifecycle::{CLUSTER, NS};

/// C27, C28–C31, C32 (only when the Secret's owner is wrong), C34.
pub(crate) fn kubeconfig(seen: &Provisioned) -> Verdicts {
    let mut out = vec![(CheckId::C27, in_time(seen))];
    out.extend(contents(seen));
    let secret = &seen.state.secret;
    let (cp_kind, cp_name) = &seen.names.control_plane;
    let secret_owner = owner(secret, cp_kind);
    if secret_owner.and_then(|o| o["name"].as_str()) != Some(cp_name.as_str())
        || secret_owner.map(|o| o["controller"].clone()) != Some(json!(true))
    {
        out.push((
            CheckId::C32,
            Outcome::Fail(format!(
                "the Secret's owners: {}",
                secret["metadata"]["ownerReferences"]
            )),
        ));
    }
    out.push((CheckId::C34, user_kubeconfigs(seen)));
    out
}

fn secret_name() -> String {
    format!("{CLUSTER}-kubeconfig")
}

/// C27: the Secret's first version comes before the first initialized control plane.
fn in_time(seen: &Provisioned) -> Outcome {
    let secret_name = secret_name();
    let first_secret = seen
        .recorded
        .history("Secret", &secret_name)
        .iter()
        .find(|s| !s.deleted)
        .map(|s| rv(&s.obj));
    let (cp_kind, cp_name) = &seen.names.control_plane;
    let first_init = seen
        .recorded
        .history(cp_kind, cp_name)
        .iter()
        .find(|s| s.obj["status"]["initialization"]["controlPlaneInitialized"] == true)
        .map(|s| rv(&s.obj));
    match (first_secret, first_init) {
        (Some(s), Some(i)) => verdict(
            s < i,
            format!(
                "Secret created at resourceVersion {s}; controlPlaneInitialized first seen at {i}"
            ),
        ),
        (None, Some(i)) => Outcome::Fail(format!(
            "controlPlaneInitialized at {i}, no {secret_name} ever"
        )),
        (_, None) => Outcome::Fail(format!(
            "the control plane never initialized{}",
            seen.note()
        )),
    }
}

/// C28–C31: what the Secret holds and what it gets.
fn contents(seen: &Provisioned) -> Verdicts {
    let secret = &seen.state.secret;
    let cluster = &seen.state.cluster;
    if secret.is_null() {
        let why = format!("no Secret {NS}/{}{}", secret_name(), seen.note());
        return [CheckId::C28, CheckId::C29, CheckId::C30, CheckId::C31]
            .into_iter()
            .map(|id| (id, Outcome::Fail(why.clone())))
            .collect();
    }
    let type_ = secret["type"].as_str().unwrap_or_default().to_string();
    let l = label(secret, CLUSTER_NAME_LABEL);
    let mut out = vec![(
        CheckId::C28,
        verdict(
            type_ == "cluster.x-k8s.io/secret" && l.as_deref() == Some(CLUSTER),
            format!("type {type_:?}, cluster-name label {l:?}"),
        ),
    )];
    match kubeconfig_of(secret) {
        None => {
            out.push((
                CheckId::C29,
                Outcome::Fail("data.value is not a kubeconfig with a current context".into()),
            ));
            out.push((
                CheckId::C30,
                Outcome::Fail("no kubeconfig to build a client from".into()),
            ));
        }
        Some((_, server)) => {
            let cluster_ep = endpoint(cluster);
            let (h, p) = host_port(&server);
            out.push((
                CheckId::C29,
                verdict(
                    cluster_ep.as_ref() == Some(&(h, p)),
                    format!("server {server}; Cluster endpoint {cluster_ep:?}"),
                ),
            ));
            out.push((
                CheckId::C30,
                match seen.workload.as_ref().map(|w| &w.namespaces) {
                    Some(Ok(n)) => Outcome::Pass(format!("listed {n} namespaces on {server}")),
                    Some(Err(e)) => Outcome::Fail(format!("{server}: {e}")),
                    None => Outcome::Fail("no kubeconfig to build a client from".into()),
                },
            ));
        }
    }
    let probe = condition(cluster, "RemoteConnectionProbe")
        .cloned()
        .unwrap_or(Value::Null);
    out.push((
        CheckId::C31,
        verdict(
            probe["status"] == "True",
            format!(
                "RemoteConnectionProbe {} {}",
                probe["status"], probe["reason"]
            ),
        ),
    ));
    out
}

/// (host, port) of a server URL; port 443 when it names none.
fn host_port(server: &str) -> (String, u64) {
    let rest = server
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or_default();
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.trim_matches(['[', ']']).to_string(),
            p.parse().unwrap_or(443),
        ),
        _ => (authority.to_string(), 443),
    }
}

/// C34: any other kubeconfig-bearing Secret of this cluster holds no static credential.
fn user_kubeconfigs(seen: &Provisioned) -> Outcome {
    let secret_name = secret_name();
    let mut user_configs = 0;
    let mut problems = Vec::new();
    let mut seen_names = BTreeSet::new();
    for s in seen.recorded.all_of("Secret") {
        if s.name == secret_name || s.deleted || !seen_names.insert(s.name.clone()) {
            continue;
        }
        let Some((text, _)) = kubeconfig_of(&s.obj) else {
            continue;
        };
        user_configs += 1;
        let config: Value = serde_saphyr::from_str(&text).unwrap_or(Value::Null);
        for why in objects::static_credentials(&config) {
            problems.push(format!("{}: {why}", s.name));
        }
    }
    if user_configs == 0 {
        return Outcome::Skip("no user kubeconfig Secret is shipped".into());
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!("{user_configs} user kubeconfig(s): exec or provider plugins only")
        } else {
            problems.join("; ")
        },
    )
}

/// The kubeconfig Secret sampled over twice its credential's lifetime.
#[derive(Debug, Clone)]
pub(crate) struct CredentialSamples {
    /// The profile's token lifetime; `None` (nothing sampled) when credentials do not expire.
    pub(crate) lifetime: Option<Duration>,
    /// Every sample, in order.
    pub(crate) samples: Vec<Sample>,
}

/// One sample of the kubeconfig Secret.
#[derive(Debug, Clone)]
pub(crate) enum Sample {
    /// The Secret held no kubeconfig.
    NoKubeconfig,
    /// A client was built from it.
    Tried {
        /// The kubeconfig's text (its credential with it).
        credential: String,
        /// Whether the client got in, or why not.
        reached: Result<(), String>,
    },
}

/// C33: every sample got in.
pub(crate) fn credentials(seen: &CredentialSamples) -> Verdicts {
    let Some(lifetime) = seen.lifetime else {
        return vec![(
            CheckId::C33,
            Outcome::Skip("the profile names no tokenLifetime (credentials do not expire)".into()),
        )];
    };
    let mut credentials = BTreeSet::new();
    let mut failures = Vec::new();
    for (i, sample) in seen.samples.iter().enumerate() {
        match sample {
            Sample::NoKubeconfig => failures.push(format!("sample {i}: no kubeconfig")),
            Sample::Tried {
                credential,
                reached,
            } => {
                credentials.insert(credential);
                if let Err(e) = reached {
                    failures.push(format!("sample {i}: {e}"));
                }
            }
        }
    }
    let outcome = verdict(
        failures.is_empty(),
        if failures.is_empty() {
            format!(
                "{} samples over {:?} (lifetime {lifetime:?}): every one got in; {} distinct credentials",
                seen.samples.len(),
                lifetime * 2,
                credentials.len()
            )
        } else {
            failures.into_iter().take(3).collect::<Vec<_>>().join("; ")
        },
    );
    vec![(CheckId::C33, outcome)]
}
