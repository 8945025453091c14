//! Deleting a pool: found by the Cluster's name even when the Cluster is gone; released when
//! nothing is left to reach; only a pool tagged as ours is deleted (one that is not is left in
//! place with a warning event); with `spec.deletionPolicy: Orphan` our ownership tag is removed
//! and the pool left running.

use contract::api::DeletionPolicy;
use contract::conditions::Reason;
use contract::ownership::Owner;
use contract::plan::Lifecycle;
use kube::{Resource, ResourceExt};

use super::{Located, MachinePoolCloud, ManagedMachinePool, PoolLook, PoolStep};
use crate::control_plane::{Request, Started};
use crate::{Cleanup, CleanupContext, ClusterRef, ProviderError};

impl<C: MachinePoolCloud> super::MachinePoolReconciler<C> {
    pub(super) async fn delete(
        &self,
        obj: &C::Object,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        let profile = self.profile;
        let created_something =
            obj.cloud_id().is_some() || obj.status_common().is_some_and(|s| s.operation.is_some());
        let kind = C::Object::kind(&()).to_string();
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, &kind)? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let Ok(name) = profile.names.of(obj) else {
            // A name the cloud refuses: nothing can have been created under it.
            return Ok(Cleanup::Done);
        };
        let namespace = obj.namespace().unwrap_or_default();
        // With the Cluster gone the pool is still found, by the objects labelled with the
        // Cluster's name: one policy for every kind.
        let cluster = match ctx.cluster.as_deref() {
            Some(c) => ClusterRef::Live(c),
            None => ClusterRef::Gone {
                namespace: &namespace,
                name: &cluster_name,
            },
        };
        let located = self
            .reach(
                obj,
                cluster,
                &ctx.client,
                &ctx.cloud_calls,
                &name,
                crate::cluster_objects::ControlPlaneNeed::Present,
            )
            .await;
        let at = match located {
            Ok(Located::Found((at, _))) => at,
            Ok(Located::NotYet(message)) => {
                // No control plane (or no infrastructure) left: the cluster, and every pool in
                // it, went with it; clouds refuse to delete a cluster that still has pools.
                tracing::info!(%message, "nothing left to reach; releasing");
                return Ok(Cleanup::Done);
            }
            // A cluster spec that never let a pass reach the cloud: nothing can have been
            // created. (Missing credentials are not this case: they keep the finalizer.)
            Err(ProviderError::Terminal {
                reason: Reason::InvalidSpec,
                message,
            }) => {
                ctx.events
                    .warning(
                        Reason::InvalidSpec.as_str(),
                        "Delete",
                        format!("{message}; nothing to delete in {}", profile.cloud),
                    )
                    .await;
                return Ok(Cleanup::Done);
            }
            Err(error) => return Err(error),
        };
        let observed = self.cloud.observe(&at, PoolLook::for_delete()).await?;
        let Some(found) = observed.pool else {
            return Ok(Cleanup::Done);
        };
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        if !owner.owns(&found.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place(
                        &format!("{} {}", profile.cloud, profile.noun),
                        &at.place(profile.cloud),
                    ),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        let request = Request::new(
            owner.tags(&at.tags),
            ctx.now,
            obj.uid().unwrap_or_default(),
            obj.meta().generation,
            profile.token_limits,
        );
        if obj.spec_common().deletion_policy == DeletionPolicy::Orphan {
            let (key, _) = owner.tag();
            let id = found.id.as_str();
            self.cloud
                .act(&at, PoolStep::Untag { id, key: &key }, &request)
                .await?;
            let what = format!("{} {} {name} ({id})", profile.cloud, profile.noun);
            crate::adoption::orphaned(&ctx.events, &what).await;
            return Ok(Cleanup::Done);
        }
        let deleting = || {
            Cleanup::pending(
                profile.poll,
                format!("{} is deleting {} {name}", profile.cloud, profile.noun),
            )
        };
        if found.lifecycle == Lifecycle::Deleting {
            return Ok(deleting());
        }
        match self.cloud.act(&at, PoolStep::Delete, &request).await? {
            Started::Gone => Ok(Cleanup::Done),
            Started::Busy(message) => Ok(Cleanup::pending(
                profile.poll,
                format!(
                    "{} {name} is busy; deleting it once {} allows: {message}",
                    profile.noun, profile.cloud
                ),
            )),
            Started::Created { .. }
            | Started::Operation(_)
            | Started::Untracked
            | Started::Done => Ok(deleting()),
        }
    }
}
