//! The VCN service: the virtual cloud network over the spec's block, which every other
//! resource of the network lives in.

use std::marker::PhantomData;

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Found, Kind, Scope, each_ready};
use crate::client::Service as Api;
use crate::client::answers::{NetworkResource, Vcn};
use crate::reconcile::cluster::CreatedNetwork;

pub(super) const VCN: Kind<Vcn> = Kind {
    collection: "vcns",
    noun: "VCN",
    list: "ListVcns",
    create: "CreateVcn",
    delete: "DeleteVcn",
    update: "UpdateVcn",
    in_vcn: false,
    answer: PhantomData,
};

/// One build turn: creates the VCN over `plan`'s block and waits until it is available.
pub(super) async fn reconcile(
    s: &Scope<'_>,
    plan: &CreatedNetwork,
    built: &mut Built,
) -> Result<Progress, ProviderError> {
    built.vcn = each_ready!(
        s.ensure(VCN, "vcn", None, || json!({ "cidrBlocks": [plan.vcn] }))
            .await?
    );
    Ok(Progress::Ready)
}

/// Our VCN, for tear-down: the one recorded in the status, else the one of our name tagged as
/// ours; `None` when there is none (a same-named VCN of someone else's holds nothing of ours).
pub(super) async fn find_ours(s: &Scope<'_>) -> Result<Option<String>, ProviderError> {
    Ok(match &s.net.recorded_vcn {
        Some(id) => Some(id.clone()),
        None => match s.find(VCN, &s.name("vcn"), None).await {
            Ok(Found::Ours(v)) => Some(v.id),
            Ok(Found::Going | Found::None) => None,
            // A same-named VCN of someone else's holds nothing of ours.
            Err(ProviderError::Terminal {
                reason: Reason::NameConflict,
                ..
            }) => None,
            Err(e) => return Err(e),
        },
    })
}

/// One tear-down turn: deletes the recorded VCN, or else ours found by name.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    if let Some(removal) = remove_recorded(s).await? {
        return Ok(removal);
    }
    s.remove(VCN, "vcn", s.vcn.as_deref()).await
}

/// Deletes the VCN recorded in the status (read by its OCID, so OCI's TERMINATED answer
/// confirms it is gone); `None` when none is recorded.
async fn remove_recorded(s: &Scope<'_>) -> Result<Option<Removal>, ProviderError> {
    let n = s.net;
    let Some(id) = &n.recorded_vcn else {
        return Ok(None);
    };
    let path = format!("/vcns/{id}");
    let Some((v, _)) = n
        .oci
        .get::<Vcn>(&n.calls, "GetVcn", Api::Core, &path)
        .await?
    else {
        return Ok(Some(Removal::Gone));
    };
    let name = v.display_name.as_str();
    Ok(Some(match v.lifecycle_state.as_str() {
        "TERMINATED" => Removal::Gone,
        "TERMINATING" => Removal::waiting(format!("the VCN {name} is being deleted")),
        _ if !s.owner.owns(&v.tags()) => Removal::Gone,
        _ => s.delete(VCN, name, id).await?,
    }))
}
