//! Identity's answers (API 20160918).

use serde::Deserialize;

/// One availability domain of ListAvailabilityDomains.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailabilityDomain {
    /// Its name (`Uocm:US-ASHBURN-AD-1`); absent, the domain cannot be used.
    pub name: Option<String>,
}
