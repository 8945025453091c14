//! EKS's own difference between its cluster and the spec, once the kernel's steps of the plan
//! (ownership, state, tracked update, version step) are done: [`diff`], pure, and the one
//! [`ClusterChange`] it finds, said for the conditions by its [`DescribeChange`]. The table
//! tests at the bottom are the specification.
//!
//! EKS runs one cluster update at a time and refuses to mix kinds of configuration in one update,
//! so the difference is the first one in a fixed order (endpoint access, logging, authentication
//! mode, add-ons, access entries) and the next one waits for the next pass.

use std::collections::BTreeSet;

use contract::api::{Addon, EndpointAccess};
use contract::plan::CloudStep;
use provider_runtime::control_plane::DescribeChange;
use serde_json::{Value, json};

use super::desired::{DesiredCluster, LogKind, authentication_mode_name};
use super::observe::{AddonState, ObservedAddon, ObservedCluster};
use crate::api::{AccessEntry, AuthenticationMode};

/// What EKS allows from anywhere when no public CIDR is given.
pub const ANY_IPV4: &str = "0.0.0.0/0";

/// One change EKS makes.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterChange {
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

impl DescribeChange for ClusterChange {
    fn describe(&self, name: &str) -> String {
        match self {
            Self::EndpointAccess => format!("EKS is updating the endpoint access of {name}"),
            Self::Logging => format!("EKS is updating the control plane logging of {name}"),
            Self::AuthenticationMode(_) => {
                format!("EKS is updating the authentication mode of {name}")
            }
            Self::CreateAddon(a) => format!("EKS is creating add-on {} on {name}", a.name),
            Self::UpdateAddon(a) => format!("EKS is updating add-on {} on {name}", a.name),
            Self::CreateAccessEntry(e) => {
                format!("Creating the access entry of {} on {name}", e.principal_arn)
            }
            Self::AssociateAccessPolicy { principal, policy } => {
                format!("Associating {policy} with {principal} on {name}")
            }
        }
    }
}

