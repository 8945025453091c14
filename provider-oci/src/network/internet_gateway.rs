//! The internet gateway service: the public route table's way to the internet.

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::json;

use super::{Built, Kind, Scope, each_ready};
use crate::client::answers::InternetGateway;

pub(super) const INTERNET_GATEWAY: Kind<InternetGateway> = Kind {
    collection: "internetGateways",
    noun: "internet gateway",
    list: "ListInternetGateways",
    create: "CreateInternetGateway",
    delete: "DeleteInternetGateway",
    update: "UpdateInternetGateway",
    in_vcn: true,
    answer: PhantomData,
};

/// One build turn: creates the gateway, enabled, in the VCN and waits until it is available.
pub(super) async fn reconcile(s: &Scope<'_>, built: &mut Built) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    built.internet_gateway = each_ready!(
        s.ensure(
            INTERNET_GATEWAY,
            "igw",
            vcn,
            || json!({ "vcnId": vcn, "isEnabled": true })
        )
        .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the gateway if it is ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[(INTERNET_GATEWAY, "igw")]).await
}
