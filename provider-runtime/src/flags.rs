//! The command-line flags every provider binary accepts.
//!
//! [`CommonArgs`] is flattened into a provider's own `clap` parser, so every provider takes the
//! same `--namespace`, `--watch-filter`, leader-election, metrics, health and logging flags, with
//! the same defaults and environment fallbacks.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::str::FromStr;
use std::time::Duration;

use clap::ArgAction;
use clap::builder::BoolishValueParser;

/// `--rest-interval`'s default, for settings built without flags (tests).
pub const DEFAULT_REST_INTERVAL: Duration = Duration::from_secs(30 * 60);

/// Flags shared by every provider binary (`#[command(flatten)]` them into the provider's CLI).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct CommonArgs {
    /// Namespace to watch; all namespaces when unset or empty (`--namespace=`), as Cluster
    /// API's own managers take it.
    #[arg(long, env = "WATCH_NAMESPACE", value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// Reconcile only objects labelled `cluster.x-k8s.io/watch-filter=<VALUE>`; other objects
    /// are never read into the cache nor modified. Unset or empty (`--watch-filter=`): no filter,
    /// as Cluster API's own managers take it.
    #[arg(long, env = "WATCH_FILTER", value_name = "VALUE")]
    pub watch_filter: Option<String>,

    /// Maximum number of objects of one kind reconciled at the same time.
    #[arg(
        long,
        env = "RECONCILE_CONCURRENCY",
        default_value_t = 10,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub concurrency: u16,

    /// Resync period: how long an object at rest waits before it is reconciled again when the
    /// provider asked for no earlier requeue (e.g. `30m`, `1h`).
    #[arg(long, env = "SYNC_PERIOD", default_value = "1h", value_parser = parse_duration)]
    pub sync_period: Duration,

    /// How long a cloud resource at rest goes between two looks (e.g. `10m`): a change made
    /// behind the provider's back (a cluster deleted or upgraded in the cloud's console, a node
    /// group resized) is seen within it. The default keeps a cluster at rest under six cloud
    /// reads an hour (the benchmark's P7).
    #[arg(long, env = "REST_INTERVAL", default_value = "30m", value_parser = parse_duration)]
    pub rest_interval: Duration,

    /// Run controllers only while holding the leader lease.
    #[arg(
        long,
        env = "LEADER_ELECT",
        default_value_t = false,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = BoolishValueParser::new()
    )]
    pub leader_elect: bool,

    /// Namespace of the leader-election Lease; defaults to the pod's namespace when running in a
    /// cluster, else the kubeconfig's default namespace.
    #[arg(long, env = "LEADER_ELECT_NAMESPACE", value_name = "NAMESPACE")]
    pub leader_elect_namespace: Option<String>,

    /// Name of the leader-election Lease; defaults to `<provider>-provider-leader`.
    #[arg(long, env = "LEADER_ELECT_LEASE_NAME", value_name = "NAME")]
    pub leader_elect_lease_name: Option<String>,

    /// Address of the `/metrics` endpoint (`:8080`, `127.0.0.1:8080`); `0` disables it.
    #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = ":8080")]
    pub metrics_bind_address: BindAddress,

    /// Address of the `/healthz` and `/readyz` endpoints; `0` disables them.
    #[arg(long, env = "HEALTH_PROBE_BIND_ADDRESS", default_value = ":9440")]
    pub health_probe_bind_address: BindAddress,

    /// Log output format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// More verbose logs (`-v` debug, `-vv` trace); `RUST_LOG` overrides it when set.
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
}

impl CommonArgs {
    /// The namespace to watch, or `None` for all namespaces (`--namespace` unset, empty or
    /// blank).
    pub fn watch_namespace(&self) -> Option<&str> {
        non_empty(self.namespace.as_deref())
    }

    /// The watch-filter label value, or `None` for no filter (`--watch-filter` unset, empty or
    /// blank).
    pub fn watch_filter(&self) -> Option<&str> {
        non_empty(self.watch_filter.as_deref())
    }
}

/// A flag value without surrounding whitespace; an empty or blank one means the same as an
/// absent one (the clusterctl components render `--namespace=${EKS_WATCH_NAMESPACE:= }`, whose
/// default is one space because clusterctl refuses an empty default).
fn non_empty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// Log output format.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// A listen address flag: a socket address, `:port` for all interfaces, or `0` for disabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindAddress {
    /// The server is not started.
    Disabled,
    /// Listen on this address.
    Listen(SocketAddr),
}

impl BindAddress {
    /// The socket address, or `None` when disabled.
    pub fn addr(&self) -> Option<SocketAddr> {
        match self {
            Self::Disabled => None,
            Self::Listen(addr) => Some(*addr),
        }
    }
}

/// The error of parsing a [`BindAddress`].
#[derive(Debug, thiserror::Error)]
#[error("invalid bind address {input:?}: expected `0`, `:PORT` or `HOST:PORT` with an IP host")]
pub struct BindAddressError {
    input: String,
}

impl FromStr for BindAddress {
    type Err = BindAddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || BindAddressError {
            input: s.to_owned(),
        };
        let s = s.trim();
        if s == "0" {
            return Ok(Self::Disabled);
        }
        if let Some(port) = s.strip_prefix(':') {
            let port: u16 = port.parse().map_err(|_| err())?;
            return Ok(Self::Listen(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::UNSPECIFIED,
                port,
            ))));
        }
        if let Some(port) = s.strip_prefix("localhost:") {
            let port: u16 = port.parse().map_err(|_| err())?;
            return Ok(Self::Listen(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::LOCALHOST,
                port,
            ))));
        }
        s.parse::<SocketAddr>().map(Self::Listen).map_err(|_| err())
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disabled => f.write_str("0"),
            Self::Listen(addr) => write!(f, "{addr}"),
        }
    }
}

