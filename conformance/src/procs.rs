//! The provider's processes as the profile describes them: its cloud emulator and its
//! controller; and the emulator's call counters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::profile::{Vars, parse_assignment};

/// One child process, its output in a log file; stopped (SIGTERM, then SIGKILL) on [`Self::stop`],
/// killed when dropped.
#[derive(Debug)]
pub struct Running {
    name: String,
    child: Child,
    log: PathBuf,
}

/// How a command is named in messages: its program only. Arguments may carry credentials (a
/// profile can pass an emulator's access keys as flags), so they never reach a log.
fn program(argv: &[String]) -> &str {
    argv.first().map_or("(empty command)", String::as_str)
}

fn command(argv: &[String], env: &BTreeMap<String, String>, workdir: &Path) -> Result<Command> {
    let (program, args) = argv.split_first().context("an empty command")?;
    let mut path = PathBuf::from(program);
    if path.components().count() > 1 && path.is_relative() {
        path = workdir.join(path);
    }
    let mut cmd = testbed::process::command(&path);
    cmd.args(args)
        .envs(env)
        .current_dir(workdir)
        .stdin(Stdio::null());
    Ok(cmd)
}

impl Running {
    /// Starts a process whose stdout and stderr both go to `<log_dir>/<name>.log`.
    pub fn spawn(
        name: &str,
        argv: &[String],
        env: &BTreeMap<String, String>,
        workdir: &Path,
        log_dir: &Path,
    ) -> Result<Self> {
        let log = log_dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log)?;
        let err = out.try_clone()?;
        let child = command(argv, env, workdir)?
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {name}: {} in {}",
                    program(argv),
                    workdir.display()
                )
            })?;
        Ok(Self {
            name: name.to_string(),
            child,
            log,
        })
    }

    /// Starts a process that speaks the emulator protocol: its `NAME=VALUE` stdout lines are
    /// returned once it prints `ready`. Everything it writes goes to the log.
    pub async fn spawn_emulator(
        name: &str,
        argv: &[String],
        env: &BTreeMap<String, String>,
        workdir: &Path,
        log_dir: &Path,
        timeout: Duration,
    ) -> Result<(Self, Vars)> {
        let log = log_dir.join(format!("{name}.log"));
        let err = std::fs::File::create(log_dir.join(format!("{name}.stderr.log")))?;
        let mut child = command(argv, env, workdir)?
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {name}: {} in {}",
                    program(argv),
                    workdir.display()
                )
            })?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut file = tokio::fs::File::create(&log).await?;
        let mut vars = Vars::default();
        let started = tokio::time::timeout(timeout, async {
            while let Some(line) = lines.next_line().await? {
                file.write_all(format!("{line}\n").as_bytes()).await?;
                if line.trim() == "ready" {
                    return Ok::<bool, anyhow::Error>(true);
                }
                if let Some((k, v)) = parse_assignment(&line) {
                    vars.set(k, v);
                }
            }
            Ok(false)
        })
        .await;
        match started {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => bail!(
                "{name} exited before printing `ready`; see {}",
                log_dir.display()
            ),
            Ok(Err(e)) => return Err(e),
            Err(_) => bail!(
                "{name} did not print `ready` within {timeout:?}; see {}",
                log_dir.display()
            ),
        }
        // Keep draining stdout into the log so the child never blocks on a full pipe.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = file.write_all(format!("{line}\n").as_bytes()).await;
            }
        });
        Ok((
            Self {
                name: name.to_string(),
                child,
                log,
            },
            vars,
        ))
    }

    /// The log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Fails with the log's tail if the process has exited.
    pub fn ensure_running(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!(
                "{} exited ({status}); last lines of {}:\n{}",
                self.name,
                self.log.display(),
                testbed::process::tail(&self.log, 30)
            );
        }
        Ok(())
    }

    /// SIGKILL, and waits for the process to be gone.
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then SIGKILL after `grace`.
    pub async fn stop(&mut self, grace: Duration) {
        testbed::process::terminate(&mut self.child, grace).await;
    }
}

