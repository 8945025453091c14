//! The cloud name of an object: the user's `spec.cloudName` when set, else a name derived from the
//! object's namespace and name that the cloud accepts, deterministically, readable when possible
//! and hashed when it has to be shortened.

use super::NameLimits;
use super::hash::{HASH_LEN, short_hash};
use super::limits::FirstChar;

/// The cloud name of an object: the user's `spec.cloudName` when set (checked against
/// `limits`), else [`derive_cloud_name`].
///
/// # Errors
/// A sentence naming `spec.cloudName` when the user's name breaks the cloud's rules.
pub fn cloud_name(
    explicit: Option<&str>,
    namespace: &str,
    name: &str,
    limits: &NameLimits,
) -> Result<String, String> {
    match explicit {
        Some(given) => limits
            .check(given)
            .map(|()| given.to_owned())
            .map_err(|e| format!("spec.cloudName: {e}")),
        None => Ok(derive_cloud_name(namespace, name, limits)),
    }
}

/// A cloud name for the object `namespace/name`, valid under `limits`.
///
/// Guarantees (for `limits.max_len >= 2`):
/// - always valid under `limits`, for any input;
/// - deterministic: the same inputs give the same name (it is safe to recompute on every pass);
/// - readable when possible: `<namespace>-<name>` as is when that is already valid;
/// - otherwise the readable part is made valid (upper case folded where refused, refused
///   characters replaced by `-` or dropped), shortened, and followed by a hash of the exact
///   `namespace/name`, so distinct inputs that needed this get distinct names with high
///   probability (a 40-bit hash).
///
/// Two different objects can share the plain form (`a-b/c` and `a/b-c` both give `a-b-c`); the
/// ownership tag tells them apart and the second one stops with `NameConflict`; set
/// `spec.cloudName` to choose another name.
pub fn derive_cloud_name(namespace: &str, name: &str, limits: &NameLimits) -> String {
    let plain = format!("{namespace}-{name}");
    if limits.is_valid(&plain) {
        return plain;
    }
    let hash = short_hash(&format!("{namespace}/{name}"));
    let separator = if limits.punctuation.contains('-') {
        "-"
    } else {
        ""
    };
    let max_len = limits.max_len.max(2);
    // Room for the hash: as much of it as fits, leaving at least one character for the prefix.
    let hash_len = HASH_LEN.min(max_len - 1);
    let hash = &hash[..hash_len];
    let budget = max_len.saturating_sub(hash_len + separator.len());

    let fold = |c: char| {
        if limits.lowercase {
            c.to_ascii_lowercase()
        } else {
            c
        }
    };
    let replacement = limits.punctuation.contains('-').then_some('-');
    let mut prefix: String = plain
        .chars()
        .map(fold)
        .filter_map(|c| {
            if limits.allows(c) {
                Some(c)
            } else {
                replacement
            }
        })
        .take(budget)
        .collect();
    // Edges: the prefix must start as the rules require; it is always followed by the hash.
    while prefix
        .chars()
        .next()
        .is_some_and(|c| !c.is_ascii_alphanumeric())
    {
        prefix.remove(0);
    }
    while prefix.ends_with(|c: char| !c.is_ascii_alphanumeric()) {
        prefix.pop();
    }
    let needs_letter = limits.first == FirstChar::Letter;
    let starts_ok = |s: &str| {
        s.chars().next().is_some_and(|c| {
            if needs_letter {
                c.is_ascii_alphabetic()
            } else {
                c.is_ascii_alphanumeric()
            }
        })
    };
    if prefix.is_empty() || !starts_ok(&prefix) {
        // A letter is always acceptable as the first character.
        prefix.insert(0, 'c');
        prefix.truncate(budget.max(1));
        while prefix.ends_with(|c: char| !c.is_ascii_alphanumeric()) {
            prefix.pop();
        }
    }
    let mut out = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}{separator}")
    };
    out.push_str(hash);
    if out.chars().count() > max_len {
        out = out.chars().take(max_len).collect();
    }
    if !starts_ok(&out) {
        out.replace_range(..1, "c");
    }
    out
}

