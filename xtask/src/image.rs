//! A provider's container image, written without a container daemon: one layer holding the
//! static binary at `/manager`, the CA bundle and a non-root user (65532), in an OCI image
//! layout packed as one tar archive that `docker load`, `podman load`, `skopeo` (`oci-archive:`
//! and `docker-archive:`) and `umoci` (once unpacked) read. The archive carries both indexes an
//! archive can: the OCI layout's `index.json` and Docker's `manifest.json`, as `docker save`
//! writes since Docker 25.
//!
//! Reproducible: the same files and the same `created` time give the same bytes (entries sorted,
//! owners root, one fixed modification time, gzip without a name or time), so the same commit
//! gives the same image digest wherever it is built.
//!
//! [`Image::write_context`] writes the same root filesystem and a `Containerfile` beside it, for
//! people who build with a daemon: `docker build` there produces an image of the same contents.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The user the image runs as (the distroless `nonroot` user).
pub const USER: u32 = 65532;
/// Where the binary lives in the image.
pub const ENTRYPOINT: &str = "/manager";
/// Where the CA bundle lives in the image (Debian's path, which rustls's native roots read).
pub const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX_TYPE: &str = "application/vnd.oci.image.index.v1+json";
const CONFIG_TYPE: &str = "application/vnd.oci.image.config.v1+json";
const LAYER_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// One file of the image's root filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Absolute path in the image (`/manager`).
    pub path: String,
    /// Permission bits.
    pub mode: u32,
    /// Contents.
    pub data: Vec<u8>,
}

/// An image to write.
#[derive(Debug, Clone)]
pub struct Image {
    /// The repository, without tag (`ghcr.io/capi-managed/provider-aws`).
    pub repository: String,
    /// The tag (`v0.1.0`).
    pub tag: String,
    /// The files besides the directories that hold them.
    pub files: Vec<File>,
    /// Image labels (`org.opencontainers.image.*`).
    pub labels: BTreeMap<String, String>,
    /// Seconds since the epoch: the image's `created` and every file's modification time.
    pub created: u64,
}

/// What [`Image::write_archive`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The manifest's digest (`sha256:…`): the image's identity in a registry.
    pub manifest_digest: String,
    /// The config's digest: what `docker images` shows as the image ID.
    pub config_digest: String,
    /// The compressed layer's size in bytes.
    pub layer_size: u64,
    /// The archive's size in bytes.
    pub archive_size: u64,
}

impl Image {
    /// The image for a provider's static binary: `/manager`, the CA bundle, `/etc/passwd` and
    /// `/etc/group` naming root and `nonroot` (65532), and an empty `/tmp`.
    pub fn for_binary(
        repository: String,
        tag: String,
        binary: Vec<u8>,
        ca_bundle: Vec<u8>,
        labels: BTreeMap<String, String>,
        created: u64,
    ) -> Self {
        let passwd = format!(
            "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{USER}:{USER}:nonroot:/home/nonroot:/sbin/nologin\n"
        );
        let group = format!("root:x:0:\nnonroot:x:{USER}:\n");
        Self {
            repository,
            tag,
            files: vec![
                File {
                    path: ENTRYPOINT.into(),
                    mode: 0o755,
                    data: binary,
                },
                File {
                    path: CA_BUNDLE.into(),
                    mode: 0o644,
                    data: ca_bundle,
                },
                File {
                    path: "/etc/passwd".into(),
                    mode: 0o644,
                    data: passwd.into_bytes(),
                },
                File {
                    path: "/etc/group".into(),
                    mode: 0o644,
                    data: group.into_bytes(),
                },
            ],
            labels,
            created,
        }
    }

    /// `repository:tag`.
    pub fn reference(&self) -> String {
        format!("{}:{}", self.repository, self.tag)
    }

