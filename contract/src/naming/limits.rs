//! Each cloud's rules for the names of its clusters and node pools ([`NameLimits`] and the
//! presets), checked in Rust with messages naming the rule broken, and written as the RE2
//! pattern and CEL rule a CRD enforces at admission.

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
    /// Longest allowed name, in characters (at least 2 for
    /// [`derive_cloud_name`](super::derive_cloud_name) to work).
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

/// Every preset, for tests.
#[cfg(test)]
pub(super) const ALL: [NameLimits; 7] = [
    EKS_CLUSTER,
    EKS_NODEGROUP,
    AKS_CLUSTER,
    AKS_AGENT_POOL,
    GKE_CLUSTER,
    OKE_CLUSTER,
    OKE_NODE_POOL,
];

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
    pub(super) fn allows(&self, c: char) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
