//! Names and ownership of cloud resources.
//!
//! # Ownership tag
//! Every cloud resource a provider creates carries one tag (a label on GCP) that names the
//! provider and the owning Cluster as `<namespace>/<cluster>`. It survives `clusterctl move`
//! (object UIDs do not), so it is what "ours" means when a provider meets an existing resource.
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
//!
//! # Cloud names
//! [`derive_cloud_name`] turns a namespace and object name into a name every cloud accepts,
//! within its documented limits ([`NameLimits`] presets), deterministically.

use std::collections::BTreeMap;

/// The reserved key prefix of ownership tags.
pub const OWNERSHIP_TAG_PREFIX: &str = "capi-managed-";

/// Longest ownership tag key or value (the GCP label limit).
pub const OWNERSHIP_TAG_MAX_LEN: usize = 63;

const HASH_LEN: usize = 10;

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

/// What the first character of a name may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstChar {
    /// An ASCII letter.
    Letter,
    /// An ASCII letter or digit.
    Alphanumeric,
}

/// A cloud's rules for a resource name. ASCII letters and digits are always allowed;
/// `punctuation` lists the other characters allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameLimits {
    /// What the name is, for messages, e.g. "EKS cluster name".
    pub what: &'static str,
    /// Longest allowed name, in characters (at least 2 for [`derive_cloud_name`] to work).
    pub max_len: usize,
    /// Allowed characters besides ASCII letters and digits.
    pub punctuation: &'static str,
    /// What the first character may be.
    pub first: FirstChar,
    /// Whether the last character must be a letter or digit.
    pub must_end_alphanumeric: bool,
    /// Whether upper-case letters are refused.
    pub lowercase: bool,
}

/// EKS cluster names: 1–100 characters, letters (case-sensitive), digits, `-` and `_`,
/// starting with a letter or digit (pattern `^[0-9A-Za-z][A-Za-z0-9\-_]*`).
/// Source: Amazon EKS API reference, `CreateCluster` request, `name`.
pub const EKS_CLUSTER: NameLimits = NameLimits {
    what: "EKS cluster name",
    max_len: 100,
    punctuation: "-_",
    first: FirstChar::Alphanumeric,
    must_end_alphanumeric: false,
    lowercase: false,
};

/// EKS managed node group names: 1–63 characters, letters, digits, `-` and `_`, starting with
/// a letter or digit. Source: Amazon EKS API reference, `CreateNodegroup`, `nodegroupName`.
pub const EKS_NODEGROUP: NameLimits = NameLimits {
    what: "EKS node group name",
    max_len: 63,
    punctuation: "-_",
    first: FirstChar::Alphanumeric,
    must_end_alphanumeric: false,
    lowercase: false,
};

