//! EKS's side of the ControlPlane role: the EKSControlPlane reconciler ([`reconciler`]), the kind
//! as the kernel reads it, and [`EksControlPlane`], whose steps delegate to the files below.
//! Everything else (locating the infrastructure, observe order, plan, status, conditions,
//! kubeconfig Secrets, `spec.controlPlaneEndpoint`, requeue, cleanup policy) is the generic
//! reconciler's ([`provider_runtime::control_plane`]).
//!
//! Long EKS operations are started, remembered in `status.operation` and polled on the next pass;
//! nothing waits on the cloud.
//!
//! - [`desired`]: the spec as EKS will be asked for it (pure);
//! - [`observe`]: reading the cluster, a tracked update, and the add-ons and access entries;
//! - [`diff`]: the first difference EKS has its own call for (pure);
//! - [`act`]: the calls that change something;
//! - [`kubeconfig`]: the EKS tokens and the `aws eks get-token` exec plugin.
//!
//! Every EKS call goes through `counted`, which admits it, counts it by outcome and classifies
//! its error.

pub mod act;
pub mod desired;
pub mod diff;
pub mod kubeconfig;
pub mod observe;

use std::future::Future;
use std::sync::Arc;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::http::Response;
use contract::idempotency::EKS_REQUEST_TOKEN;
use provider_runtime::control_plane::{Connected, UserExec};
use provider_runtime::{CloudCalls, ProviderError};

use crate::client::{CloudError, classify};
use crate::scope::{self, Shared};

pub use desired::DesiredCluster;
pub use diff::ClusterChange;
pub use kubeconfig::{Tokens, get_token_plugin};
pub use observe::{ClusterExtras, ObservedCluster};

/// The service name cloud calls are counted under.
const SERVICE: &str = "eks";

/// Pages read at most from a paginated EKS list (a guard against a looping `nextToken`).
const MAX_PAGES: usize = 100;

provider_runtime::control_plane! { EKS, tokens = EKS_REQUEST_TOKEN, create = act::CREATE_CALL }

/// One pass's EKS client, and which extras its look reads.
pub struct Clients {
    /// Amazon EKS, as the identity, in the region.
    eks: aws_sdk_eks::Client,
    /// Where every call is counted and admitted.
    calls: CloudCalls,
    /// The add-ons and access entries the spec names.
    extras: observe::ExtrasToRead,
}

/// Clients and names for one pass, for the cluster of `reach.object` in `reach.infra`.
async fn connect(shared: &Arc<Shared>, reach: Reach<'_>) -> Result<At, ProviderError> {
    let (cp, infra) = (reach.object, reach.infra);
    let aws = scope::clients_for(&shared.clients, reach.client, reach.namespace, &infra).await?;
    let name = reach.name.to_string();
    Ok(Connected {
        tokens: Tokens {
            credentials: aws.credentials,
            region: aws.region.clone(),
            eks_name: name.clone(),
            lifetime: shared.pacing.token_lifetime,
        },
        user_exec: UserExec::new(get_token_plugin(&name, &aws.region)),
        clients: Clients {
            eks: aws.eks,
            calls: reach.calls.clone(),
            extras: observe::ExtrasToRead::of(cp),
        },
        name,
        tags: infra.additional_tags,
    })
}

/// The EKS operations of this role, on one cluster: the reads are [`observe`]'s, the changes
/// [`act`]'s.
struct EksApi<'a> {
    client: &'a aws_sdk_eks::Client,
    calls: &'a CloudCalls,
    name: &'a str,
}

impl<'a> EksApi<'a> {
    fn of(connected: &'a At) -> Self {
        Self {
            client: &connected.clients.eks,
            calls: &connected.clients.calls,
            name: &connected.name,
        }
    }
}

/// Awaits an SDK call of `operation` on `cluster`, counts it by outcome, and classifies its
/// error. A `Retry-After` holds the request it answered, method and path: EKS's paths name the
/// operation's cluster (calls on one cluster's add-ons or access entries share its hold), except
/// CreateCluster's, `POST /clusters`, which every create shares.
async fn counted<T, E>(
    calls: &CloudCalls,
    operation: &'static str,
    cluster: &str,
    call: impl Future<Output = Result<T, SdkError<E, Response>>>,
) -> Result<T, CloudError>
where
    E: ProvideErrorMetadata + std::error::Error,
{
    let target = if operation == act::CREATE_CALL {
        operation.to_owned()
    } else {
        format!("{operation} {cluster}")
    };
    let sent = calls.admit(SERVICE, target)?;
    match call.await {
        Ok(out) => {
            sent.answered(operation, Ok(()));
            Ok(out)
        }
        Err(e) => {
            let e = classify(e);
            sent.answered(operation, Err(&e));
            Err(e)
        }
    }
}

/// `Ok(None)` for a not-found.
fn absent_if_not_found<T>(result: Result<T, CloudError>) -> Result<Option<T>, CloudError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(CloudError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}
