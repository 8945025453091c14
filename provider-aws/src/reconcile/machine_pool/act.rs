//! The EKS calls that change a node group: create, tag (adopt), upgrade, update
//! (UpdateNodegroupConfig), delete, one function a step of the kernel's; and what they send:
//! the subnets a create picks (their zones looked up when failure domains need them), the
//! CreateNodegroup request with its idempotency token, and the SDK's shapes of scaling, taints
//! and update config. Upgrades and updates answer an update id the kernel tracks.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_eks::types::{
    AmiTypes, CapacityTypes, NodegroupScalingConfig, NodegroupUpdateConfig, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateTaintsPayload,
};
use contract::idempotency::{self, EKS_REQUEST_TOKEN};
use contract::version::KubeVersion;
use provider_runtime::ProviderError;
use provider_runtime::control_plane::Started;
use provider_runtime::machine_pool::{ManagedPool, PoolCreate};
use serde::Serialize;
use serde_json::Value;

use super::desired::{
    CapacityType, EksTaint, InvalidSpec, PoolSpec, Scaling, UpdateConfig, creation_scaling, invalid,
};
use super::diff::PoolChange;
use super::observe::{ObservedPool, UpdateView, managed};
use super::{At, NodegroupApi};
use crate::client::{CloudError, classify, started_update};

/// EKS's name of the call that creates a node group (the one that takes `requestOverrides`).
pub const CREATE_CALL: &str = "CreateNodegroup";

/// What a step answers.
type Answered = Result<Started<ManagedPool<ObservedPool>>, ProviderError>;

/// Puts `tags` on the node group `id` (adopting it, or putting missing tags back).
pub(super) async fn tag(at: &At, id: &str, tags: &BTreeMap<String, String>) -> Answered {
    NodegroupApi::of(at).tag(id, tags).await?;
    Ok(Started::Done)
}

/// UntagResource of our ownership tag.
pub(super) async fn untag(at: &At, id: &str, key: &str) -> Answered {
    NodegroupApi::of(at).untag(id, key).await?;
    Ok(Started::Done)
}

/// UpdateNodegroupVersion to `to`.
pub(super) async fn upgrade(at: &At, to: &KubeVersion) -> Answered {
    let update = NodegroupApi::of(at).update_version(to).await?;
    Ok(Started::Operation(update.id))
}

/// UpdateNodegroupConfig with `change`.
pub(super) async fn update(at: &At, change: &PoolChange) -> Answered {
    let update = NodegroupApi::of(at).update_config(change).await?;
    Ok(Started::Operation(update.id))
}

/// DeleteNodegroup: gone when EKS has none, else deleting.
pub(super) async fn delete(at: &At) -> Answered {
    let deleted = NodegroupApi::of(at).delete().await;
    Started::after_delete(deleted.map(|found| match found {
        None => Started::Gone,
        Some(_) => Started::Untracked,
    }))
}

/// CreateNodegroup as `want` asks, at `version`. A node group made meanwhile (by a pass that
/// crashed before recording it) is done: the next pass sees it.
///
/// # Errors
/// EKS's and EC2's; a terminal `InvalidSpec` for a create with no subnets to put it in or no
/// node role.
pub(super) async fn create(at: &At, new: PoolCreate<'_, PoolSpec>) -> Answered {
    let (want, version, request) = (new.want, new.version, new.request);
    let (api, cluster_subnets) = (&NodegroupApi::of(at), &at.clients.cluster_subnets);
    let spec = want.spec;
    if spec.node_role.is_none() {
        return Err(invalid(
            "no IAM role to create the EKS node group with: set spec.eks.nodeRoleARN",
        ));
    }
    let subnets = subnets(
        api,
        spec,
        cluster_subnets,
        &want.machine_pool.spec.failure_domains,
    )
    .await?;
    let create = CreateNodegroup::new(
        request.uid(),
        api.cluster,
        api.nodegroup,
        spec,
        creation_scaling(want.scaling),
        subnets,
        request.tags.clone(),
        version,
    );
    let overrides = spec.request_overrides.as_ref();
    match api.create(&create, overrides).await {
        Ok(view) => Ok(Started::Created {
            id: view.arn.clone(),
            observed: Some(managed(view)),
            overrides: contract::overrides::effective(overrides).is_some(),
        }),
        Err(CloudError::InUse(message)) => {
            tracing::info!(%message, "the node group exists already");
            Ok(Started::Done)
        }
        Err(e) => Err(e.into()),
    }
}