/// Runs a short command to completion; returns its stdout, or fails with its stderr.
pub async fn run_to_end(
    argv: &[String],
    env: &BTreeMap<String, String>,
    workdir: &Path,
    timeout: Duration,
) -> Result<String> {
    let out = tokio::time::timeout(
        timeout,
        command(argv, env, workdir)?
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output(),
    )
    .await
    .with_context(|| format!("{} did not finish within {timeout:?}", program(argv)))?
    .with_context(|| format!("running {}", program(argv)))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            program(argv),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

/// Call counts by (operation, outcome).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls(pub BTreeMap<(String, String), u64>);

impl Calls {
    /// Parses Prometheus text: every `emulator_calls_total{…}` sample.
    pub fn parse(text: &str) -> Self {
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("emulator_calls_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.split_once('}') else {
                continue;
            };
            let mut operation = String::new();
            let mut outcome = String::from("ok");
            for pair in labels.split(',') {
                if let Some((k, v)) = pair.split_once('=') {
                    let v = v.trim().trim_matches('"').to_string();
                    match k.trim() {
                        "operation" => operation = v,
                        "outcome" => outcome = v,
                        _ => {}
                    }
                }
            }
            let count = value
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
            if !operation.is_empty() {
                *out.entry((operation, outcome)).or_default() += count as u64;
            }
        }
        Self(out)
    }

    /// Calls since `before`, by (operation, outcome), only those that grew.
    pub fn since(&self, before: &Calls) -> Calls {
        Calls(
            self.0
                .iter()
                .filter_map(|(k, v)| {
                    let d = v.saturating_sub(before.0.get(k).copied().unwrap_or(0));
                    (d > 0).then(|| (k.clone(), d))
                })
                .collect(),
        )
    }

    /// Total calls.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// Calls whose operation matches one of `patterns`.
    pub fn matching(&self, patterns: &[String]) -> Calls {
        Calls(
            self.0
                .iter()
                .filter(|((op, _), _)| patterns.iter().any(|p| crate::profile::glob_match(p, op)))
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        )
    }

    /// `op(outcome)×n, …`.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "none".into();
        }
        self.0
            .iter()
            .map(|((op, outcome), n)| format!("{op}({outcome})×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads the emulator's counters.
pub async fn scrape(url: &str) -> Result<Calls> {
    Ok(Calls::parse(&http_get(url).await?))
}

/// The body of a plain-HTTP GET of `url` (an emulator's control endpoint on loopback); an
/// answer other than 200 is an error naming its status line.
pub async fn http_get(url: &str) -> Result<String> {
    http_request("GET", url, None).await
}

/// A plain-HTTP request with an optional JSON body (an emulator's control endpoint: adding or
/// clearing fault rules); any 2xx answer is success.
pub async fn http_send(method: &str, url: &str, body: Option<&serde_json::Value>) -> Result<()> {
    http_request(method, url, body).await.map(|_| ())
}

async fn http_request(method: &str, url: &str, json: Option<&serde_json::Value>) -> Result<String> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("{url} is not http://"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .with_context(|| format!("connecting to {authority}"))?;
    let payload = json.map(serde_json::Value::to_string).unwrap_or_default();
    let content = if json.is_some() {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            payload.len()
        )
    } else {
        String::new()
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{content}Connection: close\r\n\r\n{payload}"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut body = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut body).await?;
    let text = String::from_utf8_lossy(&body);
    let (head, payload) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    if !status.starts_with('2') {
        bail!(
            "{method} {url}: {}",
            head.lines().next().unwrap_or_default()
        );
    }
    Ok(
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(payload)
        } else {
            payload.to_string()
        },
    )
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_parse_and_subtract() {
        let before = Calls::parse(
            "# HELP x\nemulator_calls_total{cloud=\"eks\",operation=\"CreateCluster\",outcome=\"ok\"} 1\n",
        );
        let after = Calls::parse(
            "emulator_calls_total{cloud=\"eks\",operation=\"CreateCluster\",outcome=\"ok\"} 2\n\
             emulator_calls_total{cloud=\"eks\",operation=\"DescribeCluster\",outcome=\"error\"} 3\n",
        );
        let d = after.since(&before);
        assert_eq!(d.total(), 4);
        assert_eq!(d.matching(&["Create*".into()]).total(), 1);
        assert_eq!(
            d.describe(),
            "CreateCluster(ok)×1, DescribeCluster(error)×3"
        );
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            "hello world"
        );
    }
}
