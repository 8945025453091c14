//! EKS's own difference between its cluster and the spec, once the shared steps of the plan
//! ([`contract::plan::control_plane`]: ownership, state, tracked update, version step) are done.
//! Pure: no client, no clock; the table tests at the bottom are the specification.
//!
//! EKS runs one cluster update at a time and refuses to mix kinds of configuration in one update,
//! so the difference is the first one in a fixed order (endpoint access, logging, authentication
//! mode, add-ons, access entries) and the next one waits for the next pass.

use std::collections::{BTreeMap, BTreeSet};

use contract::api::{Addon, EndpointAccess};
use contract::plan::CloudStep;

use super::mapping::{
    AddonState, LogKind, ObservedAddon, ObservedCluster, endpoint_access_differs,
};
use crate::api::{AccessEntry, AuthenticationMode};

/// What EKS compares besides the cluster, read only when it is ours and idle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extra {
    /// The desired add-ons EKS has, by name.
    pub addons: BTreeMap<String, ObservedAddon>,
    /// Access entries by principal ARN with their associated policy ARNs; `None` when not
    /// looked at (no entries desired).
    pub access: Option<BTreeMap<String, BTreeSet<String>>>,
}

/// What the spec asks of EKS beyond the shared steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
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
}

/// One change EKS makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// UpdateClusterConfig with the endpoint access of the spec.
    EndpointAccess,
    /// UpdateClusterConfig with the logging of the spec.
    Logging,
    /// UpdateClusterConfig with a new authentication mode.
    AuthenticationMode(AuthenticationMode),
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
}

impl Change {
    /// What the change does, in the user's terms (`name`: the cluster's).
    pub fn describe(&self, name: &str) -> String {
        match self {
            Change::EndpointAccess => format!("EKS is updating the endpoint access of {name}"),
            Change::Logging => format!("EKS is updating the control plane logging of {name}"),
            Change::AuthenticationMode(_) => {
                format!("EKS is updating the authentication mode of {name}")
            }
            Change::CreateAddon(a) => format!("EKS is creating add-on {} on {name}", a.name),
            Change::UpdateAddon(a) => format!("EKS is updating add-on {} on {name}", a.name),
            Change::CreateAccessEntry(e) => {
                format!("Creating the access entry of {} on {name}", e.principal_arn)
            }
            Change::AssociateAccessPolicy { principal, policy } => {
                format!("Associating {policy} with {principal} on {name}")
            }
        }
    }
}

/// The first difference between the EKS cluster and the spec.
pub fn diff(cluster: &ObservedCluster, extra: &Extra, desired: &Desired) -> CloudStep<Change> {
    if endpoint_access_differs(cluster, &desired.endpoint_access) {
        return CloudStep::Change(Change::EndpointAccess);
    }
    if cluster.logging != desired.logging {
        return CloudStep::Change(Change::Logging);
    }
    if let Some(wanted) = desired.authentication_mode
        && let Some(step) = authentication_step(cluster.authentication_mode.as_deref(), wanted)
    {
        return step;
    }

    let mut busy = None;
    for addon in &desired.addons {
        match extra.addons.get(&addon.name) {
            None => return CloudStep::Change(Change::CreateAddon(addon.clone())),
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
                return CloudStep::Failed(format!(
                    "EKS could not create add-on {} ({why}); fix spec.addons or delete the add-on in EKS so it is created again",
                    addon.name
                ));
            }
            Some(found) if addon_differs(addon, found) => {
                return CloudStep::Change(Change::UpdateAddon(addon.clone()));
            }
            Some(_) => {}
        }
    }
    if let Some(access) = &extra.access {
        for entry in &desired.access_entries {
            let Some(policies) = access.get(&entry.principal_arn) else {
                return CloudStep::Change(Change::CreateAccessEntry(entry.clone()));
            };
            if let Some(policy) = entry.policy_arns.iter().find(|p| !policies.contains(*p)) {
                return CloudStep::Change(Change::AssociateAccessPolicy {
                    principal: entry.principal_arn.clone(),
                    policy: policy.clone(),
                });
            }
        }
    }
    match busy {
        Some(name) => CloudStep::Wait(format!(
            "Waiting for add-on {name} on {} to become ACTIVE",
            cluster.name
        )),
        None => CloudStep::Nothing,
    }
}

