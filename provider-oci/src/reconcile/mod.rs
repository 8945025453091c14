//! The three reconcilers, one per kind. Each observes OKE, plans (pure), acts (at most one call
//! that changes something), and reports; the shared runtime does the rest.

pub mod cluster;
pub mod control_plane;
pub mod machine_pool;

use std::collections::BTreeMap;

use contract::ownership::Owner;
use contract::version::KubeVersion;
use provider_runtime::{CloudCalls, CloudError, ProviderError};
use reqwest::Method;

use crate::client::answers::{EngineResource, EngineSummary};
use crate::client::{Call, Oci, Service};

/// The version OKE offers for `want` among `offered` (the `kubernetesVersions` GetClusterOptions
/// or GetNodePoolOptions answer; pure): the exact patch when `want` names one OKE offers, else
/// the newest patch OKE offers of `want`'s minor.
///
/// # Errors
/// The versions OKE does offer, joined, when none fits.
pub fn offered_version(offered: &[String], want: &KubeVersion) -> Result<String, String> {
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let parsed: Vec<(KubeVersion, &str)> = offered
        .iter()
        .filter_map(|v| KubeVersion::parse(v).ok().map(|k| (k, *v)))
        .collect();
    let exact = want
        .patch
        .and_then(|_| parsed.iter().find(|(k, _)| k == want));
    exact
        .or_else(|| {
            parsed
                .iter()
                .filter(|(k, _)| k.same_minor(want))
                .max_by_key(|(k, _)| *k)
        })
        .map(|(_, v)| (*v).to_string())
        .ok_or_else(|| offered.join(", "))
}

/// A Container Engine resource as the last look saw it: what a change of it in the same pass
/// needs (its OCID, its ETag for `if-match`, its tags to merge into).
#[derive(Debug, Clone)]
pub struct Seen {
    /// The OCID.
    pub id: String,
    /// The ETag.
    pub etag: Option<String>,
    /// The freeform tags.
    pub tags: BTreeMap<String, String>,
}

impl Seen {
    /// What a change of `resource`, read with `etag`, needs.
    pub fn of(resource: &impl EngineResource, etag: Option<String>) -> Self {
        Self {
            id: resource.id().to_string(),
            etag,
            tags: resource.tags(),
        }
    }
}

/// A Container Engine resource OCI does not keep unique by name: a cluster or a node pool.
pub struct Named<'a> {
    /// Its read (`GetCluster`).
    pub get: &'static str,
    /// Its list (`ListClusters`).
    pub list: &'static str,
    /// Its collection (`/clusters`).
    pub collection: &'static str,
    /// The list's filter, `name` included (`compartmentId=…&name=…`).
    pub filter: String,
    /// Its name.
    pub name: &'a str,
    /// The OCID recorded in the status.
    pub recorded: Option<&'a str>,
}

/// The resource (read whole as `T`; its list's items are `S`): by its recorded OCID while that
/// is not `DELETED` (the OCID is its identity, whatever it is called now), else the live one of
/// its name (ours first; the kernel decides about another's), with what the pass's changes need.
///
/// # Errors
/// The classified failure of a read; a transient one naming the field of a malformed answer.
pub async fn find_named<S: EngineSummary, T: EngineResource>(
    oci: &Oci,
    calls: &CloudCalls,
    named: &Named<'_>,
    owner: &Owner,
) -> Result<Option<(T, Seen)>, ProviderError> {
    let read = |id: &str| {
        let path = format!("{}/{id}", named.collection);
        async move {
            oci.get::<T>(calls, named.get, Service::ContainerEngine, &path)
                .await
        }
    };
    if let Some(id) = named.recorded
        && let Some((found, etag)) = read(id).await?
        && found.lifecycle_state() != "DELETED"
    {
        let seen = Seen::of(&found, etag);
        return Ok(Some((found, seen)));
    }
    let path = format!("{}?{}", named.collection, named.filter);
    let listed: Vec<S> = oci
        .list_of(calls, named.list, Service::ContainerEngine, &path)
        .await?;
    let mut live: Vec<&S> = listed
        .iter()
        .filter(|r| r.name() == named.name && r.lifecycle_state() != "DELETED")
        .collect();
    live.sort_by_key(|r| !owner.owns(&r.tags()));
    let Some(id) = live.first().map(|r| r.id()) else {
        return Ok(None);
    };
    Ok(read(id).await?.map(|(found, etag)| {
        let seen = Seen::of(&found, etag);
        (found, seen)
    }))
}

/// Asks OKE to delete the Container Engine resource at `path` (`/clusters/<id>`): the work
/// request it answered with, or the classified failure (each role reads it by the kernel's rule).
///
/// # Errors
/// The classified failure.
pub async fn request_delete(
    oci: &Oci,
    calls: &CloudCalls,
    operation: &'static str,
    path: &str,
) -> Result<Option<String>, CloudError> {
    let call = Call::send(
        operation,
        Service::ContainerEngine,
        &Method::DELETE,
        path,
        None,
    );
    oci.call(calls, call)
        .await
        .map(|answer| answer.work_request)
        .map_err(|f| f.error)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_means_the_newest_offered_patch_and_an_offered_patch_itself() {
        let offered: Vec<String> = ["v1.31.1", "v1.31.10", "v1.32.1"]
            .map(String::from)
            .to_vec();
        let v = |s: &str| KubeVersion::parse(s).unwrap();
        assert_eq!(
            offered_version(&offered, &v("v1.31")).as_deref(),
            Ok("v1.31.10")
        );
        assert_eq!(
            offered_version(&offered, &v("v1.31.1")).as_deref(),
            Ok("v1.31.1")
        );
        assert_eq!(
            offered_version(&offered, &v("v1.31.0")).as_deref(),
            Ok("v1.31.10")
        );
        assert_eq!(
            offered_version(&offered, &v("v1.30")),
            Err("v1.31.1, v1.31.10, v1.32.1".to_string())
        );
    }
}
