//! `cargo run -p xtask -- release`: what a user installs, built from this checkout into one
//! folder. Per provider a static, stripped binary (musl, rustls on ring, no OpenSSL, no glibc),
//! its OCI image archive written without a daemon ([`crate::image`]) with a `Containerfile`
//! context beside it, and one clusterctl provider repository for all of them
//! ([`crate::release::write_repository`]):
//!
//! ```text
//! <out>/bin/provider-aws                      static, stripped
//! <out>/bin/kubectl-managed                   the kubectl plugin (`kubectl managed migrate`), static
//! <out>/images/provider-aws-v0.1.0.oci.tar    docker load / podman load / skopeo oci-archive:
//! <out>/images/provider-aws/Containerfile     the same image with a daemon (rootfs/ beside it)
//! <out>/repository/clusterctl.yaml            clusterctl init --config … --infrastructure eks:v0.1.0
//! <out>/repository/infrastructure-eks/v0.1.0/ metadata, components, templates
//! <out>/release.json                          sizes and digests
//! ```
//!
//! With `--check` it then holds the result against real tools: `ldd` on every binary, `skopeo
//! inspect` of every archive as `oci-archive:` and as `docker-archive:` (manifest and config),
//! `podman load` of it (named, its ID the config's digest), `podman build` of the Containerfile
//! context (the same files, modes, owners, user, entrypoint and labels),
//! `umoci unpack` of its layout (whose runtime config runs as 65532) and the unpacked
//! `/manager --help`, and a
//! second write of every image, which must give the same digest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::image::{self, Image};
use crate::release::{self, Release, VERSION};

/// The target every release binary is built for: musl, linked statically.
pub const TARGET: &str = "x86_64-unknown-linux-musl";

/// The kubectl plugin, shipped beside the providers (one binary for every cloud).
pub const PLUGIN: &str = "kubectl-managed";

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// The folder everything is written to.
    pub out: PathBuf,
    /// The providers, by clusterctl name.
    pub providers: Vec<&'static Release>,
    /// Where the images are to be published (`ghcr.io/capi-managed`).
    pub registry: String,
    /// The image's CA bundle, read from the build machine.
    pub ca_bundle: PathBuf,
    /// The source repository's URL, for the images' `org.opencontainers.image.source`.
    pub source: String,
    /// Check the result with `ldd`, `skopeo`, `podman` and `umoci`.
    pub check: bool,
    /// The cargo profile the binaries are built with: `release` for what is published; CI's
    /// check uses `release-check` (Cargo.toml), the same without optimisation.
    pub cargo_profile: String,
}

/// Every release, by clusterctl name.
pub fn all_releases() -> [&'static Release; 4] {
    [
        &crate::eks::RELEASE,
        &crate::gke::RELEASE,
        &crate::aks::RELEASE,
        &crate::oke::RELEASE,
    ]
}

/// The release of clusterctl name `name`.
pub fn release_named(name: &str) -> Result<&'static Release> {
    all_releases()
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(|| {
            anyhow::anyhow!("no provider {name:?}: the providers are eks, gke, aks and oke")
        })
}

