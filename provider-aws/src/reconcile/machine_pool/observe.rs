//! Reading EKS and EC2: the node group (DescribeNodegroup), mapped to the shared
//! [`ManagedPool`] with EKS's own view ([`ObservedPool`]); the state of the node group update
//! the kernel tracks (DescribeUpdate); the provider IDs of its EC2 instances
//! (DescribeInstances); [`observe`], the one look a pass takes; and the kind's status.

use std::collections::BTreeMap;

use contract::plan::{Lifecycle, OperationState};
use contract::scaling::InstanceLife;
use provider_runtime::ProviderError;
use provider_runtime::machine_pool::{ManagedPool, PoolLook, PoolObserved};

use super::desired::{EksTaint, Scaling, UpdateConfig};
use super::{At, NodegroupApi};
use crate::client::{CloudError, classify};

/// One look: the node group; the state of the update [`PoolLook::operation`] names once the
/// node group is found; the provider IDs of its instances when the look asks for them.
///
/// # Errors
/// EKS's and EC2's, but not-found.
pub(super) async fn observe(
    at: &At,
    look: PoolLook<'_>,
) -> Result<PoolObserved<ObservedPool>, ProviderError> {
    let api = NodegroupApi::of(at);
    let pool = api.describe().await?.map(managed);
    let operation = match pool.as_ref().and_then(|p| look.operation(p)) {
        Some(op) => api
            .describe_update(&op.id)
            .await?
            .as_ref()
            .map(operation_state),
        None => None,
    };
    let provider_ids = async { Ok(provider_id_list(&api.instances().await?)) };
    look.seen(pool, operation, provider_ids).await
}

/// The shared view of a node group.
pub fn managed(ng: ObservedPool) -> ManagedPool<ObservedPool> {
    let lifecycle = match &ng.state {
        NodegroupState::Active => Lifecycle::Running,
        NodegroupState::Degraded => Lifecycle::Degraded,
        NodegroupState::Creating => Lifecycle::Creating,
        NodegroupState::Updating => Lifecycle::Updating,
        NodegroupState::Deleting => Lifecycle::Deleting,
        NodegroupState::CreateFailed | NodegroupState::DeleteFailed => Lifecycle::Failed,
        NodegroupState::Other(state) => Lifecycle::Other(state.clone()),
    };
    ManagedPool {
        id: ng.arn.clone(),
        lifecycle,
        state: ng.state.as_str().to_string(),
        version: ng.version.clone(),
        tags: ng.tags.clone(),
        issues: ng.issues.clone(),
        desired_size: ng.scaling.map(|s| s.desired_size),
        detail: ng,
    }
}

/// An EKS update in the shared terms.
pub fn operation_state(update: &UpdateView) -> OperationState {
    let errors = || {
        if update.errors.is_empty() {
            "no error given".to_string()
        } else {
            update.errors.join("; ")
        }
    };
    match update.state {
        UpdateState::InProgress => OperationState::Running,
        UpdateState::Successful => OperationState::Succeeded,
        UpdateState::Failed => OperationState::Failed(format!("failed ({})", errors())),
        UpdateState::Cancelled => OperationState::Failed(format!("was cancelled ({})", errors())),
    }
}

/// `aws:///<zone>/<instance-id>`: what EKS's kubelet writes into `Node.spec.providerID`.
pub fn provider_id(zone: &str, instance_id: &str) -> String {
    format!("aws:///{zone}/{instance_id}")
}

/// The provider ID list by the shared rule ([`contract::scaling::provider_id_list`]): an ID
/// stays while EC2 reports its instance in any state but `terminated`.
pub fn provider_id_list(instances: &[Instance]) -> Vec<String> {
    let ids: Vec<(String, InstanceLife)> = instances
        .iter()
        .map(|i| (provider_id(&i.zone, &i.id), instance_life(&i.state)))
        .collect();
    contract::scaling::provider_id_list(ids.iter().map(|(id, life)| (id.as_str(), *life)))
}

/// EC2's instance state in the shared terms.
pub fn instance_life(state: &str) -> InstanceLife {
    if LIVE_INSTANCE_STATES.contains(&state) {
        InstanceLife::Present
    } else {
        InstanceLife::Gone
    }
}

/// One EC2 instance of the node group that is not terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `i-…`.
    pub id: String,
    /// Its availability zone.
    pub zone: String,
    /// EC2's state name (`pending`, `running`, `shutting-down`, `stopping`, `stopped`).
    pub state: String,
}

/// The EC2 instance states whose instances keep their provider ID in the list: everything but
/// `terminated`, so an ID leaves only once its instance is gone (core deletes the Node then).
pub const LIVE_INSTANCE_STATES: [&str; 5] =
    ["pending", "running", "shutting-down", "stopping", "stopped"];

