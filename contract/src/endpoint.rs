//! The control plane's endpoint: which of the cloud's endpoints to publish, and the user-set rule.
//!
//! The ControlPlane owns the endpoint (flexible-endpoints scenario 2). Every pass the provider
//! reads the endpoints the cloud exposes (`status.endpoints`), picks the preferred one
//! ([`preferred`]), and publishes it in `spec.controlPlaneEndpoint` — unless the user set that
//! field themselves (a DNS name or load balancer in front of a private endpoint), which is then
//! kept as it is and used as the kubeconfig's server.
//!
//! "Set by the user" cannot be read from the value alone: the provider writes it too. The
//! field's owner says it: a value the provider's own server-side apply holds
//! ([`endpoint_applied_by`]) is the provider's, whatever it is. Otherwise a value counts as the
//! user's when it is valid and is neither what the provider publishes now nor what it published
//! before (the preferred endpoint of the previous status). So a cloud that moves its endpoint is
//! followed, a cloud cluster created again after it was deleted behind the provider's back (its
//! status had no endpoint in between) is followed, and a user's value is never overwritten.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};

use crate::api::{ApiEndpoint, Endpoint, EndpointAccess};

/// The entries of `managed_fields` that hold `spec.controlPlaneEndpoint`, each cut down to its
/// manager, operation and that one field: all a cache must keep for [`endpoint_applied_by`]
/// (the rest of `managedFields` is often larger than the object).
pub fn endpoint_owners(managed_fields: Vec<ManagedFieldsEntry>) -> Vec<ManagedFieldsEntry> {
    managed_fields
        .into_iter()
        .filter(|e| {
            e.fields_v1
                .as_ref()
                .is_some_and(|f| f.0["f:spec"].get("f:controlPlaneEndpoint").is_some())
        })
        .map(|e| ManagedFieldsEntry {
            manager: e.manager,
            operation: e.operation,
            fields_type: e.fields_type,
            fields_v1: Some(FieldsV1(
                serde_json::json!({"f:spec": {"f:controlPlaneEndpoint": {}}}),
            )),
            ..ManagedFieldsEntry::default()
        })
        .collect()
}

/// Whether field manager `manager`'s server-side apply holds `spec.controlPlaneEndpoint`
/// (read from the object's `metadata.managedFields`).
pub fn endpoint_applied_by(managed_fields: &[ManagedFieldsEntry], manager: &str) -> bool {
    managed_fields
        .iter()
        .filter(|e| {
            e.manager.as_deref() == Some(manager) && e.operation.as_deref() == Some("Apply")
        })
        .filter_map(|e| e.fields_v1.as_ref())
        .any(|f| f.0["f:spec"].get("f:controlPlaneEndpoint").is_some())
}

/// Host and port of an API server URL (`https://host[:port][/path]`, or `host[:port]`), with
/// the port defaulting to 443 and IPv6 hosts unbracketed. `None` when there is no host or the
/// port is not 1–65535.
pub fn parse_url(url: &str) -> Option<ApiEndpoint> {
    let uri: http::Uri = url.trim().parse().ok()?;
    let authority = uri.authority()?;
    let host = authority.host();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    // `Authority::port` is `None` both when no port is written and when it is out of range,
    // so read what follows the host.
    let written = authority
        .as_str()
        .rsplit_once(authority.host())
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let port = match written.strip_prefix(':') {
        None if written.is_empty() => 443,
        None => return None,
        Some(p) => p.parse::<u16>().ok()?,
    };
    (port != 0).then(|| ApiEndpoint {
        host: host.to_string(),
        port: i32::from(port),
    })
}

/// The endpoint clients should use: the one `access` prefers if the cloud exposes it, else the
/// first the cloud lists.
pub fn preferred(endpoints: &[Endpoint], access: &EndpointAccess) -> Option<ApiEndpoint> {
    let name = access.effective_preferred().endpoint_name();
    endpoints
        .iter()
        .find(|e| e.name == name)
        .or_else(|| endpoints.first())
        .map(Endpoint::api_endpoint)
}

