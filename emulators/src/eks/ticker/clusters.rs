//! The clusters' side effects: the cluster security group made and deleted in moto, and the
//! cluster's workload API server started.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::eks::state::Status;
use crate::eks::{Eks, lower_hex};

impl Eks {
    /// Makes the cluster security group in moto (a no-op without EC2); false when the cluster
    /// failed or went meanwhile.
    pub(super) async fn make_cluster_group(&self, cluster: &str) -> bool {
        let Some(ec2) = &self.ec2 else {
            return true;
        };
        let Some(vpc) = ({
            let st = self.lock();
            st.clusters.get(cluster).map(|c| c.vpc_id.clone())
        }) else {
            return false;
        };
        let name = format!("eks-cluster-sg-{cluster}-{}", lower_hex(10));
        let tags = [
            ("aws:eks:cluster-name".to_string(), cluster.to_string()),
            ("Name".to_string(), name.clone()),
            (
                format!("kubernetes.io/cluster/{cluster}"),
                "owned".to_string(),
            ),
        ];
        let made = ec2
            .create_security_group(
                &vpc,
                &name,
                "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
                &tags,
            )
            .await;
        // Some(kept) when the cluster is still creating; None when it failed or went meanwhile.
        let orphan = {
            let mut st = self.lock();
            match st
                .clusters
                .get_mut(cluster)
                .filter(|c| *c.life.state() == Status::Creating)
            {
                None => made.ok().map(Err),
                Some(c) => Some(Ok(match made {
                    Ok(id) => {
                        c.cluster_security_group = id;
                        if self.config.workload.is_none() {
                            c.life.release();
                        }
                        true
                    }
                    Err(e) => {
                        tracing::error!(cluster, error = %e, "cluster security group could not be made");
                        c.life.set(Status::Failed);
                        c.issues.push(json!({
                            "code": "Ec2SecurityGroupNotFound",
                            "message": format!("The cluster security group could not be created: {e}"),
                            "resourceIds": [cluster],
                        }));
                        false
                    }
                })),
            }
        };
        match orphan {
            Some(Ok(kept)) => kept,
            Some(Err(id)) => {
                // Deleted while it was made.
                if let Err(e) = ec2.delete_security_group(&id).await {
                    tracing::warn!(cluster, group = %id, error = %e, "cluster security group could not be deleted");
                }
                false
            }
            None => false,
        }
    }

    /// Deletes the cluster security group, then lets the cluster's deletion complete (a group
    /// still in use is tried again a few times; one that stays is left, and logged).
    pub(super) async fn delete_cluster_group(&self, cluster: &str, group: &str) {
        if let Some(ec2) = &self.ec2 {
            let mut attempt = 0;
            loop {
                match ec2.delete_security_group(group).await {
                    Ok(()) => break,
                    Err(e) if attempt < 5 => {
                        attempt += 1;
                        tracing::debug!(cluster, group, error = %e, "cluster security group not deleted yet");
                        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                    }
                    Err(e) => {
                        tracing::warn!(cluster, group, error = %e, "cluster security group could not be deleted");
                        break;
                    }
                }
            }
        }
        let mut st = self.lock();
        if let Some(c) = st.clusters.get_mut(cluster) {
            c.cluster_security_group.clear();
            c.life.release();
        }
    }

    pub(super) async fn start_workload(&self, cluster: &str, id: &str) {
        let Some(w) = &self.config.workload else {
            return;
        };
        let result = w.start_cluster(id).await;
        let keep = {
            let mut st = self.lock();
            let c = st
                .clusters
                .get_mut(cluster)
                .filter(|c| c.workload_id == id && *c.life.state() == Status::Creating);
            match (c, &result) {
                (Some(c), Ok(ep)) => {
                    c.endpoint = Some(ep.server.clone());
                    c.ca_data = Some(STANDARD.encode(&ep.ca_pem));
                    c.life.release();
                    tracing::info!(cluster, server = %ep.server, "workload API server ready");
                    true
                }
                (Some(c), Err(e)) => {
                    tracing::error!(cluster, error = %format!("{e:#}"), "workload API server failed to start");
                    c.life.set(Status::Failed);
                    c.issues.push(json!({
                        "code": "InternalFailure",
                        "message": format!("The control plane failed to start: {e}"),
                        "resourceIds": [cluster],
                    }));
                    false
                }
                (None, _) => false,
            }
        };
        if !keep && result.is_ok() {
            // Deleted while it started.
            w.stop_cluster(id).await;
        }
    }
}