/// A node group's lifecycle state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodegroupState {
    /// `CREATING`.
    Creating,
    /// `ACTIVE`.
    Active,
    /// `UPDATING`.
    Updating,
    /// `DELETING`.
    Deleting,
    /// `CREATE_FAILED`.
    CreateFailed,
    /// `DELETE_FAILED`.
    DeleteFailed,
    /// `DEGRADED`: it runs, with health issues.
    Degraded,
    /// A state this provider does not know.
    Other(String),
}

impl NodegroupState {
    /// From EKS's status string.
    pub fn parse(status: &str) -> Self {
        match status {
            "CREATING" => NodegroupState::Creating,
            "ACTIVE" => NodegroupState::Active,
            "UPDATING" => NodegroupState::Updating,
            "DELETING" => NodegroupState::Deleting,
            "CREATE_FAILED" => NodegroupState::CreateFailed,
            "DELETE_FAILED" => NodegroupState::DeleteFailed,
            "DEGRADED" => NodegroupState::Degraded,
            other => NodegroupState::Other(other.to_string()),
        }
    }

    /// EKS's status string.
    pub fn as_str(&self) -> &str {
        match self {
            NodegroupState::Creating => "CREATING",
            NodegroupState::Active => "ACTIVE",
            NodegroupState::Updating => "UPDATING",
            NodegroupState::Deleting => "DELETING",
            NodegroupState::CreateFailed => "CREATE_FAILED",
            NodegroupState::DeleteFailed => "DELETE_FAILED",
            NodegroupState::Degraded => "DEGRADED",
            NodegroupState::Other(s) => s,
        }
    }
}

/// What DescribeNodegroup reports, in our terms.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedPool {
    /// The name.
    pub name: String,
    /// The ARN.
    pub arn: String,
    /// The lifecycle state.
    pub state: NodegroupState,
    /// `version` (`1.31`).
    pub version: Option<String>,
    /// `scalingConfig`.
    pub scaling: Option<Scaling>,
    /// `labels`.
    pub labels: BTreeMap<String, String>,
    /// `taints`, sorted.
    pub taints: Vec<EksTaint>,
    /// `updateConfig`.
    pub update_config: Option<UpdateConfig>,
    /// `tags`.
    pub tags: BTreeMap<String, String>,
    /// `health.issues`, as `code: message` lines.
    pub issues: Vec<String>,
}

