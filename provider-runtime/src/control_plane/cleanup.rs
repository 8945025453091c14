//! Deleting a control plane's cluster: locate it even when the Cluster is gone, look once,
//! delete only what is ours (a cluster that is not is left in place with a warning event),
//! and wait for the cloud; or, with `spec.deletionPolicy: Orphan`, remove our ownership tag
//! and leave the cluster running.

use contract::api::DeletionPolicy;
use contract::conditions::Reason;
use contract::ownership::Owner;
use contract::plan::Lifecycle;
use kube::{Resource, ResourceExt};

use super::{ControlPlaneCloud, Look, ManagedControlPlane, Reach, Request, Started, Step};
use crate::cluster_objects::control_plane_cleanup_infra;
use crate::{Cleanup, CleanupContext, ProviderError};

impl<C: ControlPlaneCloud> super::ControlPlaneReconciler<C> {
    pub(super) async fn delete(
        &self,
        cp: &C::Object,
        ctx: &CleanupContext,
    ) -> Result<Cleanup, ProviderError> {
        self.looks.forget(&cp.uid().unwrap_or_default());
        let profile = self.profile;
        let previous = cp.status_common();
        let created_something =
            previous.is_some_and(|s| s.cloud_id.is_some() || s.operation.is_some());
        let kind = C::Object::kind(&()).to_string();
        let Some(cluster_name) = ctx.cluster_to_clean(created_something, &kind)? else {
            return Ok(Cleanup::Done);
        };
        let cluster_name = cluster_name.to_string();
        let namespace = cp.namespace().unwrap_or_default();
        let infra = control_plane_cleanup_infra::<C::Infra>(
            &ctx.client,
            ctx.cluster.as_deref(),
            cp.own_infrastructure(),
            &namespace,
            &cluster_name,
            &kind,
        )
        .await;
        let infra = match infra {
            Ok(Some(infra)) => infra,
            // Nothing can have been created without knowing where: nothing to delete.
            _ if !created_something => return Ok(Cleanup::Done),
            Ok(None) => {
                return Err(ProviderError::terminal(
                    Reason::InvalidSpec,
                    format!(
                        "where the {} cluster to delete lives is unknown: the Cluster's infrastructure object is gone and spec.infrastructure is not set; set spec.infrastructure (its region and identity) on this control plane to let the deletion go on",
                        profile.cloud
                    ),
                ));
            }
            Err(e) => return Err(e),
        };
        let name = cp.cloud_cluster_name(&cluster_name);
        let reach = Reach {
            object: cp,
            infra,
            client: &ctx.client,
            calls: &ctx.cloud_calls,
            namespace: &namespace,
            cluster_name: &cluster_name,
            name: &name,
        };
        let connected = self.cloud.connect(reach).await?;
        let owner = Owner::new(self.provider, &namespace, &cluster_name);
        let observed = self
            .cloud
            .observe(&connected, Look::for_delete(&owner))
            .await?;
        let Some(found) = observed.cluster else {
            return Ok(Cleanup::Done);
        };
        let what = format!("{} cluster", profile.cloud);
        if !owner.owns(&found.tags) {
            ctx.events
                .warning(
                    Reason::NameConflict.as_str(),
                    "Delete",
                    owner.left_in_place(&what, &name),
                )
                .await;
            return Ok(Cleanup::Done);
        }
        let request = Request::new(
            owner.tags(&connected.tags),
            ctx.now,
            cp.uid().unwrap_or_default(),
            cp.meta().generation,
            profile.token_limits,
        );
        if cp.spec_common().deletion_policy == DeletionPolicy::Orphan {
            let (key, _) = owner.tag();
            let id = found.id.as_str();
            self.cloud
                .act(&connected, Step::Untag { id, key: &key }, &request)
                .await?;
            crate::adoption::orphaned(&ctx.events, &format!("{what} {name} ({id})")).await;
            return Ok(Cleanup::Done);
        }
        let deleting = || {
            Cleanup::pending(
                profile.poll,
                format!("{} is deleting cluster {name}", profile.cloud),
            )
        };
        if found.lifecycle == Lifecycle::Deleting {
            return Ok(deleting());
        }
        match self.cloud.act(&connected, Step::Delete, &request).await? {
            Started::Gone => Ok(Cleanup::Done),
            Started::Busy(message) => Ok(Cleanup::pending(
                profile.poll,
                format!(
                    "{} cannot delete cluster {name} yet: {message}",
                    profile.cloud
                ),
            )),
            Started::Created { .. }
            | Started::Operation(_)
            | Started::Untracked
            | Started::Done => Ok(deleting()),
        }
    }
}