/// Builds the release set into `options.out`; returns what `release.json` says.
pub fn build(root: &Path, options: &Options) -> Result<Value> {
    let out = &options.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let (revision, created) = revision_and_time(root)?;
    let binaries = cargo_build(root, &options.providers, &options.cargo_profile)?;
    let ca_bundle = std::fs::read(&options.ca_bundle).with_context(|| {
        format!(
            "reading the CA bundle {} (Debian's ca-certificates package; --ca-bundle names another)",
            options.ca_bundle.display()
        )
    })?;
    let mut summary = Vec::new();
    for release in &options.providers {
        let built = binaries
            .get(release.crate_dir)
            .with_context(|| format!("cargo built no executable {}", release.crate_dir))?;
        let binary =
            std::fs::read(built).with_context(|| format!("reading {}", built.display()))?;
        if let Some(interp) = image::elf_interpreter(&binary)? {
            bail!(
                "{} is dynamically linked (interpreter {interp}): a release binary must be static",
                built.display()
            );
        }
        let bin = out.join("bin").join(release.crate_dir);
        std::fs::create_dir_all(out.join("bin"))?;
        std::fs::write(&bin, &binary).with_context(|| format!("writing {}", bin.display()))?;
        set_executable(&bin)?;

        let labels = BTreeMap::from([
            (
                "org.opencontainers.image.title".to_owned(),
                release.crate_dir.to_owned(),
            ),
            (
                "org.opencontainers.image.description".to_owned(),
                format!(
                    "Cluster API infrastructure and control-plane provider for {} (clusterctl name {})",
                    release.name.to_ascii_uppercase(),
                    release.name
                ),
            ),
            (
                "org.opencontainers.image.source".to_owned(),
                options.source.clone(),
            ),
            (
                "org.opencontainers.image.version".to_owned(),
                VERSION.to_owned(),
            ),
            (
                "org.opencontainers.image.revision".to_owned(),
                revision.clone(),
            ),
            (
                "org.opencontainers.image.licenses".to_owned(),
                "Apache-2.0".to_owned(),
            ),
        ]);
        let img = Image::for_binary(
            format!("{}/{}", options.registry, release.crate_dir),
            VERSION.to_owned(),
            binary.clone(),
            ca_bundle.clone(),
            labels,
            created,
        );
        let images = out.join("images");
        std::fs::create_dir_all(&images)?;
        let archive = images.join(format!("{}-{VERSION}.oci.tar", release.crate_dir));
        let written = img.write_archive(&archive)?;
        img.write_context(&images.join(release.crate_dir))?;
        eprintln!(
            "release: {} {} bytes static; image {} {} ({} bytes compressed)",
            release.crate_dir,
            binary.len(),
            img.reference(),
            written.manifest_digest,
            written.layer_size
        );
        summary.push(json!({
            "provider": release.name,
            "binary": bin,
            "binarySize": binary.len(),
            "image": img.reference(),
            "archive": archive,
            "archiveSize": written.archive_size,
            "layerSize": written.layer_size,
            "manifestDigest": written.manifest_digest,
            "configDigest": written.config_digest,
        }));
        if options.check {
            check(
                &bin,
                &archive,
                &img,
                &written,
                &images.join(release.crate_dir),
                out,
            )?;
        }
    }
    let plugin = binaries
        .get(PLUGIN)
        .with_context(|| format!("cargo built no executable {PLUGIN}"))?;
    let plugin_binary =
        std::fs::read(plugin).with_context(|| format!("reading {}", plugin.display()))?;
    if let Some(interp) = image::elf_interpreter(&plugin_binary)? {
        bail!(
            "{} is dynamically linked (interpreter {interp}): a release binary must be static",
            plugin.display()
        );
    }
    let plugin_bin = out.join("bin").join(PLUGIN);
    std::fs::create_dir_all(out.join("bin"))?;
    std::fs::write(&plugin_bin, &plugin_binary)
        .with_context(|| format!("writing {}", plugin_bin.display()))?;
    set_executable(&plugin_bin)?;
    eprintln!("release: {PLUGIN} {} bytes static", plugin_binary.len());
    let config = release::write_repository(
        root,
        &out.join("repository"),
        &options.providers,
        &options.registry,
    )?;
    let report = json!({
        "version": VERSION,
        "revision": revision,
        "created": image::rfc3339(created),
        "target": TARGET,
        "clusterctlConfig": config,
        "providers": summary,
        "plugin": {"binary": plugin_bin, "binarySize": plugin_binary.len()},
    });
    let path = out.join("release.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(report)
}

/// `cargo build --profile <profile> --target <musl>` of the providers' binaries and the
/// plugin's; their paths by crate.
fn cargo_build(
    root: &Path,
    releases: &[&Release],
    profile: &str,
) -> Result<BTreeMap<String, PathBuf>> {
    if Command::new("musl-gcc").arg("--version").output().is_err() {
        bail!(
            "musl-gcc is not installed: ring's C and assembly are built with it for {TARGET} \
             (Debian: apt-get install musl-tools; scripts/ensure-release-tools.sh installs it)"
        );
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--profile",
            profile,
            "--locked",
            "--target",
            TARGET,
        ])
        .args(["--message-format", "json-render-diagnostics"])
        .env("CC_x86_64_unknown_linux_musl", "musl-gcc");
    for r in releases {
        cmd.args(["-p", r.crate_dir, "--bin", r.crate_dir]);
    }
    cmd.args(["-p", PLUGIN, "--bin", PLUGIN]);
    eprintln!("release: {cmd:?}");
    let output = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo")?;
    if !output.status.success() {
        bail!(
            "cargo build for {TARGET} failed ({}); if the target is missing: rustup target add {TARGET}",
            output.status
        );
    }
    let mut found = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && let Some(exe) = msg["executable"].as_str()
            && let Some(name) = msg["target"]["name"].as_str()
            && (name == PLUGIN || releases.iter().any(|r| r.crate_dir == name))
        {
            found.insert(name.to_owned(), PathBuf::from(exe));
        }
    }
    for r in releases {
        if !found.contains_key(r.crate_dir) {
            bail!("cargo built no executable {}", r.crate_dir);
        }
    }
    Ok(found)
}