/// The subnets to create the node group in (`spec.subnetIDs`, else the cluster's), looking
/// their zones up when the failure domains `zones` need them.
async fn subnets(
    api: &NodegroupApi<'_>,
    spec: &PoolSpec,
    cluster_subnets: &[SubnetCandidate],
    zones: &[String],
) -> Result<Vec<String>, ProviderError> {
    let mut explicit: Vec<SubnetCandidate> = spec
        .subnet_ids
        .iter()
        .map(|id| SubnetCandidate {
            id: id.clone(),
            zone: None,
            public: None,
        })
        .collect();
    let mut cluster = cluster_subnets.to_vec();
    let candidates = if explicit.is_empty() {
        &mut cluster
    } else {
        &mut explicit
    };
    if zones_needed(candidates, zones) {
        let ids: Vec<String> = candidates
            .iter()
            .filter(|s| s.zone.is_none())
            .map(|s| s.id.clone())
            .collect();
        let found = api.subnet_zones(&ids).await?;
        for s in candidates.iter_mut().filter(|s| s.zone.is_none()) {
            s.zone = found.get(&s.id).cloned();
        }
    }
    select_subnets(&explicit, &cluster, zones).map_err(|e| invalid(e.0))
}

/// The changes.
impl NodegroupApi<'_> {
    /// The availability zone of each subnet (DescribeSubnets).
    async fn subnet_zones(&self, ids: &[String]) -> Result<BTreeMap<String, String>, CloudError> {
        let sent = self.calls.admit("ec2", "DescribeSubnets")?;
        let result = self
            .clients
            .ec2
            .describe_subnets()
            .set_subnet_ids(Some(ids.to_vec()))
            .send()
            .await
            .map_err(classify);
        let out = Self::count(sent, "DescribeSubnets", result)?;
        Ok(out
            .subnets()
            .iter()
            .filter_map(|s| {
                Some((
                    s.subnet_id()?.to_string(),
                    s.availability_zone()?.to_string(),
                ))
            })
            .collect())
    }

    /// CreateNodegroup, with the user's `requestOverrides` merged into the request body.
    async fn create(
        &self,
        request: &CreateNodegroup,
        overrides: Option<&Value>,
    ) -> Result<ObservedPool, CloudError> {
        let mut call = self
            .clients
            .eks
            .create_nodegroup()
            .cluster_name(&request.cluster_name)
            .nodegroup_name(&request.nodegroup_name)
            .scaling_config(scaling_config(request.scaling_config))
            .set_disk_size(request.disk_size)
            .set_subnets(Some(request.subnets.clone()))
            .set_instance_types(Some(request.instance_types.clone()))
            .set_ami_type(request.ami_type.as_deref().map(AmiTypes::from))
            .set_node_role(request.node_role.clone())
            .set_labels((!request.labels.is_empty()).then(|| hash_map(&request.labels)))
            .set_taints(
                (!request.taints.is_empty())
                    .then(|| request.taints.iter().map(sdk_taint).collect()),
            )
            .set_tags(Some(hash_map(&request.tags)))
            .set_update_config(request.update_config.map(update_config))
            .capacity_type(CapacityTypes::from(request.capacity_type.as_str()))
            .set_version(request.version.clone())
            .client_request_token(&request.client_request_token)
            .customize();
        if let Some(patch) = contract::overrides::effective(overrides).cloned() {
            call = call.mutate_request(move |r| crate::client::overrides::rewrite(r, &patch));
        }
        // `POST /clusters/{name}/node-groups`: one target for the cluster's creates.
        let sent = self
            .calls
            .admit("eks", format!("CreateNodegroup {}", request.cluster_name))?;
        let result = call.send().await.map_err(classify).and_then(|out| {
            out.nodegroup().map(ObservedPool::from_sdk).ok_or_else(|| {
                CloudError::Transient("CreateNodegroup answered without the node group".into())
            })
        });
        Self::count(sent, "CreateNodegroup", result)
    }

    /// UpdateNodegroupConfig.
    async fn update_config(&self, change: &PoolChange) -> Result<UpdateView, CloudError> {
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
        let lt = &change.labels_and_taints;
        let labels = (!lt.labels_add.is_empty() || !lt.labels_remove.is_empty()).then(|| {
            UpdateLabelsPayload::builder()
                .set_add_or_update_labels(
                    (!lt.labels_add.is_empty()).then(|| hash_map(&lt.labels_add)),
                )
                .set_remove_labels((!lt.labels_remove.is_empty()).then(|| lt.labels_remove.clone()))
                .build()
        });
        let taints = (!lt.taints_add.is_empty() || !lt.taints_remove.is_empty()).then(|| {
            UpdateTaintsPayload::builder()
                .set_add_or_update_taints(
                    (!lt.taints_add.is_empty())
                        .then(|| lt.taints_add.iter().map(sdk_taint).collect()),
                )
                .set_remove_taints(
                    (!lt.taints_remove.is_empty())
                        .then(|| lt.taints_remove.iter().map(sdk_taint).collect()),
                )
                .build()
        });
        let sent = self.calls.admit(
            "eks",
            format!("UpdateNodegroupConfig {cluster}/{nodegroup}"),
        )?;
        let result = self
            .clients
            .eks
            .update_nodegroup_config()
            .cluster_name(cluster)
            .nodegroup_name(nodegroup)
            .set_scaling_config(change.scaling.map(scaling_config))
            .set_labels(labels)
            .set_taints(taints)
            .set_update_config(change.update_config.map(update_config))
            .send()
            .await
            .map_err(classify)
            .and_then(|out| {
                started_update("UpdateNodegroupConfig", out.update()).map(UpdateView::from_sdk)
            });
        Self::count(sent, "UpdateNodegroupConfig", result)
    }

    /// UpdateNodegroupVersion to `version` (EKS picks the AMI release).
    async fn update_version(&self, version: &KubeVersion) -> Result<UpdateView, CloudError> {
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
        let sent = self.calls.admit(
            "eks",
            format!("UpdateNodegroupVersion {cluster}/{nodegroup}"),
        )?;
        let result = self
            .clients
            .eks
            .update_nodegroup_version()
            .cluster_name(cluster)
            .nodegroup_name(nodegroup)
            .version(eks_version(version))
            .send()
            .await
            .map_err(classify)
            .and_then(|out| {
                started_update("UpdateNodegroupVersion", out.update()).map(UpdateView::from_sdk)
            });
        Self::count(sent, "UpdateNodegroupVersion", result)
    }

    /// TagResource.
    async fn tag(&self, arn: &str, tags: &BTreeMap<String, String>) -> Result<(), CloudError> {
        let sent = self.calls.admit("eks", format!("TagResource {arn}"))?;
        let result = self
            .clients
            .eks
            .tag_resource()
            .resource_arn(arn)
            .set_tags(Some(hash_map(tags)))
            .send()
            .await
            .map_err(classify)
            .map(|_| ());
        Self::count(sent, "TagResource", result)
    }

    /// UntagResource.
    async fn untag(&self, arn: &str, key: &str) -> Result<(), CloudError> {
        let sent = self.calls.admit("eks", format!("UntagResource {arn}"))?;
        let result = self
            .clients
            .eks
            .untag_resource()
            .resource_arn(arn)
            .tag_keys(key)
            .send()
            .await
            .map_err(classify)
            .map(|_| ());
        Self::count(sent, "UntagResource", result)
    }

    /// DeleteNodegroup; `None` when it is already gone.
    async fn delete(&self) -> Result<Option<ObservedPool>, CloudError> {
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
        let sent = self
            .calls
            .admit("eks", format!("DeleteNodegroup {cluster}/{nodegroup}"))?;
        let result = self
            .clients
            .eks
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(nodegroup)
            .send()
            .await
            .map_err(classify)
            .map(|out| out.nodegroup().map(ObservedPool::from_sdk));
        match Self::count(sent, "DeleteNodegroup", result) {
            Err(CloudError::NotFound(_)) => Ok(None),
            other => other,
        }
    }
}

