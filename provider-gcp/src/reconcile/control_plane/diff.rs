//! The difference between the spec and the GKE cluster, one change at a time: [`diff`] and
//! [`ClusterChange`], said for the conditions by its [`DescribeChange`]. Pure. A
//! `ClusterUpdate` carries one field, so each difference is its own step.

use contract::plan::CloudStep;
use google_cloud_container_v1::model as gke;
use provider_runtime::control_plane::DescribeChange;
use serde_json::{Value, json};

use super::BOOTSTRAP_POOL;
use super::desired::DesiredCluster;
use super::observe::ObservedCluster;
use crate::api::ReleaseChannel;

/// One difference, one GKE call.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterChange {
    /// Remove the node pool the cluster was created with.
    RemoveBootstrapPool,
    /// `desiredControlPlaneEndpointsConfig`: public endpoint, authorized networks, DNS
    /// endpoint access.
    Endpoints,
    /// `desiredLoggingConfig`.
    Logging,
    /// `desiredWorkloadIdentityConfig`.
    WorkloadIdentity,
    /// `desiredDatabaseEncryption`.
    Encryption,
    /// `desiredReleaseChannel`.
    ReleaseChannel,
}

/// The GKE cluster as a GKEControlPlane's spec would ask for it, for an adoption's plan:
/// endpoint access and authorized networks (a named network is one of `spec.gke`'s, an unnamed
/// one a public CIDR), the logging GKE has, workload identity, encryption, the release channel.
pub fn as_spec(cluster: &ObservedCluster) -> Value {
    use gke::logging_component_config::Component;
    let (named, unnamed): (Vec<_>, Vec<_>) = cluster
        .authorized
        .iter()
        .partition(|(_, name)| !name.is_empty());
    let networks: Vec<Value> = named
        .iter()
        .map(|(cidr, name)| json!({"cidrBlock": cidr, "displayName": name}))
        .collect();
    let cidrs: Vec<&String> = unnamed.iter().map(|(cidr, _)| cidr).collect();
    let logs = |c: Component| cluster.logging.contains(&c);
    let channel = match cluster.channel {
        gke::release_channel::Channel::Rapid => Some(ReleaseChannel::Rapid),
        gke::release_channel::Channel::Regular => Some(ReleaseChannel::Regular),
        gke::release_channel::Channel::Stable => Some(ReleaseChannel::Stable),
        gke::release_channel::Channel::Extended => Some(ReleaseChannel::Extended),
        _ => None,
    };
    let pool = &cluster.workload_pool;
    json!({
        "endpointAccess": {"public": cluster.public, "publicCIDRs": cidrs},
        "logging": {
            "apiServer": logs(Component::Apiserver),
            "controllerManager": logs(Component::ControllerManager),
            "scheduler": logs(Component::Scheduler),
        },
        "oidcIssuer": {"enabled": !pool.is_empty()},
        "encryption": (!cluster.kms_key.is_empty()).then(|| json!({"kmsKeyID": cluster.kms_key})),
        "gke": {
            "authorizedNetworks": networks,
            "releaseChannel": channel,
            "workloadIdentityPool": (!pool.is_empty()).then_some(pool),
            "dnsEndpointExternalTraffic": cluster.dns_external,
        },
    })
}

/// The first difference between `want` and `cluster`.
pub fn diff(want: &DesiredCluster, cluster: &ObservedCluster) -> CloudStep<ClusterChange> {
    first_difference(want, cluster).into()
}

fn first_difference(want: &DesiredCluster, observed: &ObservedCluster) -> Option<ClusterChange> {
    let mut logging = observed.logging.clone();
    logging.sort_by_key(|c| c.value());
    let mut wanted_logging = want.logging.clone();
    wanted_logging.sort_by_key(|c| c.value());
    if observed.pools.iter().any(|p| p == BOOTSTRAP_POOL) {
        Some(ClusterChange::RemoveBootstrapPool)
    } else if observed.public != want.public
        || observed.dns_external != want.dns_external
        || observed.authorized != want.authorized
    {
        Some(ClusterChange::Endpoints)
    } else if logging != wanted_logging {
        Some(ClusterChange::Logging)
    } else if observed.workload_pool != want.workload_pool {
        Some(ClusterChange::WorkloadIdentity)
    } else if observed.kms_key != want.kms_key {
        Some(ClusterChange::Encryption)
    } else if observed.channel != want.channel {
        Some(ClusterChange::ReleaseChannel)
    } else {
        None
    }
}

