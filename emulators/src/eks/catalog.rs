//! What the emulated EKS offers: Kubernetes versions, node AMI release versions, and a small
//! add-on catalog with versions per Kubernetes minor.

use serde_json::{Value, json};

/// Kubernetes minors the emulator accepts, oldest first; the last is the default.
pub const SUPPORTED_VERSIONS: &[&str] = &["1.30", "1.31", "1.32", "1.33", "1.34"];

/// The patch release each minor runs (what Nodes report and node AMIs are named after).
const PATCHES: &[(&str, &str)] = &[
    ("1.30", "1.30.14"),
    ("1.31", "1.31.13"),
    ("1.32", "1.32.9"),
    ("1.33", "1.33.5"),
    ("1.34", "1.34.1"),
];

/// EC2 instance families the emulator launches without moto (with moto, moto's own list of
/// instance types decides, as EC2's does).
const INSTANCE_FAMILIES: &[&str] = &[
    "t3", "t3a", "t4g", "m5", "m5a", "m6a", "m6g", "m6i", "m7g", "m7i", "c5", "c6a", "c6g", "c6i",
    "c7g", "c7i", "r5", "r6a", "r6g", "r6i", "r7g", "r7i", "g5", "g6", "p4d", "inf2",
];

/// Instance sizes, smallest first.
const INSTANCE_SIZES: &[&str] = &[
    "nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge",
    "12xlarge", "16xlarge", "24xlarge", "32xlarge", "48xlarge", "metal",
];

/// Whether `instance_type` (`family.size`) is one the emulator's EC2 offers.
pub fn instance_type_exists(instance_type: &str) -> bool {
    instance_type.split_once('.').is_some_and(|(family, size)| {
        INSTANCE_FAMILIES.contains(&family) && INSTANCE_SIZES.contains(&size)
    })
}

/// The date part of every node AMI release version (`<patch>-<date>`).
const AMI_DATE: &str = "20251103";

/// The default Kubernetes version of new clusters.
pub fn default_version() -> &'static str {
    SUPPORTED_VERSIONS[SUPPORTED_VERSIONS.len() - 1]
}

/// Whether `version` (a `major.minor`) is supported.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// `(major, minor)` of a `major.minor[.patch]` string.
pub fn minor_of(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The patch release of a supported minor, e.g. `1.31.13`.
pub fn patch_of(version: &str) -> String {
    PATCHES
        .iter()
        .find(|(m, _)| *m == version)
        .map(|(_, p)| (*p).to_string())
        .unwrap_or_else(|| format!("{version}.0"))
}

/// The node AMI release version for a minor, e.g. `1.31.13-20251103`.
pub fn release_version(version: &str) -> String {
    format!("{}-{AMI_DATE}", patch_of(version))
}

/// The kubelet version Nodes of a minor report, e.g. `v1.31.13-eks-3025e55`.
pub fn kubelet_version(version: &str) -> String {
    format!("v{}-eks-3025e55", patch_of(version))
}

/// One add-on of the catalog.
#[derive(Debug, Clone, Copy)]
pub struct AddonSpec {
    /// `addonName`.
    pub name: &'static str,
    /// `type`.
    pub kind: &'static str,
    /// Versions, newest first, each with the minors it supports; the first version supporting a
    /// minor is that minor's default.
    pub versions: &'static [(&'static str, &'static [&'static str])],
}

const ALL: &[&str] = SUPPORTED_VERSIONS;

