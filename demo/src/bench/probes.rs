//! What is measured and how: the provider's resident memory and CPU from `/proc`, its cloud
//! calls and reconcile durations from its metrics page, its writes from kube-apiserver's audit
//! log, and how far the clusters of a namespace have come from the Cluster API objects.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::{Value, json};

use super::subject::{Calls, Subject};

pub(super) fn rss_mib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .context("no VmRSS")?;
    Ok(kib / 1024.0)
}

/// User + system CPU seconds of `pid` (`/proc/<pid>/stat`, in clock ticks of 1/100 s, Linux's
/// USER_HZ).
pub(super) fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    cpu_from_stat(&stat).context("unreadable /proc/<pid>/stat")
}

fn cpu_from_stat(stat: &str) -> Option<f64> {
    // Fields after the command's closing parenthesis start at field 3 (state); utime and stime
    // are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// A provider's cloud calls by operation, every outcome summed: from its own counter on its
/// metrics page (ours `capi_provider_cloud_calls_total` by `service/operation`, CAPA's
/// `aws_api_requests_total`), or as the emulator counted them.
pub(super) async fn cloud_calls(
    url: &str,
    kit: &emulators::kit::Kit,
    subject: Subject,
) -> Result<BTreeMap<String, u64>> {
    match subject.calls() {
        Calls::Metric(metric) => Ok(parse_cloud_calls(&metrics_page(url).await?, metric)),
        Calls::Emulator => Ok(kit
            .calls
            .snapshot()
            .into_iter()
            .map(|(op, outcomes)| (op, outcomes.values().sum()))
            .collect()),
    }
}

/// The provider's metrics page.
async fn metrics_page(url: &str) -> Result<String> {
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("no port in {url}"))?;
    testbed::process::http_get(port, "/metrics").await
}

fn parse_cloud_calls(text: &str, metric: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let prefix = format!("{metric}{{");
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(prefix.as_str()) else {
            continue;
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(&format!("{name}=\"")))
                .map(|v| v.trim_end_matches('"').to_string())
                .unwrap_or_default()
        };
        let count = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
        *out.entry(format!("{}/{}", label("service"), label("operation")))
            .or_insert(0) += count;
    }
    out
}

/// A provider's reconcile-duration histogram, every label set summed: cumulative counts by
/// upper bound (seconds; the last is `+Inf`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Durations(Vec<(f64, u64)>);

impl Durations {
    /// From a Prometheus text page: the `<metric>_bucket` lines.
    fn parse(text: &str, metric: &str) -> Self {
        let prefix = format!("{metric}_bucket{{");
        let mut by_bound: Vec<(f64, u64)> = Vec::new();
        for line in text.lines() {
            let Some((labels, value)) = line
                .strip_prefix(prefix.as_str())
                .and_then(|rest| rest.split_once("} "))
            else {
                continue;
            };
            let Some(bound) = labels
                .split(',')
                .find_map(|kv| kv.strip_prefix("le=\""))
                .and_then(|v| v.trim_end_matches('"').parse::<f64>().ok())
            else {
                continue;
            };
            let count = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
            match by_bound.iter_mut().find(|(b, _)| *b == bound) {
                Some((_, n)) => *n += count,
                None => by_bound.push((bound, count)),
            }
        }
        by_bound.sort_by(|a, b| a.0.total_cmp(&b.0));
        Self(by_bound)
    }

    /// What was counted after `before`.
    pub(super) fn since(&self, before: &Self) -> Self {
        Self(
            self.0
                .iter()
                .map(|(bound, n)| {
                    let was = before
                        .0
                        .iter()
                        .find(|(b, _)| b == bound)
                        .map_or(0, |(_, n)| *n);
                    (*bound, n.saturating_sub(was))
                })
                .collect(),
        )
    }

    /// Every reconcile counted.
    pub(super) fn count(&self) -> u64 {
        self.0.last().map_or(0, |(_, n)| *n)
    }

    /// The smallest bucket bound of at least `seconds`, and how many reconciles took longer.
    pub(super) fn over(&self, seconds: f64) -> (f64, u64) {
        self.0
            .iter()
            .find(|(bound, _)| *bound >= seconds)
            .map_or((seconds, 0), |(bound, n)| (*bound, self.count() - n))
    }

    /// The bound the longest reconcile fell under: "≤ 0.64 s", or "> 81.92 s" past the largest
    /// finite bucket.
    pub(super) fn longest_text(&self) -> String {
        let total = self.count();
        if total == 0 {
            return "none".into();
        }
        match self.0.iter().find(|(_, n)| *n == total) {
            Some((bound, _)) if bound.is_finite() => format!("≤ {bound} s"),
            _ => {
                let largest = self
                    .0
                    .iter()
                    .rev()
                    .find(|(b, _)| b.is_finite())
                    .map_or(0.0, |(b, _)| *b);
                format!("> {largest} s")
            }
        }
    }

