//! Every timing rule of the kernel, in one place: when a pass looks at the cloud again, when
//! a cloud call may be sent, and what a pass may report without reading the cloud.
//!
//! | rule | where |
//! | --- | --- |
//! | a running operation is looked at soon after it starts, then later and later, and close together only where earlier ones of its kind finished | [`operations`] |
//! | a failed pass is tried again after what the cloud asked (a 429's `Retry-After`), at once after a conflict, and with exponential backoff only while one kind of failure repeats | [`retry`] |
//! | a throttled cluster's other objects wait for its `Retry-After` | [`retry::Holds`] |
//! | a call to a target answered 429 is not sent before its `Retry-After`, and for as long again one call at a time | [`admission`] |
//! | a control plane at rest plans from its last look; a network seen whole is not read again before its look-again time; a CA or a region's zones are read now and then | [`looks`] |
//!
//! Nothing here waits: a pass that may not call the cloud now ends and is requeued for when it
//! may ([`crate::CloudError::Held`]).

pub mod admission;
pub mod looks;
pub mod operations;
pub mod retry;