    /// The directories every image has beside those holding its files: `/tmp` (sticky, writable
    /// by all) and the non-root user's home.
    fn extra_dirs() -> [(&'static str, u32); 2] {
        [("/tmp", 0o1777), ("/home/nonroot", 0o755)]
    }

    /// The layer: an uncompressed tar of the root filesystem, deterministic.
    pub fn layer_tar(&self) -> Result<Vec<u8>> {
        // Every directory on the way to a file or an extra directory (0755 unless given), then
        // the files, by path.
        let mut entries: BTreeMap<String, (u32, Option<&File>)> = BTreeMap::new();
        let add_parents = |path: &str, entries: &mut BTreeMap<String, (u32, Option<&File>)>| {
            let mut parent = Path::new(path).parent();
            while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
                entries
                    .entry(format!("{}/", p.display()))
                    .or_insert((0o755, None));
                parent = p.parent();
            }
        };
        for (dir, mode) in Self::extra_dirs() {
            let rel = dir.trim_start_matches('/');
            entries.insert(format!("{rel}/"), (mode, None));
            add_parents(rel, &mut entries);
        }
        for f in &self.files {
            let escapes = Path::new(&f.path)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
            if !f.path.starts_with('/') || f.path.ends_with('/') || escapes {
                bail!("image file path {:?} is not an absolute file path", f.path);
            }
            let rel = f.path.trim_start_matches('/');
            entries.insert(rel.to_owned(), (f.mode, Some(f)));
            add_parents(rel, &mut entries);
        }
        let mut out = tar::Builder::new(Vec::new());
        for (path, (mode, file)) in entries {
            match file {
                None => {
                    let h = header(&path, tar::EntryType::Directory, mode, 0, self.created)?;
                    out.append(&h, std::io::empty())?;
                }
                Some(f) => {
                    let size = f.data.len() as u64;
                    let h = header(&path, tar::EntryType::Regular, mode, size, self.created)?;
                    out.append(&h, f.data.as_slice())?;
                }
            }
        }
        Ok(out.into_inner()?)
    }

