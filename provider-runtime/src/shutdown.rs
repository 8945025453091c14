//! A cloneable one-shot stop signal.

use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::{BoxFuture, Shared};

/// A stop signal: triggered once, awaited by any number of tasks.
#[derive(Clone)]
pub struct Stop {
    sender: Arc<Mutex<Option<oneshot::Sender<()>>>>,
    stopped: Shared<BoxFuture<'static, ()>>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    /// A signal not yet triggered.
    pub fn new() -> Self {
        let (tx, rx) = oneshot::channel::<()>();
        Self {
            sender: Arc::new(Mutex::new(Some(tx))),
            stopped: rx.map(|_| ()).boxed().shared(),
        }
    }

    /// Triggers the signal (idempotent).
    pub fn trigger(&self) {
        let sender = match self.sender.lock() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(tx) = sender {
            let _ = tx.send(());
        }
    }

    /// Whether [`Self::trigger`] was called.
    pub fn is_triggered(&self) -> bool {
        match self.sender.lock() {
            Ok(guard) => guard.is_none(),
            Err(poisoned) => poisoned.into_inner().is_none(),
        }
    }

    /// Resolves once the signal is triggered.
    pub fn wait(&self) -> impl Future<Output = ()> + Send + Sync + 'static + use<> {
        self.stopped.clone()
    }

    /// A signal triggered by this one or by `other` resolving, whichever comes first.
    pub fn or(&self, other: impl Future<Output = ()> + Send + 'static) -> Stop {
        let child = Stop::new();
        let parent = self.wait();
        let c = child.clone();
        tokio::spawn(async move {
            futures::future::select(Box::pin(parent), Box::pin(other)).await;
            c.trigger();
        });
        child
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_trigger() {
        let stop = Stop::new();
        let a = stop.wait();
        let b = stop.clone().wait();
        assert!(!stop.is_triggered());
        stop.trigger();
        stop.trigger();
        a.await;
        b.await;
        assert!(stop.is_triggered());
    }

    #[tokio::test]
    async fn a_derived_signal_follows_its_parent_or_its_own_cause() {
        let parent = Stop::new();
        let child = parent.or(futures::future::pending());
        parent.trigger();
        child.wait().await;

        let parent = Stop::new();
        let child = parent.or(async {});
        child.wait().await;
        assert!(!parent.is_triggered());
    }
}
