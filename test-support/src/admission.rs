//! The admission-corpus runner every provider's tests share: the shared bad specs of
//! [`contract::corpus`], Kubernetes' own label cases ([`contract::corpus::upstream`]) and the
//! cloud's own bad specs, replayed against the provider's CRDs on a real kube-apiserver. Each
//! must be refused with a message naming the field; good objects of every kind are admitted (so
//! a broken base cannot pass vacuously).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::{BAD_SPECS, BadSpec, Role, upstream};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

/// A provider's kinds, as the corpus needs them.
pub struct Kinds {
    /// The cloud's name in messages (`EKS`).
    pub cloud: &'static str,
    /// `XCluster`.
    pub infra_cluster: &'static str,
    /// `XControlPlane`.
    pub control_plane: &'static str,
    /// `XMachinePool`.
    pub machine_pool: &'static str,
    /// The smallest valid spec of each kind (corpus specs are merged over it).
    pub base: fn(Role) -> Value,
    /// What the cloud refuses beyond the shared corpus: `(kind, spec, message)`.
    pub own: &'static [(Role, &'static str, &'static str)],
    /// The updates the cloud refuses (its immutable fields, its one-way transitions):
    /// `(kind, spec stored first, spec submitted as the update, message)`.
    pub own_updates: &'static [(Role, &'static str, &'static str, &'static str)],
    /// The messages a label key and a taint key longer than 63 characters get, when the cloud
    /// refuses them (Kubernetes allows a prefix of 253); `None` when it takes them.
    pub long_keys: Option<(&'static str, &'static str)>,
    /// The message every taint gets when the cloud's pools take no taints at all (OKE);
    /// `None` when they take them.
    pub no_taints: Option<&'static str>,
}

impl Kinds {
    fn kind_of(&self, role: Role) -> (&'static str, &'static str) {
        match role {
            Role::InfraCluster => ("infrastructure.cluster.x-k8s.io", self.infra_cluster),
            Role::ControlPlane => ("controlplane.cluster.x-k8s.io", self.control_plane),
            Role::MachinePool => ("infrastructure.cluster.x-k8s.io", self.machine_pool),
        }
    }

    /// An object of `role` named `name`: the base spec with `spec` merged over it.
    pub fn object(&self, role: Role, name: &str, spec: &Value) -> DynamicObject {
        let (group, kind) = self.kind_of(role);
        let mut full = (self.base)(role);
        merge(&mut full, spec);
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1alpha1"), "kind": kind,
            "metadata": {"name": name}, "spec": full
        }))
        .unwrap()
    }

    /// The API of `role`'s kind in `default`.
    pub fn api(&self, client: &kube::Client, role: Role) -> Api<DynamicObject> {
        let (group, kind) = self.kind_of(role);
        Api::namespaced_with(
            client.clone(),
            "default",
            &ApiResource::from_gvk(&GroupVersionKind::gvk(group, "v1alpha1", kind)),
        )
    }

    /// Creates `role`'s object `name` with `spec` over the base, and panics with `what` when the
    /// API server refuses it.
    pub async fn admits(
        &self,
        client: &kube::Client,
        role: Role,
        name: &str,
        spec: &Value,
        what: &str,
    ) {
        if let Err(e) = self
            .api(client, role)
            .create(&PostParams::default(), &self.object(role, name, spec))
            .await
        {
            panic!("{what} is admitted: {e}");
        }
    }

    async fn rejection(
        &self,
        client: &kube::Client,
        case: &BadSpec,
        index: usize,
    ) -> Result<String, String> {
        let api = self.api(client, case.role);
        let name = format!("bad-{index}");
        let spec: Value = serde_json::from_str(case.spec).unwrap();
        let result = match case.stored {
            None => api
                .create(
                    &PostParams::default(),
                    &self.object(case.role, &name, &spec),
                )
                .await
                .map(|_| ()),
            Some(stored) => {
                let stored: Value = serde_json::from_str(stored).unwrap();
                api.create(
                    &PostParams::default(),
                    &self.object(case.role, &name, &stored),
                )
                .await
                .map_err(|e| format!("stored spec refused: {e}"))?;
                // Replace the whole spec (a merge patch cannot express a removed field).
                let mut stored_obj = api.get(&name).await.map_err(|e| e.to_string())?;
                let mut full = (self.base)(case.role);
                merge(&mut full, &spec);
                stored_obj.data["spec"] = full;
                api.replace(&name, &PostParams::default(), &stored_obj)
                    .await
                    .map(|_| ())
            }
        };
        match result {
            Ok(()) => Err("admitted".into()),
            Err(kube::Error::Api(status)) => Ok(status.message.to_string()),
            Err(e) => Err(format!("unexpected error {e}")),
        }
    }
}

fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                // As in a JSON merge patch, a null removes the field.
                if v.is_null() {
                    a.remove(k);
                } else {
                    merge(a.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// Replays everything against the CRDs installed on the plane `client` reaches.
///
/// # Panics
/// Listing every bad object that was admitted or refused without its message, and any good
/// object that was refused.
pub async fn every_bad_object_is_rejected_and_good_ones_are_admitted(
    client: &kube::Client,
    kinds: &Kinds,
) {
    for role in [Role::InfraCluster, Role::ControlPlane, Role::MachinePool] {
        kinds
            .api(client, role)
            .create(
                &PostParams::default(),
                &kinds.object(role, "good", &json!({})),
            )
            .await
            .unwrap_or_else(|e| panic!("a good {role:?} was refused: {e}"));
    }
    control_plane_version_is_required_except_in_the_template(client, kinds).await;
    kubernetes_own_cases_are_judged_as_kubernetes_judges_them(client, kinds).await;

    let mut failures = Vec::new();
    for (i, case) in BAD_SPECS.iter().enumerate() {
        match kinds.rejection(client, case, i).await {
            Ok(message) if message.contains(case.message_contains) => {}
            Ok(message) => failures.push(format!(
                "{}: message {message:?} lacks {:?}",
                case.case, case.message_contains
            )),
            Err(why) => failures.push(format!("{}: {why}", case.case)),
        }
    }
    let own = kinds
        .own
        .iter()
        .map(|(role, spec, expected)| (*role, None, *spec, *expected))
        .chain(
            kinds
                .own_updates
                .iter()
                .map(|(role, stored, spec, expected)| (*role, Some(*stored), *spec, *expected)),
        );
    for (i, (role, stored, spec, expected)) in own.enumerate() {
        let case = BadSpec {
            case: "cloud",
            role,
            field: "",
            stored,
            spec,
            message_contains: expected,
            source: contract::corpus::Source::Cel,
        };
        match kinds.rejection(client, &case, 1000 + i).await {
            Ok(message) if message.contains(expected) => {}
            Ok(message) => failures.push(format!(
                "{} case {spec}: message {message:?} lacks {expected:?}",
                kinds.cloud
            )),
            Err(why) => failures.push(format!("{} case {spec}: {why}", kinds.cloud)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad objects misbehaved:\n{}",
        failures.len(),
        BAD_SPECS.len() + kinds.own.len() + kinds.own_updates.len(),
        failures.join("\n")
    );
}

/// Kubernetes' own valid and invalid label keys, label values, key prefixes ([`upstream`]) as
/// InfraMachinePool label and taint keys and values: every invalid one refused naming its field,
/// every valid one admitted unless longer than the cloud allows (then refused with the cloud's limit).
async fn kubernetes_own_cases_are_judged_as_kubernetes_judges_them(
    client: &kube::Client,
    kinds: &Kinds,
) {
    const LABEL_KEY: &str = "spec.labels keys must be Kubernetes label keys";
    const TAINT_KEY: &str = "spec.taints[].key must be a qualified name";
    let pools = kinds.api(client, Role::MachinePool);
    let mut n = 0;
    let mut problems = Vec::new();
    let mut submit = |spec: Value, refusal: Option<&'static str>, what: String| {
        let kinds = &*kinds;
        n += 1;
        let pools = pools.clone();
        let name = format!("upstream-{n}");
        async move {
            let result = pools
                .create(
                    &PostParams::default(),
                    &kinds.object(Role::MachinePool, &name, &spec),
                )
                .await;
            match (result, refusal) {
                (Ok(_), None) => None,
                (Ok(_), Some(want)) => Some(format!("{what}: admitted, want {want:?}")),
                (Err(kube::Error::Api(s)), Some(want)) if s.message.contains(want) => None,
                (Err(kube::Error::Api(s)), want) => Some(format!(
                    "{what}: refused with {:?}, want {want:?}",
                    s.message
                )),
                (Err(e), _) => Some(format!("{what}: {e}")),
            }
        }
    };
    let key_cases = || {
        let mut keys: Vec<(String, bool)> = Vec::new();
        keys.extend(
            upstream::qualified_names_valid()
                .into_iter()
                .map(|k| (k, true)),
        );
        keys.extend(
            upstream::qualified_names_invalid()
                .into_iter()
                .map(|k| (k, false)),
        );
        keys.extend(
            upstream::subdomains_valid()
                .into_iter()
                .map(|p| (format!("{p}/name"), true)),
        );
        keys.extend(
            upstream::subdomains_invalid()
                .into_iter()
                .map(|p| (format!("{p}/name"), false)),
        );
        keys
    };
    for (key, valid) in key_cases() {
        let (label, taint) = match (valid, key.len() <= 63) {
            (false, _) => (Some(LABEL_KEY), Some(TAINT_KEY)),
            (true, true) => (None, None),
            (true, false) => kinds
                .long_keys
                .map_or((None, None), |(l, t)| (Some(l), Some(t))),
        };
        let spec = json!({"labels": {key.clone(): "v"}});
        problems.extend(submit(spec, label, format!("label key {key:?}")).await);
        let spec = json!({"taints": [{"key": key.clone(), "effect": "NoSchedule"}]});
        let taint = taint.or(kinds.no_taints);
        problems.extend(submit(spec, taint, format!("taint key {key:?}")).await);
    }
    let values = upstream::label_values_valid()
        .into_iter()
        .map(|v| (v, true))
        .chain(
            upstream::label_values_invalid()
                .into_iter()
                .map(|v| (v, false)),
        );
    for (value, valid) in values {
        let spec = json!({"labels": {"example.com/role": value.clone()}});
        let refusal = (!valid).then_some("spec.labels.example.com/role");
        problems.extend(submit(spec, refusal, format!("label value {value:?}")).await);
        let spec = json!({"taints": [{"key": "dedicated", "value": value.clone(), "effect": "NoSchedule"}]});
        let refusal = (!valid)
            .then_some("spec.taints[0].value")
            .or(kinds.no_taints);
        problems.extend(submit(spec, refusal, format!("taint value {value:?}")).await);
    }
    assert!(
        problems.is_empty(),
        "{} of {n} of Kubernetes' own cases were judged otherwise than Kubernetes judges them:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// ClusterClass topology sets the ControlPlane's `spec.version`, so its template may leave the
/// version out (and a version it does write is still checked); the ControlPlane itself
/// requires one.
async fn control_plane_version_is_required_except_in_the_template(
    client: &kube::Client,
    kinds: &Kinds,
) {
    let mut base = (kinds.base)(Role::ControlPlane);
    if let Some(o) = base.as_object_mut() {
        o.remove("version");
    }
    let template_kind = format!("{}Template", kinds.control_plane);
    let templates: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "controlplane.cluster.x-k8s.io",
            "v1alpha1",
            &template_kind,
        )),
    );
    let template = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
            "kind": template_kind,
            "metadata": {"name": name},
            "spec": {"template": {"spec": spec}},
        }))
        .unwrap()
    };
    templates
        .create(
            &PostParams::default(),
            &template("without-version", base.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("a control plane template without a version was refused: {e}"));
    let refused = templates
        .create(
            &PostParams::default(),
            &template("bad-version", {
                let mut b = base.clone();
                b["version"] = json!("1.31");
                b
            }),
        )
        .await
        .expect_err("a control plane template with version 1.31 was admitted");
    assert!(
        refused.to_string().contains("must start with \"v\""),
        "{refused}"
    );

    let without_version: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
        "kind": kinds.control_plane,
        "metadata": {"name": "without-version"},
        "spec": base,
    }))
    .unwrap();
    let refused = kinds
        .api(client, Role::ControlPlane)
        .create(&PostParams::default(), &without_version)
        .await
        .expect_err("a ControlPlane without a version was admitted");
    assert!(refused.to_string().contains("spec.version"), "{refused}");
}
