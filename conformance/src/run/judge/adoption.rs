//! Bringing a cloud cluster in and letting it go, judged from the objects and the cloud's
//! inventory: a Cluster deleted with `deletionPolicy: Orphan` leaves its cloud resources running
//! without its ownership tag (C63); a second Cluster adopting that cloud cluster first shows a
//! plan and writes nothing (C61); accepting the plan tags the cluster as the second Cluster's and
//! brings it to Ready (C62), the very cloud cluster the first one made, serving (C65); a third
//! Cluster asking to adopt it while the second owns it is refused and changes nothing (C64).
//!
//! Owners are compared by the Cluster's name: an inventory's `owner` is the value of the
//! provider's ownership tag, which names the Cluster (`<namespace>_<name>` or
//! `<namespace>/<name>`); the scenario's Cluster names are not substrings of each other.

use super::Verdicts;
use crate::checks::{CheckId, Outcome, verdict};
use crate::faults::oracle::Item;
use crate::objects::condition;
use serde_json::Value;

/// The Clusters of the scenario: made then orphaned, adopting, and refused.
pub(crate) const ORPHANED: &str = "orphaned";
/// The Cluster that adopts what [`ORPHANED`] left.
pub(crate) const ADOPTER: &str = "adopter";
/// The Cluster that asks for what [`ADOPTER`] owns.
pub(crate) const SIBLING: &str = "sibling";

/// Whether `item` carries the ownership tag of the Cluster `cluster` of namespace `ns`.
pub(crate) fn owned_by(item: &Item, ns: &str, cluster: &str) -> bool {
    item.owner
        .as_deref()
        .is_some_and(|o| o.contains(ns) && o.ends_with(cluster))
}

/// The cloud cluster `control_plane` reports: the item whose id is `status.cloudID`, or else
/// the one named `status.cloudName` whose kind is a cluster (`eks:cluster`,
/// `container:cluster`, …).
pub(crate) fn cloud_cluster<'a>(items: &'a [Item], control_plane: &Value) -> Option<&'a Item> {
    let id = control_plane["status"]["cloudID"]
        .as_str()
        .unwrap_or_default();
    let name = control_plane["status"]["cloudName"]
        .as_str()
        .unwrap_or_default();
    items
        .iter()
        .find(|i| !id.is_empty() && i.id.eq_ignore_ascii_case(id))
        .or_else(|| {
            items.iter().find(|i| {
                !name.is_empty()
                    && i.name == name
                    && i.kind.to_ascii_lowercase().ends_with("cluster")
            })
        })
}

/// What the scenario saw.
#[derive(Debug, Clone, Default)]
pub(crate) struct Adoption {
    /// The namespace of the three Clusters.
    pub(crate) namespace: String,
    /// The first Cluster's control plane once Ready (its `status.cloudID` and `cloudName`).
    pub(crate) made: Value,
    /// The cloud's resources the first Cluster owned while it ran.
    pub(crate) owned: Vec<Item>,
    /// The inventory once the first Cluster was gone.
    pub(crate) after_orphan: Vec<Item>,
    /// The adopter's control plane once it reported on its plan (or the wait was over).
    pub(crate) planned: Value,
    /// The inventory then.
    pub(crate) during_plan: Vec<Item>,
    /// The adopter's control plane once accepted and Ready (or the wait was over).
    pub(crate) accepted: Value,
    /// Whether the adopter's `<cluster>-kubeconfig` Secret was there then.
    pub(crate) kubeconfig: bool,
    /// The inventory then.
    pub(crate) after_accept: Vec<Item>,
    /// The sibling's control plane once it reported (or the wait was over).
    pub(crate) sibling: Value,
    /// The inventory then.
    pub(crate) after_sibling: Vec<Item>,
}

fn reason(obj: &Value) -> String {
    condition(obj, "Ready").map_or_else(
        || "no Ready condition".into(),
        |c| {
            format!(
                "Ready={} {}: {}",
                c["status"].as_str().unwrap_or_default(),
                c["reason"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default()
            )
        },
    )
}

/// A plan's rows in one line: `field cloud → spec; …`, or `nothing`.
fn changes(cp: &Value) -> String {
    let rows: Vec<String> = cp["status"]["adoption"]["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            format!("{} {} → {}", text("field"), text("cloud"), text("spec"))
        })
        .collect();
    if rows.is_empty() {
        "nothing".into()
    } else {
        rows.join("; ")
    }
}

fn ready(obj: &Value) -> bool {
    condition(obj, "Ready").is_some_and(|c| c["status"] == "True")
}

