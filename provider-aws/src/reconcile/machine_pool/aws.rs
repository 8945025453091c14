//! The EKS and EC2 calls a node group needs, each counted in the cloud-call metric and each
//! returning our own views (no SDK type leaks into planning).

use std::collections::{BTreeMap, HashMap};

use aws_sdk_eks::types::{
    AmiTypes, CapacityTypes, NodegroupScalingConfig, NodegroupUpdateConfig, Taint, TaintEffect,
    UpdateLabelsPayload, UpdateTaintsPayload,
};
use provider_runtime::{Admitted, CloudCalls};
use serde_json::Value;

use super::mapping::{
    CreateNodegroup, EksTaint, Instance, LIVE_INSTANCE_STATES, NodegroupView, Scaling,
    UpdateConfig, UpdateView, eks_version,
};
use super::plan::ConfigChange;
use crate::cloud::{Clients, CloudError, classify, started_update};
use contract::version::KubeVersion;

/// The calls, for one region and identity.
pub struct NodegroupApi<'a> {
    clients: &'a Clients,
    calls: &'a CloudCalls,
}

impl<'a> NodegroupApi<'a> {
    /// Calls through `clients`, counted in `calls`.
    pub fn new(clients: &'a Clients, calls: &'a CloudCalls) -> Self {
        Self { clients, calls }
    }

    /// Counts the answer of a call `sent` as `operation` (its target, what its `Retry-After`
    /// holds: for EKS the request's method and path, named by the operation and the resources
    /// in the path; for EC2 the action, every request being `POST /`).
    fn count<T>(
        sent: Admitted<'_>,
        operation: &'static str,
        result: Result<T, CloudError>,
    ) -> Result<T, CloudError> {
        sent.answered(operation, result.as_ref().map(|_| ()));
        result
    }

    /// DescribeNodegroup; `None` when EKS has no such node group (or no such cluster).
    pub async fn describe(
        &self,
        cluster: &str,
        nodegroup: &str,
    ) -> Result<Option<NodegroupView>, CloudError> {
        let sent = self
            .calls
            .admit("eks", format!("DescribeNodegroup {cluster}/{nodegroup}"))?;
        let result = self
            .clients
            .eks
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(nodegroup)
            .send()
            .await
            .map_err(classify)
            .map(|out| out.nodegroup().map(NodegroupView::from_sdk));
        match Self::count(sent, "DescribeNodegroup", result) {
            Err(CloudError::NotFound(_)) => Ok(None),
            other => other,
        }
    }

    /// DescribeUpdate of a node group update; `None` when EKS does not know the ID.
    pub async fn describe_update(
        &self,
        cluster: &str,
        nodegroup: &str,
        id: &str,
    ) -> Result<Option<UpdateView>, CloudError> {
        let sent = self
            .calls
            .admit("eks", format!("DescribeUpdate {cluster}/{nodegroup}/{id}"))?;
        let result = self
            .clients
            .eks
            .describe_update()
            .name(cluster)
            .nodegroup_name(nodegroup)
            .update_id(id)
            .send()
            .await
            .map_err(classify)
            .map(|out| out.update().map(UpdateView::from_sdk));
        match Self::count(sent, "DescribeUpdate", result) {
            Err(CloudError::NotFound(_)) => Ok(None),
            other => other,
        }
    }

    /// The node group's EC2 instances that are not terminated, found by the tags EKS puts on
    /// them (`eks:cluster-name`, `eks:nodegroup-name`).
    pub async fn instances(
        &self,
        cluster: &str,
        nodegroup: &str,
    ) -> Result<Vec<Instance>, CloudError> {
        use aws_sdk_ec2::types::Filter;
        let filters = [
            Filter::builder()
                .name("tag:eks:cluster-name")
                .values(cluster)
                .build(),
            Filter::builder()
                .name("tag:eks:nodegroup-name")
                .values(nodegroup)
                .build(),
            Filter::builder()
                .name("instance-state-name")
                .set_values(Some(LIVE_INSTANCE_STATES.map(String::from).to_vec()))
                .build(),
        ];
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let sent = self.calls.admit("ec2", "DescribeInstances")?;
            let result = self
                .clients
                .ec2
                .describe_instances()
                .set_filters(Some(filters.to_vec()))
                .set_next_token(token.take())
                .send()
                .await
                .map_err(classify);
            let page = Self::count(sent, "DescribeInstances", result)?;
            for instance in page.reservations().iter().flat_map(|r| r.instances()) {
                let state = instance
                    .state()
                    .and_then(|s| s.name())
                    .map(|n| n.as_str().to_string())
                    .unwrap_or_default();
                let (Some(id), Some(zone)) = (
                    instance.instance_id(),
                    instance.placement().and_then(|p| p.availability_zone()),
                ) else {
                    continue;
                };
                if LIVE_INSTANCE_STATES.contains(&state.as_str()) {
                    out.push(Instance {
                        id: id.to_string(),
                        zone: zone.to_string(),
                        state,
                    });
                }
            }
            match page.next_token().filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t.to_string()),
                None => break,
            }
        }
        Ok(out)
    }

    /// The availability zone of each subnet (DescribeSubnets).
    pub async fn subnet_zones(
        &self,
        ids: &[String],
    ) -> Result<BTreeMap<String, String>, CloudError> {
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
    pub async fn create(
        &self,
        request: &CreateNodegroup,
        overrides: Option<&Value>,
    ) -> Result<NodegroupView, CloudError> {
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
            .node_role(&request.node_role)
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
            call = call.mutate_request(move |r| crate::cloud::overrides::rewrite(r, &patch));
        }
        // `POST /clusters/{name}/node-groups`: one target for the cluster's creates.
        let sent = self
            .calls
            .admit("eks", format!("CreateNodegroup {}", request.cluster_name))?;
        let result = call.send().await.map_err(classify).and_then(|out| {
            out.nodegroup().map(NodegroupView::from_sdk).ok_or_else(|| {
                CloudError::Transient("CreateNodegroup answered without the node group".into())
            })
        });
        Self::count(sent, "CreateNodegroup", result)
    }

    /// UpdateNodegroupConfig.
    pub async fn update_config(
        &self,
        cluster: &str,
        nodegroup: &str,
        change: &ConfigChange,
    ) -> Result<UpdateView, CloudError> {
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
    pub async fn update_version(
        &self,
        cluster: &str,
        nodegroup: &str,
        version: &KubeVersion,
    ) -> Result<UpdateView, CloudError> {
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
    pub async fn tag(&self, arn: &str, tags: &BTreeMap<String, String>) -> Result<(), CloudError> {
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

    /// DeleteNodegroup; `None` when it is already gone.
    pub async fn delete(
        &self,
        cluster: &str,
        nodegroup: &str,
    ) -> Result<Option<NodegroupView>, CloudError> {
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
            .map(|out| out.nodegroup().map(NodegroupView::from_sdk));
        match Self::count(sent, "DeleteNodegroup", result) {
            Err(CloudError::NotFound(_)) => Ok(None),
            other => other,
        }
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
