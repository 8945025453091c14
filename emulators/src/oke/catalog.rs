//! What the emulated region offers: Kubernetes versions (OKE takes an exact offered version,
//! `v1.33.5`), node shapes (fixed and flexible, with their OCPUs and memory), node images
//! (Oracle Linux platform images for any version, OKE images for one), availability domains.

use contract::version::KubeVersion;

/// Offered versions, oldest first (each minor's patches ascending), as OKE writes them.
pub const VERSIONS: &[&str] = &[
    "v1.30.10", "v1.31.1", "v1.31.10", "v1.32.1", "v1.32.10", "v1.33.1", "v1.34.2",
];

/// How many minors a node pool may run behind its cluster (OKE's skew policy).
pub const POOL_SKEW: u32 = 2;

/// A node shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Its name.
    pub name: &'static str,
    /// OCPUs of a fixed shape; 0 for a flexible one (`nodeShapeConfig.ocpus` decides).
    pub ocpus: u32,
    /// Memory in GB of a fixed shape.
    pub memory_gb: u32,
    /// Whether `nodeShapeConfig` sets OCPUs and memory.
    pub flexible: bool,
    /// Most OCPUs a flexible shape takes.
    pub max_ocpus: u32,
    /// Whether its processors are Arm (Ampere).
    pub arm: bool,
}

const fn fixed(name: &'static str, ocpus: u32, memory_gb: u32) -> Shape {
    Shape {
        name,
        ocpus,
        memory_gb,
        flexible: false,
        max_ocpus: ocpus,
        arm: false,
    }
}

const fn flex(name: &'static str, max_ocpus: u32, arm: bool) -> Shape {
    Shape {
        name,
        ocpus: 0,
        memory_gb: 0,
        flexible: true,
        max_ocpus,
        arm,
    }
}

/// Shapes node pools may use.
pub const SHAPES: &[Shape] = &[
    fixed("VM.Standard2.1", 1, 15),
    fixed("VM.Standard2.2", 2, 30),
    fixed("VM.Standard2.4", 4, 60),
    fixed("VM.Standard.E2.1", 1, 8),
    fixed("VM.Standard.E2.2", 2, 16),
    flex("VM.Standard.E3.Flex", 64, false),
    flex("VM.Standard.E4.Flex", 64, false),
    flex("VM.Standard.E5.Flex", 94, false),
    flex("VM.Standard3.Flex", 32, false),
    flex("VM.Standard.A1.Flex", 80, true),
];

/// A shape by name (OCI compares shape names exactly).
pub fn shape(name: &str) -> Option<&'static Shape> {
    SHAPES.iter().find(|s| s.name == name)
}

/// A node image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image {
    /// Its OCID (in the emulated region).
    pub id: &'static str,
    /// Its display name.
    pub name: &'static str,
    /// The Kubernetes minor an OKE image is built for; `None` for a platform image (any version).
    pub kubernetes: Option<&'static str>,
    /// Whether it is built for Arm shapes.
    pub arm: bool,
}

/// Images node pools may boot.
pub const IMAGES: &[Image] = &[
    Image {
        id: "ocid1.image.oc1.iad.aaaaaaaaol810platform2026110100000000000000000000000000",
        name: "Oracle-Linux-8.10-2026.11.01-0",
        kubernetes: None,
        arm: false,
    },
    Image {
        id: "ocid1.image.oc1.iad.aaaaaaaaol810aarch64platform202611010000000000000000000",
        name: "Oracle-Linux-8.10-aarch64-2026.11.01-0",
        kubernetes: None,
        arm: true,
    },
    Image {
        id: "ocid1.image.oc1.iad.aaaaaaaaol810oke1320202611010000000000000000000000000000",
        name: "Oracle-Linux-8.10-2026.11.01-0-OKE-1.32.10-900",
        kubernetes: Some("v1.32"),
        arm: false,
    },
    Image {
        id: "ocid1.image.oc1.iad.aaaaaaaaol810oke1330202611010000000000000000000000000000",
        name: "Oracle-Linux-8.10-2026.11.01-0-OKE-1.33.1-901",
        kubernetes: Some("v1.33"),
        arm: false,
    },
    Image {
        id: "ocid1.image.oc1.iad.aaaaaaaaol810oke1340202611010000000000000000000000000000",
        name: "Oracle-Linux-8.10-2026.11.01-0-OKE-1.34.2-902",
        kubernetes: Some("v1.34"),
        arm: false,
    },
];

