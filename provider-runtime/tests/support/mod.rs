//! What the kernel's tests over made-up clouds share: a plane with the kind's CRD, the made-up
//! provider run on it, its in-memory cloud, and reading conditions.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use clap::Parser;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use provider_runtime::{CommonArgs, Operator, ProviderObject, ProviderSpec};

/// A plane with `crd` installed (labelled for the v1beta2 contract) and `namespace` created.
pub async fn plane_with(
    mut crd: CustomResourceDefinition,
    namespace: &str,
) -> (testbed::ManagementPlane, kube::Client) {
    let plane = testbed::ManagementPlane::start(testbed::Options::default())
        .await
        .expect("management plane starts");
    let client = plane.client().await.expect("client");
    crd.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("cluster.x-k8s.io/v1beta2".into(), "v1alpha1".into());
    plane.install_crds(&[crd]).await.expect("CRD installs");
    test_support::create_namespace(&client, namespace).await;
    (plane, client)
}

/// A running provider; [`Running::stop`] ends it and checks it stopped cleanly.
pub struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Stops the provider.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

/// Runs `provider`'s operator, built by `with_controllers`, against `client` with loopback-only
/// ports.
pub fn run(
    provider: &'static str,
    client: &kube::Client,
    with_controllers: impl FnOnce(Operator) -> Operator,
) -> Running {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }
    let args = Cli::parse_from([
        "made-up-provider",
        "--health-probe-bind-address=127.0.0.1:0",
        "--metrics-bind-address=127.0.0.1:0",
    ])
    .common;
    let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let operator = with_controllers(Operator::new(ProviderSpec::new(provider), args));
    let client = client.clone();
    let task = tokio::spawn(async move {
        operator
            .run_with(client, async move {
                let _ = stop_rx.await;
            })
            .await
    });
    Running { stop, task }
}

/// A made-up cloud's state, shared between the provider and the test.
pub struct Cloud<S>(Arc<Mutex<S>>);

impl<S> Clone for Cloud<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S: Default> Default for Cloud<S> {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(S::default())))
    }
}

impl<S> Cloud<S> {
    /// Reads or changes the state.
    pub fn with<T>(&self, f: impl FnOnce(&mut S) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
}

/// The condition of type `type_`.
pub fn condition<'a, K: ProviderObject>(obj: &'a K, type_: &str) -> Option<&'a Condition> {
    obj.conditions().iter().find(|c| c.type_ == type_)
}

/// `Status/Reason` of the condition of type `type_` (empty when there is none).
pub fn reason_of<K: ProviderObject>(obj: &K, type_: &str) -> String {
    condition(obj, type_)
        .map(|c| format!("{}/{}", c.status, c.reason))
        .unwrap_or_default()
}

/// The message of the condition of type `type_` (empty when there is none).
pub fn message_of<K: ProviderObject>(obj: &K, type_: &str) -> String {
    condition(obj, type_)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}
