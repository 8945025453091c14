//! Moving one Cluster from a peer provider's kinds to ours, step by step, each step safe to run
//! again: a run killed anywhere is finished or undone by the next one.
//!
//! 1. Read the Cluster and the peer's objects; write ours from them ([`crate::peer`]). A field
//!    ours cannot take over stops the command here, with nothing changed.
//! 2. Record on the Cluster what is about to change ([`Record`]).
//! 3. Pause: the Cluster (`spec.paused`), and each peer object with `cluster.x-k8s.io/paused`,
//!    which the peers honour before anything else, deletion included. From here on, the peer's
//!    controllers act on nothing. CAPZ's Azure Service Operator objects are set to leave Azure
//!    alone when they are deleted, as CAPZ does when it pauses.
//! 4. Create our objects: the same cloud resources by name, each with `spec.adoption` not yet
//!    accepted (our providers only look).
//! 5. Take the peer's controller reference off the kubeconfig Secrets, so that no garbage
//!    collection of the peer's objects removes them; they keep working meanwhile.
//! 6. Point the Cluster and its MachinePools at our objects.
//! 7. Unpause the Cluster (the peer objects stay paused), and wait for our providers' plans.
//!
//! With `--accept`, then:
//!
//! 8. Accept every plan, and wait until our providers own the cloud resources, the Cluster is
//!    served, and the kubeconfig Secret is ours.
//! 9. Remove the MachinePools whose cloud pool our control plane keeps (AKS's System pool;
//!    paused first, so Cluster API core never drains or deletes their nodes), take the
//!    finalizers off the peer's objects and delete them (still paused: their controllers never
//!    act on the deletion), and take the record off.
//!
//! `--rollback`, any time before step 9, puts the Cluster back on the peer's objects.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::kube_api::{CORE_GROUP, Cluster, parts, reference_to, wait_for};
use crate::peer::{Peer, PeerPool, Source, Translation, capz};
use crate::record::Record;
use crate::report;
use kube::core::ApiResource;

/// The annotation Cluster API providers read as "do nothing with this object".
const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Print what would be written, change nothing.
    pub dry_run: bool,
    /// Accept our providers' plans and finish the move.
    pub accept: bool,
    /// How long to wait for our providers at each wait.
    pub timeout: Duration,
    /// The region, for a peer object that names none.
    pub region: Option<String>,
}

/// The Cluster being moved, and everything read about it.
struct Move<'a> {
    mc: &'a Cluster,
    name: &'a str,
    peer: Peer,
    record: Record,
    translation: Translation,
    /// The objects the peer's objects control that stand for cloud resources (CAPZ's Azure
    /// Service Operator objects), with their kinds.
    related: Vec<(ApiResource, Value)>,
}

/// Runs the move of Cluster `name` as `options` ask.
///
/// # Errors
/// A refusal (every reason printed first), a call the API server refused, or a wait that ran
/// out; each leaves the Cluster where a next run goes on from.
pub async fn migrate(mc: &Cluster, name: &str, options: &Options) -> Result<()> {
    let cluster = mc
        .get(CORE_GROUP, "Cluster", name)
        .await?
        .with_context(|| format!("no Cluster {name} in namespace {}", mc.namespace()))?;
    let resumed = Record::of(&cluster)?;
    let m = Move::read(mc, name, &cluster, resumed.clone(), &options.region).await?;

    println!(
        "Cluster {}/{name}: {} -> {} ({}* kinds)",
        mc.namespace(),
        m.peer.name(),
        m.peer.ours().provider,
        m.peer.ours().prefix,
    );
    println!();
    print!("{}", report::notes(&m.translation.notes));
    println!();
    if m.translation.refused() {
        bail!(
            "nothing was changed: ours cannot take this Cluster over as it is (the REFUSED lines above say why)"
        );
    }
    m.check_ours().await?;
    if options.dry_run {
        println!("Objects that would be written (the API server admits each of them):");
        println!();
        print!("{}", report::objects(&m.ours()));
        println!();
        println!(
            "Nothing was changed (dry run). Without --dry-run the command pauses the Cluster and {}'s objects, writes these, moves the Cluster's references to them and shows each provider's plan; nothing is written in the cloud before --accept.",
            m.peer.name()
        );
        return Ok(());
    }
    if resumed.is_some() {
        println!("A move of this Cluster is under way: going on from where it stopped.");
    }
    m.prepare(&cluster).await?;
    let plans = m.wait_for_plans(options.timeout).await?;
    println!("Plans of our provider (nothing has been written in the cloud):");
    for plan in &plans {
        print!("{}", report::plan(plan));
    }
    if plans
        .iter()
        .any(|p| p["status"]["adoption"]["phase"] == "Refused")
    {
        bail!(
            "a plan was refused (above); fix what it says and run again, or undo the move with --rollback"
        );
    }
    if !options.accept {
        println!();
        println!(
            "Review the plans, then run again with --accept to adopt and finish, or with --rollback to go back to {}. The kubeconfig Secret keeps working meanwhile with {}'s last token.",
            m.peer.name(),
            m.peer.name()
        );
        return Ok(());
    }
    m.accept(options.timeout).await?;
    m.finish().await?;
    println!(
        "Cluster {}/{name} is managed by {} now; {}'s objects are gone and the cloud resources are the same ones.",
        mc.namespace(),
        m.peer.ours().provider,
        m.peer.name()
    );
    Ok(())
}

