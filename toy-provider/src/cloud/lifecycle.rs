//! How time passes in the toy cloud: clusters go from CREATING or UPDATING to ACTIVE, instances
//! start and stop, pools are resized, and what has finished deleting leaves the API.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::{Cloud, ClusterState, InstanceRec, InstanceState, PoolRec, State};

const CLUSTER_DELAY: Duration = Duration::from_secs(1);
const INSTANCE_START: Duration = Duration::from_secs(1);
const INSTANCE_STOP: Duration = Duration::from_secs(3);
const NODE_GIVE_UP: Duration = Duration::from_secs(30);

fn pool_settled(p: &PoolRec) -> bool {
    p.instances.len() == p.desired as usize
        && p.instances
            .iter()
            .all(|i| i.state == InstanceState::Running)
}

pub(super) fn pool_status(p: &PoolRec) -> &'static str {
    if p.deleting {
        "DELETING"
    } else if pool_settled(p) {
        "ACTIVE"
    } else if p.was_active {
        "UPDATING"
    } else {
        "CREATING"
    }
}

pub(super) fn new_instances(state: &mut State, prefix: &str, n: u32) -> Vec<InstanceRec> {
    (0..n)
        .map(|_| {
            state.next_instance += 1;
            InstanceRec {
                id: format!("i-{prefix}{:04}", state.next_instance),
                state: InstanceState::Pending,
                since: Instant::now(),
                has_node: false,
            }
        })
        .collect()
}

/// Sets a pool's desired size: new instances start PENDING, surplus ones (newest first) go
/// TERMINATING at once.
pub(super) fn resize(state: &mut State, prefix: &str, cluster: &str, pool: &str, desired: u32) {
    let live = state
        .clusters
        .get(cluster)
        .and_then(|c| c.pools.get(pool))
        .map(|p| {
            p.instances
                .iter()
                .filter(|i| i.state != InstanceState::Terminating)
                .count() as u32
        })
        .unwrap_or_default();
    let added = if desired > live {
        new_instances(state, prefix, desired - live)
    } else {
        Vec::new()
    };
    let Some(p) = state
        .clusters
        .get_mut(cluster)
        .and_then(|c| c.pools.get_mut(pool))
    else {
        return;
    };
    p.desired = desired;
    p.instances.extend(added);
    let mut surplus = live.saturating_sub(desired);
    for i in p.instances.iter_mut().rev() {
        if surplus == 0 {
            break;
        }
        if i.state != InstanceState::Terminating {
            i.state = InstanceState::Terminating;
            i.since = Instant::now();
            surplus -= 1;
        }
    }
}

/// Whether a terminating instance has stopped (its Node must go).
pub(super) fn stopped(i: &InstanceRec, now: Instant) -> bool {
    i.state == InstanceState::Terminating && now.duration_since(i.since) >= INSTANCE_STOP
}

/// Whether a stopped instance can leave the API: its Node is gone (or the workload cluster has
/// been unreachable for half a minute).
fn instance_gone(i: &InstanceRec, now: Instant) -> bool {
    stopped(i, now) && (!i.has_node || now.duration_since(i.since) >= INSTANCE_STOP + NODE_GIVE_UP)
}

/// Moves every lifecycle forward: the only place time passes in the cloud.
fn advance(state: &mut State, now: Instant) {
    state.clusters.retain(|_, c| {
        !(c.state == ClusterState::Deleting
            && now.duration_since(c.since) >= CLUSTER_DELAY
            && c.pools.is_empty())
    });
    for c in state.clusters.values_mut() {
        match c.state {
            ClusterState::Creating if now.duration_since(c.since) >= CLUSTER_DELAY => {
                c.state = ClusterState::Active;
            }
            ClusterState::Updating if now.duration_since(c.since) >= CLUSTER_DELAY => {
                if let Some(v) = c.pending_version.take() {
                    c.version = v;
                }
                c.state = ClusterState::Active;
            }
            ClusterState::Deleting => {
                for p in c.pools.values_mut() {
                    p.deleting = true;
                    for i in &mut p.instances {
                        if i.state != InstanceState::Terminating {
                            i.state = InstanceState::Terminating;
                            i.since = now;
                        }
                    }
                }
            }
            _ => {}
        }
        for p in c.pools.values_mut() {
            p.instances.retain(|i| !instance_gone(i, now));
            for i in &mut p.instances {
                if i.state == InstanceState::Pending
                    && now.duration_since(i.since) >= INSTANCE_START
                {
                    i.state = InstanceState::Running;
                }
            }
            if !p.deleting && pool_settled(p) {
                p.was_active = true;
            }
        }
        c.pools
            .retain(|_, p| !(p.deleting && p.instances.is_empty()));
    }
}

