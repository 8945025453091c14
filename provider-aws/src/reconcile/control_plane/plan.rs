//! What to do next with the EKS cluster, decided from what was observed and what the spec asks
//! for. Pure: no client, no clock; the table tests at the bottom are the specification.
//!
//! EKS runs one cluster update at a time and refuses to mix kinds of configuration in one update,
//! so the plan picks the first difference in a fixed order (version, endpoint access, logging,
//! authentication mode, add-ons, access entries) and the next one waits for the next pass.

use std::collections::{BTreeMap, BTreeSet};

use contract::api::{Addon, EndpointAccess, OperationKind};
use contract::ownership::{Conflict, Owner, Ownership};
use contract::version::{KubeVersion, next_control_plane_step};

use super::mapping::{
    AddonState, ClusterState, LogKind, ObservedAddon, ObservedCluster, UpdateState,
    endpoint_access_differs,
};
use crate::api::{AccessEntry, AuthenticationMode};

/// The operation remembered in status, with what EKS says about it (updates only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    /// What it is.
    pub kind: OperationKind,
    /// DescribeUpdate's answer; `None` for a create, or when EKS no longer knows the update.
    pub state: Option<UpdateState>,
}

/// Everything observed in a pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// DescribeCluster; `None` when EKS has no cluster of that name.
    pub cluster: Option<ObservedCluster>,
    /// The operation in `status.operation`.
    pub tracked: Option<Tracked>,
    /// The desired add-ons EKS has, by name (looked at only when the cluster is idle).
    pub addons: BTreeMap<String, ObservedAddon>,
    /// Access entries by principal ARN with their associated policy ARNs; `None` when not
    /// looked at (no entries desired, or the cluster is busy).
    pub access: Option<BTreeMap<String, BTreeSet<String>>>,
}

/// What the spec asks for, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    /// The Kubernetes version.
    pub version: KubeVersion,
    /// Endpoint access.
    pub endpoint_access: EndpointAccess,
    /// Enabled log types.
    pub logging: BTreeSet<LogKind>,
    /// The authentication mode, when the user set one.
    pub authentication_mode: Option<AuthenticationMode>,
    /// Add-ons.
    pub addons: Vec<Addon>,
    /// Access entries.
    pub access_entries: Vec<AccessEntry>,
    /// Take over a same-named cluster that is not ours.
    pub adopt: bool,
    /// The Cluster whose cluster this is (the ownership tag).
    pub owner: Owner,
}

/// Why nothing is done this pass although something is still to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// EKS is creating the cluster.
    Creating,
    /// An update runs (`upgrade`: a version update).
    Updating {
        /// Whether it is a version upgrade.
        upgrade: bool,
    },
    /// EKS is deleting the cluster (outside of our deletion): it is recreated once gone.
    Deleting,
    /// An add-on is being created, updated or deleted.
    Addon(String),
    /// The cluster is in a state this provider does not act in (PENDING or unknown).
    Pending(String),
}

/// The next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// No cluster of that name: CreateCluster.
    Create,
    /// A cluster of that name exists and is not ours: touch nothing.
    NameConflict {
        /// Its ARN.
        arn: String,
        /// Whose it is.
        conflict: Conflict,
    },
    /// Not ours, and `spec.adopt`: TagResource with our tags to take it.
    Adopt {
        /// Its ARN.
        arn: String,
    },
    /// Nothing to do until EKS moves.
    Wait(Wait),
    /// EKS failed: the cluster is FAILED, the tracked update failed, or an add-on failed to be
    /// created. The message says which and what to do.
    Failed(String),
    /// The spec asks for something EKS cannot do from here (a downgrade, a major change).
    Invalid(String),
    /// UpdateClusterVersion to the next minor.
    Upgrade {
        /// The version to ask for (one minor above the running one).
        to: KubeVersion,
    },
    /// UpdateClusterConfig with the endpoint access of the spec.
    UpdateEndpointAccess,
    /// UpdateClusterConfig with the logging of the spec.
    UpdateLogging,
    /// UpdateClusterConfig with a new authentication mode.
    UpdateAuthenticationMode(AuthenticationMode),
    /// CreateAddon.
    CreateAddon(Addon),
    /// UpdateAddon.
    UpdateAddon(Addon),
    /// CreateAccessEntry.
    CreateAccessEntry(AccessEntry),
    /// AssociateAccessPolicy (cluster scope).
    AssociateAccessPolicy {
        /// The entry's principal.
        principal: String,
        /// The policy ARN.
        policy: String,
    },
    /// The cluster matches the spec.
    Nothing,
}

