//! Idempotency tokens for requests that create or change something in a cloud.
//!
//! A provider can crash between sending a request and writing status. The retry must send the
//! same token, so the cloud answers with what the first request made instead of making it again
//! (EKS `clientRequestToken`, EC2 `ClientToken`, OCI `opc-retry-token`). A token is therefore a
//! pure function of the object's UID and of what makes the request distinct (its purpose,
//! generation, fingerprint); a request the user changed gets a new token.
//!
//! One hash ([`naming::fnv1a64`]) and one shape for every cloud; only the cloud's limits differ
//! ([`TokenLimits`]).

use crate::naming;

/// What a cloud accepts as an idempotency token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenLimits {
    /// Longest token, in ASCII characters (at least 24, for the hash and a short label).
    pub max_len: usize,
    /// Characters allowed besides ASCII letters and digits.
    pub punctuation: &'static str,
}

/// EKS `clientRequestToken`: the SDK documents no pattern; EKS accepts up to 64 characters.
/// We keep to letters, digits, `-` and `_`.
pub const EKS_REQUEST_TOKEN: TokenLimits = TokenLimits {
    max_len: 64,
    punctuation: "-_",
};

/// EC2 `ClientToken`: up to 64 ASCII characters (EC2 API reference, "Ensuring idempotency").
pub const EC2_CLIENT_TOKEN: TokenLimits = TokenLimits {
    max_len: 64,
    punctuation: "-_",
};

/// AKS (Azure Resource Manager): a PUT is idempotent by the resource's name, so no request token
/// is sent; limits for the tokens the kernel derives anyway.
pub const ARM_UNSENT_TOKEN: TokenLimits = TokenLimits {
    max_len: 64,
    punctuation: "-",
};

/// GKE: Kubernetes Engine creates carry no request token; a create is idempotent by its unique
/// name (a retry gets ALREADY_EXISTS and the next pass finds the cluster or pool). Limits for the
/// tokens the kernel derives anyway (never sent).
pub const GKE_UNSENT_TOKEN: TokenLimits = TokenLimits {
    max_len: 64,
    punctuation: "-",
};

/// OCI `opc-retry-token`: up to 64 characters (OCI API reference, "Retry tokens").
pub const OCI_RETRY_TOKEN: TokenLimits = TokenLimits {
    max_len: 64,
    punctuation: "-_",
};

/// Length of the hash part of a token (hex digits of a 64-bit hash).
const HASH_HEX: usize = 16;

/// The token for a request labelled `label` (e.g. `CreateCluster`, `create`, `upgrade-1.32`),
/// made for the object with UID `uid`, distinct by `parts` (generation, fingerprint, …).
///
/// The token is `<label>-<hash>`: the label (characters the cloud refuses dropped, shortened to
/// fit) keeps it readable in the cloud's audit log; the hash of the UID, label and parts makes it
/// unique. Deterministic: the same inputs give the same token on every run and release.
pub fn token(limits: &TokenLimits, label: &str, uid: &str, parts: &[&str]) -> String {
    let mut input = String::with_capacity(uid.len() + label.len() + 16);
    input.push_str(uid);
    input.push('\u{1f}');
    input.push_str(label);
    for part in parts {
        input.push('\u{1f}');
        input.push_str(part);
    }
    let hash = format!("{:016x}", naming::fnv1a64(input.as_bytes()));
    let room = limits.max_len.saturating_sub(HASH_HEX + 1);
    let label: String = label
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || limits.punctuation.contains(*c))
        .take(room)
        .collect();
    if label.is_empty() || !limits.punctuation.contains('-') {
        return hash;
    }
    format!("{label}-{hash}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const UID: &str = "6f1c2b9e-3c1d-4c8e-9a55-0d6d8f0b1e2a";

    #[test]
    fn the_same_request_gets_the_same_token_and_a_changed_one_another() {
        let a = token(&EKS_REQUEST_TOKEN, "create", UID, &["1"]);
        assert_eq!(a, token(&EKS_REQUEST_TOKEN, "create", UID, &["1"]));
        assert_ne!(a, token(&EKS_REQUEST_TOKEN, "create", UID, &["2"]));
        assert_ne!(
            a,
            token(&EKS_REQUEST_TOKEN, "create", "another-uid", &["1"])
        );
        assert_ne!(a, token(&EKS_REQUEST_TOKEN, "upgrade", UID, &["1"]));
        assert!(a.starts_with("create-"), "{a}");
    }

    #[test]
    fn parts_are_separated_so_they_cannot_run_into_each_other() {
        assert_ne!(
            token(&EC2_CLIENT_TOKEN, "x", UID, &["ab", "c"]),
            token(&EC2_CLIENT_TOKEN, "x", UID, &["a", "bc"])
        );
    }

    #[test]
    fn the_hash_is_fixed_across_releases() {
        // Computed independently: FNV-1a 64 over "uid\x1flabel\x1fpart".
        assert_eq!(
            token(&EKS_REQUEST_TOKEN, "label", "uid", &["part"]),
            format!("label-{:016x}", naming::fnv1a64(b"uid\x1flabel\x1fpart"))
        );
        assert_eq!(naming::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(naming::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    proptest! {
        #[test]
        fn tokens_fit_the_clouds_limits(label in ".{0,100}", uid in ".{0,40}", part in ".{0,200}") {
            for limits in [EKS_REQUEST_TOKEN, EC2_CLIENT_TOKEN, OCI_RETRY_TOKEN] {
                let t = token(&limits, &label, &uid, &[&part]);
                prop_assert!(t.len() <= limits.max_len, "{t}");
                prop_assert!(t.len() >= HASH_HEX);
                prop_assert!(t.chars().all(|c| c.is_ascii_alphanumeric() || limits.punctuation.contains(c)), "{t}");
            }
        }
    }
}