/// A subnet the node group may use, with what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubnetCandidate {
    /// The subnet ID.
    pub id: String,
    /// Its availability zone, when known.
    pub zone: Option<String>,
    /// Whether it is public, when known.
    pub public: Option<bool>,
}

/// The subnets to create the node group in.
///
/// `explicit` (`spec.subnetIDs`) wins; otherwise the cluster's, keeping only the private ones
/// when the cluster marks some as private. With `zones` (`MachinePool.spec.failureDomains`),
/// only subnets in those zones are kept.
///
/// # Errors
/// [`InvalidSpec`] when nothing is left: no subnets at all, or none in the asked zones.
pub fn select_subnets(
    explicit: &[SubnetCandidate],
    cluster: &[SubnetCandidate],
    zones: &[String],
) -> Result<Vec<String>, InvalidSpec> {
    let pool: Vec<&SubnetCandidate> = if explicit.is_empty() {
        let private: Vec<&SubnetCandidate> =
            cluster.iter().filter(|s| s.public == Some(false)).collect();
        let any_public = cluster.iter().any(|s| s.public == Some(true));
        if any_public && !private.is_empty() {
            private
        } else {
            cluster.iter().collect()
        }
    } else {
        explicit.iter().collect()
    };
    if pool.is_empty() {
        return Err(InvalidSpec(
            "no subnets for the node group: set spec.subnetIDs, or give the cluster subnets (EKSCluster network, or the EKSControlPlane's spec.infrastructure.network.subnetIDs)".into(),
        ));
    }
    let mut chosen: Vec<String> = pool
        .iter()
        .filter(|s| zones.is_empty() || s.zone.as_ref().is_some_and(|z| zones.contains(z)))
        .map(|s| s.id.clone())
        .collect();
    chosen.dedup();
    if chosen.is_empty() {
        let known: Vec<String> = pool
            .iter()
            .map(|s| format!("{} ({})", s.id, s.zone.as_deref().unwrap_or("zone unknown")))
            .collect();
        return Err(InvalidSpec(format!(
            "MachinePool.spec.failureDomains {zones:?} match none of the node group's subnets: {}",
            known.join(", ")
        )));
    }
    Ok(chosen)
}