/// The first difference between the EKS cluster (with its extras) and the spec.
pub fn diff(desired: &DesiredCluster, cluster: &ObservedCluster) -> CloudStep<ClusterChange> {
    let extra = &cluster.extras;
    if endpoint_access_differs(cluster, &desired.endpoint_access) {
        return CloudStep::Change(ClusterChange::EndpointAccess);
    }
    if cluster.logging != desired.logging {
        return CloudStep::Change(ClusterChange::Logging);
    }
    if let Some(wanted) = desired.authentication_mode
        && let Some(step) = authentication_step(cluster.authentication_mode.as_deref(), wanted)
    {
        return step;
    }

    let mut busy = None;
    for addon in &desired.addons {
        match extra.addons.get(&addon.name) {
            None => return CloudStep::Change(ClusterChange::CreateAddon(addon.clone())),
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
                return CloudStep::Change(ClusterChange::UpdateAddon(addon.clone()));
            }
            Some(_) => {}
        }
    }
    if let Some(access) = &extra.access {
        for entry in &desired.access_entries {
            let Some(policies) = access.get(&entry.principal_arn) else {
                return CloudStep::Change(ClusterChange::CreateAccessEntry(entry.clone()));
            };
            if let Some(policy) = entry.policy_arns.iter().find(|p| !policies.contains(*p)) {
                return CloudStep::Change(ClusterChange::AssociateAccessPolicy {
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

/// The EKS cluster as an EKSControlPlane's spec would ask for it, for an adoption's plan:
/// endpoint access, logging, encryption, the add-ons the spec names, the authentication mode.
/// Access entries are not compared (EKS lists them per principal; the spec's are created when
/// missing once the cluster is ours).
pub fn as_spec(cluster: &ObservedCluster) -> Value {
    let any = cluster.public_cidrs.iter().all(|c| c == ANY_IPV4);
    let cidrs = if any {
        &[][..]
    } else {
        &cluster.public_cidrs[..]
    };
    let on = |kind| cluster.logging.contains(&kind);
    let addons: Vec<Value> = cluster
        .extras
        .addons
        .iter()
        .map(|(name, a)| json!({"name": name, "version": a.version, "configuration": a.configuration}))
        .collect();
    // Written out field by field: the API types leave their defaults out when serialised.
    json!({
        "endpointAccess": {
            "public": cluster.public_access,
            "private": cluster.private_access,
            "publicCIDRs": cidrs,
        },
        "logging": {
            "apiServer": on(LogKind::ApiServer),
            "audit": on(LogKind::Audit),
            "authenticator": on(LogKind::Authenticator),
            "controllerManager": on(LogKind::ControllerManager),
            "scheduler": on(LogKind::Scheduler),
        },
        "encryption": cluster.kms_key_id.as_ref().map(|k| json!({"kmsKeyID": k})),
        "addons": addons,
        "eks": {"access": {"authenticationMode": cluster.authentication_mode}},
    })
}

/// EKS moves authentication modes one way only: CONFIG_MAP → API_AND_CONFIG_MAP → API.
fn authentication_step(
    current: Option<&str>,
    wanted: AuthenticationMode,
) -> Option<CloudStep<ClusterChange>> {
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
            authentication_mode_name(wanted)
        ))),
        // One step at a time: CONFIG_MAP goes through API_AND_CONFIG_MAP.
        std::cmp::Ordering::Less if have == 0 => Some(CloudStep::Change(
            ClusterChange::AuthenticationMode(AuthenticationMode::ApiAndConfigMap),
        )),
        std::cmp::Ordering::Less => {
            Some(CloudStep::Change(ClusterChange::AuthenticationMode(wanted)))
        }
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

/// Whether EKS's endpoint settings differ from what `access` asks for. Public CIDRs count only
/// while the public endpoint is on; an empty list means "anywhere", as EKS reports it.
pub fn endpoint_access_differs(c: &ObservedCluster, access: &EndpointAccess) -> bool {
    if c.public_access != access.public || c.private_access != access.private {
        return true;
    }
    access.public && cidr_set(&access.public_cidrs) != cidr_set(&c.public_cidrs)
}

fn cidr_set(cidrs: &[String]) -> BTreeSet<&str> {
    if cidrs.is_empty() {
        BTreeSet::from([ANY_IPV4])
    } else {
        cidrs.iter().map(String::as_str).collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::BTreeMap;

    use contract::plan::Lifecycle;

    use super::super::desired::LogKind;
    use super::super::observe::ClusterExtras;
    use super::*;

    /// What a pass observed of an EKS cluster of ours.
    #[derive(Clone)]
    struct Observed {
        cluster: ObservedCluster,
        addons: BTreeMap<String, ObservedAddon>,
        access: Option<BTreeMap<String, BTreeSet<String>>>,
    }

    fn desired() -> DesiredCluster {
        DesiredCluster {
            role_arn: Some("arn:aws:iam::123456789012:role/eks".into()),
            subnet_ids: vec!["subnet-a".into(), "subnet-b".into()],
            security_group_ids: Vec::new(),
            endpoint_access: EndpointAccess::default(),
            logging: BTreeSet::new(),
            authentication_mode: None,
            bootstrap_cluster_creator_admin: true,
            kms_key_id: None,
            service_cidr: None,
            request_overrides: None,
            addons: Vec::new(),
            access_entries: Vec::new(),
        }
    }

    /// EKS's difference, as the reconciler asks for it.
    fn run(o: &Observed, d: &DesiredCluster) -> CloudStep<ClusterChange> {
        let mut cluster = o.cluster.clone();
        cluster.extras = ClusterExtras {
            addons: o.addons.clone(),
            access: o.access.clone(),
        };
        diff(d, &cluster)
    }

    fn cluster() -> ObservedCluster {
        ObservedCluster {
            name: "team-a-c1".into(),
            arn: "arn:aws:eks:us-west-2:123456789012:cluster/team-a-c1".into(),
            state: Lifecycle::Running,
            version: "1.31".into(),
            platform_version: Some("eks.1".into()),
            endpoint_url: Some("https://X.gr7.us-west-2.eks.amazonaws.com".into()),
            ca_data: Some("Q0E=".into()),
            public_access: true,
            private_access: false,
            public_cidrs: vec![ANY_IPV4.into()],
            logging: BTreeSet::new(),
            authentication_mode: Some("API".into()),
            oidc_issuer: None,
            kms_key_id: None,
            tags: BTreeMap::new(),
            extras: ClusterExtras::default(),
        }
    }

    fn active() -> Observed {
        Observed {
            cluster: cluster(),
            addons: BTreeMap::new(),
            access: None,
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

    type Case = (
        &'static str,
        Observed,
        DesiredCluster,
        CloudStep<ClusterChange>,
    );

    fn cases() -> Vec<Case> {
        let mut cases: Vec<Case> = Vec::new();
        let mut add = |name, o, d, p| cases.push((name, o, d, p));

        add(
            "a private endpoint asked for updates endpoint access",
            active(),
            DesiredCluster {
                endpoint_access: EndpointAccess {
                    private: true,
                    ..EndpointAccess::default()
                },
                ..desired()
            },
            CloudStep::Change(ClusterChange::EndpointAccess),
        );
        add(
            "endpoint access goes before logging: one kind of update per call",
            active(),
            DesiredCluster {
                endpoint_access: EndpointAccess {
                    public_cidrs: vec!["203.0.113.0/24".into()],
                    ..EndpointAccess::default()
                },
                logging: BTreeSet::from([LogKind::ApiServer]),
                ..desired()
            },
            CloudStep::Change(ClusterChange::EndpointAccess),
        );
        add(
            "a logging change updates logging",
            active(),
            DesiredCluster {
                logging: BTreeSet::from([LogKind::ApiServer, LogKind::Scheduler]),
                ..desired()
            },
            CloudStep::Change(ClusterChange::Logging),
        );
        let mut config_map = active();
        config_map.cluster.authentication_mode = Some("CONFIG_MAP".into());
        add(
            "authentication mode moves from CONFIG_MAP through API_AND_CONFIG_MAP",
            config_map,
            DesiredCluster {
                authentication_mode: Some(AuthenticationMode::Api),
                ..desired()
            },
            CloudStep::Change(ClusterChange::AuthenticationMode(
                AuthenticationMode::ApiAndConfigMap,
            )),
        );
        add(
            "authentication mode cannot go back from API",
            active(),
            DesiredCluster { authentication_mode: Some(AuthenticationMode::ApiAndConfigMap), ..desired() },
            CloudStep::Invalid(
                "spec.eks.access.authenticationMode cannot go back from API to API_AND_CONFIG_MAP: EKS only moves from CONFIG_MAP to API_AND_CONFIG_MAP to API".into(),
            ),
        );
        add(
            "an unset authentication mode leaves EKS's alone",
            active(),
            desired(),
            CloudStep::Nothing,
        );

        let with_addons = DesiredCluster {
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
            CloudStep::Change(ClusterChange::CreateAddon(addon("vpc-cni", None, None))),
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
            CloudStep::Change(ClusterChange::CreateAddon(addon(
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
            CloudStep::Wait("Waiting for add-on vpc-cni on team-a-c1 to become ACTIVE".into()),
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
            CloudStep::Change(ClusterChange::UpdateAddon(addon(
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
            CloudStep::Nothing,
        );
        let configured = DesiredCluster {
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
            CloudStep::Change(ClusterChange::UpdateAddon(addon(
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
            CloudStep::Change(ClusterChange::UpdateAddon(addon(
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
            CloudStep::Failed(
                "EKS could not create add-on vpc-cni (role missing); fix spec.addons or delete the add-on in EKS so it is created again".into(),
            ),
        );

        let with_entries = DesiredCluster {
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
            CloudStep::Change(ClusterChange::CreateAccessEntry(entry(
                ROLE,
                &[ADMIN, VIEW],
            ))),
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
            CloudStep::Change(ClusterChange::AssociateAccessPolicy {
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
            CloudStep::Nothing,
        );
        add(
            "access entries not looked at are left alone",
            active(),
            with_entries,
            CloudStep::Nothing,
        );
        cases
    }

    #[test]
    fn the_diff_table() {
        let mut failures = Vec::new();
        for (name, observed, desired, want) in cases() {
            let got = run(&observed, &desired);
            if got != want {
                failures.push(format!("{name}:\n  want {want:?}\n  got  {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn endpoint_access_compares_cidrs_as_sets_and_only_while_public() {
        let mut c = cluster();
        assert!(
            !endpoint_access_differs(&c, &EndpointAccess::default()),
            "no CIDRs means 0.0.0.0/0"
        );
        let narrowed = EndpointAccess {
            public_cidrs: vec!["203.0.113.0/24".into()],
            ..Default::default()
        };
        assert!(endpoint_access_differs(&c, &narrowed));
        c.public_cidrs = vec!["198.51.100.0/24".into(), "203.0.113.0/24".into()];
        let both = EndpointAccess {
            public_cidrs: vec!["203.0.113.0/24".into(), "198.51.100.0/24".into()],
            ..Default::default()
        };
        assert!(!endpoint_access_differs(&c, &both));
        c.public_access = false;
        c.private_access = true;
        let private = EndpointAccess {
            public: false,
            private: true,
            ..Default::default()
        };
        assert!(
            !endpoint_access_differs(&c, &private),
            "CIDRs do not matter without a public endpoint"
        );
    }

    #[test]
    fn an_adoption_plan_lists_what_the_spec_changes_and_keeps_what_it_leaves_unset() {
        use contract::adoption::{SetFields, plan};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};

        let mut found = cluster();
        found.logging = BTreeSet::from([LogKind::Audit]);
        found.kms_key_id = Some("arn:aws:kms:us-west-2:123456789012:key/k1".into());
        found.extras.addons.insert(
            "coredns".into(),
            ObservedAddon {
                state: AddonState::Settled,
                version: Some("v1.11.1-eksbuild.1".into()),
                configuration: None,
            },
        );
        let cloud = as_spec(&found);
        assert_eq!(cloud["endpointAccess"]["publicCIDRs"], json!([]));
        assert_eq!(cloud["eks"]["access"]["authenticationMode"], json!("API"));

        let spec = json!({
            "logging": {"apiServer": true, "audit": false, "authenticator": false,
                        "controllerManager": false, "scheduler": false},
            "endpointAccess": {"public": true, "private": false},
            "addons": [{"name": "coredns"}, {"name": "vpc-cni"}],
        });
        let set = SetFields::from_managed(&[ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            fields_v1: Some(FieldsV1(json!({"f:spec": {
                "f:logging": {"f:apiServer": {}},
                "f:addons": {},
            }}))),
            ..ManagedFieldsEntry::default()
        }]);
        let plan = plan(&spec, &set, &cloud);
        let rows: Vec<(&str, &str)> = plan
            .changes
            .iter()
            .map(|c| (c.field.as_str(), c.cloud.as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    "spec.addons",
                    r#"[{"configuration":null,"name":"coredns","version":"v1.11.1-eksbuild.1"}]"#
                ),
                ("spec.logging.apiServer", "false")
            ]
        );
        let mut kept = plan.kept_fields();
        kept.sort();
        assert_eq!(
            kept,
            vec![
                "spec.eks.access.authenticationMode",
                "spec.encryption.kmsKeyID",
                "spec.logging.audit",
            ]
        );
    }
}