impl DescribeChange for ClusterChange {
    fn describe(&self, name: &str) -> String {
        match self {
            ClusterChange::RemoveBootstrapPool => {
                format!("removing the bootstrap node pool {BOOTSTRAP_POOL} of GKE cluster {name}")
            }
            ClusterChange::Endpoints => {
                format!("changing the endpoint access or authorized networks of GKE cluster {name}")
            }
            ClusterChange::Logging => {
                format!("changing the control plane logging of GKE cluster {name}")
            }
            ClusterChange::WorkloadIdentity => {
                format!("changing workload identity of GKE cluster {name}")
            }
            ClusterChange::Encryption => {
                format!("changing the Secrets encryption of GKE cluster {name}")
            }
            ClusterChange::ReleaseChannel => {
                format!("changing the release channel of GKE cluster {name}")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::{GKEClusterSpec, GKEControlPlane};
    use crate::scope::Infra;
    use provider_runtime::cluster_objects::InfraOf as _;

    fn want(spec: serde_json::Value) -> DesiredCluster {
        let cp: GKEControlPlane = serde_json::from_value(json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
            "kind": "GKEControlPlane",
            "metadata": {"name": "cp", "namespace": "ns"},
            "spec": spec,
        }))
        .unwrap();
        let mut infra = Infra::from_own(&GKEClusterSpec::default());
        infra.project = "proj".into();
        super::super::desired::validate(&cp, &infra).unwrap()
    }

    fn as_made(want: &DesiredCluster) -> ObservedCluster {
        ObservedCluster {
            public: want.public,
            authorized: want.authorized.clone(),
            logging: want.logging.iter().rev().cloned().collect(),
            workload_pool: want.workload_pool.clone(),
            kms_key: want.kms_key.clone(),
            channel: want.channel.clone(),
            dns_external: want.dns_external,
            ..ObservedCluster::default()
        }
    }

    #[test]
    fn a_cluster_as_the_spec_asks_needs_nothing_and_each_difference_is_one_step() {
        let want = want(json!({
            "version": "v1.33.0",
            "oidcIssuer": {"enabled": true},
            "logging": {"apiServer": true},
        }));
        assert_eq!(want.workload_pool, "proj.svc.id.goog");
        let made = as_made(&want);
        assert!(matches!(diff(&want, &made), CloudStep::Nothing));
        let mut with_bootstrap = made.clone();
        with_bootstrap.pools = vec![BOOTSTRAP_POOL.into()];
        with_bootstrap.logging.clear();
        assert!(matches!(
            diff(&want, &with_bootstrap),
            CloudStep::Change(ClusterChange::RemoveBootstrapPool)
        ));
        let mut no_logs = made;
        no_logs.logging.clear();
        let CloudStep::Change(change) = diff(&want, &no_logs) else {
            panic!("the logging differs");
        };
        assert_eq!(change, ClusterChange::Logging);
        assert_eq!(
            change.describe("c1"),
            "changing the control plane logging of GKE cluster c1"
        );
    }

    #[test]
    fn a_cluster_reads_back_as_the_spec_would_ask_for_it() {
        use gke::logging_component_config::Component;
        let cluster = ObservedCluster {
            public: true,
            authorized: vec![
                ("10.0.0.0/8".into(), String::new()),
                ("192.168.0.0/16".into(), "office".into()),
            ],
            logging: vec![Component::SystemComponents, Component::Apiserver],
            workload_pool: "proj.svc.id.goog".into(),
            channel: gke::release_channel::Channel::Regular,
            ..ObservedCluster::default()
        };
        let spec = as_spec(&cluster);
        assert_eq!(spec["endpointAccess"]["publicCIDRs"], json!(["10.0.0.0/8"]));
        assert_eq!(
            spec["gke"]["authorizedNetworks"],
            json!([{"cidrBlock": "192.168.0.0/16", "displayName": "office"}])
        );
        assert_eq!(
            spec["logging"],
            json!({"apiServer": true, "controllerManager": false, "scheduler": false})
        );
        assert_eq!(spec["oidcIssuer"], json!({"enabled": true}));
        assert_eq!(spec["gke"]["releaseChannel"], json!("Regular"));
        assert_eq!(spec["encryption"], Value::Null);
        // What the spec asks is what the diff asks: a cluster made as specified needs nothing.
        let want = want(json!({
            "version": "v1.33.0",
            "oidcIssuer": {"enabled": true},
            "logging": {"apiServer": true},
        }));
        assert!(matches!(diff(&want, &as_made(&want)), CloudStep::Nothing));
        assert_eq!(
            as_spec(&as_made(&want))["logging"]["apiServer"],
            json!(true)
        );
    }
}
