//! The NAT gateway service: the private route table's way to the internet.

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Kind, Scope, each_ready};
use crate::client::answers::NatGateway;

pub(super) const NAT_GATEWAY: Kind<NatGateway> = Kind {
    collection: "natGateways",
    noun: "NAT gateway",
    list: "ListNatGateways",
    create: "CreateNatGateway",
    delete: "DeleteNatGateway",
    update: "UpdateNatGateway",
    in_vcn: true,
    answer: PhantomData,
};

/// One build turn: creates the gateway in the VCN and waits until it is available.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    built.nat_gateway = each_ready!(
        s.ensure(NAT_GATEWAY, "nat", vcn, || json!({ "vcnId": vcn }))
            .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the gateway if it is ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[(NAT_GATEWAY, "nat")]).await
}