impl Plan {
    /// Whether this step is a version upgrade (or waits on one).
    pub fn is_upgrade(&self) -> bool {
        matches!(
            self,
            Plan::Upgrade { .. } | Plan::Wait(Wait::Updating { upgrade: true })
        )
    }
}

/// Decides the next step.
pub fn plan(observed: &Observed, desired: &Desired) -> Plan {
    let Some(cluster) = &observed.cluster else {
        return Plan::Create;
    };
    match desired.owner.decide(&cluster.tags, desired.adopt) {
        Ownership::Ours => {}
        Ownership::Adopt => {
            return Plan::Adopt {
                arn: cluster.arn.clone(),
            };
        }
        Ownership::Conflict(conflict) => {
            return Plan::NameConflict {
                arn: cluster.arn.clone(),
                conflict,
            };
        }
    }
    let upgrading = observed
        .tracked
        .as_ref()
        .is_some_and(|t| t.kind == OperationKind::Upgrade);
    match &cluster.state {
        ClusterState::Active => {}
        ClusterState::Creating => return Plan::Wait(Wait::Creating),
        ClusterState::Updating => return Plan::Wait(Wait::Updating { upgrade: upgrading }),
        ClusterState::Deleting => return Plan::Wait(Wait::Deleting),
        ClusterState::Failed => {
            return Plan::Failed(format!(
                "EKS reports cluster {} as FAILED; delete this EKSControlPlane (or the cluster in EKS) to start over",
                cluster.name
            ));
        }
        ClusterState::Other(state) => return Plan::Wait(Wait::Pending(state.clone())),
    }
    if let Some(Tracked {
        kind: kind @ (OperationKind::Upgrade | OperationKind::Update),
        state: Some(state),
    }) = &observed.tracked
    {
        match state {
            UpdateState::InProgress => {
                return Plan::Wait(Wait::Updating {
                    upgrade: *kind == OperationKind::Upgrade,
                });
            }
            UpdateState::Failed(why) => {
                let what = if *kind == OperationKind::Upgrade {
                    "version update"
                } else {
                    "configuration update"
                };
                return Plan::Failed(format!("the EKS {what} of cluster {} {why}", cluster.name));
            }
            UpdateState::Successful => {}
        }
    }

    let current = match cluster.kube_version() {
        Ok(v) => v,
        Err(e) => {
            return Plan::Failed(format!(
                "EKS reports a version this provider cannot read: {e}"
            ));
        }
    };
    match next_control_plane_step(&current, &desired.version) {
        Err(e) => return Plan::Invalid(e.to_string()),
        // EKS picks patch versions itself: only a new minor is a step to ask for.
        Ok(Some(step)) if !step.same_minor(&current) => {
            return Plan::Upgrade {
                to: step.without_patch(),
            };
        }
        Ok(_) => {}
    }
    if endpoint_access_differs(cluster, &desired.endpoint_access) {
        return Plan::UpdateEndpointAccess;
    }
    if cluster.logging != desired.logging {
        return Plan::UpdateLogging;
    }
    if let Some(wanted) = desired.authentication_mode
        && let Some(step) = authentication_step(cluster.authentication_mode.as_deref(), wanted)
    {
        return step;
    }

    let mut busy = None;
    for addon in &desired.addons {
        match observed.addons.get(&addon.name) {
            None => return Plan::CreateAddon(addon.clone()),
            Some(ObservedAddon {
                state: AddonState::Busy(_),
                ..
            }) => {
                busy.get_or_insert_with(|| addon.name.clone());
            }
            Some(ObservedAddon {
                state: AddonState::CreateFailed(why),
                ..
            }) => {
                return Plan::Failed(format!(
                    "EKS could not create add-on {} ({why}); fix spec.addons or delete the add-on in EKS so it is created again",
                    addon.name
                ));
            }
            Some(found) if addon_differs(addon, found) => return Plan::UpdateAddon(addon.clone()),
            Some(_) => {}
        }
    }
    if let Some(access) = &observed.access {
        for entry in &desired.access_entries {
            let Some(policies) = access.get(&entry.principal_arn) else {
                return Plan::CreateAccessEntry(entry.clone());
            };
            if let Some(policy) = entry.policy_arns.iter().find(|p| !policies.contains(*p)) {
                return Plan::AssociateAccessPolicy {
                    principal: entry.principal_arn.clone(),
                    policy: policy.clone(),
                };
            }
        }
    }
    match busy {
        Some(name) => Plan::Wait(Wait::Addon(name)),
        None => Plan::Nothing,
    }
}

