//! The security lists service: the endpoint's (the Kubernetes API from anywhere, the nodes'
//! traffic to the control plane from the VCN) and the nodes' (anything from within the VCN);
//! both let everything out.

use std::marker::PhantomData;

use provider_runtime::ProviderError;
use provider_runtime::walker::{Progress, Removal};
use serde_json::{Value, json};

use super::{Built, Kind, Scope, each_ready};
use crate::client::answers::SecurityList;
use crate::reconcile::cluster::CreatedNetwork;

pub(super) const SECURITY_LIST: Kind<SecurityList> = Kind {
    collection: "securityLists",
    noun: "security list",
    list: "ListSecurityLists",
    create: "CreateSecurityList",
    delete: "DeleteSecurityList",
    update: "UpdateSecurityList",
    in_vcn: true,
    answer: PhantomData,
};

/// The `tcpOptions` of a rule for one destination port.
fn all_tcp(port: u16) -> Value {
    json!({ "destinationPortRange": { "min": port, "max": port } })
}

/// One build turn: creates the endpoint's then the nodes' security list (their sources from
/// `plan`'s VCN block) and waits until each is available.
pub(super) async fn reconcile(
    s: &Scope<'_>,
    plan: &CreatedNetwork,
    built: &mut Built,
) -> Result<Progress, ProviderError> {
    let vcn = built.vcn.clone();
    let vcn = vcn.as_deref();
    built.endpoint_list = each_ready!(
        s.ensure(SECURITY_LIST, "endpoint-security", vcn, || json!({
            "vcnId": vcn,
            "ingressSecurityRules": [
                { "protocol": "6", "source": "0.0.0.0/0", "isStateless": false, "tcpOptions": all_tcp(6443), "description": "Kubernetes API" },
                { "protocol": "6", "source": plan.vcn, "isStateless": false, "tcpOptions": all_tcp(12250), "description": "nodes to the control plane" },
            ],
            "egressSecurityRules": [{ "protocol": "all", "destination": "0.0.0.0/0", "isStateless": false }],
        }))
        .await?
    );
    built.nodes_list = each_ready!(
        s.ensure(SECURITY_LIST, "nodes-security", vcn, || json!({
            "vcnId": vcn,
            "ingressSecurityRules": [{ "protocol": "all", "source": plan.vcn, "isStateless": false, "description": "within the VCN" }],
            "egressSecurityRules": [{ "protocol": "all", "destination": "0.0.0.0/0", "isStateless": false }],
        }))
        .await?
    );
    Ok(Progress::Ready)
}

/// One tear-down turn: deletes the nodes', then the endpoint's security list, if ours.
pub(super) async fn delete(s: &Scope<'_>) -> Result<Removal, ProviderError> {
    s.remove_in_vcn(&[
        (SECURITY_LIST, "nodes-security"),
        (SECURITY_LIST, "endpoint-security"),
    ])
    .await
}