pub(super) async fn lifecycle_loop(cloud: Arc<Cloud>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
        advance(&mut cloud.state(), Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::ClusterRec;
    use super::super::nodes::{stopped_nodes, wanted_nodes};
    use super::*;
    use crate::api;

    fn tags() -> api::Tags {
        api::Tags {
            namespace: "ns".into(),
            cluster: "c".into(),
        }
    }

    fn state_with_pool(desired: u32) -> State {
        let mut state = State::default();
        let instances = new_instances(&mut state, "ab", desired);
        let mut pools = BTreeMap::new();
        pools.insert(
            "p".to_string(),
            PoolRec {
                desired,
                deleting: false,
                was_active: false,
                instances,
            },
        );
        state.clusters.insert(
            "ns-c".into(),
            ClusterRec {
                tags: tags(),
                version: "v1.31.0".into(),
                pending_version: None,
                state: ClusterState::Creating,
                since: Instant::now(),
                pools,
            },
        );
        state
    }

    #[test]
    fn a_cluster_becomes_active_after_a_second_and_instances_start_running() {
        let mut state = state_with_pool(2);
        let later = Instant::now() + Duration::from_millis(1100);
        advance(&mut state, later);
        let c = &state.clusters["ns-c"];
        assert_eq!(c.state, ClusterState::Active);
        assert_eq!(pool_status(&c.pools["p"]), "ACTIVE");
        assert_eq!(wanted_nodes(&state, later).len(), 2);
    }

    #[test]
    fn a_stopped_instance_leaves_the_api_only_after_its_node_is_gone() {
        let mut state = state_with_pool(2);
        let t0 = Instant::now();
        advance(&mut state, t0 + Duration::from_millis(1100));
        assert_eq!(wanted_nodes(&state, t0).len(), 2);
        for i in &mut state
            .clusters
            .get_mut("ns-c")
            .unwrap()
            .pools
            .get_mut("p")
            .unwrap()
            .instances
        {
            i.has_node = true;
        }
        resize(&mut state, "ab", "ns-c", "p", 1);
        let p = &state.clusters["ns-c"].pools["p"];
        assert_eq!(p.instances.len(), 2);
        assert_eq!(pool_status(p), "UPDATING");
        let now = Instant::now();
        assert_eq!(
            wanted_nodes(&state, now).len(),
            2,
            "the Node stays while terminating"
        );

        let stopped_at = now + INSTANCE_STOP + Duration::from_millis(100);
        advance(&mut state, stopped_at);
        assert_eq!(
            wanted_nodes(&state, stopped_at).len(),
            1,
            "the stopped instance's Node must go"
        );
        assert_eq!(
            state.clusters["ns-c"].pools["p"].instances.len(),
            2,
            "the instance stays until its Node is gone"
        );
        assert_eq!(stopped_nodes(&state, stopped_at).len(), 1);
        for i in &mut state
            .clusters
            .get_mut("ns-c")
            .unwrap()
            .pools
            .get_mut("p")
            .unwrap()
            .instances
        {
            if i.state == InstanceState::Terminating {
                i.has_node = false;
            }
        }
        advance(&mut state, stopped_at);
        assert_eq!(state.clusters["ns-c"].pools["p"].instances.len(), 1);
        assert_eq!(pool_status(&state.clusters["ns-c"].pools["p"]), "ACTIVE");
    }
}
