//! What the emulated region offers: Kubernetes versions (AKS takes `1.33` for the newest patch
//! of a minor, or an exact `1.33.3`) and VM sizes with their vCPUs and memory.

/// Offered versions, oldest first (each minor's patches ascending).
pub const VERSIONS: &[&str] = &[
    "1.30.13", "1.30.14", "1.31.10", "1.31.11", "1.32.6", "1.32.7", "1.33.2", "1.33.3", "1.34.0",
    "1.34.1",
];

/// The version used when a request names none.
pub const DEFAULT_VERSION: &str = "1.33.3";

/// The node image AKS reports for Ubuntu pools.
pub const NODE_IMAGE: &str = "AKSUbuntu-2204gen2containerd-202611.10.0";

/// `(size, vCPUs, memory GiB)`.
pub const VM_SIZES: &[(&str, u32, u32)] = &[
    ("Standard_B1s", 1, 1),
    ("Standard_A1_v2", 1, 2),
    ("Standard_B2s", 2, 4),
    ("Standard_B2ms", 2, 8),
    ("Standard_DS2_v2", 2, 7),
    ("Standard_D2s_v3", 2, 8),
    ("Standard_D4s_v3", 4, 16),
    ("Standard_D2s_v5", 2, 8),
    ("Standard_D4s_v5", 4, 16),
    ("Standard_D8s_v5", 8, 32),
    ("Standard_D2ds_v5", 2, 8),
    ("Standard_D4ds_v5", 4, 16),
    ("Standard_E4s_v5", 4, 32),
];

/// The size of a pool whose request names none.
pub const DEFAULT_VM_SIZE: &str = "Standard_D2s_v5";

/// vCPUs and memory of a size (case-insensitive, as Azure compares them).
pub fn vm_size(name: &str) -> Option<(u32, u32)> {
    VM_SIZES
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, c, m)| (*c, *m))
}

/// `(major, minor, patch)` of `1.33.3`, or of `1.33` with patch `None`.
pub fn parse(version: &str) -> Option<(u32, u32, Option<u32>)> {
    let mut parts = version.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = match parts.next() {
        None => None,
        Some(p) => Some(p.parse().ok()?),
    };
    if parts.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}

/// The offered version a request means: the newest patch of a minor, or the exact patch.
pub fn resolve(version: &str) -> Option<&'static str> {
    let (major, minor, patch) = parse(version)?;
    VERSIONS.iter().rev().copied().find(|v| {
        parse(v)
            .is_some_and(|(a, b, c)| a == major && b == minor && patch.is_none_or(|p| Some(p) == c))
    })
}

/// The minor of a version, `(1, 33)`.
pub fn minor(version: &str) -> (u32, u32) {
    parse(version).map(|(a, b, _)| (a, b)).unwrap_or((0, 0))
}

/// The versions a cluster or pool at `current` may go to: newer patches of its minor and
/// every patch of the next minor (AKS moves one minor at a time).
pub fn upgrades(current: &str) -> Vec<&'static str> {
    let Some((a, b, c)) = parse(current) else {
        return Vec::new();
    };
    VERSIONS
        .iter()
        .copied()
        .filter(|v| match parse(v) {
            Some((x, y, z)) => x == a && ((y == b && z > c) || y == b + 1),
            None => false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_means_its_newest_patch_and_upgrades_go_one_minor_at_a_time() {
        assert_eq!(resolve("1.31"), Some("1.31.11"));
        assert_eq!(resolve("1.31.10"), Some("1.31.10"));
        assert_eq!(resolve("1.31.3"), None);
        assert_eq!(resolve("1.29"), None);
        assert_eq!(upgrades("1.31.10"), vec!["1.31.11", "1.32.6", "1.32.7"]);
        assert_eq!(vm_size("standard_d2s_v5"), Some((2, 8)));
    }
}