/// C61–C65.
pub(crate) fn adoption(seen: &Adoption) -> Verdicts {
    let ns = seen.namespace.as_str();
    let Some(cluster) = cloud_cluster(&seen.owned, &seen.made) else {
        let why = format!(
            "the first Cluster's cloud cluster (status.cloudID {}, status.cloudName {}) is not in the cloud's inventory as its own",
            seen.made["status"]["cloudID"], seen.made["status"]["cloudName"]
        );
        return [
            CheckId::C61,
            CheckId::C62,
            CheckId::C63,
            CheckId::C64,
            CheckId::C65,
        ]
        .into_iter()
        .map(|id| (id, Outcome::Fail(why.clone())))
        .collect();
    };
    let now = |items: &[Item]| items.iter().find(|i| i.id == cluster.id).cloned();
    vec![
        (CheckId::C63, orphaned(seen, ns)),
        (CheckId::C61, planned(seen, ns, now(&seen.during_plan))),
        (CheckId::C62, accepted(seen, ns, now(&seen.after_accept))),
        (CheckId::C65, adopted_again(seen, cluster)),
        (
            CheckId::C64,
            refused(seen, now(&seen.after_accept), now(&seen.after_sibling)),
        ),
    ]
}

/// C63: every resource the first Cluster owned is still there, and none carries its tag.
fn orphaned(seen: &Adoption, ns: &str) -> Outcome {
    let mut problems = Vec::new();
    for item in &seen.owned {
        match seen.after_orphan.iter().find(|i| i.id == item.id) {
            None => problems.push(format!("{} {} is gone", item.kind, item.id)),
            Some(i) if i.leaving() => {
                problems.push(format!("{} {} is {}", i.kind, i.id, i.state));
            }
            Some(i) if owned_by(i, ns, ORPHANED) => problems.push(format!(
                "{} {} still carries the ownership tag {}",
                i.kind,
                i.id,
                i.owner.as_deref().unwrap_or_default()
            )),
            Some(_) => {}
        }
    }
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "deleting a Cluster with deletionPolicy: Orphan left its {} cloud resource(s) running, untagged",
                seen.owned.len()
            )
        } else {
            problems.join("; ")
        },
    )
}

/// C61: the plan is in status and the cloud is as the first Cluster left it.
fn planned(seen: &Adoption, ns: &str, cluster: Option<Item>) -> Outcome {
    let phase = seen.planned["status"]["adoption"]["phase"]
        .as_str()
        .unwrap_or_default();
    let taken: Vec<String> = seen
        .during_plan
        .iter()
        .filter(|i| owned_by(i, ns, ADOPTER))
        .map(|i| format!("{} {}", i.kind, i.id))
        .collect();
    let problems: Vec<String> = [
        (phase != "Planned").then(|| {
            format!(
                "status.adoption.phase is {phase:?}, not Planned ({})",
                reason(&seen.planned)
            )
        }),
        cluster
            .is_none()
            .then(|| "the cloud cluster is gone".to_string()),
        (!taken.is_empty()).then(|| {
            format!(
                "before the plan was accepted the cloud holds {} tagged as the adopter's",
                taken.join(", ")
            )
        }),
        ready(&seen.planned)
            .then(|| "the control plane is Ready before the plan was accepted".into()),
    ]
    .into_iter()
    .flatten()
    .collect();
    verdict(
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "the plan is in status.adoption and nothing was written in the cloud; it changes {}",
                changes(&seen.planned)
            )
        } else {
            problems.join("; ")
        },
    )
}

/// C62: once accepted, the cloud cluster is tagged as the adopter's and the control plane Ready.
fn accepted(seen: &Adoption, ns: &str, cluster: Option<Item>) -> Outcome {
    let tagged = cluster.as_ref().is_some_and(|i| owned_by(i, ns, ADOPTER));
    let phase = seen.accepted["status"]["adoption"]["phase"]
        .as_str()
        .unwrap_or_default();
    let ok = tagged && ready(&seen.accepted) && phase == "Adopted";
    verdict(
        ok,
        if ok {
            "accepting the plan tagged the cloud cluster as the adopter's and the control plane is Ready".to_string()
        } else {
            format!(
                "after accepting: the cloud cluster's owner is {:?}, status.adoption.phase {phase:?}, {}",
                cluster.and_then(|i| i.owner),
                reason(&seen.accepted)
            )
        },
    )
}

/// C65: the adopter runs the very cloud cluster the first Cluster made, and serves it.
fn adopted_again(seen: &Adoption, cluster: &Item) -> Outcome {
    let id = seen.accepted["status"]["cloudID"]
        .as_str()
        .unwrap_or_default();
    let same = !id.is_empty() && id.eq_ignore_ascii_case(&cluster.id)
        || seen.accepted["status"]["cloudName"] == seen.made["status"]["cloudName"];
    let initialized = seen.accepted["status"]["initialization"]["controlPlaneInitialized"] == true;
    let ok = same && initialized && seen.kubeconfig;
    verdict(
        ok,
        if ok {
            format!(
                "the cluster the orphaned Cluster left ({}) was adopted again and serves",
                cluster.id
            )
        } else {
            format!(
                "re-adopting {}: same cloud cluster {same}, controlPlaneInitialized {initialized}, kubeconfig Secret {}",
                cluster.id, seen.kubeconfig
            )
        },
    )
}

