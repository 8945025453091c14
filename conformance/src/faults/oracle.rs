//! The oracles of a fault run that judge data alone: the cloud's inventory against what the
//! provider may own, text against the secrets it must never show, and object versions against
//! the stillness a settled cluster must keep.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

/// One cloud resource as the emulator's inventory lists it (`PROFILE.md`, `inventoryUrl`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// `<service>:<type>`.
    pub kind: String,
    /// The cloud's id.
    pub id: String,
    /// Its name (or `Name` tag); may be empty.
    #[serde(default)]
    pub name: String,
    /// The resource it lives in; may be empty.
    #[serde(default)]
    pub parent: String,
    /// The value of a provider's ownership tag, if it carries one.
    #[serde(default)]
    pub owner: Option<String>,
    /// The cloud's state word.
    #[serde(default)]
    pub state: String,
}

impl Item {
    /// Whether the resource is on its way out (it may then coexist with its replacement):
    /// deleting, terminating, shutting down, stopping (GKE's word for a cluster being deleted).
    pub fn leaving(&self) -> bool {
        let s = self.state.to_ascii_lowercase();
        ["delet", "terminat", "shutting", "stopping", "gone"]
            .iter()
            .any(|w| s.contains(w))
    }

    /// How the item is named in findings.
    pub fn describe(&self) -> String {
        let mut out = format!("{} {}", self.kind, self.id);
        if !self.name.is_empty() {
            out.push_str(&format!(" ({})", self.name));
        }
        if !self.state.is_empty() {
            out.push_str(&format!(" [{}]", self.state));
        }
        out
    }
}

/// Parses an inventory answer `{"resources": [...]}`.
///
/// # Errors
/// When the text is not such an answer.
pub fn parse_inventory(text: &str) -> anyhow::Result<Vec<Item>> {
    #[derive(Deserialize)]
    struct Answer {
        resources: Vec<Item>,
    }
    Ok(serde_json::from_str::<Answer>(text)?.resources)
}

/// Owned resources that exist twice: live items with an owner and a name, grouped by kind,
/// parent, name and owner; every group of two or more is one duplicate, named by its ids.
pub fn duplicates(items: &[Item]) -> Vec<String> {
    let mut groups: BTreeMap<(&str, &str, &str, &str), Vec<&Item>> = BTreeMap::new();
    for item in items {
        let Some(owner) = item.owner.as_deref() else {
            continue;
        };
        if item.name.is_empty() || item.leaving() {
            continue;
        }
        groups
            .entry((&item.kind, &item.parent, &item.name, owner))
            .or_default()
            .push(item);
    }
    groups
        .into_iter()
        .filter(|(_, g)| g.len() > 1)
        .map(|((kind, parent, name, owner), g)| {
            let ids: Vec<&str> = g.iter().map(|i| i.id.as_str()).collect();
            let within = if parent.is_empty() {
                String::new()
            } else {
                format!(" in {parent}")
            };
            format!(
                "{kind} {name}{within} (owner {owner}) exists {} times: {}",
                g.len(),
                ids.join(", ")
            )
        })
        .collect()
}

/// Resources still there that carry one of `owners`' ownership tags (after every owner's
/// Cluster is gone): leaks.
pub fn leaks(items: &[Item], owners: &BTreeSet<String>) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.owner.as_ref().is_some_and(|o| owners.contains(o)))
        .map(Item::describe)
        .collect()
}

/// Resources that existed before the provider ran and are gone now: a provider must never
/// delete what it did not create.
pub fn deleted_foreign(before: &[Item], after: &[Item]) -> Vec<String> {
    let now: BTreeSet<&str> = after
        .iter()
        .filter(|i| !i.leaving())
        .map(|i| i.id.as_str())
        .collect();
    before
        .iter()
        .filter(|i| !i.leaving() && !now.contains(i.id.as_str()))
        .map(Item::describe)
        .collect()
}

/// Where a secret was found: the source and a short excerpt with the secret masked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// Which secret (its label, never its value).
    pub secret: String,
    /// Where (a log file and line number, an event, an object's field, a metrics page).
    pub source: String,
}

/// Searches `text` (from `source`) for every secret; line numbers are 1-based. Secrets shorter
/// than 8 characters are not searched (they would match by chance).
pub fn find_secrets(source: &str, text: &str, secrets: &[(String, String)]) -> Vec<Leak> {
    let mut out = Vec::new();
    for (label, secret) in secrets {
        if secret.len() < 8 {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if line.contains(secret.as_str()) {
                out.push(Leak {
                    secret: label.clone(),
                    source: format!("{source}:{}", n + 1),
                });
            }
        }
    }
    out
}

/// The credentials a kubeconfig (YAML or JSON text) holds: tokens, client keys and passwords,
/// each labelled with its user's name.
pub fn kubeconfig_credentials(text: &str) -> Vec<(String, String)> {
    let Ok(doc) = serde_saphyr::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for user in doc["users"].as_array().into_iter().flatten() {
        let name = user["name"].as_str().unwrap_or("?");
        for field in ["token", "client-key-data", "password"] {
            if let Some(v) = user["user"][field].as_str() {
                out.push((format!("{field} of kubeconfig user {name}"), v.to_string()));
            }
        }
    }
    out
}

