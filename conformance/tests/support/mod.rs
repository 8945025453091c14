//! What the suite's own tests share: where cargo put the binaries the profiles start.

use std::path::{Path, PathBuf};

/// `target/<profile>`: this test's executable lives in its `deps/`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The workspace root (profiles name their binaries relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Fails with how to build them when `names` are not in [`target_dir`].
pub fn require_binaries(names: &[&str], package_hint: &str) {
    let bin = target_dir();
    for needed in names {
        assert!(
            bin.join(needed).is_file(),
            "{} is missing: build it with `cargo build {package_hint}`",
            bin.join(needed).display()
        );
    }
}
