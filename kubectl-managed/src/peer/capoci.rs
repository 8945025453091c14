//! Placeholder while the mapping is written.

use super::{Note, Outcome, Source, Translation};

/// Not written yet.
pub fn translate(source: &Source) -> Translation {
    Translation {
        notes: vec![Note {
            object: super::title(&source.control_plane),
            field: "spec".into(),
            outcome: Outcome::Refused("not written yet".into()),
        }],
        ..Translation::default()
    }
}
