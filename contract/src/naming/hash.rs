//! The one stable hash of the workspace (64-bit FNV-1a) and its short base-32 form, behind derived
//! cloud names, ownership tag values and idempotency tokens.

/// Characters of [`short_hash`] output.
pub(super) const HASH_LEN: usize = 10;

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
pub(super) fn short_hash(input: &str) -> String {
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
    fn the_hash_is_stable_across_releases() {
        // Changing the hash would rename every derived cloud resource: pin it. The expected
        // value was computed independently (FNV-1a 64, low 50 bits as base-32, low bits first).
        assert_eq!(short_hash("ns/name"), "grdq2gukbc");
        assert_ne!(short_hash("ns/name"), short_hash("ns/namf"));
    }
}