/// The add-on catalog.
pub const ADDONS: &[AddonSpec] = &[
    AddonSpec {
        name: "vpc-cni",
        kind: "networking",
        versions: &[
            ("v1.20.4-eksbuild.1", ALL),
            ("v1.19.6-eksbuild.7", ALL),
            ("v1.18.6-eksbuild.1", &["1.30", "1.31", "1.32"]),
        ],
    },
    AddonSpec {
        name: "coredns",
        kind: "networking",
        versions: &[
            ("v1.12.4-eksbuild.1", &["1.34"]),
            ("v1.12.1-eksbuild.2", &["1.33", "1.34"]),
            ("v1.11.4-eksbuild.14", &["1.31", "1.32", "1.33"]),
            ("v1.11.3-eksbuild.2", &["1.30", "1.31"]),
            ("v1.11.1-eksbuild.9", &["1.30"]),
        ],
    },
    AddonSpec {
        name: "kube-proxy",
        kind: "networking",
        versions: &[
            ("v1.34.1-eksbuild.2", &["1.34"]),
            ("v1.33.5-eksbuild.2", &["1.33"]),
            ("v1.32.9-eksbuild.2", &["1.32"]),
            ("v1.31.13-eksbuild.2", &["1.31"]),
            ("v1.30.14-eksbuild.8", &["1.30"]),
        ],
    },
    AddonSpec {
        name: "aws-ebs-csi-driver",
        kind: "storage",
        versions: &[
            ("v1.51.1-eksbuild.1", ALL),
            ("v1.48.0-eksbuild.2", ALL),
            ("v1.45.0-eksbuild.2", &["1.30", "1.31", "1.32", "1.33"]),
        ],
    },
];

/// The catalog entry of an add-on.
pub fn addon(name: &str) -> Option<&'static AddonSpec> {
    ADDONS.iter().find(|a| a.name == name)
}

impl AddonSpec {
    /// Whether `version` exists and supports Kubernetes `minor`.
    pub fn supports(&self, version: &str, minor: &str) -> bool {
        self.versions
            .iter()
            .any(|(v, minors)| *v == version && minors.contains(&minor))
    }

    /// The default version for Kubernetes `minor`.
    pub fn default_for(&self, minor: &str) -> Option<&'static str> {
        self.versions
            .iter()
            .find(|(_, minors)| minors.contains(&minor))
            .map(|(v, _)| *v)
    }

    /// The `AddonInfo` JSON of DescribeAddonVersions, restricted to `minor` when given.
    pub fn info(&self, minor: Option<&str>) -> Option<Value> {
        let versions: Vec<Value> = self
            .versions
            .iter()
            .filter(|(_, minors)| minor.is_none_or(|m| minors.contains(&m)))
            .map(|(v, minors)| {
                let compatibilities: Vec<Value> = minors
                    .iter()
                    .filter(|m| minor.is_none_or(|want| want == **m))
                    .map(|m| {
                        json!({
                            "clusterVersion": m,
                            "platformVersions": ["*"],
                            "defaultVersion": self.default_for(m) == Some(*v),
                        })
                    })
                    .collect();
                json!({
                    "addonVersion": v,
                    "architecture": ["amd64", "arm64"],
                    "computeTypes": ["ec2"],
                    "compatibilities": compatibilities,
                    "requiresConfiguration": false,
                    "requiresIamPermissions": self.name == "aws-ebs-csi-driver",
                })
            })
            .collect();
        if versions.is_empty() {
            return None;
        }
        Some(json!({
            "addonName": self.name,
            "type": self.kind,
            "addonVersions": versions,
            "publisher": "eks",
            "owner": "aws",
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_addon_has_a_default_for_every_supported_minor() {
        for a in ADDONS {
            for m in SUPPORTED_VERSIONS {
                let v = a
                    .default_for(m)
                    .unwrap_or_else(|| panic!("{} has no version for {m}", a.name));
                assert!(a.supports(v, m));
            }
        }
        assert_eq!(
            addon("kube-proxy").and_then(|a| a.default_for("1.31")),
            Some("v1.31.13-eksbuild.2")
        );
        assert!(
            !addon("kube-proxy")
                .unwrap()
                .supports("v1.31.13-eksbuild.2", "1.32")
        );
    }

    #[test]
    fn versions_parse_and_name_their_releases() {
        assert_eq!(minor_of("1.31"), Some((1, 31)));
        assert_eq!(minor_of("1.31.2"), Some((1, 31)));
        assert_eq!(minor_of("v1.31"), None);
        assert_eq!(release_version("1.32"), "1.32.9-20251103");
        assert_eq!(default_version(), "1.34");
    }
}