    pub(super) fn to_json(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(bound, n)| {
                    json!({"le": if bound.is_finite() { json!(bound) } else { json!("+Inf") }, "count": n})
                })
                .collect(),
        )
    }
}

/// The provider's reconcile-duration histogram ([`Subject::reconcile_metric`]).
pub(super) async fn reconcile_durations(url: &str, subject: Subject) -> Result<Durations> {
    let text = metrics_page(url).await?;
    Ok(Durations::parse(&text, subject.reconcile_metric()))
}

pub(super) fn diff(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.saturating_sub(before.get(k).copied().unwrap_or(0)),
            )
        })
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// (reads, writes): an operation that describes, lists or gets is a read.
pub(super) fn split_reads(calls: &BTreeMap<String, u64>) -> (u64, u64) {
    let mut reads = 0;
    let mut writes = 0;
    for (key, n) in calls {
        // `eks/DescribeCluster`, `GetNodePool`, `compute.operations.wait`, `Token`.
        let op = key.rsplit(['/', '.']).next().unwrap_or_default();
        if ["Describe", "List", "Get", "get", "list", "wait"]
            .iter()
            .any(|p| op.starts_with(p))
            || op == "Token"
        {
            reads += n;
        } else {
            writes += n;
        }
    }
    (reads, writes)
}

/// The writes `user` made between `from` and `to`, by `<resource> <verb>` (with `/status` for
/// the status subresource), from kube-apiserver's audit log.
pub(super) fn audit_writes(
    log: &Path,
    user: &str,
    from: jiff::Timestamp,
    to: jiff::Timestamp,
) -> Result<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string(log)
        .with_context(|| format!("reading the audit log {}", log.display()))?;
    Ok(count_audit_writes(&text, user, from, to))
}

fn count_audit_writes(
    text: &str,
    user: &str,
    from: jiff::Timestamp,
    to: jiff::Timestamp,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if event["stage"] != "ResponseComplete" || event["user"]["username"] != user {
            continue;
        }
        let Some(at) = event["stageTimestamp"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        else {
            continue;
        };
        if at < from || at > to {
            continue;
        }
        let resource = event["objectRef"]["resource"].as_str().unwrap_or("?");
        let sub = event["objectRef"]["subresource"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(|s| format!("/{s}"))
            .unwrap_or_default();
        let verb = event["verb"].as_str().unwrap_or("?");
        *out.entry(format!("{resource}{sub} {verb}")).or_insert(0) += 1;
    }
    out
}

/// The cloud names of the clusters of `ns` whose control plane reports itself initialized
/// ([`Subject::initialized_cloud_name`]).
pub(super) async fn initialized_control_planes(
    client: &kube::Client,
    ns: &str,
    subject: Subject,
) -> Result<Vec<String>> {
    let (group, version, kind) = subject.control_plane();
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
    );
    let mut out = Vec::new();
    for cp in api.list(&ListParams::default()).await? {
        let cluster = cluster_of(&cp);
        if let Some(name) =
            subject.initialized_cloud_name(ns, &cluster, &serde_json::to_value(&cp)?)
        {
            out.push(name);
        }
    }
    Ok(out)
}

/// How many clusters of a namespace are `Provisioned` (with the control plane initialized),
/// and how many also have every pool `Ready`.
#[derive(Debug, Default)]
pub(super) struct Readiness {
    pub(super) provisioned: usize,
    pub(super) ready: usize,
}

pub(super) async fn readiness(
    client: &kube::Client,
    ns: &str,
    subject: Subject,
) -> Result<Readiness> {
    let api = |group: &str, version: &str, kind: &str| -> Api<DynamicObject> {
        Api::namespaced_with(
            client.clone(),
            ns,
            &ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind)),
        )
    };
    let clusters = api("cluster.x-k8s.io", "v1beta2", "Cluster")
        .list(&ListParams::default())
        .await?;
    let (group, version, kind) = subject.pool();
    let pools = api(group, version, kind)
        .list(&ListParams::default())
        .await?;
    let mut pools_ready: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for p in &pools {
        let cluster = cluster_of(p);
        let entry = pools_ready.entry(cluster).or_default();
        entry.0 += 1;
        if subject.pool_ready(&p.data) {
            entry.1 += 1;
        }
    }
    let mut out = Readiness::default();
    for c in &clusters {
        let status = &c.data["status"];
        if status["phase"] != "Provisioned"
            || status["initialization"]["controlPlaneInitialized"] != true
        {
            continue;
        }
        out.provisioned += 1;
        let name = c.metadata.name.clone().unwrap_or_default();
        if pools_ready
            .get(&name)
            .is_some_and(|(all, ready)| *all > 0 && all == ready)
        {
            out.ready += 1;
        }
    }
    Ok(out)
}

