//! Logging set-up and the per-reconcile tracing span.
//!
//! Logs never carry whole objects: the span names the kind, namespace and name, and errors are
//! logged through their `Display` text. Providers must keep credentials out of error messages.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::flags::LogFormat;

/// Chatty dependencies held back unless `RUST_LOG` asks for them.
const QUIET_DEPENDENCIES: &str = "hyper=info,hyper_util=info,h2=info,tower=info,rustls=info,kube_client=info,kube_lease_manager=info";

/// The filter used when `RUST_LOG` is unset: info, `-v` debug, `-vv` trace.
pub fn default_filter(verbose: u8) -> String {
    match verbose {
        0 => "info".to_owned(),
        1 => format!("debug,{QUIET_DEPENDENCIES}"),
        _ => "trace,hyper=debug,h2=debug,rustls=debug".to_owned(),
    }
}

/// Installs the global `tracing` subscriber: text or JSON lines on stderr, filtered by `RUST_LOG`
/// when set, else by `verbose`.
///
/// Returns `false` (and changes nothing) when a subscriber was already installed, e.g. by an
/// earlier call or by a test harness.
pub fn init(format: LogFormat, verbose: u8) -> bool {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(default_filter(verbose)));
    let registry = tracing_subscriber::registry().with(filter);
    let installed = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_target(true),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false)
                    .with_writer(std::io::stderr),
            )
            .try_init(),
    };
    installed.is_ok()
}

/// The span every reconcile pass runs in: it names the object, never its content.
pub fn reconcile_span(kind: &str, namespace: &str, name: &str) -> tracing::Span {
    tracing::info_span!("reconcile", kind, namespace, name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_maps_to_increasingly_detailed_filters() {
        assert_eq!(default_filter(0), "info");
        assert!(default_filter(1).starts_with("debug,"));
        assert!(default_filter(5).starts_with("trace,"));
        for v in 0..3 {
            assert!(EnvFilter::try_new(default_filter(v)).is_ok());
        }
    }
}
