//! Bad input is rejected at admission by the real kube-apiserver, with a message that names the
//! field: the shared corpus of `contract::corpus` replayed against the EKS CRDs, plus what only
//! EKS refuses. Good objects of every kind are admitted (so a broken base cannot pass vacuously).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use contract::corpus::{BAD_SPECS, BadSpec, Role, upstream};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};
use testbed::{ManagementPlane, Options};

fn kind_of(role: Role) -> (&'static str, &'static str) {
    match role {
        Role::InfraCluster => ("infrastructure.cluster.x-k8s.io", "EKSCluster"),
        Role::ControlPlane => ("controlplane.cluster.x-k8s.io", "EKSControlPlane"),
        Role::MachinePool => ("infrastructure.cluster.x-k8s.io", "EKSMachinePool"),
    }
}

/// The smallest valid spec of each kind; corpus specs are merged over it.
fn base(role: Role) -> Value {
    match role {
        Role::InfraCluster => json!({"region": "us-west-2"}),
        Role::ControlPlane => {
            json!({"version": "v1.31", "eks": {"roleARN": "arn:aws:iam::123456789012:role/eks-cluster"}})
        }
        Role::MachinePool => {
            json!({"machineType": "t3.medium", "eks": {"nodeRoleARN": "arn:aws:iam::123456789012:role/eks-nodes"}})
        }
    }
}

fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

fn object(role: Role, name: &str, spec: &Value) -> DynamicObject {
    let (group, kind) = kind_of(role);
    let mut full = base(role);
    merge(&mut full, spec);
    serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1alpha1"), "kind": kind,
        "metadata": {"name": name}, "spec": full
    }))
    .unwrap()
}

fn api(client: &kube::Client, role: Role) -> Api<DynamicObject> {
    let (group, kind) = kind_of(role);
    Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk(group, "v1alpha1", kind)),
    )
}

