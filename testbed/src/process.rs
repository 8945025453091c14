//! Child processes of the test bed: started with their output in a log file, killed when dropped.
//!
//! Every program the bed, the emulators, the demo and the conformance suite start is started
//! through [`command`], so it stops with its parent however the parent stops:
//!
//! - a parent that stops in order (Ctrl-C, SIGTERM or SIGHUP, see [`stop_signal`]) stops its
//!   children itself (`kill_on_drop`, or [`terminate`]);
//! - a parent that dies (SIGKILL, a panic that aborts) takes its children with it: they are
//!   started with a parent-death signal (`setpriv --pdeathsig KILL`, from util-linux);
//! - each child runs in its own process group, so a terminal's Ctrl-C reaches only the parent,
//!   which then stops the children in order instead of racing them.
//!
//! The parent-death signal fires when the *thread* that started the child ends. Start children
//! from a thread that lives as long as they should (a tokio worker or the main thread), never
//! from `spawn_blocking`, and do not share a bed between tests run on different test threads.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};

/// One running program of the test bed.
#[derive(Debug)]
pub struct Process {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, writing stdout and stderr to `<log_dir>/<name>.log`.
    /// The process is killed when the returned value is dropped.
    pub fn spawn(name: &str, program: &Path, args: &[String], log_dir: &Path) -> Result<Self> {
        Self::spawn_with_env(name, program, args, &[], log_dir)
    }

    /// [`Self::spawn`] with `env` added to the inherited environment.
    pub fn spawn_with_env(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, &str)],
        log_dir: &Path,
    ) -> Result<Self> {
        let log = log_dir.join(format!("{name}.log"));
        let out =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let err = out.try_clone()?;
        let child = command(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {name} ({})", program.display()))?;
        Ok(Self {
            name: name.to_string(),
            child,
            log,
        })
    }

    /// The program's name in the bed (also its log file's stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The OS process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Fails with the tail of the log if the process has exited.
    pub fn ensure_running(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!(
                "{} exited ({status}); last lines of {}:\n{}",
                self.name,
                self.log.display(),
                tail(&self.log, 30)
            );
        }
        Ok(())
    }

    /// Stops the process: SIGTERM, then SIGKILL after `grace`.
    pub async fn stop(&mut self, grace: Duration) {
        terminate(&mut self.child, grace).await;
    }
}

/// A command for `program` that stops with its parent (see the module documentation): its own
/// process group, a parent-death SIGKILL where `setpriv` exists, and killed when dropped.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = match setpriv() {
        Some(setpriv) => {
            let mut cmd = Command::new(setpriv);
            cmd.args(["--pdeathsig", "KILL", "--"]).arg(program);
            cmd
        }
        None => Command::new(program),
    };
    cmd.process_group(0).kill_on_drop(true);
    cmd
}

/// util-linux's `setpriv`, looked up once on `PATH` (absolute, so a command that clears its
/// environment still finds it).
fn setpriv() -> Option<&'static Path> {
    static SETPRIV: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|dir| dir.join("setpriv"))
                .find(|candidate| candidate.is_file())
        })
        .as_deref()
}

/// Resolves when this process is asked to stop: SIGTERM (`timeout`, systemd, CI), SIGINT
/// (Ctrl-C) or SIGHUP (its terminal went away).
pub async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut streams = Vec::new();
    for kind in [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ] {
        if let Ok(stream) = signal(kind) {
            streams.push(stream);
        }
    }
    if streams.is_empty() {
        let _ = tokio::signal::ctrl_c().await;
        return;
    }
    let waits = streams
        .iter_mut()
        .map(|s| Box::pin(async move { s.recv().await }));
    futures::future::select_all(waits).await;
}

/// Stops a child: SIGTERM (so it can stop its own children), then SIGKILL after `grace`.
pub async fn terminate(child: &mut Child, grace: Duration) {
    if let Some(pid) = child.id() {
        // `kill` from procps: no unsafe signal code in this crate.
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .stderr(Stdio::null())
            .status();
        if tokio::time::timeout(grace, child.wait()).await.is_ok() {
            return;
        }
    }
    let _ = child.kill().await;
}