/// Puts Cluster `name` back on the peer's objects, as its record says they were.
///
/// # Errors
/// No move is under way, or a step failed (a next run goes on).
pub async fn rollback(mc: &Cluster, name: &str, options: &Options) -> Result<()> {
    let cluster = mc
        .get(CORE_GROUP, "Cluster", name)
        .await?
        .with_context(|| format!("no Cluster {name} in namespace {}", mc.namespace()))?;
    let Some(record) = Record::of(&cluster)? else {
        bail!("no move of Cluster {name} is under way (or it has finished): nothing to roll back");
    };
    let m = Move::read(mc, name, &cluster, Some(record), &options.region).await?;
    if options.dry_run {
        println!(
            "Would put Cluster {name} back on {}'s objects and remove these (their cloud resources are left as they are):",
            m.peer.name()
        );
        print!("{}", report::objects(&m.ours()));
        return Ok(());
    }
    m.undo(options.timeout).await?;
    println!(
        "Cluster {}/{name} is back on {}'s objects, which are unpaused.",
        mc.namespace(),
        m.peer.name()
    );
    Ok(())
}

impl<'a> Move<'a> {
    /// Reads the Cluster's peer objects, from the record when a move is under way (the Cluster
    /// may point at ours already) or from the Cluster's references.
    async fn read(
        mc: &'a Cluster,
        name: &'a str,
        cluster: &Value,
        record: Option<Record>,
        region: &Option<String>,
    ) -> Result<Move<'a>> {
        if cluster["spec"]
            .get("topology")
            .is_some_and(|t| !t.is_null())
        {
            bail!(
                "Cluster {name} is built from a ClusterClass (spec.topology): Cluster API does not let a topology Cluster change its kinds; create the Cluster again from our ClusterClass with spec.adoption on its objects instead"
            );
        }
        let control_plane_ref = match &record {
            Some(r) => r.control_plane_ref.clone(),
            None => cluster["spec"]["controlPlaneRef"].clone(),
        };
        let infrastructure_ref = match &record {
            Some(r) => r.infrastructure_ref.clone(),
            None => cluster["spec"]["infrastructureRef"].clone(),
        };
        let (_, cp_kind, _) = parts(&control_plane_ref)
            .with_context(|| format!("Cluster {name} has no control plane to move"))?;
        let Some(peer) = Peer::of_control_plane(&cp_kind) else {
            bail!(
                "Cluster {name}'s control plane is a {cp_kind}: not one of CAPA's, CAPZ's, CAPG's or CAPOCI's managed kinds, nothing to migrate"
            );
        };
        let control_plane = mc
            .get_ref(&control_plane_ref)
            .await?
            .with_context(|| format!("the {cp_kind} of Cluster {name} is gone"))?;
        let infra = mc.get_ref(&infrastructure_ref).await?.with_context(|| {
            format!("the InfraCluster {infrastructure_ref} of Cluster {name} is gone")
        })?;