    /// The image config: who it runs as, what it runs, its labels and its one layer.
    pub fn config(&self, diff_id: &str) -> Value {
        json!({
            "created": rfc3339(self.created),
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "User": format!("{USER}:{USER}"),
                "Entrypoint": [ENTRYPOINT],
                "Env": [format!("SSL_CERT_FILE={CA_BUNDLE}")],
                "WorkingDir": "/",
                "Labels": self.labels,
            },
            "rootfs": { "type": "layers", "diff_ids": [diff_id] },
            "history": [{
                "created": rfc3339(self.created),
                "created_by": "cargo run -p xtask -- release",
                "comment": "the static binary, the CA bundle and the nonroot user",
            }],
        })
    }

    /// Writes the image as one archive at `path` (an OCI image layout with Docker's
    /// `manifest.json` beside its `index.json`).
    pub fn write_archive(&self, path: &Path) -> Result<Written> {
        let layer = self.layer_tar()?;
        let diff_id = sha256(&layer);
        let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
        gz.write_all(&layer)?;
        let layer_gz = gz.finish()?;
        let layer_digest = sha256(&layer_gz);

        let config = canonical(&self.config(&diff_id))?;
        let config_digest = sha256(&config);
        let manifest = canonical(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": { "mediaType": CONFIG_TYPE, "digest": config_digest, "size": config.len() },
            "layers": [{ "mediaType": LAYER_TYPE, "digest": layer_digest, "size": layer_gz.len() }],
            "annotations": self.annotations(),
        }))?;
        let manifest_digest = sha256(&manifest);
        let index = canonical(&json!({
            "schemaVersion": 2,
            "mediaType": INDEX_TYPE,
            "manifests": [{
                "mediaType": MANIFEST_TYPE,
                "digest": manifest_digest,
                "size": manifest.len(),
                "annotations": {
                    // containerd and Docker name the image by this one; the OCI layout's
                    // reference name is the tag, as `docker save` writes it and umoci reads it.
                    "io.containerd.image.name": self.reference(),
                    "org.opencontainers.image.ref.name": self.tag,
                },
            }],
        }))?;
        let blob = |digest: &str| format!("blobs/sha256/{}", digest.trim_start_matches("sha256:"));
        let docker_manifest = canonical(&json!([{
            "Config": blob(&config_digest),
            "RepoTags": [self.reference()],
            "Layers": [blob(&layer_digest)],
        }]))?;

        let mut files: Vec<(String, Vec<u8>)> = vec![
            (
                "oci-layout".into(),
                br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec(),
            ),
            ("index.json".into(), index),
            ("manifest.json".into(), docker_manifest),
            (blob(&config_digest), config),
            (blob(&layer_digest), layer_gz.clone()),
            (blob(&manifest_digest), manifest),
        ];
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = tar::Builder::new(Vec::new());
        for dir in ["blobs/", "blobs/sha256/"] {
            let h = header(dir, tar::EntryType::Directory, 0o755, 0, self.created)?;
            out.append(&h, std::io::empty())?;
        }
        for (name, data) in &files {
            let size = data.len() as u64;
            let h = header(name, tar::EntryType::Regular, 0o644, size, self.created)?;
            out.append(&h, data.as_slice())?;
        }
        let archive = out.into_inner()?;
        std::fs::write(path, &archive).with_context(|| format!("writing {}", path.display()))?;
        Ok(Written {
            manifest_digest,
            config_digest,
            layer_size: layer_gz.len() as u64,
            archive_size: archive.len() as u64,
        })
    }

    fn annotations(&self) -> BTreeMap<String, String> {
        let mut a = self.labels.clone();
        a.insert(
            "org.opencontainers.image.created".into(),
            rfc3339(self.created),
        );
        a
    }

    /// Writes `<dir>/rootfs/` (the layer's files) and `<dir>/Containerfile`, which builds an
    /// image of the same contents with a daemon (`docker build -t <reference> <dir>`).
    pub fn write_context(&self, dir: &Path) -> Result<PathBuf> {
        let rootfs = dir.join("rootfs");
        if rootfs.exists() {
            std::fs::remove_dir_all(&rootfs)
                .with_context(|| format!("clearing {}", rootfs.display()))?;
        }
        for (d, mode) in Self::extra_dirs() {
            let p = rootfs.join(d.trim_start_matches('/'));
            std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
            set_mode(&p, mode)?;
        }
        for f in &self.files {
            let p = rootfs.join(f.path.trim_start_matches('/'));
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&p, &f.data).with_context(|| format!("writing {}", p.display()))?;
            set_mode(&p, f.mode)?;
        }
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("      {k}={}", serde_json::to_string(v).unwrap_or_default()))
            .collect();
        let text = format!(
            "# The image `cargo run -p xtask -- release` writes as an archive, for builders with a daemon:\n\
             #   docker build -t {reference} .\n\
             # gives an image of the same files, user, entrypoint and labels.\n\
             FROM scratch\n\
             COPY rootfs/ /\n\
             USER {USER}:{USER}\n\
             ENV SSL_CERT_FILE={CA_BUNDLE}\n\
             WORKDIR /\n\
             ENTRYPOINT [\"{ENTRYPOINT}\"]\n\
             LABEL \\\n{}\n",
            labels.join(" \\\n"),
            reference = self.reference(),
        );
        let path = dir.join("Containerfile");
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }
}

/// A tar header with every field set (a ustar header starts with its numbers empty, which readers
/// refuse): owned by root, modified at `mtime`.
fn header(
    path: &str,
    kind: tar::EntryType,
    mode: u32,
    size: u64,
    mtime: u64,
) -> Result<tar::Header> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path)?;
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(0);
    h.set_gid(0);
    h.set_username("root")?;
    h.set_groupname("root")?;
    h.set_mtime(mtime);
    h.set_cksum();
    Ok(h)
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("setting the mode of {}", path.display()))
}

