//! The Kubernetes version a user writes in `spec.version`, and the admission rules that keep it
//! well formed and never let it go down.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A Kubernetes version as written in `spec.version`: `v1.31` or `v1.31.2`.
///
/// The schema rejects a value without the leading `v` with a message showing the right form.
/// The Rust type does not re-validate on deserialization; use [`Version::parse`] (or
/// [`crate::version::KubeVersion::parse`]) to get the numbers.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(transparent)]
pub struct Version(pub String);

impl Version {
    /// Parses the numbers out of the version.
    ///
    /// # Errors
    /// [`crate::version::VersionError`] when the value is not `vMAJOR.MINOR[.PATCH]`.
    pub fn parse(&self) -> Result<crate::version::KubeVersion, crate::version::VersionError> {
        crate::version::KubeVersion::parse(&self.0)
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// CEL for `spec.version`: must start with `v`.
pub const VERSION_PREFIX_RULE: &str = "self.startsWith('v')";
/// CEL for `spec.version`: `vMAJOR.MINOR` or `vMAJOR.MINOR.PATCH`.
pub const VERSION_FORM_RULE: &str = r"self.matches('^v[0-9]+\\.[0-9]+(\\.[0-9]+)?$')";

/// CEL transition rule for `spec.version`: no lower major, or same major and no lower minor,
/// than the stored value. Values that do not parse are left to the form rules.
pub const VERSION_NO_DOWNGRADE_RULE: &str = concat!(
    "self == oldSelf",
    " || !self.matches('^v[0-9]+\\\\.[0-9]+(\\\\.[0-9]+)?$')",
    " || !oldSelf.matches('^v[0-9]+\\\\.[0-9]+(\\\\.[0-9]+)?$')",
    " || int(self.substring(1).split('.')[0]) > int(oldSelf.substring(1).split('.')[0])",
    " || (int(self.substring(1).split('.')[0]) == int(oldSelf.substring(1).split('.')[0])",
    " && int(self.split('.')[1]) >= int(oldSelf.split('.')[1]))"
);

impl JsonSchema for Version {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Version".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Kubernetes version, v-prefixed: \"v1.31\" (the cloud picks the patch) or \"v1.31.2\".",
            "type": "string",
            "minLength": 1,
            "maxLength": 32,
            "x-kubernetes-validations": [
                {
                    "rule": VERSION_PREFIX_RULE,
                    "messageExpression": "'spec.version \"' + self + '\" must start with \"v\", e.g. \"v1.31\" or \"v1.31.2\"'",
                },
                {
                    "rule": format!("!self.startsWith('v') || {VERSION_FORM_RULE}"),
                    "messageExpression": "'spec.version \"' + self + '\" must have the form vMAJOR.MINOR or vMAJOR.MINOR.PATCH, e.g. \"v1.31\" or \"v1.31.2\"'",
                },
                {
                    "rule": VERSION_NO_DOWNGRADE_RULE,
                    "messageExpression": "'spec.version cannot go down from ' + oldSelf + ' to ' + self + ': downgrades are not supported'",
                },
            ],
        })
    }
}