        let mut pools = Vec::new();
        let mut pool_refs = BTreeMap::new();
        for mp in mc.list(CORE_GROUP, "MachinePool").await? {
            if mp["spec"]["clusterName"].as_str() != Some(name) {
                continue;
            }
            let mp_name = mp["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let reference = match record.as_ref().and_then(|r| r.machine_pools.get(&mp_name)) {
                Some(r) => r.clone(),
                None => mp["spec"]["template"]["spec"]["infrastructureRef"].clone(),
            };
            let (_, kind, _) = parts(&reference)?;
            if !peer.pool_kinds().contains(&kind.as_str()) {
                bail!(
                    "MachinePool {mp_name} is a {kind}: ours has only the cloud's managed node pools ({})",
                    peer.pool_kinds().join(", ")
                );
            }
            let infra = mc
                .get_ref(&reference)
                .await?
                .with_context(|| format!("the {kind} of MachinePool {mp_name} is gone"))?;
            pool_refs.insert(mp_name, reference);
            pools.push(PeerPool {
                machine_pool: mp,
                infra,
            });
        }
        let related = if peer == Peer::Capz {
            let mut owners = vec![&control_plane, &infra];
            owners.extend(pools.iter().map(|p| &p.infra));
            let uids: Vec<String> = owners
                .iter()
                .filter_map(|o| o["metadata"]["uid"].as_str().map(str::to_string))
                .collect();
            mc.controlled_by(capz::SERVICE_OPERATOR_GROUPS, &uids)
                .await?
        } else {
            Vec::new()
        };
        let source = Source {
            cluster: cluster.clone(),
            infra,
            control_plane,
            pools,
            region: region.clone(),
            related: related.iter().map(|(_, o)| o.clone()).collect(),
        };

