//! What the command prints: the field notes, our objects, and our providers' adoption plans.

use std::fmt::Write as _;

use serde_json::Value;

use crate::peer::{Note, Outcome};

/// The notes, grouped by peer object, one line per field.
pub fn notes(notes: &[Note]) -> String {
    let mut out = String::new();
    let mut object = "";
    let width = notes.iter().map(|n| n.field.len()).max().unwrap_or(0);
    for note in notes {
        if note.object != object {
            object = &note.object;
            let _ = writeln!(out, "{object}");
        }
        let (tag, detail) = match &note.outcome {
            Outcome::Mapped(to) => ("->", to.as_str()),
            Outcome::FromCloud(why) => ("from the cloud:", why.as_str()),
            Outcome::Unmanaged(why) => ("left in the cloud:", why.as_str()),
            Outcome::Dropped(why) => ("not needed:", why.as_str()),
            Outcome::Refused(why) => ("REFUSED:", why.as_str()),
        };
        let _ = writeln!(out, "  {:width$}  {tag} {detail}", note.field);
    }
    out
}

/// Objects as one YAML stream.
pub fn objects(objects: &[&Value]) -> String {
    objects
        .iter()
        .map(|o| serde_saphyr::to_string(o).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("---\n")
}

/// One of our objects' adoption state: its phase, the cloud resource, and the plan's rows.
pub fn plan(obj: &Value) -> String {
    let mut out = String::new();
    let title = format!(
        "{} {}",
        obj["kind"].as_str().unwrap_or_default(),
        obj["metadata"]["name"].as_str().unwrap_or_default()
    );
    let adoption = &obj["status"]["adoption"];
    let phase = adoption["phase"].as_str().unwrap_or("(not reported yet)");
    let _ = write!(out, "{title}: {phase}");
    if let Some(id) = adoption["cloudID"].as_str() {
        let _ = write!(out, " ({id})");
    }
    out.push('\n');
    let changes = adoption["changes"].as_array().cloned().unwrap_or_default();
    if phase == "Planned" && changes.is_empty() {
        out.push_str("  no change: the cloud already matches the spec\n");
    }
    for c in &changes {
        let _ = writeln!(
            out,
            "  change {}: {} -> {}",
            c["field"].as_str().unwrap_or_default(),
            c["cloud"].as_str().unwrap_or_default(),
            c["spec"].as_str().unwrap_or_default()
        );
    }
    for k in adoption["kept"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  keep   {} (the cloud's value, written into the spec on accept)",
            k.as_str().unwrap_or_default()
        );
    }
    if phase == "Refused" {
        let ready = obj["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready");
        if let Some(c) = ready {
            let _ = writeln!(out, "  {}", c["message"].as_str().unwrap_or_default());
        }
    }
    out
}

/// Where one of our objects stands when it has not reported what was waited for: its owners
/// (Cluster API core adds the Cluster, or the MachinePool, before our provider acts) and its
/// conditions.
pub fn waiting(obj: &Value) -> String {
    let mut out = format!(
        "{} {}:",
        obj["kind"].as_str().unwrap_or_default(),
        obj["metadata"]["name"].as_str().unwrap_or_default()
    );
    let owners: Vec<String> = obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            format!(
                "{} {}",
                o["kind"].as_str().unwrap_or_default(),
                o["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    if owners.is_empty() {
        out.push_str(" no owner yet (Cluster API core has not taken it into the Cluster)");
    } else {
        let _ = write!(out, " owned by {}", owners.join(", "));
    }
    for c in obj["status"]["conditions"].as_array().into_iter().flatten() {
        let _ = write!(
            out,
            "\n  {}={} {}: {}",
            c["type"].as_str().unwrap_or_default(),
            c["status"].as_str().unwrap_or_default(),
            c["reason"].as_str().unwrap_or_default(),
            c["message"].as_str().unwrap_or_default()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn notes_are_grouped_by_object_and_say_what_becomes_of_each_field() {
        let notes = [
            Note {
                object: "A a".into(),
                field: "spec.x".into(),
                outcome: Outcome::Mapped("spec.y".into()),
            },
            Note {
                object: "A a".into(),
                field: "spec.long".into(),
                outcome: Outcome::Refused("no".into()),
            },
            Note {
                object: "B b".into(),
                field: "spec.z".into(),
                outcome: Outcome::Unmanaged("stays".into()),
            },
        ];
        assert_eq!(
            super::notes(&notes),
            "A a\n  spec.x     -> spec.y\n  spec.long  REFUSED: no\nB b\n  spec.z     left in the cloud: stays\n"
        );
    }

    #[test]
    fn a_plan_lists_its_changes_and_kept_fields() {
        let obj = json!({"kind": "EKSControlPlane", "metadata": {"name": "c"}, "status": {"adoption": {
            "phase": "Planned", "cloudID": "arn:aws:eks:us-west-2:1:cluster/c",
            "changes": [{"field": "spec.version", "cloud": "v1.30", "spec": "v1.31"}],
            "kept": ["spec.logging.audit"]}}});
        assert_eq!(
            plan(&obj),
            "EKSControlPlane c: Planned (arn:aws:eks:us-west-2:1:cluster/c)\n  change spec.version: v1.30 -> v1.31\n  keep   spec.logging.audit (the cloud's value, written into the spec on accept)\n"
        );
        let empty = json!({"kind": "K", "metadata": {"name": "n"}, "status": {"adoption": {"phase": "Planned"}}});
        assert!(plan(&empty).contains("no change"));
    }
}
