//! The fields of one peer object's spec, read one by one, each read leaving a note; what no
//! mapping read is reported at the end, leaf by leaf, so nothing the peer set goes unmentioned.

use serde_json::Value;

use super::{Note, Outcome, title};

/// The spec of one peer object and the notes taken while it is read.
#[derive(Debug)]
pub struct Fields<'a> {
    object: String,
    spec: &'a Value,
    handled: Vec<String>,
    notes: Vec<Note>,
}

impl<'a> Fields<'a> {
    /// The spec of `obj`.
    pub fn new(obj: &'a Value) -> Self {
        Self {
            object: title(obj),
            spec: &obj["spec"],
            handled: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The value at `path` (dotted, under `spec`), when set: not null and not an empty string
    /// (what a template renders for a variable left empty).
    pub fn get(&self, path: &str) -> Option<&'a Value> {
        let mut at = self.spec;
        for key in path.split('.') {
            at = at.get(key)?;
        }
        (!at.is_null() && at.as_str() != Some("")).then_some(at)
    }

    /// The string at `path`.
    pub fn str(&self, path: &str) -> Option<&'a str> {
        self.get(path).and_then(Value::as_str)
    }

    fn note(&mut self, path: &str, outcome: Outcome) {
        self.handled.push(path.to_string());
        self.notes.push(Note {
            object: self.object.clone(),
            field: format!("spec.{path}"),
            outcome,
        });
    }

    /// Notes `path` as written to `to` (a field of ours), when it is set; returns its value.
    pub fn mapped(&mut self, path: &str, to: &str) -> Option<&'a Value> {
        let value = self.get(path)?;
        self.note(path, Outcome::Mapped(to.to_string()));
        Some(value)
    }

    /// Notes `path`, when set, as taken by ours from the cloud when the plan is accepted.
    pub fn from_cloud(&mut self, path: &str, why: &str) {
        if self.get(path).is_some() {
            self.note(path, Outcome::FromCloud(why.to_string()));
        }
    }

    /// Notes `path`, when set, as left in the cloud with nothing managing it.
    pub fn unmanaged(&mut self, path: &str, why: &str) {
        if self.get(path).is_some() {
            self.note(path, Outcome::Unmanaged(why.to_string()));
        }
    }

    /// Notes `path`, when set, as not needed by ours.
    pub fn dropped(&mut self, path: &str, why: &str) {
        if self.get(path).is_some() {
            self.note(path, Outcome::Dropped(why.to_string()));
        }
    }

    /// Refuses the move because of `path`.
    pub fn refuse(&mut self, path: &str, why: &str) {
        self.note(path, Outcome::Refused(why.to_string()));
    }

    /// Marks `path` as read without a note of its own (a note elsewhere covers it).
    pub fn read(&mut self, path: &str) {
        self.handled.push(path.to_string());
    }

    /// The notes, with one more for every set leaf of the spec nothing read: `rest` says what
    /// becomes of such fields.
    pub fn finish(mut self, rest: &str) -> Vec<Note> {
        let mut leaves = Vec::new();
        collect_leaves(self.spec, String::new(), &mut leaves);
        for leaf in leaves {
            let covered = self.handled.iter().any(|h| {
                leaf == *h
                    || leaf.starts_with(&format!("{h}."))
                    || h.starts_with(&format!("{leaf}."))
            });
            if !covered {
                self.notes.push(Note {
                    object: self.object.clone(),
                    field: format!("spec.{leaf}"),
                    outcome: Outcome::Unmanaged(rest.to_string()),
                });
            }
        }
        self.notes
    }
}

/// Every set leaf under `value` (objects are walked; lists and scalars are leaves).
fn collect_leaves(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                collect_leaves(v, path, out);
            }
        }
        Value::Null => {}
        Value::String(s) if s.is_empty() => {}
        Value::Array(items) if items.is_empty() => {}
        _ if at.is_empty() => {}
        _ => out.push(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_set_leaf_nothing_read_gets_a_note_of_its_own() {
        let obj = json!({"kind": "K", "metadata": {"name": "n"}, "spec": {
            "a": 1, "b": {"c": true, "d": "x", "e": null}, "f": [], "g": ["y"]
        }});
        let mut fields = Fields::new(&obj);
        assert_eq!(fields.mapped("a", "spec.a"), Some(&json!(1)));
        assert_eq!(fields.mapped("missing", "spec.m"), None);
        fields.read("b.c");
        let notes = fields.finish("left");
        let rows: Vec<(&str, &Outcome)> = notes
            .iter()
            .map(|n| (n.field.as_str(), &n.outcome))
            .collect();
        assert_eq!(
            rows,
            [
                ("spec.a", &Outcome::Mapped("spec.a".into())),
                ("spec.b.d", &Outcome::Unmanaged("left".into())),
                ("spec.g", &Outcome::Unmanaged("left".into())),
            ]
        );
        assert_eq!(notes[0].object, "K n");
    }

    #[test]
    fn reading_a_block_covers_its_leaves_and_reading_a_leaf_covers_its_block() {
        let obj = json!({"spec": {"net": {"vpc": {"id": "v", "cidr": "c"}}}});
        let mut fields = Fields::new(&obj);
        fields.read("net.vpc");
        assert!(fields.finish("left").is_empty());
        let mut fields = Fields::new(&obj);
        fields.read("net.vpc.id");
        let notes = fields.finish("left");
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].field, "spec.net.vpc.cidr");
    }
}