async fn rejection(client: &kube::Client, case: &BadSpec, index: usize) -> Result<String, String> {
    let api = api(client, case.role);
    let name = format!("bad-{index}");
    let spec: Value = serde_json::from_str(case.spec).unwrap();
    let result = match case.stored {
        None => api
            .create(&PostParams::default(), &object(case.role, &name, &spec))
            .await
            .map(|_| ()),
        Some(stored) => {
            let stored: Value = serde_json::from_str(stored).unwrap();
            api.create(&PostParams::default(), &object(case.role, &name, &stored))
                .await
                .map_err(|e| format!("stored spec refused: {e}"))?;
            // Replace the whole spec (a merge patch cannot express a removed field).
            let mut stored_obj = api.get(&name).await.map_err(|e| e.to_string())?;
            let mut full = base(case.role);
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

/// What only EKS refuses, with the message each must produce.
const EKS_BAD: &[(Role, &str, &str)] = &[
    (
        Role::ControlPlane,
        r#"{"eks":{"roleARN":"eks-cluster-role-without-arn"}}"#,
        "spec.eks.roleARN must be an IAM role ARN",
    ),
    (
        Role::ControlPlane,
        r#"{"eks":{"roleARN":"arn:aws:iam::123456789012:role/x","serviceCIDR":"10.100.0.0"}}"#,
        "spec.eks.serviceCIDR must be a CIDR block",
    ),
    (
        Role::MachinePool,
        r#"{"eks":{"nodeRoleARN":"nodes"}}"#,
        "spec.eks.nodeRoleARN must be an IAM role ARN",
    ),
    (
        Role::MachinePool,
        r#"{"update":{"maxSurge":1}}"#,
        "maxSurge",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}"#,
        "spec.cloudName must be a valid EKS cluster name: 1 to 100 characters",
    ),
    (
        Role::ControlPlane,
        r#"{"cloudName":"team.prod"}"#,
        "spec.cloudName must be a valid EKS cluster name",
    ),
    (
        Role::MachinePool,
        r#"{"cloudName":"_pool"}"#,
        "spec.cloudName must be a valid EKS node group name",
    ),
    (
        Role::MachinePool,
        r#"{"labels":{"example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk":"x"}}"#,
        "spec.labels keys must be at most 63 characters on EKS",
    ),
    (
        Role::MachinePool,
        r#"{"taints":[{"key":"example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk","effect":"NoSchedule"}]}"#,
        "spec.taints[].key must be at most 63 characters on EKS",
    ),
];

#[tokio::test]
async fn every_bad_object_is_rejected_with_its_message_and_good_ones_are_admitted() {
    let plane = ManagementPlane::start(Options {
        capi: false,
        controller_manager: false,
        ..Options::default()
    })
    .await
    .unwrap();
    plane
        .install_crds(&provider_aws::api::crds())
        .await
        .unwrap();
    let client = plane.client().await.unwrap();

    for role in [Role::InfraCluster, Role::ControlPlane, Role::MachinePool] {
        api(&client, role)
            .create(&PostParams::default(), &object(role, "good", &json!({})))
            .await
            .unwrap_or_else(|e| panic!("a good {role:?} was refused: {e}"));
    }

    control_plane_version_is_required_except_in_the_template(&client).await;
    kubernetes_own_cases_are_judged_as_kubernetes_judges_them(&client).await;

    let mut failures = Vec::new();
    for (i, case) in BAD_SPECS.iter().enumerate() {
        match rejection(&client, case, i).await {
            Ok(message) if message.contains(case.message_contains) => {}
            Ok(message) => failures.push(format!(
                "{}: message {message:?} lacks {:?}",
                case.case, case.message_contains
            )),
            Err(why) => failures.push(format!("{}: {why}", case.case)),
        }
    }
    for (i, (role, spec, expected)) in EKS_BAD.iter().enumerate() {
        let case = BadSpec {
            case: "eks",
            role: *role,
            field: "",
            stored: None,
            spec,
            message_contains: expected,
            source: contract::corpus::Source::Cel,
        };
        match rejection(&client, &case, 1000 + i).await {
            Ok(message) if message.contains(expected) => {}
            Ok(message) => failures.push(format!(
                "EKS case {spec}: message {message:?} lacks {expected:?}"
            )),
            Err(why) => failures.push(format!("EKS case {spec}: {why}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad objects misbehaved:\n{}",
        failures.len(),
        BAD_SPECS.len() + EKS_BAD.len(),
        failures.join("\n")
    );
    plane.stop().await;
}

/// Kubernetes' own valid and invalid label keys, label values, key prefixes ([`upstream`]) as
/// EKSMachinePool label and taint keys and values: every invalid one refused naming its field,
/// every valid one admitted unless longer than EKS allows (then refused with EKS's limit).
async fn kubernetes_own_cases_are_judged_as_kubernetes_judges_them(client: &kube::Client) {
    const LABEL_KEY: &str = "spec.labels keys must be Kubernetes label keys";
    const TAINT_KEY: &str = "spec.taints[].key must be a qualified name";
    const EKS_LABEL_KEY: &str = "spec.labels keys must be at most 63 characters on EKS";
    const EKS_TAINT_KEY: &str = "spec.taints[].key must be at most 63 characters on EKS";
    let pools = api(client, Role::MachinePool);
    let mut n = 0;
    let mut problems = Vec::new();
    let mut submit = |spec: Value, refusal: Option<&'static str>, what: String| {
        n += 1;
        let pools = pools.clone();
        let name = format!("upstream-{n}");
        async move {
            let result = pools
                .create(
                    &PostParams::default(),
                    &object(Role::MachinePool, &name, &spec),
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
            (true, false) => (Some(EKS_LABEL_KEY), Some(EKS_TAINT_KEY)),
        };
        let spec = json!({"labels": {key.clone(): "v"}});
        problems.extend(submit(spec, label, format!("label key {key:?}")).await);
        let spec = json!({"taints": [{"key": key.clone(), "effect": "NoSchedule"}]});
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
        let refusal = (!valid).then_some("spec.taints[0].value");
        problems.extend(submit(spec, refusal, format!("taint value {value:?}")).await);
    }
    assert!(
        problems.is_empty(),
        "{} of {n} of Kubernetes' own cases were judged otherwise than Kubernetes judges them:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// ClusterClass topology sets the EKSControlPlane's `spec.version`, so its template may leave the
/// version out (and a version it does write is still checked); the EKSControlPlane itself
/// requires one.
async fn control_plane_version_is_required_except_in_the_template(client: &kube::Client) {
    let eks = json!({"roleARN": "arn:aws:iam::123456789012:role/eks-cluster"});
    let templates: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "controlplane.cluster.x-k8s.io",
            "v1alpha1",
            "EKSControlPlaneTemplate",
        )),
    );
    let template = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
            "kind": "EKSControlPlaneTemplate",
            "metadata": {"name": name},
            "spec": {"template": {"spec": spec}},
        }))
        .unwrap()
    };
    templates
        .create(
            &PostParams::default(),
            &template("without-version", json!({"eks": eks})),
        )
        .await
        .unwrap_or_else(|e| panic!("a control plane template without a version was refused: {e}"));
    let refused = templates
        .create(
            &PostParams::default(),
            &template("bad-version", json!({"version": "1.31", "eks": eks})),
        )
        .await
        .expect_err("a control plane template with version 1.31 was admitted");
    assert!(
        refused.to_string().contains("must start with \"v\""),
        "{refused}"
    );

    let without_version: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1",
        "kind": "EKSControlPlane",
        "metadata": {"name": "without-version"},
        "spec": {"eks": eks},
    }))
    .unwrap();
    let refused = api(client, Role::ControlPlane)
        .create(&PostParams::default(), &without_version)
        .await
        .expect_err("an EKSControlPlane without a version was admitted");
    assert!(refused.to_string().contains("spec.version"), "{refused}");
}