/// `sha256:<hex>` of `data`.
pub fn sha256(data: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    let mut s = String::from("sha256:");
    for b in d.as_ref() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// JSON with sorted keys and no spaces: the bytes a digest is taken of.
fn canonical(v: &Value) -> Result<Vec<u8>> {
    // serde_json's map is ordered by key (no `preserve_order`), so this is already canonical.
    Ok(serde_json::to_vec(v)?)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the epoch.
pub fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days, on the proleptic Gregorian calendar.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Whether an ELF executable asks for a program interpreter (a dynamic loader): a static binary
/// has no `PT_INTERP` program header.
pub fn elf_interpreter(elf: &[u8]) -> Result<Option<String>> {
    const PT_INTERP: u32 = 3;
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" {
        bail!("not an ELF file");
    }
    if elf[4] != 2 || elf[5] != 1 {
        bail!("not a 64-bit little-endian ELF file");
    }
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes([elf[o], elf[o + 1], elf[o + 2], elf[o + 3]]);
    let u64_at = |o: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&elf[o..o + 8]);
        u64::from_le_bytes(b) as usize
    };
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    for i in 0..phnum {
        let h = phoff + i * phentsize;
        if h + 56 > elf.len() {
            bail!("program header {i} lies outside the file");
        }
        if u32_at(h) == PT_INTERP {
            let (off, size) = (u64_at(h + 8), u64_at(h + 32));
            let path = elf
                .get(off..off + size)
                .ok_or_else(|| anyhow::anyhow!("PT_INTERP lies outside the file"))?;
            return Ok(Some(
                String::from_utf8_lossy(path)
                    .trim_end_matches('\0')
                    .to_owned(),
            ));
        }
    }
    Ok(None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn image(binary: &[u8], created: u64) -> Image {
        let labels = BTreeMap::from([(
            "org.opencontainers.image.version".to_owned(),
            "v0.1.0".to_owned(),
        )]);
        Image::for_binary(
            "example.test/provider-x".into(),
            "v0.1.0".into(),
            binary.to_vec(),
            b"certs".to_vec(),
            labels,
            created,
        )
    }

    fn entries(tar_bytes: &[u8]) -> Vec<(String, u32, u64, u64, Vec<u8>)> {
        let mut archive = tar::Archive::new(tar_bytes);
        archive
            .entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let h = e.header().clone();
                let mut data = Vec::new();
                std::io::Read::read_to_end(&mut e, &mut data).unwrap();
                (
                    h.path().unwrap().to_string_lossy().into_owned(),
                    h.mode().unwrap(),
                    h.uid().unwrap(),
                    h.mtime().unwrap(),
                    data,
                )
            })
            .collect()
    }

    #[test]
    fn the_layer_holds_the_binary_the_certificates_and_the_users_under_their_directories() {
        let layer = image(b"\x7fELF binary", 1_700_000_000).layer_tar().unwrap();
        let got = entries(&layer);
        let paths: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "etc/",
                "etc/group",
                "etc/passwd",
                "etc/ssl/",
                "etc/ssl/certs/",
                "etc/ssl/certs/ca-certificates.crt",
                "home/",
                "home/nonroot/",
                "manager",
                "tmp/",
            ]
        );
        let by_path = |p: &str| got.iter().find(|e| e.0 == p).unwrap();
        assert_eq!(by_path("manager").1, 0o755);
        assert_eq!(by_path("manager").4, b"\x7fELF binary");
        assert_eq!(by_path("tmp/").1, 0o1777);
        assert!(got.iter().all(|e| e.2 == 0 && e.3 == 1_700_000_000));
        let passwd = String::from_utf8(by_path("etc/passwd").4.clone()).unwrap();
        assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
    }

    #[test]
    fn the_same_inputs_give_the_same_digest_and_another_binary_another() {
        let dir = tempfile::tempdir().unwrap();
        let a = image(b"one", 1_700_000_000)
            .write_archive(&dir.path().join("a.tar"))
            .unwrap();
        let b = image(b"one", 1_700_000_000)
            .write_archive(&dir.path().join("b.tar"))
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(
            std::fs::read(dir.path().join("a.tar")).unwrap(),
            std::fs::read(dir.path().join("b.tar")).unwrap()
        );
        let c = image(b"two", 1_700_000_000)
            .write_archive(&dir.path().join("c.tar"))
            .unwrap();
        assert_ne!(a.manifest_digest, c.manifest_digest);
        let d = image(b"one", 1_700_000_001)
            .write_archive(&dir.path().join("d.tar"))
            .unwrap();
        assert_ne!(a.manifest_digest, d.manifest_digest);
    }

    #[test]
    fn the_archive_indexes_point_at_blobs_whose_digests_match_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img.tar");
        let written = image(b"bin", 1_700_000_000).write_archive(&path).unwrap();
        let files: BTreeMap<String, Vec<u8>> = entries(&std::fs::read(&path).unwrap())
            .into_iter()
            .map(|e| (e.0, e.4))
            .collect();
        for (name, data) in &files {
            if let Some(hex) = name.strip_prefix("blobs/sha256/")
                && !hex.is_empty()
            {
                assert_eq!(sha256(data), format!("sha256:{hex}"), "{name}");
            }
        }
        let index: Value = serde_json::from_slice(&files["index.json"]).unwrap();
        let m = &index["manifests"][0];
        assert_eq!(m["digest"], written.manifest_digest);
        assert_eq!(
            m["annotations"]["io.containerd.image.name"],
            "example.test/provider-x:v0.1.0"
        );
        assert_eq!(
            m["annotations"]["org.opencontainers.image.ref.name"],
            "v0.1.0"
        );
        let blob = |d: &str| &files[&format!("blobs/sha256/{}", d.trim_start_matches("sha256:"))];
        let manifest: Value = serde_json::from_slice(blob(&written.manifest_digest)).unwrap();
        assert_eq!(manifest["config"]["digest"], written.config_digest);
        let config: Value = serde_json::from_slice(blob(&written.config_digest)).unwrap();
        assert_eq!(config["config"]["User"], "65532:65532");
        assert_eq!(config["config"]["Entrypoint"], json!(["/manager"]));
        assert_eq!(config["created"], "2023-11-14T22:13:20Z");
        // The layer's uncompressed digest is the config's diff ID.
        let layer_gz = blob(manifest["layers"][0]["digest"].as_str().unwrap());
        let mut layer = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&layer_gz[..]), &mut layer)
            .unwrap();
        assert_eq!(config["rootfs"]["diff_ids"][0], sha256(&layer));
        let docker: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
        assert_eq!(docker[0]["RepoTags"][0], "example.test/provider-x:v0.1.0");
        assert_eq!(
            docker[0]["Config"],
            format!(
                "blobs/sha256/{}",
                written.config_digest.trim_start_matches("sha256:")
            )
        );
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_169_599), "2026-12-01T23:59:59Z");
    }

    #[test]
    fn a_path_that_is_not_absolute_or_climbs_out_is_refused() {
        for path in ["relative", "/etc/..", "/../etc/passwd", "/etc/"] {
            let mut img = image(b"x", 0);
            img.files.push(File {
                path: path.into(),
                mode: 0o644,
                data: vec![],
            });
            assert!(img.layer_tar().is_err(), "{path}");
        }
    }

    #[test]
    fn a_dynamic_executable_names_its_interpreter_and_a_script_is_no_elf() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        // The test binary is built for the host (glibc, dynamic).
        let interp = elf_interpreter(&me).unwrap();
        assert!(
            interp.as_deref().is_some_and(|i| i.contains("ld-linux")),
            "{interp:?}"
        );
        assert!(elf_interpreter(b"#!/bin/sh\n").is_err());
    }
}