/// Whether the subnets' zones must be looked up before [`select_subnets`] can filter by zone.
pub fn zones_needed(candidates: &[SubnetCandidate], zones: &[String]) -> bool {
    !zones.is_empty() && candidates.iter().any(|s| s.zone.is_none())
}

/// The version EKS takes (`1.31`) for a Kubernetes version.
pub fn eks_version(v: &KubeVersion) -> String {
    format!("{}.{}", v.major, v.minor)
}

/// Everything a CreateNodegroup request carries, in EKS's JSON names (it also serves as the
/// idempotency token's fingerprint).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateNodegroup {
    /// The EKS cluster.
    #[serde(skip)]
    pub cluster_name: String,
    /// `nodegroupName`.
    pub nodegroup_name: String,
    /// `scalingConfig`.
    pub scaling_config: Scaling,
    /// `diskSize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_size: Option<i32>,
    /// `subnets`.
    pub subnets: Vec<String>,
    /// `instanceTypes`.
    pub instance_types: Vec<String>,
    /// `amiType`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ami_type: Option<String>,
    /// `nodeRole`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_role: Option<String>,
    /// `labels`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `taints`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<EksTaint>,
    /// `tags`.
    pub tags: BTreeMap<String, String>,
    /// `updateConfig`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "update_config_object"
    )]
    pub update_config: Option<UpdateConfig>,
    /// `capacityType`.
    pub capacity_type: CapacityType,
    /// `version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `clientRequestToken`, derived from the rest.
    #[serde(skip)]
    pub client_request_token: String,
}

