//! What the workspace's tests share, written once (a dev-dependency only; nothing here ships).
//!
//! - [`eventually`]: poll until a probe yields a value, or fail the test naming what was awaited;
//! - [`eventually_true`]: the same for a yes/no probe;
//! - [`create_namespace`]: a namespace on the management plane;
//! - [`admission`]: the admission-corpus runner.

pub mod admission;

use std::future::Future;
use std::time::Duration;

/// How often a probe is tried again.
const POLL: Duration = Duration::from_millis(100);

/// Polls `probe` until it returns `Some`, and returns that value.
///
/// # Panics
/// After `timeout` without a value, with a message naming `what` was awaited (this is a test
/// helper: the panic is the test's failure).
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`], and says on stderr how long `what` took (a long test's timeline).
///
/// # Panics
/// As [`eventually`].
pub async fn eventually_logged<T, F, Fut>(what: &str, timeout: Duration, probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = tokio::time::Instant::now();
    let value = eventually(what, timeout, probe).await;
    eprintln!("{what} after {:?}", start.elapsed());
    value
}

/// Polls `probe` until it returns `true`.
///
/// # Panics
/// After `timeout`, as [`eventually`].
pub async fn eventually_true<F, Fut>(what: &str, timeout: Duration, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually(what, timeout, || {
        let check = probe();
        async move { check.await.then_some(()) }
    })
    .await;
}

/// Creates the namespace `name` on the plane `client` talks to.
///
/// # Panics
/// When the API server refuses (this is a test helper: the panic is the test's failure).
pub async fn create_namespace(client: &kube::Client, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let namespace = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        ..Default::default()
    };
    kube::Api::<Namespace>::all(client.clone())
        .create(&kube::api::PostParams::default(), &namespace)
        .await
        .unwrap_or_else(|e| panic!("creating namespace {name}: {e}"));
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_probe_that_comes_true_returns_its_value() {
        let tries = AtomicU32::new(0);
        let got = eventually("the third try", Duration::from_secs(5), || async {
            (tries.fetch_add(1, Ordering::SeqCst) >= 2).then_some(42)
        })
        .await;
        assert_eq!(got, 42);
        assert_eq!(tries.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for something that never happens")]
    async fn a_probe_that_never_comes_true_fails_naming_what_was_awaited() {
        eventually_true(
            "something that never happens",
            Duration::from_millis(300),
            || async { false },
        )
        .await;
    }
}