/// The cloud name of a resource that lives inside one cluster (a node pool), from its object's
/// name alone: names are unique within a namespace, and a cluster's pools share its namespace.
/// The name itself when the cloud takes it; else its allowed characters, cut to leave room for
/// five characters of a hash of the exact name (so `pool-1` and `pool1` stay apart), starting
/// as the rules require. AKS agent pools (`AKS_AGENT_POOL`, 12 lowercase letters and digits)
/// make `demo-pool-0` `demopoo` + hash, where [`derive_cloud_name`] leaves almost only the hash.
pub fn derive_child_name(name: &str, limits: &NameLimits) -> String {
    if limits.is_valid(name) {
        return name.to_owned();
    }
    const CHILD_HASH: usize = 5;
    let hash: String = short_hash(name).chars().take(CHILD_HASH).collect();
    let budget = limits.max_len.saturating_sub(CHILD_HASH).max(1);
    let mut prefix: String = name
        .chars()
        .map(|c| {
            if limits.lowercase {
                c.to_ascii_lowercase()
            } else {
                c
            }
        })
        .filter(|c| c.is_ascii_alphanumeric() || limits.punctuation.contains(*c))
        .collect();
    let needs_letter = limits.first == FirstChar::Letter;
    while prefix
        .chars()
        .next()
        .is_some_and(|c| !(c.is_ascii_alphabetic() || (!needs_letter && c.is_ascii_digit())))
    {
        prefix.remove(0);
    }
    if prefix.is_empty() {
        prefix.push('p');
    }
    let mut prefix: String = prefix.chars().take(budget).collect();
    while prefix.len() > 1 && prefix.ends_with(|c: char| !c.is_ascii_alphanumeric()) {
        prefix.pop();
    }
    let out = format!("{prefix}{hash}");
    if limits.is_valid(&out) {
        out
    } else {
        derive_cloud_name("", name, limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naming::limits::ALL;
    use crate::naming::{AKS_AGENT_POOL, EKS_CLUSTER, EKS_NODEGROUP, GKE_CLUSTER};
    use proptest::prelude::*;

    #[test]
    fn a_child_name_keeps_what_it_can_of_the_object_s_name() {
        assert_eq!(derive_child_name("pool1", &AKS_AGENT_POOL), "pool1");
        let a = derive_child_name("demo-pool-0", &AKS_AGENT_POOL);
        assert!(
            a.starts_with("demopoo") && a.len() == 12 && AKS_AGENT_POOL.is_valid(&a),
            "{a}"
        );
        assert_ne!(
            derive_child_name("pool-1", &AKS_AGENT_POOL),
            derive_child_name("pool1-", &AKS_AGENT_POOL)
        );
        let digits = derive_child_name("0-pool", &AKS_AGENT_POOL);
        assert!(
            AKS_AGENT_POOL.is_valid(&digits) && digits.starts_with("pool"),
            "{digits}"
        );
        let none = derive_child_name("---", &AKS_AGENT_POOL);
        assert!(AKS_AGENT_POOL.is_valid(&none), "{none}");
        assert_eq!(derive_child_name("ng-1", &EKS_NODEGROUP), "ng-1");
    }

    #[test]
    fn a_short_valid_name_is_kept_readable() {
        assert_eq!(
            derive_cloud_name("team-a", "prod", &GKE_CLUSTER),
            "team-a-prod"
        );
        assert_eq!(
            derive_cloud_name("default", "c1", &EKS_CLUSTER),
            "default-c1"
        );
    }

    #[test]
    fn a_long_name_is_truncated_with_a_hash_and_stays_within_the_limit() {
        let name = derive_cloud_name("platform-team", &"x".repeat(80), &GKE_CLUSTER);
        assert_eq!(name.len(), 40);
        assert!(name.starts_with("platform-team-xxx"));
        assert!(GKE_CLUSTER.is_valid(&name));
        let other = derive_cloud_name("platform-team", &"x".repeat(81), &GKE_CLUSTER);
        assert_ne!(name, other);
    }

    #[test]
    fn a_namespace_starting_with_a_digit_gets_a_letter_where_one_is_required() {
        let name = derive_cloud_name("1team", "c", &GKE_CLUSTER);
        assert!(GKE_CLUSTER.is_valid(&name), "{name}");
        assert!(name.starts_with('c'));
        assert_eq!(derive_cloud_name("1team", "c", &EKS_CLUSTER), "1team-c");
    }

    #[test]
    fn aks_pool_names_drop_punctuation_and_fit_twelve_characters() {
        let name = derive_cloud_name("default", "pool-1", &AKS_AGENT_POOL);
        assert!(AKS_AGENT_POOL.is_valid(&name), "{name}");
        assert!(name.len() <= 12);
    }

    proptest! {
        #[test]
        fn derived_names_are_always_valid(ns in "\\PC{0,80}", name in "\\PC{0,120}") {
            for limits in ALL {
                let derived = derive_cloud_name(&ns, &name, &limits);
                prop_assert!(limits.is_valid(&derived), "{:?} for {}: {:?}", derived, limits.what, limits.check(&derived));
            }
        }

        #[test]
        fn derived_names_are_deterministic(ns in "[a-z0-9-]{1,63}", name in "[a-z0-9.-]{1,63}") {
            for limits in ALL {
                prop_assert_eq!(derive_cloud_name(&ns, &name, &limits), derive_cloud_name(&ns, &name, &limits));
            }
        }

        #[test]
        fn distinct_names_that_truncate_stay_distinct(
            ns in "[a-z][a-z0-9-]{20,62}",
            a in "[a-z][a-z0-9-]{30,62}",
            b in "[a-z][a-z0-9-]{30,62}",
        ) {
            prop_assume!(a != b);
            // Both exceed GKE's 40 characters, so both are hashed.
            prop_assert_ne!(
                derive_cloud_name(&ns, &a, &GKE_CLUSTER),
                derive_cloud_name(&ns, &b, &GKE_CLUSTER)
            );
        }
    }
}