/// Why a user kubeconfig (YAML text) holds a static credential (empty: it holds none):
/// [`crate::objects::static_credentials`], the rule C34 judges by, plus a text that is no
/// kubeconfig at all.
pub fn static_credentials(text: &str) -> Vec<String> {
    match serde_saphyr::from_str::<Value>(text) {
        Ok(doc) if doc["users"].is_array() => crate::objects::static_credentials(&doc),
        _ => vec!["it is not a kubeconfig with users".into()],
    }
}

/// The top-level fields (`spec`, `status`, `metadata.labels`, …) that differ between two
/// versions of an object, resourceVersion, generation and managedFields left out.
pub fn changed_fields(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = before
        .as_object()
        .into_iter()
        .flatten()
        .chain(after.as_object().into_iter().flatten())
        .map(|(k, _)| k)
        .collect();
    for key in keys {
        if key == "metadata" {
            let meta_keys: BTreeSet<&String> = before["metadata"]
                .as_object()
                .into_iter()
                .flatten()
                .chain(after["metadata"].as_object().into_iter().flatten())
                .map(|(k, _)| k)
                .collect();
            for m in meta_keys {
                if ["resourceVersion", "managedFields", "generation"].contains(&m.as_str()) {
                    continue;
                }
                if before["metadata"][m] != after["metadata"][m] {
                    out.push(format!("metadata.{m}"));
                }
            }
        } else if before[key] != after[key] {
            out.push(key.clone());
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(kind: &str, id: &str, name: &str, owner: Option<&str>, state: &str) -> Item {
        Item {
            kind: kind.into(),
            id: id.into(),
            name: name.into(),
            parent: String::new(),
            owner: owner.map(str::to_string),
            state: state.into(),
        }
    }

    #[test]
    fn two_live_resources_of_one_owner_and_name_are_a_duplicate() {
        let items = vec![
            item("ec2:vpc", "vpc-1", "ns-c-vpc", Some("ns_c"), "available"),
            item("ec2:vpc", "vpc-2", "ns-c-vpc", Some("ns_c"), "available"),
            item("ec2:vpc", "vpc-3", "ns-d-vpc", Some("ns_d"), "available"),
        ];
        let d = duplicates(&items);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("vpc-1, vpc-2"), "{d:?}");
    }

    #[test]
    fn a_leaving_resource_beside_its_replacement_and_foreign_ones_are_not_duplicates() {
        let items = vec![
            item("eks:nodegroup", "a1", "pool", Some("ns_c"), "DELETING"),
            item("eks:nodegroup", "a2", "pool", Some("ns_c"), "CREATING"),
            item("ec2:vpc", "vpc-1", "same", None, "available"),
            item("ec2:vpc", "vpc-2", "same", None, "available"),
        ];
        assert!(duplicates(&items).is_empty());
    }

    #[test]
    fn leaks_are_owned_resources_left_and_foreign_deletions_are_found() {
        let owners: BTreeSet<String> = ["ns_c".to_string()].into();
        let after = vec![
            item("ec2:subnet", "s-1", "ns-c-a", Some("ns_c"), "available"),
            item("ec2:vpc", "vpc-9", "byo", None, "available"),
        ];
        assert_eq!(leaks(&after, &owners).len(), 1);
        let before = vec![
            item("ec2:vpc", "vpc-9", "byo", None, "available"),
            item("ec2:vpc", "vpc-8", "other", None, "available"),
        ];
        let gone = deleted_foreign(&before, &after);
        assert_eq!(gone.len(), 1);
        assert!(gone[0].contains("vpc-8"));
    }

    #[test]
    fn secrets_are_found_by_line_and_short_ones_are_not_searched() {
        let secrets = vec![
            ("seeded".to_string(), "s3cr3t-value-123".to_string()),
            ("short".to_string(), "abc".to_string()),
        ];
        let found = find_secrets("log", "ok\nkey=s3cr3t-value-123\nabc\n", &secrets);
        assert_eq!(
            found,
            vec![Leak {
                secret: "seeded".into(),
                source: "log:2".into()
            }]
        );
    }

    #[test]
    fn a_user_kubeconfig_with_a_token_is_static_and_one_with_exec_is_not() {
        let exec = "users:\n- name: u\n  user:\n    exec:\n      command: aws\n";
        assert!(static_credentials(exec).is_empty());
        let token = "users:\n- name: u\n  user:\n    token: abc\n";
        let why = static_credentials(token);
        assert!(why.iter().any(|w| w.contains("has token")), "{why:?}");
        assert!(!static_credentials("not: [a kubeconfig]").is_empty());
        assert_eq!(
            kubeconfig_credentials(token),
            vec![("token of kubeconfig user u".to_string(), "abc".to_string())]
        );
    }

    #[test]
    fn changed_fields_ignore_bookkeeping() {
        let a =
            json!({"metadata": {"resourceVersion": "1", "labels": {"a": "1"}}, "status": {"x": 1}});
        let b =
            json!({"metadata": {"resourceVersion": "2", "labels": {"a": "2"}}, "status": {"x": 1}});
        assert_eq!(changed_fields(&a, &b), vec!["metadata.labels".to_string()]);
        let c =
            json!({"metadata": {"resourceVersion": "3", "labels": {"a": "2"}}, "status": {"x": 2}});
        assert_eq!(changed_fields(&b, &c), vec!["status".to_string()]);
    }
}
