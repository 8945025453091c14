//! What the emulated GKE offers: Kubernetes versions (`1.33.5-gke.1201000`), release channels,
//! image types and machine types with their vCPUs (for the CPU quota).

use serde_json::{Value, json};

/// Every GKE version the emulator offers, oldest first: `(version, kubelet patch)`.
const VERSIONS: &[&str] = &[
    "1.30.14-gke.1150000",
    "1.31.12-gke.1265000",
    "1.31.13-gke.1023000",
    "1.32.8-gke.1134000",
    "1.32.9-gke.1010000",
    "1.33.4-gke.1350000",
    "1.33.5-gke.1201000",
    "1.34.1-gke.1431000",
];

/// The version a cluster gets when it asks for none (or `-`): the newest of the default minor.
const DEFAULT_MINOR: (u32, u32) = (1, 33);

/// Release channels with the minors they offer.
const CHANNELS: &[(&str, &[(u32, u32)])] = &[
    ("RAPID", &[(1, 32), (1, 33), (1, 34)]),
    ("REGULAR", &[(1, 31), (1, 32), (1, 33)]),
    ("STABLE", &[(1, 30), (1, 31), (1, 32)]),
    ("EXTENDED", &[(1, 30), (1, 31), (1, 32), (1, 33)]),
];

/// Node image types offered.
pub const IMAGE_TYPES: &[&str] = &["COS_CONTAINERD", "UBUNTU_CONTAINERD"];

/// The default node image type.
pub const DEFAULT_IMAGE_TYPE: &str = "COS_CONTAINERD";

/// The machine type of nodes that name none.
pub const DEFAULT_MACHINE_TYPE: &str = "e2-medium";

/// `(major, minor)` of `1.31`, `1.31.5` or `1.31.5-gke.100`.
pub fn minor_of(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// `(major, minor, patch, gke build)` of a full version, for ordering.
fn key_of(version: &str) -> (u32, u32, u32, u64) {
    let (core, build) = version.split_once("-gke.").unwrap_or((version, "0"));
    let mut parts = core.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        build.parse().unwrap_or(0),
    )
}

/// Orders two GKE versions (`1.31.13-gke.1023000 > 1.31.12-gke.1265000`).
pub fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    key_of(a).cmp(&key_of(b))
}

/// The newest version of a minor.
fn newest_of(minor: (u32, u32)) -> Option<&'static str> {
    VERSIONS
        .iter()
        .rev()
        .find(|v| minor_of(v) == Some(minor))
        .copied()
}

/// The version a cluster gets by default.
pub fn default_version() -> &'static str {
    newest_of(DEFAULT_MINOR).unwrap_or(VERSIONS[VERSIONS.len() - 1])
}

/// What a requested version resolves to, as GKE resolves it: `""`/`-` the default, `latest` the
/// newest, `1.31` the newest 1.31, `1.31.12` the newest build of that patch, a full
/// `1.31.12-gke.1265000` itself. `None` when no offered version matches.
pub fn resolve(requested: &str) -> Option<&'static str> {
    let requested = requested.trim();
    match requested {
        "" | "-" => return Some(default_version()),
        "latest" => return VERSIONS.last().copied(),
        _ => {}
    }
    if requested.contains("-gke.") {
        return VERSIONS.iter().find(|v| **v == requested).copied();
    }
    let dots = requested.matches('.').count();
    VERSIONS
        .iter()
        .rev()
        .find(|v| match dots {
            1 => minor_of(v) == minor_of(requested) && minor_of(requested).is_some(),
            2 => v
                .split_once("-gke.")
                .is_some_and(|(core, _)| core == requested),
            _ => false,
        })
        .copied()
}

/// The versions of a release channel (`RAPID`, …), newest first; `None` for no channel.
pub fn channel_versions(channel: &str) -> Option<Vec<&'static str>> {
    let (_, minors) = CHANNELS.iter().find(|(c, _)| *c == channel)?;
    Some(
        VERSIONS
            .iter()
            .rev()
            .filter(|v| minor_of(v).is_some_and(|m| minors.contains(&m)))
            .copied()
            .collect(),
    )
}