/// An image by OCID.
pub fn image(id: &str) -> Option<&'static Image> {
    IMAGES.iter().find(|i| i.id == id)
}

/// An image by display name (`nodeImageName`).
pub fn image_named(name: &str) -> Option<&'static Image> {
    IMAGES.iter().find(|i| i.name == name)
}

/// A version as OKE writes it, `v1.33.5` (the `v` and the patch required).
pub fn parse(version: &str) -> Option<KubeVersion> {
    KubeVersion::parse(version.trim())
        .ok()
        .filter(|v| v.patch.is_some())
}

/// Whether OKE offers `version` exactly.
pub fn offered(version: &str) -> bool {
    VERSIONS.contains(&version)
}

/// The minor of a version, `(1, 33)`.
pub fn minor(version: &str) -> (u32, u32) {
    parse(version).map_or((0, 0), |v| (v.major, v.minor))
}

/// `v1.33` of `v1.33.5`.
pub fn minor_text(version: &str) -> String {
    let (a, b) = minor(version);
    format!("v{a}.{b}")
}

/// The versions a cluster at `current` may be upgraded to: newer patches of its minor and every
/// patch of the next minor (OKE moves a control plane one minor at a time).
pub fn upgrades(current: &str) -> Vec<&'static str> {
    let Some(current) = parse(current) else {
        return Vec::new();
    };
    VERSIONS
        .iter()
        .copied()
        .filter(|v| {
            parse(v).is_some_and(|v| {
                (v.same_minor(&current) && v > current) || v.same_minor(&current.next_minor())
            })
        })
        .collect()
}

/// The availability domains of the emulated tenancy in `region` (`Uocm:US-ASHBURN-AD-1`, …).
pub fn availability_domains(region: &str) -> Vec<String> {
    let upper = region.to_ascii_uppercase();
    let city = upper.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
    (1..=3).map(|n| format!("Uocm:{city}-AD-{n}")).collect()
}

/// The fault domains of an availability domain.
pub const FAULT_DOMAINS: [&str; 3] = ["FAULT-DOMAIN-1", "FAULT-DOMAIN-2", "FAULT-DOMAIN-3"];

/// The regions the emulated realm knows (`ListRegions`), each with its three-letter key.
pub const REGIONS: &[(&str, &str)] = &[
    ("us-ashburn-1", "iad"),
    ("us-phoenix-1", "phx"),
    ("us-sanjose-1", "sjc"),
    ("us-chicago-1", "ord"),
    ("eu-frankfurt-1", "fra"),
    ("eu-amsterdam-1", "ams"),
    ("uk-london-1", "lhr"),
    ("ap-tokyo-1", "nrt"),
    ("ap-sydney-1", "syd"),
    ("ca-toronto-1", "yyz"),
];

/// The three-letter key of a region (`us-ashburn-1` → `iad`), as OCIDs carry it.
pub fn region_key(region: &str) -> &'static str {
    REGIONS
        .iter()
        .find(|(name, _)| *name == region)
        .map_or("xyz", |(_, key)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_exact_and_upgrades_go_one_minor_at_a_time() {
        assert!(offered("v1.33.1"));
        assert!(!offered("1.33.1") && !offered("v1.33") && !offered("v1.33.2"));
        assert_eq!(upgrades("v1.32.1"), vec!["v1.32.10", "v1.33.1"]);
        assert_eq!(minor_text("v1.31.10"), "v1.31");
        assert!(parse("1.31.1").is_none());
    }

    #[test]
    fn regions_have_three_availability_domains() {
        assert_eq!(
            availability_domains("us-ashburn-1"),
            vec![
                "Uocm:US-ASHBURN-AD-1",
                "Uocm:US-ASHBURN-AD-2",
                "Uocm:US-ASHBURN-AD-3"
            ]
        );
        assert_eq!(region_key("us-ashburn-1"), "iad");
        assert!(shape("VM.Standard.E4.Flex").is_some_and(|s| s.flexible));
        assert!(shape("vm.standard.e4.flex").is_none());
    }
}