/// The Cluster an object belongs to, from its `cluster.x-k8s.io/cluster-name` label.
fn cluster_of(obj: &DynamicObject) -> String {
    obj.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(contract::capi::CLUSTER_NAME_LABEL))
        .cloned()
        .unwrap_or_default()
}

/// Now, Unix milliseconds.
pub(super) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reconcile_durations_are_summed_over_label_sets_and_differenced() {
        let page = |fast: u64, slow: u64| {
            format!(
                "# TYPE m histogram\n\
                 m_bucket{{kind=\"A\",le=\"1.0\"}} {fast}\n\
                 m_bucket{{kind=\"A\",le=\"10.0\"}} {fast}\n\
                 m_bucket{{kind=\"A\",le=\"+Inf\"}} {}\n\
                 m_bucket{{le=\"1.0\",kind=\"B\"}} 2\n\
                 m_bucket{{le=\"10.0\",kind=\"B\"}} 3\n\
                 m_bucket{{le=\"+Inf\",kind=\"B\"}} 3\n\
                 m_sum{{kind=\"A\"}} 9\n\
                 other_bucket{{le=\"1.0\"}} 99\n",
                fast + slow
            )
        };
        let before = Durations::parse(&page(4, 0), "m");
        assert_eq!(before.count(), 7);
        assert_eq!(before.over(5.0), (10.0, 0));
        assert_eq!(before.longest_text(), "≤ 10 s");
        let after = Durations::parse(&page(6, 2), "m");
        let run = after.since(&before);
        assert_eq!(run.count(), 4);
        assert_eq!(run.over(10.0), (10.0, 2));
        assert_eq!(run.longest_text(), "> 10 s");
        assert_eq!(
            Durations::parse(&page(3, 0), "m")
                .since(&Durations::parse(&page(3, 0), "m"))
                .longest_text(),
            "none"
        );
        assert_eq!(run.to_json()[2], json!({"le": "+Inf", "count": 4}));
    }

    #[test]
    fn cloud_calls_are_summed_over_outcomes_and_split_into_reads_and_writes() {
        let text = "# HELP capi_provider_cloud_calls_total x\n\
capi_provider_cloud_calls_total{service=\"ec2\",operation=\"DescribeVpcs\",outcome=\"success\"} 4\n\
capi_provider_cloud_calls_total{service=\"ec2\",operation=\"DescribeVpcs\",outcome=\"throttled\"} 1\n\
capi_provider_cloud_calls_total{service=\"eks\",operation=\"CreateCluster\",outcome=\"success\"} 1\n\
capi_provider_reconciles_total{kind=\"EKSCluster\"} 9\n";
        let calls = parse_cloud_calls(text, "capi_provider_cloud_calls_total");
        assert_eq!(calls["ec2/DescribeVpcs"], 5);
        assert_eq!(calls["eks/CreateCluster"], 1);
        assert_eq!(calls.len(), 2);
        assert_eq!(split_reads(&calls), (5, 1));
        let later: BTreeMap<String, u64> = [
            ("ec2/DescribeVpcs".to_string(), 7),
            ("eks/CreateCluster".into(), 1),
        ]
        .into();
        assert_eq!(
            diff(&calls, &later),
            [("ec2/DescribeVpcs".to_string(), 2)].into()
        );
    }

    #[test]
    fn audit_writes_count_one_user_in_the_window() {
        let line = |user: &str, at: &str, resource: &str, sub: &str| {
            json!({"stage": "ResponseComplete", "user": {"username": user}, "verb": "patch",
                "stageTimestamp": at,
                "objectRef": {"resource": resource, "subresource": sub}})
            .to_string()
        };
        let text = [
            line(
                "provider-aws",
                "2026-12-03T10:00:05Z",
                "ekscontrolplanes",
                "status",
            ),
            line("provider-aws", "2026-12-03T10:00:06Z", "secrets", ""),
            line("admin", "2026-12-03T10:00:06Z", "clusters", "status"),
            line("provider-aws", "2026-12-03T10:01:00Z", "secrets", ""),
            "not json".to_string(),
        ]
        .join("\n");
        let counted = count_audit_writes(
            &text,
            "provider-aws",
            "2026-12-03T10:00:00Z".parse().unwrap(),
            "2026-12-03T10:00:30Z".parse().unwrap(),
        );
        assert_eq!(
            counted,
            [
                ("ekscontrolplanes/status patch".to_string(), 1),
                ("secrets patch".to_string(), 1)
            ]
            .into()
        );
    }

    #[test]
    fn cpu_seconds_are_user_and_system_ticks() {
        let stat = "1234 (provider aws) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        assert_eq!(cpu_from_stat(stat), Some(3.0));
    }
}
