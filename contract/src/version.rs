//! Kubernetes versions and upgrade planning.
//!
//! Versions are written `v1.31` or `v1.31.2` everywhere in our API. Clouds that report them
//! without the `v` (EKS reports `1.31`) go through [`normalize`] first.
//!
//! Upgrade rules (the API's "upgrades and scaling"): the control plane goes first, one minor
//! version at a time; nothing is ever downgraded; a pool never runs ahead of the control
//! plane's minor and also moves one minor at a time. The planners here are pure: they say what
//! the next version to ask the cloud for is, or that there is nothing to do yet.

use std::cmp::Ordering;
use std::fmt;

/// A parsed Kubernetes version: `vMAJOR.MINOR` or `vMAJOR.MINOR.PATCH`.
///
/// Ordering compares major, then minor, then patch, with an absent patch ordering before any
/// patch (`v1.31 < v1.31.0`); use [`KubeVersion::same_minor`] and [`KubeVersion::minor_cmp`] to
/// compare at minor granularity, which is what upgrade rules are about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KubeVersion {
    /// Major version (1 for every Kubernetes release so far).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version, when given.
    pub patch: Option<u32>,
}

/// Why a version string was rejected. Every message shows the accepted form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The value does not start with `v`.
    #[error(
        "version \"{0}\" must start with \"v\", e.g. \"v{0}\" (accepted forms: \"v1.31\" or \"v1.31.2\")"
    )]
    MissingV(String),
    /// The value starts with `v` but is not `vMAJOR.MINOR[.PATCH]`.
    #[error(
        "version \"{0}\" is not of the form vMAJOR.MINOR or vMAJOR.MINOR.PATCH, e.g. \"v1.31\" or \"v1.31.2\""
    )]
    Malformed(String),
}

impl KubeVersion {
    /// A version without a patch number.
    pub const fn new(major: u32, minor: u32) -> Self {
        KubeVersion {
            major,
            minor,
            patch: None,
        }
    }

    /// A version with a patch number.
    pub const fn with_patch(major: u32, minor: u32, patch: u32) -> Self {
        KubeVersion {
            major,
            minor,
            patch: Some(patch),
        }
    }

    /// Parses `v1.31` or `v1.31.2` (numbers without leading `+`, at most 9 digits each).
    ///
    /// # Errors
    /// [`VersionError::MissingV`] when the `v` is missing (the message shows the value with
    /// it), [`VersionError::Malformed`] for anything else that is not `vMAJOR.MINOR[.PATCH]`.
    pub fn parse(value: &str) -> Result<KubeVersion, VersionError> {
        let Some(rest) = value.strip_prefix('v') else {
            return Err(VersionError::MissingV(value.to_owned()));
        };
        let malformed = || VersionError::Malformed(value.to_owned());
        let mut parts = rest.split('.');
        let mut number = |required: bool| -> Result<Option<u32>, VersionError> {
            match parts.next() {
                None if !required => Ok(None),
                None => Err(malformed()),
                Some(p)
                    if !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    p.parse().map(Some).map_err(|_| malformed())
                }
                Some(_) => Err(malformed()),
            }
        };
        let major = number(true)?.ok_or_else(malformed)?;
        let minor = number(true)?.ok_or_else(malformed)?;
        let patch = number(false)?;
        if parts.next().is_some() {
            return Err(malformed());
        }
        Ok(KubeVersion {
            major,
            minor,
            patch,
        })
    }

    /// Whether `self` and `other` share major and minor.
    pub fn same_minor(&self, other: &KubeVersion) -> bool {
        self.major == other.major && self.minor == other.minor
    }

    /// Compares major and minor only.
    pub fn minor_cmp(&self, other: &KubeVersion) -> Ordering {
        (self.major, self.minor).cmp(&(other.major, other.minor))
    }

    /// The same version without its patch number.
    pub fn without_patch(&self) -> KubeVersion {
        KubeVersion::new(self.major, self.minor)
    }

    /// The next minor version (`v1.31.4` → `v1.32`), without a patch number.
    pub fn next_minor(&self) -> KubeVersion {
        KubeVersion::new(self.major, self.minor.saturating_add(1))
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(patch) => write!(f, "v{}.{}.{}", self.major, self.minor, patch),
            None => write!(f, "v{}.{}", self.major, self.minor),
        }
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KubeVersion::parse(s)
    }
}

