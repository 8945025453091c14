//! Repository tasks: `cargo run -p xtask -- manifests` regenerates `manifests/` from the code;
//! `cargo run -p xtask -- release` builds what a user installs (static binaries, image archives,
//! a clusterctl repository) into one folder.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Repository tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Regenerates `manifests/` from the providers' code.
    Manifests,
    /// Builds the release set: per provider a static binary and its OCI image archive (with a
    /// Containerfile context), and one clusterctl provider repository.
    Release {
        /// The folder to write (created).
        #[arg(long, default_value = "dist")]
        out: PathBuf,
        /// The providers, by clusterctl name, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "eks,gke,aks,oke")]
        providers: Vec<String>,
        /// The registry the images are named for; the components' image variables default to it.
        #[arg(long, default_value = xtask::release::REGISTRY)]
        registry: String,
        /// The CA bundle put in the images.
        #[arg(long, default_value = "/etc/ssl/certs/ca-certificates.crt")]
        ca_bundle: PathBuf,
        /// The images' `org.opencontainers.image.source` label.
        #[arg(long, default_value = "https://github.com/capi-managed/providers")]
        source: String,
        /// Then hold the result against ldd, skopeo, podman and umoci.
        #[arg(long)]
        check: bool,
        /// The cargo profile to build the binaries with (CI's check: `release-check`, the
        /// release profile without optimisation).
        #[arg(long, default_value = "release")]
        cargo_profile: String,
    },
}

fn main() -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or_else(|| anyhow::anyhow!("xtask has no parent directory"))?;
    match Cli::parse().task {
        Task::Manifests => {
            for path in xtask::write_manifests(root)? {
                println!("wrote {}", path.display());
            }
        }
        Task::Release {
            out,
            providers,
            registry,
            ca_bundle,
            source,
            check,
            cargo_profile,
        } => {
            let options = xtask::dist::Options {
                out: std::path::absolute(&out)?,
                providers: providers
                    .iter()
                    .map(|p| xtask::dist::release_named(p.trim()))
                    .collect::<Result<_>>()?,
                registry,
                ca_bundle,
                source,
                check,
                cargo_profile,
            };
            let report = xtask::dist::build(root, &options)?;
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
    }
    Ok(())
}