fn update_config_object<S: serde::Serializer>(
    value: &Option<UpdateConfig>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    match value {
        Some(UpdateConfig::Count(n)) => map.serialize_entry("maxUnavailable", n)?,
        Some(UpdateConfig::Percent(p)) => map.serialize_entry("maxUnavailablePercentage", p)?,
        None => {}
    }
    map.end()
}

impl CreateNodegroup {
    /// The request for `spec` in `subnets`, with a token derived from the object's UID, the
    /// request itself and the user's overrides (`spec.request_overrides`): the same request retried after a crash gets the
    /// same token (EKS answers with the node group it created), a changed request a new one.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        uid: &str,
        cluster_name: &str,
        nodegroup_name: &str,
        spec: &PoolSpec,
        scaling: Scaling,
        subnets: Vec<String>,
        tags: BTreeMap<String, String>,
        version: Option<&KubeVersion>,
    ) -> Self {
        let mut request = Self {
            cluster_name: cluster_name.to_string(),
            nodegroup_name: nodegroup_name.to_string(),
            scaling_config: scaling,
            disk_size: spec.disk_size,
            subnets,
            instance_types: spec.instance_types.clone(),
            ami_type: spec.ami_type.clone(),
            node_role: spec.node_role.clone(),
            labels: spec.labels.clone(),
            taints: spec.taints.clone(),
            tags,
            update_config: spec.update_config,
            capacity_type: spec.capacity_type,
            version: version.map(eks_version),
            client_request_token: String::new(),
        };
        let fingerprint = format!(
            "{cluster_name}|{}|{}",
            serde_json::to_string(&request).unwrap_or_default(),
            spec.request_overrides
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default()
        );
        request.client_request_token =
            idempotency::token(&EKS_REQUEST_TOKEN, "create", uid, &[&fingerprint]);
        request
    }
}

fn hash_map(map: &BTreeMap<String, String>) -> HashMap<String, String> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn scaling_config(s: Scaling) -> NodegroupScalingConfig {
    NodegroupScalingConfig::builder()
        .min_size(s.min_size)
        .max_size(s.max_size)
        .desired_size(s.desired_size)
        .build()
}

fn update_config(u: UpdateConfig) -> NodegroupUpdateConfig {
    match u {
        UpdateConfig::Count(n) => NodegroupUpdateConfig::builder().max_unavailable(n).build(),
        UpdateConfig::Percent(p) => NodegroupUpdateConfig::builder()
            .max_unavailable_percentage(p)
            .build(),
    }
}