/// The last `lines` lines of a log file (empty if unreadable).
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A TCP port for a child to listen on: free on every interface a moment ago, never handed out
/// twice while this process lives (by it or by any other process using this function), and
/// chosen below the kernel's ephemeral range.
///
/// A port the kernel picks for `bind(0)` comes from the ephemeral range, which is also where
/// every outgoing connection's local port comes from: between this check and the child's own
/// bind, any client connection on the machine may take it (seen as `bind: address already in
/// use` from a Cluster API manager while other planes started beside it). Below that range
/// only listeners collide; the test binaries CI runs side by side each start dozens of them, so
/// a random pick alone still met another process's pick now and then (a Cluster API manager
/// refused its metrics port in CI). Each port handed out is therefore reserved across processes
/// by an exclusive lock on a file named after it in [`reservations`], held until this process
/// exits (the kernel drops the lock of a killed process too).
pub fn free_port() -> Result<u16> {
    static HANDED_OUT: std::sync::Mutex<Vec<(u16, Option<std::fs::File>)>> =
        std::sync::Mutex::new(Vec::new());
    let (low, high) = listener_ports();
    let dir = reservations();
    let mut handed = HANDED_OUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for attempt in 0..400u64 {
        let port = low + u16::try_from(random(attempt) % u64::from(high - low)).unwrap_or(0);
        if handed.iter().any(|(p, _)| *p == port) {
            continue;
        }
        // Without a reservation directory (unwritable temp dir) this degrades to the random
        // pick alone.
        let lock = match &dir {
            Some(dir) => match reserve(dir, port) {
                Some(file) => Some(file),
                None => continue,
            },
            None => None,
        };
        if std::net::TcpListener::bind(("0.0.0.0", port)).is_ok()
            && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
        {
            handed.push((port, lock));
            return Ok(port);
        }
    }
    bail!("no free port in {low}..{high} after 400 tries")
}

/// The directory of port reservations shared by every process on the machine, if it can be made.
fn reservations() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join("capi-managed-port-reservations");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

/// Takes the reservation of `port`: an open file locked exclusively, or `None` when another
/// living process holds it (or the file cannot be opened).
fn reserve(dir: &Path, port: u16) -> Option<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(port.to_string()))
        .ok()?;
    file.try_lock().ok()?;
    Some(file)
}

/// The ports [`free_port`] picks from: from 20000 up to the start of the ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`, Linux's default 32768 60999), or above its end
/// when it starts too low.
fn listener_ports() -> (u16, u16) {
    let range: Vec<u16> = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let (low, high) = match range.as_slice() {
        [low, high] => (*low, *high),
        _ => (32768, 60999),
    };
    if low > 21000 {
        (20000, low)
    } else if high < 64000 {
        (high + 1, 65000)
    } else {
        // No room outside it: pick inside, as bind(0) would, but still at random.
        (20000, 65000)
    }
}

/// A random number, different per call and per process (no RNG crate needed for a port).
fn random(salt: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(salt);
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// Polls `probe` every `every` until it returns `Ok(true)`, or fails after `timeout` with the last error.
pub async fn wait_until<F, Fut>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut probe: F,
) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = String::from("not ready");
    loop {
        match probe().await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => last = format!("{e:#}"),
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("timed out after {timeout:?} waiting for {what}: {last}");
        }
        tokio::time::sleep(every).await;
    }
}

/// A plain-HTTP GET on loopback returning the status code (for health endpoints).
pub async fn http_status(port: u16, path: &str) -> Result<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut head = vec![0u8; 64];
    let n = stream.read(&mut head).await?;
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("no HTTP status in {line:?}"))
}

/// A plain-HTTP GET on loopback returning the body (for metrics pages). Sent as HTTP/1.0, so
/// the answer is never chunked. Fails on a status other than 200.
pub async fn http_get(port: u16, path: &str) -> Result<String> {
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    http_exchange(port, "GET", path, &request).await
}

/// Sends `request` (HTTP/1.0) to loopback `port` and returns the body of a 200 answer.
async fn http_exchange(port: u16, method: &str, path: &str, request: &str) -> Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .with_context(|| format!("no HTTP answer from 127.0.0.1:{port}{path}"))?;
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        bail!("{method} {path}: HTTP {status}: {rest}");
    }
    Ok(rest.to_string())
}

/// A plain-HTTP POST of a JSON body on loopback; returns the response body (for etcd's JSON
/// gateway). Sent as HTTP/1.0, so the answer is never chunked. Fails on a status other than 200.
pub async fn http_post_json(port: u16, path: &str, body: &str) -> Result<String> {
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    http_exchange(port, "POST", path, &request).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod port_tests {
    use super::*;

    #[test]
    fn ports_are_distinct_bindable_and_outside_the_ephemeral_range() {
        let (low, high) = listener_ports();
        let ports: Vec<u16> = (0..50).map(|_| free_port().unwrap()).collect();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ports.len(), "{ports:?}");
        // Each is reserved against every other process: a second lock on its file is refused.
        let dir = reservations().unwrap();
        for &p in &ports {
            let other = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join(p.to_string()))
                .unwrap();
            assert!(other.try_lock().is_err(), "port {p} not reserved");
        }
        for p in ports {
            assert!((low..high).contains(&p), "{p} not in {low}..{high}");
            std::net::TcpListener::bind(("0.0.0.0", p)).unwrap();
        }
    }
}
