//! The ownership tag: one tag (a label on GCP) on every cloud resource a provider creates, naming
//! the provider and the owning Cluster as `<namespace>/<cluster>`, and the exact-match test of
//! whether a resource is ours.
//!
//! The format has to be a valid AWS tag, Azure tag, GCP label and OCI freeform tag at once, and
//! GCP labels are the strictest (keys and values: lowercase letters, digits, `-` and `_`, at
//! most 63 characters, keys start with a letter). So:
//!
//! - key: `capi-managed-<provider>`, e.g. `capi-managed-eks`;
//! - value: `<namespace>_<cluster>`. Kubernetes names never contain `_`, so the separator is
//!   unambiguous. When that string is longer than 63 characters or holds a character GCP
//!   refuses (a `.` in a cluster name, upper case), it is shortened and made label-safe, and a
//!   hash of the exact `<namespace>/<cluster>` is appended, so distinct owners keep distinct
//!   values.
//!
//! The `capi-managed-` key prefix ([`OWNERSHIP_TAG_PREFIX`]) is reserved: the CRD rejects it in
//! `spec.additionalTags`, so a user cannot forge ownership.

use std::collections::BTreeMap;

use super::hash::{HASH_LEN, short_hash};

/// The reserved key prefix of ownership tags.
pub const OWNERSHIP_TAG_PREFIX: &str = "capi-managed-";

/// Longest ownership tag key or value (the GCP label limit).
pub const OWNERSHIP_TAG_MAX_LEN: usize = 63;

/// The ownership tag `(key, value)` for resources of `namespace/cluster` created by `provider`.
///
/// `provider` is the short provider name (`eks`, `aks`, `gke`, `oke`); it is lowercased and any
/// character outside `[a-z0-9-]` becomes `-`. The value is deterministic, so [`is_owned_by`]
/// recomputes it rather than parsing it.
pub fn ownership_tag(provider: &str, namespace: &str, cluster: &str) -> (String, String) {
    (
        ownership_tag_key(provider),
        ownership_tag_value(namespace, cluster),
    )
}

/// The ownership tag key for `provider`: `capi-managed-<provider>`.
pub fn ownership_tag_key(provider: &str) -> String {
    let provider: String = provider
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let mut key = format!("{OWNERSHIP_TAG_PREFIX}{provider}");
    key.truncate(OWNERSHIP_TAG_MAX_LEN);
    key
}

fn ownership_tag_value(namespace: &str, cluster: &str) -> String {
    let plain = format!("{namespace}_{cluster}");
    let label_safe = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if plain.len() <= OWNERSHIP_TAG_MAX_LEN && plain.chars().all(label_safe) {
        return plain;
    }
    let hash = short_hash(&format!("{namespace}/{cluster}"));
    let keep = OWNERSHIP_TAG_MAX_LEN - HASH_LEN - 1;
    let prefix: String = plain
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if label_safe(c) { c } else { '-' })
        .take(keep)
        .collect();
    format!("{prefix}_{hash}")
}

/// Whether `tags` carry the ownership tag of `provider` for `namespace/cluster`.
///
/// Only an exact match counts: a resource tagged for another cluster, or by another provider,
/// is not ours (and must be neither adopted silently nor deleted).
pub fn is_owned_by(
    tags: &BTreeMap<String, String>,
    provider: &str,
    namespace: &str,
    cluster: &str,
) -> bool {
    let (key, value) = ownership_tag(provider, namespace, cluster);
    tags.get(&key) == Some(&value)
}

/// The value of `provider`'s ownership tag on a resource, whoever it names (for messages such
/// as "owned by another cluster").
pub fn ownership_tag_of<'a>(tags: &'a BTreeMap<String, String>, provider: &str) -> Option<&'a str> {
    tags.get(&ownership_tag_key(provider)).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_ownership_tag_names_the_provider_and_the_cluster() {
        let (key, value) = ownership_tag("eks", "team-a", "prod");
        assert_eq!(key, "capi-managed-eks");
        assert_eq!(value, "team-a_prod");
    }

    #[test]
    fn a_long_or_dotted_owner_gets_a_label_safe_hashed_value() {
        let (_, value) = ownership_tag("gke", &"n".repeat(63), &"c".repeat(63));
        assert!(value.len() <= OWNERSHIP_TAG_MAX_LEN);
        let (_, dotted) = ownership_tag("gke", "ns", "my.cluster");
        let (_, dashed) = ownership_tag("gke", "ns", "my-cluster");
        assert_ne!(dotted, dashed);
        assert!(!dotted.contains('.'));
    }

    #[test]
    fn ownership_tags_are_valid_gcp_labels() {
        let label_ok = |s: &str| {
            !s.is_empty()
                && s.len() <= 63
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        };
        for (p, ns, c) in [
            ("gke", "default", "c1"),
            ("GKE", "Upper", "x.y.z"),
            ("oke", &*"a".repeat(70), "b"),
        ] {
            let (k, v) = ownership_tag(p, ns, c);
            assert!(label_ok(&k), "{k}");
            assert!(label_ok(&v), "{v}");
            assert!(k.starts_with(OWNERSHIP_TAG_PREFIX));
        }
    }

    #[test]
    fn ownership_requires_the_exact_provider_namespace_and_cluster() {
        let (k, v) = ownership_tag("eks", "ns", "c1");
        let tags = BTreeMap::from([(k, v), ("env".to_string(), "prod".to_string())]);
        assert!(is_owned_by(&tags, "eks", "ns", "c1"));
        assert!(!is_owned_by(&tags, "eks", "ns", "c2"));
        assert!(!is_owned_by(&tags, "eks", "other", "c1"));
        assert!(!is_owned_by(&tags, "aks", "ns", "c1"));
        assert!(!is_owned_by(&BTreeMap::new(), "eks", "ns", "c1"));
        assert_eq!(ownership_tag_of(&tags, "eks"), Some("ns_c1"));
    }

    proptest! {
        #[test]
        fn ownership_values_are_distinct_for_distinct_owners(
            ns1 in "[a-z0-9.-]{1,63}", c1 in "[a-z0-9.-]{1,63}",
            ns2 in "[a-z0-9.-]{1,63}", c2 in "[a-z0-9.-]{1,63}",
        ) {
            prop_assume!((&ns1, &c1) != (&ns2, &c2));
            prop_assert_ne!(ownership_tag("x", &ns1, &c1), ownership_tag("x", &ns2, &c2));
        }
    }
}