/// The kubelet version Nodes of a GKE version report (`v1.33.5-gke.1201000`).
pub fn kubelet_version(version: &str) -> String {
    format!("v{version}")
}

/// `projects.locations.getServerConfig`'s answer.
pub fn server_config() -> Value {
    let newest_first: Vec<&str> = VERSIONS.iter().rev().copied().collect();
    let channels: Vec<Value> = CHANNELS
        .iter()
        .map(|(name, _)| {
            let versions = channel_versions(name).unwrap_or_default();
            json!({
                "channel": name,
                "defaultVersion": versions.iter().find(|v| minor_of(v) <= Some(DEFAULT_MINOR)).or(versions.last()),
                "validVersions": versions,
                "upgradeTargetVersion": versions.first(),
            })
        })
        .collect();
    json!({
        "defaultClusterVersion": default_version(),
        "validNodeVersions": newest_first,
        "defaultImageType": DEFAULT_IMAGE_TYPE,
        "validImageTypes": IMAGE_TYPES,
        "validMasterVersions": newest_first,
        "channels": channels,
    })
}

/// The vCPUs of a machine type the emulated Compute Engine offers (`e2-standard-4` → 4), or
/// `None` when it offers none of that name.
pub fn machine_vcpus(machine_type: &str) -> Option<u32> {
    match machine_type {
        "e2-micro" | "e2-small" | "e2-medium" | "f1-micro" | "g1-small" => return Some(2),
        _ => {}
    }
    let (family, rest) = machine_type.split_once('-')?;
    if ![
        "e2", "n1", "n2", "n2d", "c2", "c3", "c3d", "t2d", "t2a", "n4", "c4",
    ]
    .contains(&family)
    {
        return None;
    }
    let (class, cpus) = rest.split_once('-')?;
    if !["standard", "highmem", "highcpu"].contains(&class) {
        return None;
    }
    let cpus: u32 = cpus.parse().ok()?;
    [1, 2, 4, 8, 16, 32, 48, 64, 96]
        .contains(&cpus)
        .then_some(cpus)
        .filter(|c| !(family == "e2" && *c > 32 || family != "n1" && *c == 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_resolve_as_gke_resolves_them() {
        assert_eq!(resolve("-"), Some("1.33.5-gke.1201000"));
        assert_eq!(resolve(""), Some("1.33.5-gke.1201000"));
        assert_eq!(resolve("latest"), Some("1.34.1-gke.1431000"));
        assert_eq!(resolve("1.31"), Some("1.31.13-gke.1023000"));
        assert_eq!(resolve("1.31.12"), Some("1.31.12-gke.1265000"));
        assert_eq!(resolve("1.31.12-gke.1265000"), Some("1.31.12-gke.1265000"));
        assert_eq!(resolve("1.31.12-gke.1"), None);
        assert_eq!(resolve("1.29"), None);
        assert_eq!(resolve("v1.31"), None);
        assert!(compare("1.31.13-gke.1023000", "1.31.12-gke.1265000").is_gt());
    }

    #[test]
    fn channels_and_machine_types() {
        let rapid = channel_versions("RAPID").unwrap();
        assert_eq!(rapid.first(), Some(&"1.34.1-gke.1431000"));
        assert!(rapid.iter().all(|v| minor_of(v) >= Some((1, 32))));
        assert!(channel_versions("NIGHTLY").is_none());
        assert_eq!(machine_vcpus("e2-standard-4"), Some(4));
        assert_eq!(machine_vcpus("e2-medium"), Some(2));
        assert_eq!(machine_vcpus("n1-standard-1"), Some(1));
        assert_eq!(machine_vcpus("e2-standard-3"), None);
        assert_eq!(machine_vcpus("m5.large"), None);
        let config = server_config();
        assert_eq!(config["channels"].as_array().unwrap().len(), 4);
    }
}