/// EKS moves authentication modes one way only: CONFIG_MAP → API_AND_CONFIG_MAP → API.
fn authentication_step(current: Option<&str>, wanted: AuthenticationMode) -> Option<Plan> {
    let rank = |m: &str| match m {
        "CONFIG_MAP" => Some(0),
        "API_AND_CONFIG_MAP" => Some(1),
        "API" => Some(2),
        _ => None,
    };
    let want = match wanted {
        AuthenticationMode::ApiAndConfigMap => 1,
        AuthenticationMode::Api => 2,
    };
    let have = rank(current?)?;
    match have.cmp(&want) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(Plan::Invalid(format!(
            "spec.eks.access.authenticationMode cannot go back from {} to {}: EKS only moves from CONFIG_MAP to API_AND_CONFIG_MAP to API",
            current.unwrap_or_default(),
            super::mapping::authentication_mode_name(wanted)
        ))),
        // One step at a time: CONFIG_MAP goes through API_AND_CONFIG_MAP.
        std::cmp::Ordering::Less if have == 0 => Some(Plan::UpdateAuthenticationMode(
            AuthenticationMode::ApiAndConfigMap,
        )),
        std::cmp::Ordering::Less => Some(Plan::UpdateAuthenticationMode(wanted)),
    }
}

/// Whether an add-on differs from the spec in what the spec sets (an unset version or
/// configuration leaves EKS's choice alone).
fn addon_differs(wanted: &Addon, found: &ObservedAddon) -> bool {
    let version_differs = wanted
        .version
        .as_ref()
        .is_some_and(|v| found.version.as_ref() != Some(v));
    let configuration_differs = wanted
        .configuration
        .as_ref()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .is_some_and(|c| found.configuration.as_deref().map(str::trim) != Some(c));
    version_differs || configuration_differs
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::reconcile::control_plane::mapping::ObservedCluster;
    use crate::scope;

    const NS: &str = "team-a";
    const CLUSTER: &str = "c1";

    fn desired() -> Desired {
        Desired {
            version: KubeVersion::new(1, 31),
            endpoint_access: EndpointAccess::default(),
            logging: BTreeSet::new(),
            authentication_mode: None,
            addons: Vec::new(),
            access_entries: Vec::new(),
            adopt: false,
            owner: scope::owner(NS, CLUSTER),
        }
    }

    fn ours() -> BTreeMap<String, String> {
        scope::owner(NS, CLUSTER).tags(&BTreeMap::new())
    }

    fn cluster(state: ClusterState, version: &str) -> ObservedCluster {
        ObservedCluster {
            name: "team-a-c1".into(),
            arn: "arn:aws:eks:us-west-2:123456789012:cluster/team-a-c1".into(),
            state,
            version: version.into(),
            platform_version: Some("eks.1".into()),
            endpoint_url: Some("https://X.gr7.us-west-2.eks.amazonaws.com".into()),
            ca_data: Some("Q0E=".into()),
            public_access: true,
            private_access: false,
            public_cidrs: vec!["0.0.0.0/0".into()],
            logging: BTreeSet::new(),
            authentication_mode: Some("API".into()),
            oidc_issuer: None,
            tags: ours(),
        }
    }

    fn active() -> Observed {
        Observed {
            cluster: Some(cluster(ClusterState::Active, "1.31")),
            ..Observed::default()
        }
    }

    fn addon(name: &str, version: Option<&str>, configuration: Option<&str>) -> Addon {
        Addon {
            name: name.into(),
            version: version.map(Into::into),
            configuration: configuration.map(Into::into),
        }
    }

    fn found(state: AddonState, version: &str, configuration: Option<&str>) -> ObservedAddon {
        ObservedAddon {
            state,
            version: Some(version.into()),
            configuration: configuration.map(Into::into),
        }
    }

    fn entry(principal: &str, policies: &[&str]) -> AccessEntry {
        AccessEntry {
            principal_arn: principal.into(),
            policy_arns: policies.iter().map(|p| p.to_string()).collect(),
            ..AccessEntry::default()
        }
    }

    const ADMIN: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy";
    const VIEW: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy";
    const ROLE: &str = "arn:aws:iam::123456789012:role/ops";

    type Case = (&'static str, Observed, Desired, Plan);

    fn cases() -> Vec<Case> {
        let mut cases: Vec<Case> = Vec::new();
        let mut add = |name, o, d, p| cases.push((name, o, d, p));

        add(
            "an absent cluster is created",
            Observed::default(),
            desired(),
            Plan::Create,
        );

        let mut stranger = active();
        if let Some(c) = stranger.cluster.as_mut() {
            c.tags = BTreeMap::from([("team".into(), "b".into())]);
        }
        add(
            "a same-named cluster without our tag is a name conflict",
            stranger.clone(),
            desired(),
            Plan::NameConflict {
                arn: cluster(ClusterState::Active, "1.31").arn,
                conflict: Conflict { owner: None },
            },
        );
        add(
            "a same-named cluster without our tag is adopted when spec.adopt is set",
            stranger,
            Desired {
                adopt: true,
                ..desired()
            },
            Plan::Adopt {
                arn: cluster(ClusterState::Active, "1.31").arn,
            },
        );
        let mut sibling = active();
        if let Some(c) = sibling.cluster.as_mut() {
            c.tags = scope::owner(NS, "other").tags(&BTreeMap::new());
        }
        let sibling_tag = scope::owner(NS, "other").tag().1;
        add(
            "a cluster another of our clusters owns is never adopted",
            sibling,
            Desired {
                adopt: true,
                ..desired()
            },
            Plan::NameConflict {
                arn: cluster(ClusterState::Active, "1.31").arn,
                conflict: Conflict {
                    owner: Some(sibling_tag),
                },
            },
        );

        add(
            "a creating cluster is waited for",
            Observed {
                cluster: Some(cluster(ClusterState::Creating, "1.31")),
                ..Observed::default()
            },
            desired(),
            Plan::Wait(Wait::Creating),
        );
        add(
            "an updating cluster is waited for, even when the spec changed meanwhile",
            Observed {
                cluster: Some(cluster(ClusterState::Updating, "1.31")),
                ..Observed::default()
            },
            Desired {
                version: KubeVersion::new(1, 32),
                ..desired()
            },
            Plan::Wait(Wait::Updating { upgrade: false }),
        );
        add(
            "an updating cluster with a tracked upgrade is waited for as an upgrade",
            Observed {
                cluster: Some(cluster(ClusterState::Updating, "1.31")),
                tracked: Some(Tracked {
                    kind: OperationKind::Upgrade,
                    state: Some(UpdateState::InProgress),
                }),
                ..Observed::default()
            },
            Desired {
                version: KubeVersion::new(1, 32),
                ..desired()
            },
            Plan::Wait(Wait::Updating { upgrade: true }),
        );
        add(
            "a cluster deleted behind our back is waited for, then created again",
            Observed {
                cluster: Some(cluster(ClusterState::Deleting, "1.31")),
                ..Observed::default()
            },
            desired(),
            Plan::Wait(Wait::Deleting),
        );
        add(
            "a pending cluster is waited for",
            Observed {
                cluster: Some(cluster(ClusterState::Other("PENDING".into()), "1.31")),
                ..Observed::default()
            },
            desired(),
            Plan::Wait(Wait::Pending("PENDING".into())),
        );
        add(
            "a failed cluster is reported, not retried",
            Observed { cluster: Some(cluster(ClusterState::Failed, "1.31")), ..Observed::default() },
            desired(),
            Plan::Failed(
                "EKS reports cluster team-a-c1 as FAILED; delete this EKSControlPlane (or the cluster in EKS) to start over".into(),
            ),
        );
        add(
            "a tracked update still in progress on an active cluster is waited for",
            Observed {
                tracked: Some(Tracked {
                    kind: OperationKind::Update,
                    state: Some(UpdateState::InProgress),
                }),
                ..active()
            },
            Desired {
                logging: BTreeSet::from([LogKind::Audit]),
                ..desired()
            },
            Plan::Wait(Wait::Updating { upgrade: false }),
        );
        add(
            "a tracked update that failed is reported with EKS's reason",
            Observed {
                tracked: Some(Tracked {
                    kind: OperationKind::Upgrade,
                    state: Some(UpdateState::Failed("failed (x)".into())),
                }),
                ..active()
            },
            Desired {
                version: KubeVersion::new(1, 32),
                ..desired()
            },
            Plan::Failed("the EKS version update of cluster team-a-c1 failed (x)".into()),
        );
        add(
            "a tracked update that succeeded lets the next change go",
            Observed {
                tracked: Some(Tracked {
                    kind: OperationKind::Update,
                    state: Some(UpdateState::Successful),
                }),
                ..active()
            },
            Desired {
                logging: BTreeSet::from([LogKind::Audit]),
                ..desired()
            },
            Plan::UpdateLogging,
        );
        add(
            "a tracked create on an active cluster is simply done",
            Observed {
                tracked: Some(Tracked {
                    kind: OperationKind::Create,
                    state: None,
                }),
                ..active()
            },
            desired(),
            Plan::Nothing,
        );

        add(
            "an active cluster matching the spec needs nothing",
            active(),
            desired(),
            Plan::Nothing,
        );
        add(
            "a new patch of the running minor needs nothing: EKS picks patches",
            active(),
            Desired {
                version: KubeVersion::with_patch(1, 31, 4),
                ..desired()
            },
            Plan::Nothing,
        );
        add(
            "a newer minor upgrades by one step",
            active(),
            Desired {
                version: KubeVersion::new(1, 32),
                ..desired()
            },
            Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
        );
        add(
            "two minors ahead upgrades to the next minor only",
            Observed {
                cluster: Some(cluster(ClusterState::Active, "1.30")),
                ..Observed::default()
            },
            Desired {
                version: KubeVersion::with_patch(1, 32, 1),
                ..desired()
            },
            Plan::Upgrade {
                to: KubeVersion::new(1, 31),
            },
        );
        add(
            "a version below the running one is invalid",
            Observed { cluster: Some(cluster(ClusterState::Active, "1.32")), ..Observed::default() },
            desired(),
            Plan::Invalid(
                "the control plane cannot be downgraded from v1.32 to v1.31; set spec.version to v1.32 or later".into(),
            ),
        );
        add(
            "an upgrade goes before a configuration change",
            active(),
            Desired {
                version: KubeVersion::new(1, 32),
                logging: BTreeSet::from([LogKind::Audit]),
                ..desired()
            },
            Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
        );
        add(
            "a private endpoint asked for updates endpoint access",
            active(),
            Desired {
                endpoint_access: EndpointAccess {
                    private: true,
                    ..EndpointAccess::default()
                },
                ..desired()
            },
            Plan::UpdateEndpointAccess,
        );
        add(
            "endpoint access goes before logging: one kind of update per call",
            active(),
            Desired {
                endpoint_access: EndpointAccess {
                    public_cidrs: vec!["203.0.113.0/24".into()],
                    ..EndpointAccess::default()
                },
                logging: BTreeSet::from([LogKind::ApiServer]),
                ..desired()
            },
            Plan::UpdateEndpointAccess,
        );
        add(
            "a logging change updates logging",
            active(),
            Desired {
                logging: BTreeSet::from([LogKind::ApiServer, LogKind::Scheduler]),
                ..desired()
            },
            Plan::UpdateLogging,
        );
        let mut config_map = active();
        if let Some(c) = config_map.cluster.as_mut() {
            c.authentication_mode = Some("CONFIG_MAP".into());
        }
        add(
            "authentication mode moves from CONFIG_MAP through API_AND_CONFIG_MAP",
            config_map,
            Desired {
                authentication_mode: Some(AuthenticationMode::Api),
                ..desired()
            },
            Plan::UpdateAuthenticationMode(AuthenticationMode::ApiAndConfigMap),
        );
        add(
            "authentication mode cannot go back from API",
            active(),
            Desired { authentication_mode: Some(AuthenticationMode::ApiAndConfigMap), ..desired() },
            Plan::Invalid(
                "spec.eks.access.authenticationMode cannot go back from API to API_AND_CONFIG_MAP: EKS only moves from CONFIG_MAP to API_AND_CONFIG_MAP to API".into(),
            ),
        );
        add(
            "an unset authentication mode leaves EKS's alone",
            active(),
            desired(),
            Plan::Nothing,
        );

        let with_addons = Desired {
            addons: vec![
                addon("vpc-cni", None, None),
                addon("coredns", Some("v1.11.3-eksbuild.2"), None),
            ],
            ..desired()
        };
        add(
            "a missing add-on is created",
            active(),
            with_addons.clone(),
            Plan::CreateAddon(addon("vpc-cni", None, None)),
        );
        add(
            "a busy add-on does not stop the next one from being created",
            Observed {
                addons: BTreeMap::from([(
                    "vpc-cni".into(),
                    found(
                        AddonState::Busy("CREATING".into()),
                        "v1.19.0-eksbuild.1",
                        None,
                    ),
                )]),
                ..active()
            },
            with_addons.clone(),
            Plan::CreateAddon(addon("coredns", Some("v1.11.3-eksbuild.2"), None)),
        );
        add(
            "a busy add-on is waited for when nothing else is to do",
            Observed {
                addons: BTreeMap::from([
                    (
                        "vpc-cni".into(),
                        found(
                            AddonState::Busy("UPDATING".into()),
                            "v1.19.0-eksbuild.1",
                            None,
                        ),
                    ),
                    (
                        "coredns".into(),
                        found(AddonState::Settled, "v1.11.3-eksbuild.2", None),
                    ),
                ]),
                ..active()
            },
            with_addons.clone(),
            Plan::Wait(Wait::Addon("vpc-cni".into())),
        );
        add(
            "an add-on at another version than the spec's is updated",
            Observed {
                addons: BTreeMap::from([
                    (
                        "vpc-cni".into(),
                        found(AddonState::Settled, "v1.19.0-eksbuild.1", None),
                    ),
                    (
                        "coredns".into(),
                        found(AddonState::Settled, "v1.11.1-eksbuild.1", None),
                    ),
                ]),
                ..active()
            },
            with_addons.clone(),
            Plan::UpdateAddon(addon("coredns", Some("v1.11.3-eksbuild.2"), None)),
        );
        add(
            "an add-on without a version in the spec keeps the version EKS chose",
            Observed {
                addons: BTreeMap::from([
                    (
                        "vpc-cni".into(),
                        found(AddonState::Settled, "v1.18.0-eksbuild.1", None),
                    ),
                    (
                        "coredns".into(),
                        found(AddonState::Settled, "v1.11.3-eksbuild.2", None),
                    ),
                ]),
                ..active()
            },
            with_addons.clone(),
            Plan::Nothing,
        );
        let configured = Desired {
            addons: vec![addon("coredns", None, Some("{\"replicaCount\": 3}"))],
            ..desired()
        };
        add(
            "an add-on configuration change updates the add-on",
            Observed {
                addons: BTreeMap::from([(
                    "coredns".into(),
                    found(AddonState::Settled, "v1", Some("{\"replicaCount\": 2}")),
                )]),
                ..active()
            },
            configured.clone(),
            Plan::UpdateAddon(addon("coredns", None, Some("{\"replicaCount\": 3}"))),
        );
        add(
            "an add-on whose last update failed is tried again when it still differs",
            Observed {
                addons: BTreeMap::from([(
                    "coredns".into(),
                    found(AddonState::ChangeFailed("x".into()), "v1", None),
                )]),
                ..active()
            },
            configured,
            Plan::UpdateAddon(addon("coredns", None, Some("{\"replicaCount\": 3}"))),
        );
        add(
            "an add-on EKS failed to create is reported",
            Observed {
                addons: BTreeMap::from([("vpc-cni".into(), found(AddonState::CreateFailed("role missing".into()), "v1", None))]),
                ..active()
            },
            with_addons,
            Plan::Failed(
                "EKS could not create add-on vpc-cni (role missing); fix spec.addons or delete the add-on in EKS so it is created again".into(),
            ),
        );
        add(
            "add-ons wait while an upgrade is due",
            active(),
            Desired {
                version: KubeVersion::new(1, 32),
                addons: vec![addon("vpc-cni", None, None)],
                ..desired()
            },
            Plan::Upgrade {
                to: KubeVersion::new(1, 32),
            },
        );

        let with_entries = Desired {
            access_entries: vec![entry(ROLE, &[ADMIN, VIEW])],
            ..desired()
        };
        add(
            "a missing access entry is created",
            Observed {
                access: Some(BTreeMap::new()),
                ..active()
            },
            with_entries.clone(),
            Plan::CreateAccessEntry(entry(ROLE, &[ADMIN, VIEW])),
        );
        add(
            "a missing policy of an existing access entry is associated",
            Observed {
                access: Some(BTreeMap::from([(
                    ROLE.to_string(),
                    BTreeSet::from([ADMIN.to_string()]),
                )])),
                ..active()
            },
            with_entries.clone(),
            Plan::AssociateAccessPolicy {
                principal: ROLE.into(),
                policy: VIEW.into(),
            },
        );
        add(
            "access entries with every policy need nothing",
            Observed {
                access: Some(BTreeMap::from([(
                    ROLE.to_string(),
                    BTreeSet::from([ADMIN.to_string(), VIEW.to_string()]),
                )])),
                ..active()
            },
            with_entries.clone(),
            Plan::Nothing,
        );
        add(
            "access entries not looked at are left alone",
            active(),
            with_entries,
            Plan::Nothing,
        );
        cases
    }

    #[test]
    fn the_plan_table() {
        let mut failures = Vec::new();
        for (name, observed, desired, want) in cases() {
            let got = plan(&observed, &desired);
            if got != want {
                failures.push(format!("{name}:\n  want {want:?}\n  got  {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn only_version_steps_count_as_upgrades() {
        assert!(
            Plan::Upgrade {
                to: KubeVersion::new(1, 32)
            }
            .is_upgrade()
        );
        assert!(Plan::Wait(Wait::Updating { upgrade: true }).is_upgrade());
        assert!(!Plan::Wait(Wait::Updating { upgrade: false }).is_upgrade());
        assert!(!Plan::UpdateLogging.is_upgrade());
    }
}