fn sdk_taint(t: &EksTaint) -> Taint {
    Taint::builder()
        .key(&t.key)
        .set_value(t.value.clone())
        .effect(TaintEffect::from(t.effect.as_str()))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::machine_pool::desired::pool_spec;
    use contract::api::MachinePoolSpecCommon;
    use contract::scaling::ScalingIntent;
    use serde_json::json;

    fn v(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    fn cand(id: &str, zone: Option<&str>, public: Option<bool>) -> SubnetCandidate {
        SubnetCandidate {
            id: id.into(),
            zone: zone.map(str::to_string),
            public,
        }
    }

    #[test]
    fn explicit_subnets_win_over_the_clusters() {
        let got = select_subnets(
            &[cand("s-x", None, None)],
            &[cand("s-a", Some("a"), None)],
            &[],
        )
        .unwrap();
        assert_eq!(got, ["s-x"]);
    }

    #[test]
    fn the_clusters_private_subnets_are_used_when_it_marks_public_and_private() {
        let cluster = [
            cand("pub-a", Some("a"), Some(true)),
            cand("priv-a", Some("a"), Some(false)),
            cand("priv-b", Some("b"), Some(false)),
        ];
        assert_eq!(
            select_subnets(&[], &cluster, &[]).unwrap(),
            ["priv-a", "priv-b"]
        );
        let all_public = [
            cand("pub-a", Some("a"), Some(true)),
            cand("pub-b", Some("b"), Some(true)),
        ];
        assert_eq!(
            select_subnets(&[], &all_public, &[]).unwrap(),
            ["pub-a", "pub-b"]
        );
        let unknown = [cand("s-1", None, None), cand("s-2", None, None)];
        assert_eq!(select_subnets(&[], &unknown, &[]).unwrap(), ["s-1", "s-2"]);
    }

    #[test]
    fn failure_domains_keep_only_subnets_in_those_zones() {
        let cluster = [
            cand("s-a", Some("us-west-2a"), None),
            cand("s-b", Some("us-west-2b"), None),
        ];
        assert_eq!(
            select_subnets(&[], &cluster, &["us-west-2b".into()]).unwrap(),
            ["s-b"]
        );
        let err = select_subnets(&[], &cluster, &["us-west-2c".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("failureDomains") && err.contains("s-a (us-west-2a)"),
            "{err}"
        );
    }

    #[test]
    fn no_subnets_at_all_is_an_invalid_spec_that_says_where_to_set_them() {
        let err = select_subnets(&[], &[], &[]).unwrap_err().to_string();
        assert!(err.contains("spec.subnetIDs"), "{err}");
    }

    #[test]
    fn zones_are_looked_up_only_when_failure_domains_need_them() {
        assert!(!zones_needed(&[cand("s", None, None)], &[]));
        assert!(zones_needed(&[cand("s", None, None)], &["a".into()]));
        assert!(!zones_needed(&[cand("s", Some("a"), None)], &["a".into()]));
    }

    #[test]
    fn versions_go_to_eks_as_major_dot_minor_and_come_back_at_minor_granularity() {
        assert_eq!(eks_version(&v("v1.31.2")), "1.31");
    }

    fn request(overrides: Option<&Value>, replicas: i32) -> CreateNodegroup {
        let spec = PoolSpec {
            request_overrides: overrides.cloned(),
            ..pool_spec(&crate::api::EKSMachinePoolSpec {
                common: MachinePoolSpecCommon {
                    machine_type: "m5.large".into(),
                    ..MachinePoolSpecCommon::default()
                },
                eks: crate::api::EKSMachinePoolOptions {
                    node_role_arn: Some("arn:aws:iam::123456789012:role/nodes".into()),
                    ..Default::default()
                },
            })
            .unwrap()
        };
        CreateNodegroup::new(
            "uid-1",
            "eks-c",
            "ns-pool",
            &spec,
            creation_scaling(ScalingIntent::Fixed { replicas }),
            vec!["s-1".into()],
            BTreeMap::from([("capi-managed-eks".to_string(), "ns_c".to_string())]),
            Some(&v("v1.31")),
        )
    }

    #[test]
    fn the_create_request_serialises_with_eks_field_names() {
        let mut r = request(None, 2);
        r.update_config = Some(UpdateConfig::Percent(20));
        let body = serde_json::to_value(&r).unwrap();
        assert_eq!(body["nodegroupName"], "ns-pool");
        assert_eq!(
            body["scalingConfig"],
            json!({"minSize": 0, "maxSize": 2, "desiredSize": 2})
        );
        assert_eq!(body["capacityType"], "ON_DEMAND");
        assert_eq!(body["version"], "1.31");
        assert_eq!(
            body["updateConfig"],
            json!({"maxUnavailablePercentage": 20})
        );
        assert!(body.get("clientRequestToken").is_none() && body.get("clusterName").is_none());
    }

    #[test]
    fn the_idempotency_token_is_stable_for_the_same_request_and_changes_with_it() {
        let a = request(None, 2);
        assert_eq!(
            a.client_request_token,
            request(None, 2).client_request_token
        );
        assert_ne!(
            a.client_request_token,
            request(None, 3).client_request_token
        );
        assert_ne!(
            a.client_request_token,
            request(Some(&json!({"releaseVersion": "x"})), 2).client_request_token
        );
        assert!(
            a.client_request_token.len() <= 64 && a.client_request_token.starts_with("create-")
        );
    }
}