/// The commit and its time (for the images' `created`): `SOURCE_DATE_EPOCH` when set (seconds
/// since the epoch; anything else is refused), else the commit's; "unknown" and 0 outside a git
/// checkout.
fn revision_and_time(root: &Path) -> Result<(String, u64)> {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let revision = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    let time = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(t) => t.trim().parse().with_context(|| {
            format!("SOURCE_DATE_EPOCH={t:?} is not a number of seconds since 1970-01-01")
        })?,
        Err(_) => git(&["log", "-1", "--format=%ct"])
            .and_then(|t| t.parse().ok())
            .unwrap_or(0),
    };
    Ok((revision, time))
}

fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("setting the mode of {}", path.display()))
}

/// Runs `program args`, prints its output, fails unless it succeeds; returns its stdout.
fn tool(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program).args(args).output().with_context(|| {
        format!(
            "running {program} (scripts/ensure-release-tools.sh installs the tools --check uses)"
        )
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("$ {program} {}\n{stdout}", args.join(" "));
    if !out.status.success() {
        bail!(
            "{program} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(stdout)
}

/// What a layer holds, by path: permission bits, owner, group, entry type and content digest.
type Listing = BTreeMap<String, (u32, u64, u64, u8, String)>;

fn layer_files(tar_bytes: &[u8]) -> Result<Listing> {
    let mut listing = Listing::new();
    let mut archive = tar::Archive::new(tar_bytes);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let h = entry.header().clone();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data)?;
        let path = h.path()?.to_string_lossy().trim_end_matches('/').to_owned();
        listing.insert(
            path,
            (
                h.mode()? & 0o7777,
                h.uid()?,
                h.gid()?,
                h.entry_type().as_byte(),
                image::sha256(&data),
            ),
        );
    }
    Ok(listing)
}

/// The files of every layer of the one image in an OCI layout directory.
fn saved_files(layout: &Path) -> Result<Listing> {
    let read_json = |p: PathBuf| -> Result<Value> {
        let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        Ok(serde_json::from_slice(&text)?)
    };
    let blob = |digest: &Value| {
        layout.join("blobs/sha256").join(
            digest
                .as_str()
                .unwrap_or_default()
                .trim_start_matches("sha256:"),
        )
    };
    let index = read_json(layout.join("index.json"))?;
    let manifest = read_json(blob(&index["manifests"][0]["digest"]))?;
    let mut listing = Listing::new();
    for layer in manifest["layers"].as_array().into_iter().flatten() {
        let bytes = std::fs::read(blob(&layer["digest"]))?;
        let tar_bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)?;
            out
        } else {
            bytes
        };
        listing.extend(layer_files(&tar_bytes)?);
    }
    Ok(listing)
}