/// Adds the `v` to a version read from a cloud that omits it (`1.31` → `v1.31`), trimming
/// surrounding whitespace; a value that already has it is returned trimmed. The result is not
/// checked: parse it with [`KubeVersion::parse`].
pub fn normalize(value: &str) -> String {
    let trimmed = value.trim();
    if trimmed.starts_with('v') {
        trimmed.to_owned()
    } else {
        format!("v{trimmed}")
    }
}

/// Why an upgrade step cannot be planned. These are spec errors: report them as a `False`
/// condition with reason `InvalidSpec` and wait for a spec change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeError {
    /// The desired version is older than the running one.
    #[error(
        "{what} cannot be downgraded from {current} to {desired}; set spec.version to {current} or later"
    )]
    Downgrade {
        /// What would be downgraded: "the control plane" or "the node pool".
        what: &'static str,
        /// The running version.
        current: KubeVersion,
        /// The desired version.
        desired: KubeVersion,
    },
    /// The desired version has a different major version; no cloud supports that.
    #[error("cannot upgrade across major versions, from {current} to {desired}")]
    MajorChange {
        /// The running version.
        current: KubeVersion,
        /// The desired version.
        desired: KubeVersion,
    },
}

/// The next version to ask the cloud for on the control plane, or `None` when there is
/// nothing to do.
///
/// - Same minor: `None` when `desired` has no patch or the same patch (the cloud picks patches
///   when `desired` has none); `Some(desired)` for a different patch of the same minor (clouds
///   reject patch downgrades themselves, so a lower patch is passed through).
/// - Higher minor: the next minor (`current.minor + 1`), with `desired`'s patch when that next
///   minor *is* the desired minor, else without a patch (the cloud picks it).
///
/// # Errors
/// [`UpgradeError::Downgrade`] when `desired`'s minor is lower, [`UpgradeError::MajorChange`]
/// when the major versions differ.
pub fn next_control_plane_step(
    current: &KubeVersion,
    desired: &KubeVersion,
) -> Result<Option<KubeVersion>, UpgradeError> {
    step("the control plane", current, desired)
}

fn step(
    what: &'static str,
    current: &KubeVersion,
    desired: &KubeVersion,
) -> Result<Option<KubeVersion>, UpgradeError> {
    if current.major != desired.major {
        return Err(UpgradeError::MajorChange {
            current: *current,
            desired: *desired,
        });
    }
    match current.minor.cmp(&desired.minor) {
        Ordering::Greater => Err(UpgradeError::Downgrade {
            what,
            current: *current,
            desired: *desired,
        }),
        Ordering::Equal => Ok(match desired.patch {
            Some(p) if current.patch != Some(p) => Some(*desired),
            _ => None,
        }),
        Ordering::Less => {
            let next = current.next_minor();
            Ok(Some(if next.same_minor(desired) {
                *desired
            } else {
                next
            }))
        }
    }
}

/// The next version to ask the cloud for on a node pool, or `None` when there is nothing to do
/// *now* (already there, or waiting for the control plane).
///
/// Like [`next_control_plane_step`], and in addition the step never goes past the control
/// plane's minor: when the pool has reached the control plane's minor but `pool_desired` is
/// further ahead, the result is `None` (wait for the control plane; report reason
/// `WaitingForControlPlane`). When the step lands on the control plane's minor without
/// reaching `pool_desired`, it carries no patch.
///
/// # Errors
/// [`UpgradeError::Downgrade`] when `pool_desired`'s minor is below `pool_current`'s,
/// [`UpgradeError::MajorChange`] when majors differ.
pub fn next_pool_step(
    pool_current: &KubeVersion,
    pool_desired: &KubeVersion,
    control_plane_current: &KubeVersion,
) -> Result<Option<KubeVersion>, UpgradeError> {
    let Some(next) = step("the node pool", pool_current, pool_desired)? else {
        return Ok(None);
    };
    if next.minor_cmp(control_plane_current) == Ordering::Greater {
        return Ok(None);
    }
    Ok(Some(next))
}

/// The version to create a node pool at: the MachinePool's minor, but never past the control
/// plane's (clouds refuse that); `None` lets the cloud use the cluster's version.
pub fn pool_creation_version(
    desired: Option<&KubeVersion>,
    control_plane: Option<&KubeVersion>,
) -> Option<KubeVersion> {
    match (desired, control_plane) {
        (Some(d), Some(cp)) if d.minor_cmp(cp) == Ordering::Greater => Some(cp.without_patch()),
        (Some(d), _) => Some(d.without_patch()),
        (None, _) => None,
    }
}