/// EKS moves authentication modes one way only: CONFIG_MAP → API_AND_CONFIG_MAP → API.
fn authentication_step(
    current: Option<&str>,
    wanted: AuthenticationMode,
) -> Option<CloudStep<Change>> {
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
        std::cmp::Ordering::Greater => Some(CloudStep::Invalid(format!(
            "spec.eks.access.authenticationMode cannot go back from {} to {}: EKS only moves from CONFIG_MAP to API_AND_CONFIG_MAP to API",
            current.unwrap_or_default(),
            super::mapping::authentication_mode_name(wanted)
        ))),
        // One step at a time: CONFIG_MAP goes through API_AND_CONFIG_MAP.
        std::cmp::Ordering::Less if have == 0 => Some(CloudStep::Change(
            Change::AuthenticationMode(AuthenticationMode::ApiAndConfigMap),
        )),
        std::cmp::Ordering::Less => Some(CloudStep::Change(Change::AuthenticationMode(wanted))),
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
    use contract::ownership::Owner;
    use contract::plan::{ClusterFacts, ControlPlaneIntent, Lifecycle, Plan, Tracked, Wait};
    use contract::version::KubeVersion;

    use super::*;
    use crate::scope;

    const NS: &str = "team-a";
    const CLUSTER: &str = "c1";

    /// What a pass observed, as the generic reconciler gathers it.
    #[derive(Clone, Default)]
    struct Observed {
        cluster: Option<ObservedCluster>,
        tracked: Option<Tracked>,
        addons: BTreeMap<String, ObservedAddon>,
        access: Option<BTreeMap<String, BTreeSet<String>>>,
    }

    /// The whole spec: the shared part and EKS's.
    #[derive(Clone)]
    struct Desired {
        version: KubeVersion,
        endpoint_access: EndpointAccess,
        logging: BTreeSet<LogKind>,
        authentication_mode: Option<AuthenticationMode>,
        addons: Vec<Addon>,
        access_entries: Vec<AccessEntry>,
        adopt: bool,
        owner: Owner,
    }

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

    /// The plan of a pass: the shared steps, then EKS's difference, as the reconciler runs them.
    fn plan(o: &Observed, d: &Desired) -> Plan<Change> {
        let intent = ControlPlaneIntent {
            cloud: "EKS",
            name: "team-a-c1",
            owner: &d.owner,
            adopt: d.adopt,
            version: d.version,
            minors_only: true,
        };
        let facts = o.cluster.as_ref().map(|c| ClusterFacts {
            id: &c.arn,
            lifecycle: &c.state,
            version: &c.version,
            tags: &c.tags,
        });
        let extra = Extra {
            addons: o.addons.clone(),
            access: o.access.clone(),
        };
        let eks = super::Desired {
            endpoint_access: d.endpoint_access.clone(),
            logging: d.logging.clone(),
            authentication_mode: d.authentication_mode,
            addons: d.addons.clone(),
            access_entries: d.access_entries.clone(),
        };
        contract::plan::control_plane(facts, o.tracked.as_ref(), &intent, || match &o.cluster {
            Some(c) => diff(c, &extra, &eks),
            None => CloudStep::Nothing,
        })
    }

    fn ours() -> BTreeMap<String, String> {
        scope::owner(NS, CLUSTER).tags(&BTreeMap::new())
    }

    fn cluster(state: Lifecycle, version: &str) -> ObservedCluster {
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
            cluster: Some(cluster(Lifecycle::Running, "1.31")),
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

    type Case = (&'static str, Observed, Desired, Plan<Change>);

    fn cases() -> Vec<Case> {
        let mut cases: Vec<Case> = Vec::new();
        let mut add = |name, o, d, p| cases.push((name, o, d, p));

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
            Plan::Update(Change::EndpointAccess),
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
            Plan::Update(Change::EndpointAccess),
        );
        add(
            "a logging change updates logging",
            active(),
            Desired {
                logging: BTreeSet::from([LogKind::ApiServer, LogKind::Scheduler]),
                ..desired()
            },
            Plan::Update(Change::Logging),
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
            Plan::Update(Change::AuthenticationMode(
                AuthenticationMode::ApiAndConfigMap,
            )),
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
            Plan::Update(Change::CreateAddon(addon("vpc-cni", None, None))),
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
            Plan::Update(Change::CreateAddon(addon(
                "coredns",
                Some("v1.11.3-eksbuild.2"),
                None,
            ))),
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
            Plan::Wait(Wait::Cloud(
                "Waiting for add-on vpc-cni on team-a-c1 to become ACTIVE".into(),
            )),
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
            Plan::Update(Change::UpdateAddon(addon(
                "coredns",
                Some("v1.11.3-eksbuild.2"),
                None,
            ))),
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
            Plan::Update(Change::UpdateAddon(addon(
                "coredns",
                None,
                Some("{\"replicaCount\": 3}"),
            ))),
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
            Plan::Update(Change::UpdateAddon(addon(
                "coredns",
                None,
                Some("{\"replicaCount\": 3}"),
            ))),
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
            Plan::Update(Change::CreateAccessEntry(entry(ROLE, &[ADMIN, VIEW]))),
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
            Plan::Update(Change::AssociateAccessPolicy {
                principal: ROLE.into(),
                policy: VIEW.into(),
            }),
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
}