        let record = match record {
            Some(r) => r,
            None => {
                let mut secret_owners = BTreeMap::new();
                for secret in kubeconfig_secrets(name) {
                    if let Some(s) = mc.secrets().get_opt(&secret).await? {
                        let owners = serde_json::to_value(&s.metadata.owner_references)?;
                        secret_owners
                            .insert(secret, owners.as_array().cloned().unwrap_or_default());
                    }
                }
                Record {
                    peer,
                    control_plane_ref,
                    infrastructure_ref,
                    machine_pools: pool_refs,
                    secret_owners,
                }
            }
        };
        let translation = peer.translate(&source);
        Ok(Move {
            mc,
            name,
            peer,
            record,
            translation,
            related,
        })
    }

    /// Fails, before anything is changed, when our provider's kinds are not installed or the
    /// API server would refuse one of our objects (checked with a server-side dry run: the
    /// schema, the CEL rules and admission, as the real write will meet them).
    async fn check_ours(&self) -> Result<()> {
        for obj in self.ours() {
            let (group, kind, _) = crate::kube_api::identity(obj)?;
            if !self.mc.serves(&group, &kind) {
                bail!(
                    "nothing was changed: the management cluster does not serve {kind}.{group}; install our provider first (clusterctl init --infrastructure {})",
                    self.peer.ours().provider
                );
            }
            self.mc
                .create(obj, true)
                .await
                .context("nothing was changed: the API server would refuse our object")?;
        }
        Ok(())
    }

    /// Our objects, the control plane first.
    fn ours(&self) -> Vec<&Value> {
        let mut all = vec![
            &self.translation.control_plane,
            &self.translation.infra_cluster,
        ];
        all.extend(self.translation.pools.iter().map(|(_, p)| p));
        all
    }

    /// Steps 2 to 7.
    async fn prepare(&self, cluster: &Value) -> Result<()> {
        let mc = self.mc;
        if Record::of(cluster)?.is_none() {
            mc.merge(CORE_GROUP, "Cluster", self.name, &self.record.patch())
                .await?;
        }
        step("recorded the move on the Cluster");
        self.pause_cluster(true).await?;
        step("paused the Cluster");
        self.pause_peer_objects(true).await?;
        step(&format!(
            "paused {}'s objects ({PAUSED_ANNOTATION})",
            self.peer.name()
        ));
        if self.peer == Peer::Capz {
            let held = self.hold_service_operator().await?;
            step(&format!(
                "set {held} Azure Service Operator object(s) of CAPZ's to {}: skip (deleting them leaves Azure as it is)",
                capz::RECONCILE_POLICY
            ));
        }
        for obj in self.ours() {
            let created = mc.create(obj, false).await?;
            step(&format!(
                "{} {} {}",
                if created {
                    "created"
                } else {
                    "kept the existing"
                },
                obj["kind"].as_str().unwrap_or_default(),
                obj["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
        self.release_secrets().await?;
        step(&format!(
            "took {}'s owner reference off the kubeconfig Secrets",
            self.peer.name()
        ));
        self.point_at(true).await?;
        step("pointed the Cluster and its MachinePools at our objects");
        self.pause_cluster(false).await?;
        step(&format!(
            "unpaused the Cluster ({}'s objects stay paused)",
            self.peer.name()
        ));
        Ok(())
    }

    /// Sets `Cluster.spec.paused`.
    async fn pause_cluster(&self, paused: bool) -> Result<()> {
        let patch = json!({"spec": {"paused": paused}});
        self.mc
            .merge(CORE_GROUP, "Cluster", self.name, &patch)
            .await
    }

    /// Our control plane and pools: the objects with an adoption plan.
    fn adopting(&self) -> Vec<&Value> {
        let mut all = vec![&self.translation.control_plane];
        all.extend(self.translation.pools.iter().map(|(_, p)| p));
        all
    }

    /// Adds (or removes) the paused annotation on every peer object still there.
    async fn pause_peer_objects(&self, paused: bool) -> Result<()> {
        let value = if paused { json!("") } else { Value::Null };
        for reference in self.record.peer_objects() {
            let (group, kind, name) = parts(reference)?;
            if self.mc.get(&group, &kind, &name).await?.is_some() {
                let patch = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}});
                self.mc.merge(&group, &kind, &name, &patch).await?;
            }
        }
        Ok(())
    }

    /// CAPZ's Azure Service Operator objects (those its objects control) set to leave Azure
    /// alone, their old policy kept where CAPZ restores it from; returns how many there are.
    async fn hold_service_operator(&self) -> Result<usize> {
        for (resource, obj) in &self.related {
            if let Some(patch) = capz::hold(&obj["metadata"]["annotations"]) {
                let name = obj["metadata"]["name"].as_str().unwrap_or_default();
                self.mc.merge_resource(resource, name, &patch).await?;
            }
        }
        Ok(self.related.len())
    }

    /// Takes the peer's owner references off the kubeconfig Secrets: its control plane's, and
    /// those of the objects it controls (Azure Service Operator writes CAPZ's kubeconfig and
    /// owns it).
    async fn release_secrets(&self) -> Result<()> {
        let (_, peer_kind, _) = parts(&self.record.control_plane_ref)?;
        let related: Vec<&str> = self
            .related
            .iter()
            .filter_map(|(_, o)| o["metadata"]["uid"].as_str())
            .collect();
        for secret in self.record.secret_owners.keys() {
            let Some(s) = self.mc.secrets().get_opt(secret).await? else {
                continue;
            };
            let owners = s.metadata.owner_references.unwrap_or_default();
            let kept: Vec<_> = owners
                .iter()
                .filter(|o| o.kind != peer_kind && !related.contains(&o.uid.as_str()))
                .collect();
            if kept.len() != owners.len() {
                let patch = json!({"metadata": {"ownerReferences": kept}});
                self.mc
                    .secrets()
                    .patch(
                        secret,
                        &kube::api::PatchParams::default(),
                        &kube::api::Patch::Merge(&patch),
                    )
                    .await
                    .with_context(|| format!("updating the owners of Secret {secret}"))?;
            }
        }
        Ok(())
    }

    /// Points the Cluster and its MachinePools at ours (`to_ours`) or back at the peer's.
    async fn point_at(&self, to_ours: bool) -> Result<()> {
        let (cp, infra) = if to_ours {
            (
                reference_to(&self.translation.control_plane),
                reference_to(&self.translation.infra_cluster),
            )
        } else {
            (
                self.record.control_plane_ref.clone(),
                self.record.infrastructure_ref.clone(),
            )
        };
        let patch = json!({"spec": {"controlPlaneRef": cp, "infrastructureRef": infra}});
        self.mc
            .merge(CORE_GROUP, "Cluster", self.name, &patch)
            .await?;
        for (mp, ours) in &self.translation.pools {
            let reference = if to_ours {
                reference_to(ours)
            } else {
                // Every pool read was recorded (a resumed run reads them from the record).
                let Some(theirs) = self.record.machine_pools.get(mp) else {
                    continue;
                };
                theirs.clone()
            };
            let patch = json!({"spec": {"template": {"spec": {"infrastructureRef": reference}}}});
            self.mc.merge(CORE_GROUP, "MachinePool", mp, &patch).await?;
        }
        Ok(())
    }

    /// Step 7's wait: every one of our objects with a control plane or pool plan reports it.
    async fn wait_for_plans(&self, limit: Duration) -> Result<Vec<Value>> {
        let adopting = self.adopting();
        let waited = wait_for("our provider's adoption plans", limit, || async {
            let mut plans = Vec::new();
            for obj in &adopting {
                let Some(now) = self.mc.get_ref(&reference_to(obj)).await? else {
                    return Ok(None);
                };
                if now["status"]["adoption"]["phase"].as_str().is_none() {
                    return Ok(None);
                }
                plans.push(now);
            }
            Ok(Some(plans))
        })
        .await;
        if waited.is_err() {
            self.explain(&adopting).await?;
        }
        waited
    }

    /// After a wait ran out: where each of `objects` stands (its owners and conditions), so
    /// that the user sees what our provider is waiting for.
    async fn explain(&self, objects: &[&Value]) -> Result<()> {
        for obj in objects {
            if let Some(now) = self.mc.get_ref(&reference_to(obj)).await? {
                eprintln!("{}", report::waiting(&now));
            }
        }
        Ok(())
    }

    /// Step 8.
    async fn accept(&self, limit: Duration) -> Result<()> {
        let adopting = self.adopting();
        for obj in &adopting {
            let (group, kind, name) = parts(&reference_to(obj))?;
            self.mc
                .merge(
                    &group,
                    &kind,
                    &name,
                    &json!({"spec": {"adoption": {"accept": true}}}),
                )
                .await?;
        }
        step("accepted the plans");
        let (_, cp_kind, cp_name) = parts(&reference_to(&self.translation.control_plane))?;
        let waited = wait_for("the cloud resources adopted and served", limit, || async {
            for obj in &adopting {
                let Some(now) = self.mc.get_ref(&reference_to(obj)).await? else {
                    return Ok(None);
                };
                let adopted = now["status"]["adoption"]["phase"] == "Adopted";
                if !adopted || !ready(&now) {
                    return Ok(None);
                }
            }
            let secret = self
                .mc
                .secrets()
                .get_opt(&format!("{}-kubeconfig", self.name))
                .await?;
            let ours = secret
                .and_then(|s| s.metadata.owner_references)
                .unwrap_or_default()
                .iter()
                .any(|o| o.kind == cp_kind && o.name == cp_name && o.controller == Some(true));
            Ok(ours.then_some(()))
        })
        .await;
        if waited.is_err() {
            self.explain(&adopting).await?;
        }
        waited?;
        step(&format!(
            "adopted: every cloud resource carries our ownership tag, and {}-kubeconfig is ours",
            self.name
        ));
        Ok(())
    }

    /// Step 9.
    async fn finish(&self) -> Result<()> {
        for mp in &self.translation.absorbed {
            if self.mc.get(CORE_GROUP, "MachinePool", mp).await?.is_none() {
                continue;
            }
            // Paused, Cluster API core leaves it alone; deleted while its finalizer still holds
            // it (a finalizer cannot be added to an object being deleted), then let go.
            let paused = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: ""}}});
            self.mc
                .merge(CORE_GROUP, "MachinePool", mp, &paused)
                .await?;
            self.mc.delete(CORE_GROUP, "MachinePool", mp).await?;
            self.mc
                .merge(
                    CORE_GROUP,
                    "MachinePool",
                    mp,
                    &json!({"metadata": {"finalizers": null}}),
                )
                .await
                .or_else(gone_is_fine)?;
            step(&format!(
                "removed MachinePool {mp}: our control plane keeps its pool (nodes untouched)"
            ));
        }
        for reference in self.record.peer_objects() {
            let (group, kind, name) = parts(reference)?;
            if self.mc.get(&group, &kind, &name).await?.is_none() {
                continue;
            }
            // Paused, so no peer controller acts on the deletion; without finalizers, it is
            // gone at once.
            self.mc
                .merge(
                    &group,
                    &kind,
                    &name,
                    &json!({"metadata": {"finalizers": null}}),
                )
                .await?;
            self.mc.delete(&group, &kind, &name).await?;
            step(&format!(
                "deleted {kind} {name} (its cloud resources untouched)"
            ));
        }
        self.mc
            .merge(CORE_GROUP, "Cluster", self.name, &Record::removal())
            .await?;
        step("took the record off the Cluster");
        Ok(())
    }

    /// The rollback: ours released (never deleting the cloud resources), everything pointed back
    /// at the peer's objects, which are unpaused.
    async fn undo(&self, limit: Duration) -> Result<()> {
        let mc = self.mc;
        for obj in self.ours() {
            let reference = reference_to(obj);
            let (group, kind, name) = parts(&reference)?;
            if mc.get(&group, &kind, &name).await?.is_some() {
                mc.merge(
                    &group,
                    &kind,
                    &name,
                    &json!({"spec": {"deletionPolicy": "Orphan"}}),
                )
                .await?;
            }
        }
        step("set deletionPolicy: Orphan on our objects");
        // The peer's owner references go back first beside ours (not as controller), so that
        // removing ours never garbage-collects the Secrets.
        self.restore_secret_owners(false).await?;
        self.point_at(false).await?;
        step(&format!(
            "pointed the Cluster and its MachinePools back at {}'s objects",
            self.peer.name()
        ));
        self.pause_cluster(false).await?;
        for obj in self.ours() {
            let (group, kind, name) = parts(&reference_to(obj))?;
            mc.delete(&group, &kind, &name).await?;
        }
        let ours: Vec<Value> = self.ours().into_iter().map(reference_to).collect();
        wait_for("our objects released", limit, || async {
            for reference in &ours {
                if mc.get_ref(reference).await?.is_some() {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
        .await?;
        step("deleted our objects (each cloud resource left running, our tags removed)");
        self.restore_secret_owners(true).await?;
        step("gave the kubeconfig Secrets back their owner references");
        self.pause_peer_objects(false).await?;
        step(&format!("unpaused {}'s objects", self.peer.name()));
        mc.merge(CORE_GROUP, "Cluster", self.name, &Record::removal())
            .await?;
        step("took the record off the Cluster");
        Ok(())
    }

    /// Gives the kubeconfig Secrets the owner references the record holds: `exact` puts back
    /// the recorded list as it was; otherwise the peer's are added beside the current ones,
    /// none of them as controller.
    async fn restore_secret_owners(&self, exact: bool) -> Result<()> {
        for (secret, recorded) in &self.record.secret_owners {
            let Some(s) = self.mc.secrets().get_opt(secret).await? else {
                continue;
            };
            let owners = if exact {
                recorded.clone()
            } else {
                let mut now: Vec<Value> = serde_json::to_value(s.metadata.owner_references)?
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                for r in recorded {
                    if !now.iter().any(|o| o["uid"] == r["uid"]) {
                        let mut r = r.clone();
                        r["controller"] = json!(false);
                        now.push(r);
                    }
                }
                now
            };
            self.mc
                .secrets()
                .patch(
                    secret,
                    &kube::api::PatchParams::default(),
                    &kube::api::Patch::Merge(&json!({"metadata": {"ownerReferences": owners}})),
                )
                .await
                .with_context(|| format!("updating the owners of Secret {secret}"))?;
        }
        Ok(())
    }
}

/// `Ok` when `e` says the object is already gone.
fn gone_is_fine(e: anyhow::Error) -> Result<()> {
    let gone = e
        .chain()
        .filter_map(|c| c.downcast_ref::<kube::Error>())
        .any(|k| matches!(k, kube::Error::Api(s) if s.code == 404));
    if gone { Ok(()) } else { Err(e) }
}

/// The kubeconfig Secrets of Cluster `name` that Cluster API and the providers write.
fn kubeconfig_secrets(name: &str) -> [String; 2] {
    [
        format!("{name}-kubeconfig"),
        format!("{name}-user-kubeconfig"),
    ]
}

/// Whether `obj` reports `Ready=True`.
fn ready(obj: &Value) -> bool {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Prints one done step.
fn step(what: &str) {
    println!("  done: {what}");
}
