//! `cargo run -p xtask -- manifests`: regenerates `manifests/` from the code.

use std::path::Path;

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    match task.as_str() {
        "manifests" => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .ok_or_else(|| anyhow::anyhow!("xtask has no parent directory"))?;
            for path in xtask::write_manifests(root)? {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        _ => bail!("usage: cargo run -p xtask -- manifests"),
    }
}