/// AKS managed cluster names: 1–63 characters, letters, digits, `-` and `_`, starting and
/// ending with a letter or digit. Source: Microsoft Learn, "Naming rules and restrictions for
/// Azure resources", `Microsoft.ContainerService/managedClusters`.
pub const AKS_CLUSTER: NameLimits = NameLimits {
    what: "AKS cluster name",
    max_len: 63,
    punctuation: "-_",
    first: FirstChar::Alphanumeric,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// AKS agent pool (node pool) names: 1–12 lower-case letters and digits, starting with a
/// letter (Linux pools). Source: Microsoft Learn, AKS "Create node pools", naming limits.
pub const AKS_AGENT_POOL: NameLimits = NameLimits {
    what: "AKS node pool name",
    max_len: 12,
    punctuation: "",
    first: FirstChar::Letter,
    must_end_alphanumeric: true,
    lowercase: true,
};

/// GKE cluster names: up to 40 characters, lower-case letters, digits and `-`, starting with a
/// letter and ending with a letter or digit. Source: Google Kubernetes Engine API reference,
/// `projects.locations.clusters`, `Cluster.name`.
pub const GKE_CLUSTER: NameLimits = NameLimits {
    what: "GKE cluster name",
    max_len: 40,
    punctuation: "-",
    first: FirstChar::Letter,
    must_end_alphanumeric: true,
    lowercase: true,
};

/// GKE node pool names: the cluster name's rules (the API reference documents none of its own;
/// GKE refuses what the cluster name refuses), up to 40 characters.
pub const GKE_NODE_POOL: NameLimits = NameLimits {
    what: "GKE node pool name",
    ..GKE_CLUSTER
};

/// OKE cluster names: 1–255 characters. OCI documents only the length
/// (Container Engine API reference, `CreateClusterDetails.name`); the character rules here are
/// a conservative choice (letters, digits, `-`, `_`; starting with a letter, ending with a
/// letter or digit) so derived names also read well in the console and the CLI.
pub const OKE_CLUSTER: NameLimits = NameLimits {
    what: "OKE cluster name",
    max_len: 255,
    punctuation: "-_",
    first: FirstChar::Letter,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// OKE node pool names: 1–255 characters (Container Engine API reference,
/// `CreateNodePoolDetails.name`; no character rules documented). The same conservative choice as
/// [`OKE_CLUSTER`], and `.` besides, so an object's Kubernetes name is used as it is.
pub const OKE_NODE_POOL: NameLimits = NameLimits {
    what: "OKE node pool name",
    max_len: 255,
    punctuation: "-_.",
    first: FirstChar::Alphanumeric,
    must_end_alphanumeric: true,
    lowercase: false,
};

/// Why a name breaks a cloud's rules; the message names the cloud and the rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("{what} must not be empty")]
    Empty {
        /// What the name is.
        what: &'static str,
    },
    /// The name is too long.
    #[error("{what} \"{name}\" is {len} characters long; the limit is {max}")]
    TooLong {
        /// What the name is.
        what: &'static str,
        /// The name.
        name: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name holds a character the cloud refuses.
    #[error("{what} \"{name}\" contains '{found}'; allowed are {allowed}")]
    BadCharacter {
        /// What the name is.
        what: &'static str,
        /// The name.
        name: String,
        /// The first refused character.
        found: char,
        /// The allowed characters, in words.
        allowed: String,
    },
    /// The first or last character is not allowed there.
    #[error("{what} \"{name}\" must {rule}")]
    BadEdge {
        /// What the name is.
        what: &'static str,
        /// The name.
        name: String,
        /// The rule, e.g. "start with a letter".
        rule: &'static str,
    },
}

impl NameLimits {
    fn allows(&self, c: char) -> bool {
        if c.is_ascii_digit() || c.is_ascii_lowercase() {
            return true;
        }
        if c.is_ascii_uppercase() {
            return !self.lowercase;
        }
        self.punctuation.contains(c)
    }

    fn allowed_in_words(&self) -> String {
        let letters = if self.lowercase {
            "lower-case letters"
        } else {
            "letters"
        };
        if self.punctuation.is_empty() {
            format!("{letters} and digits")
        } else {
            let punct: Vec<String> = self.punctuation.chars().map(|c| format!("'{c}'")).collect();
            format!("{letters}, digits and {}", punct.join(", "))
        }
    }

    /// Checks `name` against these rules.
    ///
    /// # Errors
    /// The first rule broken, as a [`NameError`] whose message names the cloud's resource.
    pub fn check(&self, name: &str) -> Result<(), NameError> {
        let what = self.what;
        let len = name.chars().count();
        if len == 0 {
            return Err(NameError::Empty { what });
        }
        if len > self.max_len {
            return Err(NameError::TooLong {
                what,
                name: name.to_owned(),
                len,
                max: self.max_len,
            });
        }
        if let Some(found) = name.chars().find(|c| !self.allows(*c)) {
            return Err(NameError::BadCharacter {
                what,
                name: name.to_owned(),
                found,
                allowed: self.allowed_in_words(),
            });
        }
        let first_ok = name.chars().next().is_some_and(|c| match self.first {
            FirstChar::Letter => c.is_ascii_alphabetic(),
            FirstChar::Alphanumeric => c.is_ascii_alphanumeric(),
        });
        if !first_ok {
            let rule = match self.first {
                FirstChar::Letter => "start with a letter",
                FirstChar::Alphanumeric => "start with a letter or digit",
            };
            return Err(NameError::BadEdge {
                what,
                name: name.to_owned(),
                rule,
            });
        }
        if self.must_end_alphanumeric
            && !name
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            return Err(NameError::BadEdge {
                what,
                name: name.to_owned(),
                rule: "end with a letter or digit",
            });
        }
        Ok(())
    }

    /// Whether `name` satisfies these rules.
    pub fn is_valid(&self, name: &str) -> bool {
        self.check(name).is_ok()
    }

    /// An RE2 pattern (as CEL's `matches` takes it) accepting exactly the names these rules
    /// accept.
    pub fn pattern(&self) -> String {
        let letters = if self.lowercase { "a-z" } else { "A-Za-z" };
        // `-` goes last in a character class, where it is literal.
        let mut punctuation: String = self.punctuation.chars().filter(|c| *c != '-').collect();
        if self.punctuation.contains('-') {
            punctuation.push('-');
        }
        let first = match self.first {
            FirstChar::Letter => format!("[{letters}]"),
            FirstChar::Alphanumeric => format!("[{letters}0-9]"),
        };
        let middle = format!("[{letters}0-9{punctuation}]");
        let rest = self.max_len.saturating_sub(1);
        if self.must_end_alphanumeric && rest > 0 {
            let last = format!("[{letters}0-9]");
            format!("^{first}({middle}{{0,{}}}{last})?$", rest - 1)
        } else {
            format!("^{first}{middle}{{0,{rest}}}$")
        }
    }

    /// A CEL rule, for the object holding the optional string field `field`, that refuses a
    /// value these rules refuse, and its message naming `path` (the field as the user writes
    /// it, e.g. `spec.cloudName`).
    pub fn cel_rule(&self, field: &str, path: &str) -> (String, String) {
        let rule = format!(
            "!has(self.{field}) || self.{field}.matches('{}')",
            self.pattern()
        );
        let first = match self.first {
            FirstChar::Letter => "a letter",
            FirstChar::Alphanumeric => "a letter or digit",
        };
        let end = if self.must_end_alphanumeric {
            " and ending with a letter or digit"
        } else {
            ""
        };
        let message = format!(
            "{path} must be a valid {}: 1 to {} characters, {}, starting with {first}{end}",
            self.what,
            self.max_len,
            self.allowed_in_words()
        );
        (rule, message)
    }

    /// [`Self::cel_rule`] as a CRD validation rule, for `#[x_kube(validation = …)]`.
    pub fn cel_validation(&self, field: &str, path: &str) -> kube_core::Rule {
        let (rule, message) = self.cel_rule(field, path);
        kube_core::Rule::new(rule).message(message.as_str())
    }
}

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

/// 64-bit FNV-1a of `input`: the one stable hash of the workspace (derived names, ownership tag
/// values, idempotency tokens). Stable across Rust releases, unlike the standard library's
/// hasher: changing it would rename derived cloud resources and repeat creates after an upgrade.
pub fn fnv1a64(input: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    input.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}

/// [`fnv1a64`] of `input` as lower-case base-32 (digits and `a`–`v`), [`HASH_LEN`] long.
fn short_hash(input: &str) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let hash = fnv1a64(input.as_bytes());
    (0..HASH_LEN)
        .map(|i| ALPHABET[((hash >> (i * 5)) & 31) as usize] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    use proptest::prelude::*;

    const ALL: [NameLimits; 7] = [
        EKS_CLUSTER,
        EKS_NODEGROUP,
        AKS_CLUSTER,
        AKS_AGENT_POOL,
        GKE_CLUSTER,
        OKE_CLUSTER,
        OKE_NODE_POOL,
    ];

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

    #[test]
    fn check_messages_name_the_cloud_and_the_rule() {
        let err = GKE_CLUSTER.check(&"a".repeat(41)).unwrap_err().to_string();
        assert!(
            err.contains("GKE cluster name") && err.contains("40"),
            "{err}"
        );
        let err = GKE_CLUSTER.check("Abc").unwrap_err().to_string();
        assert!(err.contains("'A'") && err.contains("lower-case"), "{err}");
        let err = AKS_CLUSTER.check("abc-").unwrap_err().to_string();
        assert!(err.contains("end with a letter or digit"), "{err}");
        let err = EKS_CLUSTER.check("-abc").unwrap_err().to_string();
        assert!(err.contains("start with a letter or digit"), "{err}");
        assert!(EKS_CLUSTER.check("").is_err());
    }

    #[test]
    fn the_hash_is_stable_across_releases() {
        // Changing the hash would rename every derived cloud resource: pin it. The expected
        // value was computed independently (FNV-1a 64, low 50 bits as base-32, low bits first).
        assert_eq!(short_hash("ns/name"), "grdq2gukbc");
        assert_ne!(short_hash("ns/name"), short_hash("ns/namf"));
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

        #[test]
        fn ownership_values_are_distinct_for_distinct_owners(
            ns1 in "[a-z0-9.-]{1,63}", c1 in "[a-z0-9.-]{1,63}",
            ns2 in "[a-z0-9.-]{1,63}", c2 in "[a-z0-9.-]{1,63}",
        ) {
            prop_assume!((&ns1, &c1) != (&ns2, &c2));
            prop_assert_ne!(ownership_tag("x", &ns1, &c1), ownership_tag("x", &ns2, &c2));
        }
    }

    #[test]
    fn the_cel_pattern_accepts_exactly_what_check_accepts() {
        let mut samples: Vec<String> = [
            "a", "A", "1", "ab", "a-b", "a_b", "-a", "a-", "a.b", "Ab1", "1ab", "a b", "a_", "Z9",
        ]
        .map(String::from)
        .to_vec();
        samples.push("x".repeat(12));
        samples.push("x".repeat(13));
        for limits in ALL {
            let pattern = limits.pattern();
            for sample in &samples {
                assert_eq!(
                    re_matches(&pattern, sample),
                    limits.is_valid(sample),
                    "{} {pattern} on {sample:?}",
                    limits.what
                );
            }
            let longest = "a".repeat(limits.max_len);
            assert!(re_matches(&pattern, &longest), "{} {pattern}", limits.what);
            let too_long = "a".repeat(limits.max_len + 1);
            assert!(
                !re_matches(&pattern, &too_long),
                "{} {pattern}",
                limits.what
            );
        }
        let (rule, message) = GKE_CLUSTER.cel_rule("cloudName", "spec.cloudName");
        assert!(
            rule.starts_with("!has(self.cloudName) || self.cloudName.matches('^[a-z]"),
            "{rule}"
        );
        assert!(
            message
                .starts_with("spec.cloudName must be a valid GKE cluster name: 1 to 40 characters"),
            "{message}"
        );
    }

    /// A tiny matcher for the patterns [`NameLimits::pattern`] writes (anchored; one first
    /// class, then either `M{0,n}` or `(M{0,n}L)?`), so the test needs no regex crate.
    fn re_matches(pattern: &str, s: &str) -> bool {
        let classes: Vec<String> = pattern
            .split('[')
            .skip(1)
            .map(|c| c.split(']').next().unwrap_or_default().to_string())
            .collect();
        let in_class = |class: &str, c: char| {
            let b: Vec<char> = class.chars().collect();
            let mut i = 0;
            while i < b.len() {
                if i + 2 < b.len() && b[i + 1] == '-' {
                    if (b[i]..=b[i + 2]).contains(&c) {
                        return true;
                    }
                    i += 3;
                } else {
                    if b[i] == c {
                        return true;
                    }
                    i += 1;
                }
            }
            false
        };
        let max: usize = pattern
            .split('{')
            .nth(1)
            .and_then(|r| r.split('}').next())
            .and_then(|r| r.split(',').nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let chars: Vec<char> = s.chars().collect();
        let Some((&first, rest)) = chars.split_first() else {
            return false;
        };
        if !in_class(&classes[0], first) {
            return false;
        }
        if classes.len() == 3 {
            // ^F(M{0,max}L)?$
            match rest.split_last() {
                None => true,
                Some((&last, middle)) => {
                    middle.len() <= max
                        && middle.iter().all(|c| in_class(&classes[1], *c))
                        && in_class(&classes[2], last)
                }
            }
        } else {
            rest.len() <= max && rest.iter().all(|c| in_class(&classes[1], *c))
        }
    }
}