/// Whether a pool at `pool_desired` has to wait for the control plane (its minor is ahead of
/// `control_plane_current`'s). Useful for the `Upgrading` condition's reason.
pub fn pool_waits_for_control_plane(
    pool_desired: &KubeVersion,
    control_plane_current: &KubeVersion,
) -> bool {
    pool_desired.minor_cmp(control_plane_current) == Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    #[test]
    fn parse_accepts_minor_and_patch_forms() {
        assert_eq!(v("v1.31"), KubeVersion::new(1, 31));
        assert_eq!(v("v1.31.2"), KubeVersion::with_patch(1, 31, 2));
    }

    #[test]
    fn parse_rejects_a_missing_v_and_shows_the_right_form() {
        let err = KubeVersion::parse("1.31").unwrap_err();
        assert_eq!(err, VersionError::MissingV("1.31".into()));
        let msg = err.to_string();
        assert!(msg.contains("\"v1.31\""), "{msg}");
        assert!(msg.contains("must start with \"v\""), "{msg}");
    }

    #[test]
    fn parse_rejects_malformed_versions() {
        for bad in [
            "v",
            "v1",
            "v1.",
            "v1.31.",
            "v1.31.2.3",
            "v1.x",
            "v1.31-rc.1",
            "v+1.31",
            "V1.31",
            "v1..2",
            "v1.9999999999",
        ] {
            assert!(KubeVersion::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn display_writes_the_v_prefix() {
        assert_eq!(KubeVersion::new(1, 31).to_string(), "v1.31");
        assert_eq!(KubeVersion::with_patch(1, 31, 2).to_string(), "v1.31.2");
    }

    #[test]
    fn normalize_adds_the_v_that_clouds_omit() {
        assert_eq!(normalize("1.31"), "v1.31");
        assert_eq!(normalize(" 1.31.2 "), "v1.31.2");
        assert_eq!(normalize("v1.31"), "v1.31");
    }

    #[test]
    fn minor_comparison_ignores_the_patch() {
        assert!(v("v1.31.9").same_minor(&v("v1.31")));
        assert_eq!(v("v1.31.9").minor_cmp(&v("v1.32.0")), Ordering::Less);
        assert_eq!(v("v2.0").minor_cmp(&v("v1.99")), Ordering::Greater);
    }

    #[test]
    fn control_plane_steps_follow_the_table() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("v1.31.2", "v1.31", None),
            ("v1.31.2", "v1.31.2", None),
            ("v1.31.2", "v1.31.5", Some("v1.31.5")),
            ("v1.31.2", "v1.32", Some("v1.32")),
            ("v1.31.2", "v1.32.3", Some("v1.32.3")),
            ("v1.31.2", "v1.33.1", Some("v1.32")),
            ("v1.29", "v1.33", Some("v1.30")),
        ];
        for (current, desired, expected) in cases {
            let got = next_control_plane_step(&v(current), &v(desired)).unwrap();
            assert_eq!(got, expected.map(v), "{current} -> {desired}");
        }
    }

    #[test]
    fn a_control_plane_downgrade_is_an_error_naming_both_versions() {
        let err = next_control_plane_step(&v("v1.32.1"), &v("v1.31")).unwrap_err();
        assert!(matches!(err, UpgradeError::Downgrade { .. }));
        let msg = err.to_string();
        assert!(msg.contains("v1.32.1") && msg.contains("v1.31"), "{msg}");
    }

    #[test]
    fn a_major_change_is_an_error() {
        assert!(matches!(
            next_control_plane_step(&v("v1.31"), &v("v2.0")),
            Err(UpgradeError::MajorChange { .. })
        ));
    }

    #[test]
    fn pool_steps_follow_the_table() {
        // (pool current, pool desired, control plane current, expected)
        let cases: &[(&str, &str, &str, Option<&str>)] = &[
            ("v1.31.2", "v1.31.2", "v1.31.2", None),
            ("v1.31.2", "v1.32", "v1.31.2", None),
            ("v1.31.2", "v1.32", "v1.32.1", Some("v1.32")),
            ("v1.31.2", "v1.33.1", "v1.33.1", Some("v1.32")),
            ("v1.31.2", "v1.33.1", "v1.32.4", Some("v1.32")),
            ("v1.32.0", "v1.33.1", "v1.32.4", None),
            ("v1.32.0", "v1.32.4", "v1.32.4", Some("v1.32.4")),
            ("v1.30", "v1.32", "v1.30.1", None),
        ];
        for (pool, desired, cp, expected) in cases {
            let got = next_pool_step(&v(pool), &v(desired), &v(cp)).unwrap();
            assert_eq!(got, expected.map(v), "{pool} -> {desired} with cp {cp}");
        }
    }

    #[test]
    fn a_pool_downgrade_is_an_error() {
        let err = next_pool_step(&v("v1.32"), &v("v1.31"), &v("v1.32")).unwrap_err();
        assert!(err.to_string().contains("node pool"));
    }

    #[test]
    fn a_pool_ahead_of_the_control_plane_waits() {
        assert!(pool_waits_for_control_plane(&v("v1.32"), &v("v1.31.9")));
        assert!(!pool_waits_for_control_plane(&v("v1.31.9"), &v("v1.31.0")));
    }

    fn arb_version() -> impl Strategy<Value = KubeVersion> {
        (0u32..3, 0u32..60, prop::option::of(0u32..20)).prop_map(|(major, minor, patch)| {
            KubeVersion {
                major,
                minor,
                patch,
            }
        })
    }

    proptest! {
        #[test]
        fn display_and_parse_round_trip(version in arb_version()) {
            prop_assert_eq!(KubeVersion::parse(&version.to_string()), Ok(version));
        }

        #[test]
        fn stepping_the_control_plane_reaches_the_desired_minor_one_minor_at_a_time(
            major in 1u32..3,
            from in 0u32..50,
            distance in 0u32..12,
            from_patch in prop::option::of(0u32..20),
            to_patch in prop::option::of(0u32..20),
        ) {
            let mut current = KubeVersion { major, minor: from, patch: from_patch };
            let desired = KubeVersion { major, minor: from + distance, patch: to_patch };
            let mut minor_steps = 0;
            while let Some(next) = next_control_plane_step(&current, &desired).unwrap() {
                prop_assert!(next.minor == current.minor || next.minor == current.minor + 1);
                if next.minor == current.minor + 1 {
                    minor_steps += 1;
                }
                prop_assert!(minor_steps <= distance);
                current = next;
            }
            prop_assert_eq!(minor_steps, distance);
            prop_assert!(current.same_minor(&desired));
            if desired.patch.is_some() {
                prop_assert_eq!(current.patch, desired.patch);
            }
        }

        #[test]
        fn a_pool_never_passes_the_control_plane_and_reaches_it_one_minor_at_a_time(
            from in 0u32..40,
            cp_ahead in 0u32..6,
            desired_ahead in 0u32..10,
        ) {
            let control_plane = KubeVersion::with_patch(1, from + cp_ahead, 3);
            let desired = KubeVersion::new(1, from + desired_ahead);
            let mut pool = KubeVersion::with_patch(1, from, 0);
            let mut steps = 0;
            while let Some(next) = next_pool_step(&pool, &desired, &control_plane).unwrap() {
                prop_assert_eq!(next.minor, pool.minor + 1);
                prop_assert!(next.minor_cmp(&control_plane) != Ordering::Greater);
                pool = next;
                steps += 1;
                prop_assert!(steps <= desired_ahead);
            }
            prop_assert_eq!(steps, cp_ahead.min(desired_ahead));
        }

        #[test]
        fn a_lower_desired_minor_is_always_rejected(
            major in 0u32..3,
            desired_minor in 0u32..50,
            below in 1u32..10,
            current_patch in prop::option::of(0u32..20),
            desired_patch in prop::option::of(0u32..20),
        ) {
            let current = KubeVersion { major, minor: desired_minor + below, patch: current_patch };
            let desired = KubeVersion { major, minor: desired_minor, patch: desired_patch };
            let is_downgrade = |r: Result<Option<KubeVersion>, UpgradeError>| {
                matches!(r, Err(UpgradeError::Downgrade { .. }))
            };
            prop_assert!(is_downgrade(next_control_plane_step(&current, &desired)));
            prop_assert!(is_downgrade(next_pool_step(&current, &desired, &current)));
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,20}") {
            let _ = KubeVersion::parse(&s);
        }
    }

    #[test]
    fn a_pool_is_never_created_ahead_of_the_control_plane() {
        let v = |s: &str| KubeVersion::parse(s).unwrap();
        assert_eq!(
            pool_creation_version(Some(&v("v1.32.1")), Some(&v("v1.31.9"))),
            Some(v("v1.31"))
        );
        assert_eq!(
            pool_creation_version(Some(&v("v1.30.1")), Some(&v("v1.31.9"))),
            Some(v("v1.30"))
        );
        assert_eq!(
            pool_creation_version(Some(&v("v1.31")), None),
            Some(v("v1.31"))
        );
        assert_eq!(pool_creation_version(None, Some(&v("v1.31"))), None);
    }
}
