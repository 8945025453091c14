//! OCI's answers the provider reads, as types: one struct per model of Oracle's SDK (the same
//! JSON names), with only the fields the provider reads or the SDK marks mandatory. They are
//! read with [`provider_runtime::read_answer`], so an answer without a field a type needs is
//! refused with the operation and the field's path instead of being read as a default. Fields
//! the cloud adds later are ignored.
//!
//! A field is required (not `Option`) when Oracle's SDK marks it mandatory, or when the
//! provider decides on it and OCI always sends it; those are marked "beyond the SDK" where they are declared. Every
//! other field is an `Option`, and where it is read the code says what its absence means.
//! One file per service; `tests/sdk_models.rs` holds these types to the SDK's own models (`tests/sdk-models/`).

mod container_engine;
mod core_services;
mod identity;

use std::collections::BTreeMap;

use serde::Deserialize;

pub use container_engine::*;
pub use core_services::*;
pub use identity::*;

/// Freeform tags: absent means none.
pub type Tags = Option<BTreeMap<String, String>>;

/// The tags of `tags` as a map (an absent map is no tags).
pub fn tags_of(tags: &Tags) -> BTreeMap<String, String> {
    tags.clone().unwrap_or_default()
}

/// The body of an OCI error (any status of 300 or more). Read leniently: an error whose body is
/// not this is still an error, said by its status and text.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ErrorBody {
    /// OCI's error code (`NotAuthorizedOrNotFound`).
    pub code: Option<String>,
    /// OCI's message.
    pub message: Option<String>,
}