/// Holds one provider's binary, image and Containerfile against real tools.
fn check(
    bin: &Path,
    archive: &Path,
    img: &Image,
    written: &image::Written,
    context: &Path,
    out: &Path,
) -> Result<()> {
    // `ldd` exits 1 on a static binary, saying so.
    let ldd = Command::new("ldd")
        .arg(bin)
        .output()
        .context("running ldd")?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    println!("$ ldd {}\n{said}", bin.display());
    if !(said.contains("not a dynamic executable") || said.contains("statically linked")) {
        bail!("ldd finds {} dynamic: {said}", bin.display());
    }

    let oci = format!("oci-archive:{}", archive.display());
    let docker = format!("docker-archive:{}", archive.display());
    let inspected: Value = serde_json::from_str(&tool("skopeo", &["inspect", &oci])?)?;
    if inspected["Digest"] != json!(written.manifest_digest) {
        bail!(
            "skopeo reads digest {} from {}, written {}",
            inspected["Digest"],
            archive.display(),
            written.manifest_digest
        );
    }
    for (label, want) in &img.labels {
        if inspected["Labels"][label] != json!(want) {
            bail!(
                "skopeo reads label {label} = {}, written {want:?}",
                inspected["Labels"][label]
            );
        }
    }
    tool("skopeo", &["inspect", "--raw", &oci])?;
    let config: Value = serde_json::from_str(&tool("skopeo", &["inspect", "--config", &oci])?)?;
    if config["config"]["User"] != json!(format!("{}:{}", image::USER, image::USER))
        || config["config"]["Entrypoint"] != json!([image::ENTRYPOINT])
    {
        bail!("skopeo reads the config as {config}");
    }
    // Docker's own index of the same archive (what `docker load` before 25 reads).
    let legacy: Value = serde_json::from_str(&tool("skopeo", &["inspect", &docker])?)?;
    if legacy["Labels"] != inspected["Labels"] {
        bail!("the docker-archive view differs: {legacy}");
    }

    let work = out
        .join("check")
        .join(img.repository.rsplit('/').next().unwrap_or("image"));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    // `podman load` (no daemon; its own store in the work folder) names it and gives the
    // config's digest as the image ID, as `docker load` does.
    // podman refuses a run root longer than 50 characters: its store lives in the temporary
    // directory, not beside the release.
    let podman_dir = std::env::temp_dir().join(format!("xtask-podman-{}", std::process::id()));
    let store = |dir: &str| podman_dir.join(dir).display().to_string();
    let (root, runroot) = (store("root"), store("run"));
    let podman = |args: &[&str]| {
        let mut all = vec![
            "--storage-driver",
            "vfs",
            "--root",
            root.as_str(),
            "--runroot",
            runroot.as_str(),
        ];
        all.extend_from_slice(args);
        tool("podman", &all)
    };
    let archive_path = archive.display().to_string();
    podman(&["load", "--input", &archive_path])?;
    let id = podman(&["image", "inspect", "--format", "{{.Id}}", &img.reference()])?;
    if format!("sha256:{}", id.trim()) != written.config_digest {
        bail!(
            "podman loaded {} as image {}, the config is {}",
            img.reference(),
            id.trim(),
            written.config_digest
        );
    }

    // The Containerfile beside it builds the same files with the same user, entrypoint and
    // labels (`podman build` needs no daemon and, with only COPY, no container runtime).
    let built = format!(
        "localhost/{}-containerfile:{}",
        img.repository.rsplit('/').next().unwrap_or("image"),
        img.tag
    );
    podman(&["build", "--tag", &built, &context.display().to_string()])?;
    let saved = work.join("containerfile-image");
    podman(&[
        "save",
        "--format",
        "oci-dir",
        "--output",
        &saved.display().to_string(),
        &built,
    ])?;
    let ours = layer_files(&img.layer_tar()?)?;
    let theirs = saved_files(&saved)?;
    if ours != theirs {
        let differ: Vec<_> = ours
            .keys()
            .chain(theirs.keys())
            .filter(|k| ours.get(*k) != theirs.get(*k))
            .collect();
        bail!("the Containerfile's image differs in {differ:?}");
    }
    let config: Value = serde_json::from_str(&podman(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config}}",
        &built,
    ])?)?;
    if config["User"] != json!(format!("{}:{}", image::USER, image::USER))
        || config["Entrypoint"] != json!([image::ENTRYPOINT])
        || img
            .labels
            .iter()
            .any(|(k, v)| config["Labels"][k] != json!(v))
    {
        bail!("the Containerfile's image has another config: {config}");
    }
    podman(&["rmi", "--all", "--force"])?;
    std::fs::remove_dir_all(&podman_dir)
        .with_context(|| format!("removing {}", podman_dir.display()))?;

    // umoci unpacks the layout; the binary runs from the unpacked root filesystem.
    let layout = work.join("layout");
    std::fs::create_dir_all(&layout)?;
    tar::Archive::new(std::fs::File::open(archive)?)
        .unpack(&layout)
        .with_context(|| format!("unpacking {}", archive.display()))?;
    let bundle = work.join("bundle");
    tool(
        "umoci",
        &[
            "unpack",
            "--image",
            &format!("{}:{}", layout.display(), img.tag),
            &bundle.display().to_string(),
        ],
    )?;
    let manager = bundle
        .join("rootfs")
        .join(image::ENTRYPOINT.trim_start_matches('/'));
    let runtime: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("config.json"))?)?;
    if runtime["process"]["user"]["uid"] != json!(image::USER) {
        bail!(
            "umoci's runtime config runs as {}",
            runtime["process"]["user"]
        );
    }
    let help = help_of(&manager)?;
    if !help.contains("--leader-elect") {
        bail!(
            "{} --help does not list --leader-elect:\n{help}",
            manager.display()
        );
    }
    println!("$ {} --help\n{help}", manager.display());

    // Reproducible: the same inputs write the same image.
    let again = img.write_archive(&work.join("again.oci.tar"))?;
    if &again != written {
        bail!("a second write gave {again:?}, the first {written:?}");
    }
    std::fs::remove_dir_all(&work)?;
    // The `check` folder too, once no provider's work is left in it.
    if let Some(parent) = work.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    Ok(())
}

/// Runs `binary --help` (from the unpacked root filesystem, which needs no loader), with an
/// empty environment.
fn help_of(binary: &Path) -> Result<String> {
    let out = Command::new(binary)
        .arg("--help")
        .env_clear()
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    if !out.status.success() {
        bail!(
            "{} --help failed ({}): {}",
            binary.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