/// Parses a duration such as `90s`, `10m`, `1h30m` or ISO 8601 `PT10M`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let signed: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("invalid duration {s:?}: {e}"))?;
    Duration::try_from(signed).map_err(|_| format!("invalid duration {s:?}: must not be negative"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }

    fn parse(args: &[&str]) -> CommonArgs {
        let argv = std::iter::once("provider").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|c| c.common).unwrap()
    }

    #[test]
    fn defaults_match_cluster_api_conventions() {
        let a = parse(&[]);
        assert_eq!(a.namespace, None);
        assert_eq!(a.watch_filter, None);
        assert_eq!(a.concurrency, 10);
        assert!(!a.leader_elect);
        assert_eq!(
            a.metrics_bind_address,
            BindAddress::Listen("0.0.0.0:8080".parse().unwrap())
        );
        assert_eq!(
            a.health_probe_bind_address,
            BindAddress::Listen("0.0.0.0:9440".parse().unwrap())
        );
        assert_eq!(a.log_format, LogFormat::Text);
        assert_eq!(a.verbose, 0);
        assert_eq!(a.sync_period, Duration::from_secs(3600));
        assert_eq!(a.rest_interval, DEFAULT_REST_INTERVAL);
    }

    #[test]
    fn every_flag_parses() {
        let a = parse(&[
            "--namespace=capi-system",
            "--watch-filter",
            "shard-a",
            "--concurrency=3",
            "--leader-elect",
            "--leader-elect-namespace=kube-system",
            "--leader-elect-lease-name=eks-lease",
            "--metrics-bind-address=127.0.0.1:18080",
            "--health-probe-bind-address=0",
            "--log-format=json",
            "--sync-period=10m",
            "--rest-interval=5m",
            "-vv",
        ]);
        assert_eq!(a.namespace.as_deref(), Some("capi-system"));
        assert_eq!(a.watch_namespace(), Some("capi-system"));
        assert_eq!(a.watch_filter.as_deref(), Some("shard-a"));
        assert_eq!(a.watch_filter(), Some("shard-a"));
        assert_eq!(a.concurrency, 3);
        assert!(a.leader_elect);
        assert_eq!(a.leader_elect_namespace.as_deref(), Some("kube-system"));
        assert_eq!(a.leader_elect_lease_name.as_deref(), Some("eks-lease"));
        assert_eq!(
            a.metrics_bind_address.addr(),
            Some("127.0.0.1:18080".parse().unwrap())
        );
        assert_eq!(a.health_probe_bind_address, BindAddress::Disabled);
        assert_eq!(a.log_format, LogFormat::Json);
        assert_eq!(a.sync_period, Duration::from_secs(600));
        assert_eq!(a.rest_interval, Duration::from_secs(300));
        assert_eq!(a.verbose, 2);
    }

    #[test]
    fn an_empty_namespace_means_all_namespaces() {
        assert_eq!(parse(&[]).watch_namespace(), None);
        assert_eq!(parse(&["--namespace="]).watch_namespace(), None);
        assert_eq!(parse(&["--namespace", ""]).watch_namespace(), None);
        assert_eq!(parse(&["--namespace= "]).watch_namespace(), None);
        assert_eq!(
            parse(&["--namespace=team-a"]).watch_namespace(),
            Some("team-a")
        );
    }

    #[test]
    fn an_empty_watch_filter_means_no_filter() {
        assert_eq!(parse(&[]).watch_filter(), None);
        assert_eq!(parse(&["--watch-filter="]).watch_filter(), None);
        assert_eq!(parse(&["--watch-filter", ""]).watch_filter(), None);
        assert_eq!(parse(&["--watch-filter= "]).watch_filter(), None);
        assert_eq!(
            parse(&["--watch-filter=shard-a"]).watch_filter(),
            Some("shard-a")
        );
    }

    #[test]
    fn leader_elect_accepts_explicit_booleans() {
        assert!(parse(&["--leader-elect=true"]).leader_elect);
        assert!(!parse(&["--leader-elect=false"]).leader_elect);
    }

    #[test]
    fn zero_concurrency_is_rejected() {
        assert!(Cli::try_parse_from(["provider", "--concurrency=0"]).is_err());
    }

    #[test]
    fn bind_addresses_parse_in_every_documented_form() {
        assert_eq!("0".parse::<BindAddress>().unwrap(), BindAddress::Disabled);
        assert_eq!(
            ":9440".parse::<BindAddress>().unwrap().addr(),
            Some("0.0.0.0:9440".parse().unwrap())
        );
        assert_eq!(
            "localhost:1".parse::<BindAddress>().unwrap().addr(),
            Some("127.0.0.1:1".parse().unwrap())
        );
        assert_eq!(
            "[::1]:8080".parse::<BindAddress>().unwrap().addr(),
            Some("[::1]:8080".parse().unwrap())
        );
        assert!("nonsense".parse::<BindAddress>().is_err());
        assert!(":99999".parse::<BindAddress>().is_err());
    }

    #[test]
    fn durations_parse_friendly_iso_and_bare_seconds() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("PT10M").unwrap(), Duration::from_secs(600));
        assert!(parse_duration("-5m").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