impl ObservedPool {
    /// From the SDK's node group.
    pub fn from_sdk(ng: &aws_sdk_eks::types::Nodegroup) -> Self {
        let scaling = ng.scaling_config().map(|s| Scaling {
            min_size: s.min_size().unwrap_or(0),
            max_size: s.max_size().unwrap_or(0),
            desired_size: s.desired_size().unwrap_or(0),
        });
        let mut taints: Vec<EksTaint> = ng
            .taints()
            .iter()
            .map(|t| EksTaint {
                key: t.key().unwrap_or_default().to_string(),
                value: t.value().filter(|v| !v.is_empty()).map(str::to_string),
                effect: t
                    .effect()
                    .map(|e| e.as_str().to_string())
                    .unwrap_or_default(),
            })
            .collect();
        taints.sort();
        let update_config = ng.update_config().and_then(|u| {
            match (u.max_unavailable(), u.max_unavailable_percentage()) {
                (Some(n), _) => Some(UpdateConfig::Count(n)),
                (None, Some(p)) => Some(UpdateConfig::Percent(p)),
                (None, None) => None,
            }
        });
        let issues = ng
            .health()
            .map(|h| {
                h.issues()
                    .iter()
                    .map(|i| {
                        let code = i
                            .code()
                            .map(|c| c.as_str().to_string())
                            .unwrap_or_else(|| "Unknown".into());
                        format!("{code}: {}", i.message().unwrap_or("no message"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            name: ng.nodegroup_name().unwrap_or_default().to_string(),
            arn: ng.nodegroup_arn().unwrap_or_default().to_string(),
            state: NodegroupState::parse(ng.status().map(|s| s.as_str()).unwrap_or("UNKNOWN")),
            version: ng.version().map(str::to_string),
            scaling,
            labels: ng
                .labels()
                .map(|l| l.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            taints,
            update_config,
            tags: ng
                .tags()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            issues,
        }
    }
}

/// A node group update EKS runs (DescribeUpdate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateView {
    /// The update's ID.
    pub id: String,
    /// Its state.
    pub state: UpdateState,
    /// Its errors, as `code: message` lines.
    pub errors: Vec<String>,
}

/// The state of an EKS update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateState {
    /// `InProgress`.
    InProgress,
    /// `Successful`.
    Successful,
    /// `Failed`.
    Failed,
    /// `Cancelled`.
    Cancelled,
}

impl UpdateView {
    /// From the SDK's update.
    pub fn from_sdk(u: &aws_sdk_eks::types::Update) -> Self {
        let state = match u.status().map(|s| s.as_str()) {
            Some("Successful") => UpdateState::Successful,
            Some("Failed") => UpdateState::Failed,
            Some("Cancelled") => UpdateState::Cancelled,
            _ => UpdateState::InProgress,
        };
        let errors = u
            .errors()
            .iter()
            .map(|e| {
                let code = e
                    .error_code()
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_else(|| "Unknown".into());
                format!("{code}: {}", e.error_message().unwrap_or("no message"))
            })
            .collect();
        Self {
            id: u.id().unwrap_or_default().to_string(),
            state,
            errors,
        }
    }
}

/// The reads.
impl NodegroupApi<'_> {
    /// DescribeNodegroup; `None` when EKS has no such node group (or no such cluster).
    async fn describe(&self) -> Result<Option<ObservedPool>, CloudError> {
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
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
            .map(|out| out.nodegroup().map(ObservedPool::from_sdk));
        match Self::count(sent, "DescribeNodegroup", result) {
            Err(CloudError::NotFound(_)) => Ok(None),
            other => other,
        }
    }

    /// DescribeUpdate of a node group update; `None` when EKS does not know the ID.
    async fn describe_update(&self, id: &str) -> Result<Option<UpdateView>, CloudError> {
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
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
    async fn instances(&self) -> Result<Vec<Instance>, CloudError> {
        use aws_sdk_ec2::types::Filter;
        let (cluster, nodegroup) = (self.cluster, self.nodegroup);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_are_exactly_what_the_kubelet_writes_and_sorted() {
        let instances = [
            Instance {
                id: "i-2".into(),
                zone: "us-west-2b".into(),
                state: "running".into(),
            },
            Instance {
                id: "i-1".into(),
                zone: "us-west-2a".into(),
                state: "shutting-down".into(),
            },
        ];
        assert_eq!(
            provider_id_list(&instances),
            ["aws:///us-west-2a/i-1", "aws:///us-west-2b/i-2"]
        );
        assert!(!LIVE_INSTANCE_STATES.contains(&"terminated"));
        assert!(
            LIVE_INSTANCE_STATES.contains(&"shutting-down"),
            "an ID leaves only once its instance is gone"
        );
    }

    fn node_group(state: NodegroupState) -> ObservedPool {
        ObservedPool {
            name: "team-a-pool".into(),
            arn: "arn:aws:eks:us-west-2:123456789012:nodegroup/c/team-a-pool/1".into(),
            state,
            version: Some("1.31".into()),
            scaling: Some(Scaling {
                min_size: 0,
                max_size: 2,
                desired_size: 2,
            }),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            update_config: None,
            tags: BTreeMap::from([("capi-managed-eks".to_string(), "team-a_prod".to_string())]),
            issues: vec!["AsgInstanceLaunchFailures: no capacity".into()],
        }
    }

    #[test]
    fn eks_states_map_to_the_shared_lifecycle() {
        let cases = [
            ("ACTIVE", Lifecycle::Running),
            ("DEGRADED", Lifecycle::Degraded),
            ("CREATING", Lifecycle::Creating),
            ("UPDATING", Lifecycle::Updating),
            ("DELETING", Lifecycle::Deleting),
            ("CREATE_FAILED", Lifecycle::Failed),
            ("DELETE_FAILED", Lifecycle::Failed),
            ("PENDING", Lifecycle::Other("PENDING".into())),
        ];
        for (state, lifecycle) in cases {
            let pool = managed(node_group(NodegroupState::parse(state)));
            assert_eq!(pool.lifecycle, lifecycle, "{state}");
            assert_eq!(pool.state, state, "EKS's word is kept");
        }
    }

    #[test]
    fn a_node_group_is_read_by_its_arn_with_its_version_tags_issues_and_desired_size() {
        let pool = managed(node_group(NodegroupState::Active));
        assert_eq!(pool.id, pool.detail.arn);
        assert_eq!(pool.version.as_deref(), Some("1.31"));
        assert_eq!(pool.tags, pool.detail.tags);
        assert_eq!(pool.issues, ["AsgInstanceLaunchFailures: no capacity"]);
        assert_eq!(pool.desired_size, Some(2));
    }

    #[test]
    fn eks_updates_map_to_the_shared_operation_state_with_their_errors() {
        let update = |state: UpdateState, errors: &[&str]| UpdateView {
            id: "op-1".into(),
            state,
            errors: errors.iter().map(|e| (*e).to_string()).collect(),
        };
        let no_capacity = ["NodeCreationFailure: no capacity"];
        assert_eq!(
            operation_state(&update(UpdateState::InProgress, &[])),
            OperationState::Running
        );
        assert_eq!(
            operation_state(&update(UpdateState::Successful, &[])),
            OperationState::Succeeded
        );
        assert_eq!(
            operation_state(&update(UpdateState::Failed, &no_capacity)),
            OperationState::Failed("failed (NodeCreationFailure: no capacity)".into())
        );
        assert_eq!(
            operation_state(&update(UpdateState::Cancelled, &no_capacity)),
            OperationState::Failed("was cancelled (NodeCreationFailure: no capacity)".into())
        );
        assert_eq!(
            operation_state(&update(UpdateState::Failed, &[])),
            OperationState::Failed("failed (no error given)".into())
        );
    }
}
