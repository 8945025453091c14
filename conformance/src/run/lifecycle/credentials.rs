//! Sampling the kubeconfig Secret's credential over twice its lifetime (C33): at each sample,
//! the Secret's kubeconfig and whether a client built from it got in.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::provisioned::reach;
use super::{CLUSTER, NS};
use crate::objects;
use crate::run::Ctx;
use crate::run::judge::kubeconfig::{CredentialSamples, Sample};
use crate::run::judge::kubeconfig_of;

/// Samples every sixth of the profile's token lifetime (at least every 2 s) for twice the
/// lifetime; nothing when the profile names no lifetime.
pub(super) async fn sample(ctx: &Ctx, client: &kube::Client) -> CredentialSamples {
    let Some(lifetime) = ctx.profile.token_lifetime else {
        return CredentialSamples {
            lifetime: None,
            samples: Vec::new(),
        };
    };
    let every = (lifetime / 6).max(Duration::from_secs(2));
    let end = Instant::now() + lifetime * 2 + every;
    let mut samples = Vec::new();
    while Instant::now() < end {
        let secret = objects::get(
            &ctx.kinds,
            client,
            "Secret",
            NS,
            &format!("{CLUSTER}-kubeconfig"),
        )
        .await
        .ok()
        .flatten()
        .unwrap_or(Value::Null);
        samples.push(match kubeconfig_of(&secret) {
            None => Sample::NoKubeconfig,
            Some((text, _)) => {
                let reached = reach(&text).await.map(|_| ());
                Sample::Tried {
                    credential: text,
                    reached,
                }
            }
        });
        tokio::time::sleep(every).await;
    }
    CredentialSamples {
        lifetime: Some(lifetime),
        samples,
    }
}