/// C64: a Cluster asking for a cluster another Cluster owns is refused and changes nothing.
/// Judged only when another Cluster owned it when the third asked (`before`).
fn refused(seen: &Adoption, before: Option<Item>, after: Option<Item>) -> Outcome {
    let ns = seen.namespace.as_str();
    let Some(owner) = before.and_then(|i| i.owner) else {
        return Outcome::Skip(
            "no Cluster owned the cloud cluster when the third Cluster asked for it (the adoption before did not go through)".into(),
        );
    };
    let still = after.as_ref().and_then(|i| i.owner.as_deref()) == Some(owner.as_str());
    let says = condition(&seen.sibling, "Ready").is_some_and(|c| {
        c["status"] == "False"
            && matches!(
                c["reason"].as_str(),
                Some("AdoptionRefused" | "NameConflict")
            )
    });
    let taken = seen.after_sibling.iter().any(|i| owned_by(i, ns, SIBLING));
    let ok = still && says && !taken;
    verdict(
        ok,
        if ok {
            format!(
                "adopting a cluster another Cluster owns ({owner}) was refused; the cloud is unchanged"
            )
        } else {
            format!(
                "the sibling: {}; the cloud cluster's owner went from {owner} to {:?}{}",
                reason(&seen.sibling),
                after.and_then(|i| i.owner),
                if taken {
                    "; the cloud holds resources tagged as the sibling's"
                } else {
                    ""
                }
            )
        },
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    const NS: &str = "conf-adopt";

    fn item(id: &str, owner: Option<&str>, state: &str) -> Item {
        serde_json::from_value(json!({
            "kind": "x:cluster", "id": id, "name": id, "parent": "",
            "owner": owner, "state": state,
        }))
        .unwrap()
    }

    fn cp(ready: bool, reason: &str, phase: &str) -> Value {
        json!({"status": {
            "cloudID": "c1", "cloudName": "c1",
            "initialization": {"controlPlaneInitialized": ready},
            "adoption": {"phase": phase, "changes": []},
            "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}, "reason": reason, "message": ""}],
        }})
    }

    fn good() -> Adoption {
        Adoption {
            namespace: NS.into(),
            made: cp(true, "Ready", ""),
            owned: vec![item("c1", Some("conf-adopt_orphaned"), "ACTIVE")],
            after_orphan: vec![item("c1", None, "ACTIVE")],
            planned: cp(false, "AdoptionPlanned", "Planned"),
            during_plan: vec![item("c1", None, "ACTIVE")],
            accepted: cp(true, "Ready", "Adopted"),
            kubeconfig: true,
            after_accept: vec![item("c1", Some("conf-adopt_adopter"), "ACTIVE")],
            sibling: cp(false, "AdoptionRefused", "Refused"),
            after_sibling: vec![item("c1", Some("conf-adopt_adopter"), "ACTIVE")],
        }
    }

    fn failed(seen: &Adoption) -> Vec<CheckId> {
        adoption(seen)
            .into_iter()
            .filter(|(_, o)| matches!(o, Outcome::Fail(_)))
            .map(|(id, _)| id)
            .collect()
    }

    #[test]
    fn a_provider_that_plans_accepts_orphans_and_refuses_passes_all_five() {
        assert!(failed(&good()).is_empty(), "{:?}", adoption(&good()));
    }

    #[test]
    fn each_wrong_step_fails_its_check() {
        let mut tagged_early = good();
        tagged_early.during_plan = vec![item("c1", Some("conf-adopt_adopter"), "ACTIVE")];
        assert_eq!(failed(&tagged_early), [CheckId::C61]);

        let mut kept_tag = good();
        kept_tag.after_orphan = vec![item("c1", Some("conf-adopt_orphaned"), "ACTIVE")];
        assert_eq!(failed(&kept_tag), [CheckId::C63]);

        let mut deleted = good();
        deleted.after_orphan = vec![item("c1", None, "DELETING")];
        assert_eq!(failed(&deleted), [CheckId::C63]);

        let mut ignored = good();
        ignored.accepted = cp(false, "AdoptionPlanned", "Planned");
        ignored.kubeconfig = false;
        ignored.after_accept = vec![item("c1", None, "ACTIVE")];
        ignored.sibling = cp(false, "AdoptionPlanned", "Planned");
        ignored.after_sibling = vec![item("c1", None, "ACTIVE")];
        assert_eq!(failed(&ignored), [CheckId::C62, CheckId::C65]);
        let c64 = adoption(&ignored)
            .into_iter()
            .find(|(id, _)| *id == CheckId::C64);
        assert!(matches!(c64, Some((_, Outcome::Skip(_)))), "{c64:?}");

        let mut taken = good();
        taken.sibling = cp(true, "Ready", "Adopted");
        taken.after_sibling = vec![item("c1", Some("conf-adopt_sibling"), "ACTIVE")];
        assert_eq!(failed(&taken), [CheckId::C64]);
    }

    #[test]
    fn owners_are_matched_by_the_cluster_name_in_either_tag_form() {
        let a = item("c1", Some("conf-adopt/adopter"), "ACTIVE");
        assert!(owned_by(&a, NS, ADOPTER) && !owned_by(&a, NS, ORPHANED));
        assert!(owned_by(
            &item("c1", Some("conf-adopt_orphaned"), ""),
            NS,
            ORPHANED
        ));
        assert!(!owned_by(&item("c1", None, ""), NS, ORPHANED));
    }
}