/// The endpoint decision of one pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointChoice {
    /// The preferred endpoint the cloud exposes now.
    pub published: Option<ApiEndpoint>,
    /// The user's own `spec.controlPlaneEndpoint`, when they set one.
    pub user_set: Option<ApiEndpoint>,
}

impl EndpointChoice {
    /// Decides from the spec's `controlPlaneEndpoint` (`ours`: the provider's own apply holds
    /// it), the endpoints of the previous status, the endpoints the cloud exposes now, and the
    /// endpoint access of the spec.
    pub fn new(
        spec: Option<&ApiEndpoint>,
        ours: bool,
        previous: &[Endpoint],
        observed: &[Endpoint],
        access: &EndpointAccess,
    ) -> Self {
        let published = preferred(observed, access);
        let before = preferred(previous, access);
        let user_set = spec
            .filter(|_| !ours)
            .filter(|e| e.is_valid())
            .filter(|e| Some(*e) != published.as_ref() && Some(*e) != before.as_ref())
            .cloned();
        Self {
            published,
            user_set,
        }
    }

    /// The server kubeconfigs point at: the user's endpoint, else the published one.
    pub fn server(&self) -> Option<&ApiEndpoint> {
        self.user_set.as_ref().or(self.published.as_ref())
    }

    /// What to write into `spec.controlPlaneEndpoint`: the published endpoint, unless the user
    /// set their own.
    pub fn to_publish(&self) -> Option<&ApiEndpoint> {
        match self.user_set {
            Some(_) => None,
            None => self.published.as_ref(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::api::{EndpointName, EndpointPreference};

    fn ep(host: &str, port: i32) -> ApiEndpoint {
        ApiEndpoint {
            host: host.into(),
            port,
        }
    }

    fn listed(name: EndpointName, host: &str) -> Endpoint {
        Endpoint {
            name,
            host: host.into(),
            port: 443,
        }
    }

    #[test]
    fn urls_give_host_and_port_with_443_by_default() {
        let cases = [
            (
                "https://x.eks.amazonaws.com",
                Some(ep("x.eks.amazonaws.com", 443)),
            ),
            ("https://127.0.0.1:38443", Some(ep("127.0.0.1", 38443))),
            ("https://x.example/", Some(ep("x.example", 443))),
            ("https://[::1]:6443/path", Some(ep("::1", 6443))),
            ("https://[fd00::1]", Some(ep("fd00::1", 443))),
            ("  https://h.example:6443  ", Some(ep("h.example", 6443))),
            ("h.example:8443", Some(ep("h.example", 8443))),
            ("https://", None),
            ("https://h:notaport", None),
            ("https://h:0", None),
            ("https://h:70000", None),
            ("", None),
        ];
        for (url, want) in cases {
            assert_eq!(parse_url(url), want, "{url:?}");
        }
    }

    #[test]
    fn the_preferred_endpoint_is_taken_when_listed_else_the_first() {
        let both = [
            listed(EndpointName::Public, "pub"),
            listed(EndpointName::Private, "priv"),
        ];
        let private_first = EndpointAccess {
            preferred: Some(EndpointPreference::Private),
            ..EndpointAccess::default()
        };
        assert_eq!(
            preferred(&both, &EndpointAccess::default()).unwrap().host,
            "pub"
        );
        assert_eq!(preferred(&both, &private_first).unwrap().host, "priv");
        assert_eq!(
            preferred(&both[..1], &private_first).unwrap().host,
            "pub",
            "only public listed"
        );
        assert_eq!(preferred(&[], &EndpointAccess::default()), None);
    }

    #[test]
    fn only_an_endpoint_the_provider_never_published_counts_as_user_set() {
        let access = EndpointAccess::default();
        let now = [listed(EndpointName::Public, "mine")];
        let before = [listed(EndpointName::Public, "old")];
        let choice = |spec: Option<ApiEndpoint>, previous: &[Endpoint], observed: &[Endpoint]| {
            EndpointChoice::new(spec.as_ref(), false, previous, observed, &access)
        };
        assert_eq!(choice(None, &[], &now).user_set, None);
        assert_eq!(choice(Some(ep("mine", 443)), &[], &now).user_set, None);
        let theirs = choice(Some(ep("api.example.com", 443)), &[], &now);
        assert_eq!(theirs.user_set, Some(ep("api.example.com", 443)));
        assert_eq!(theirs.server(), Some(&ep("api.example.com", 443)));
        assert_eq!(theirs.to_publish(), None, "the user's value is kept");
        assert_eq!(
            choice(Some(ep("api.example.com", 443)), &[], &[]).user_set,
            Some(ep("api.example.com", 443)),
            "set before the cluster exists"
        );
        let moved = choice(Some(ep("old", 443)), &before, &now);
        assert_eq!(moved.user_set, None, "ours from before: replaced");
        assert_eq!(moved.to_publish(), Some(&ep("mine", 443)));
        assert_eq!(choice(Some(ep("", 0)), &before, &now).user_set, None);
    }

    #[test]
    fn a_value_the_provider_applied_is_followed_after_a_gap_without_endpoints() {
        // The cloud cluster was deleted behind the provider's back and created again: the
        // status in between listed no endpoint, so only the field's owner tells the old value
        // is the provider's.
        let access = EndpointAccess::default();
        let now = [listed(EndpointName::Public, "new")];
        let old = ep("old", 443);
        let guessed = EndpointChoice::new(Some(&old), false, &[], &now, &access);
        assert_eq!(
            guessed.user_set,
            Some(old.clone()),
            "by value alone: the user's"
        );
        let owned = EndpointChoice::new(Some(&old), true, &[], &now, &access);
        assert_eq!(owned.user_set, None);
        assert_eq!(owned.to_publish(), Some(&ep("new", 443)));
        assert_eq!(owned.server(), Some(&ep("new", 443)));
        let gone = EndpointChoice::new(Some(&old), true, &[], &[], &access);
        assert_eq!(
            gone.server(),
            None,
            "no kubeconfig for a cluster that is not there"
        );
    }

    #[test]
    fn the_endpoint_s_owner_is_read_from_managed_fields() {
        let entry =
            |manager: &str, operation: &str, fields: serde_json::Value| ManagedFieldsEntry {
                manager: Some(manager.into()),
                operation: Some(operation.into()),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(FieldsV1(fields)),
                ..ManagedFieldsEntry::default()
            };
        let endpoint =
            serde_json::json!({"f:spec": {"f:controlPlaneEndpoint": {"f:host": {}, "f:port": {}}}});
        let version = serde_json::json!({"f:spec": {"f:version": {}}});
        assert!(endpoint_applied_by(
            &[entry("eks", "Apply", endpoint.clone())],
            "eks"
        ));
        assert!(!endpoint_applied_by(
            &[entry("kubectl-edit", "Update", endpoint.clone())],
            "eks"
        ));
        assert!(!endpoint_applied_by(
            &[entry("eks", "Update", endpoint.clone())],
            "eks"
        ));
        assert!(!endpoint_applied_by(
            &[
                entry("eks", "Apply", version.clone()),
                entry("kubectl", "Apply", endpoint.clone())
            ],
            "eks"
        ));
        assert!(!endpoint_applied_by(&[], "eks"));
        let kept = endpoint_owners(vec![
            entry("eks", "Apply", endpoint.clone()),
            entry("capi", "Update", version.clone()),
        ]);
        assert_eq!(kept.len(), 1, "only who holds the endpoint");
        assert!(endpoint_applied_by(&kept, "eks"), "cut down, still read");
    }
}
