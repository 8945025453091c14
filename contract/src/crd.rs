//! CRD rules of the Cluster API contract: contract labels and CRD names.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::capi::accessors::ContractVersion;

/// The contract labels for a CRD serving `served_versions`: `cluster.x-k8s.io/v1beta2` and
/// `cluster.x-k8s.io/v1beta1`, each with the versions joined by `_` (e.g. `v1alpha1` or
/// `v1alpha1_v1alpha2`), so both current and older cores resolve references to the kind.
///
/// Versions are kept in the order given; empty entries are skipped.
pub fn contract_labels(served_versions: &[&str]) -> BTreeMap<String, String> {
    let value = served_versions
        .iter()
        .filter(|v| !v.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("_");
    [ContractVersion::V1Beta2, ContractVersion::V1Beta1]
        .into_iter()
        .map(|c| (c.label_key().to_owned(), value.clone()))
        .collect()
}

/// Adds (or overwrites) the contract labels on `crd`, from the versions it marks `served`, in
/// the CRD's order. Other labels are kept.
pub fn stamp_contract_labels(crd: &mut CustomResourceDefinition) {
    let served: Vec<&str> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.as_str())
        .collect();
    let labels = contract_labels(&served);
    crd.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .extend(labels);
}

/// The lowercase plural of `kind`, by the English rules that matter for kind names (the same
/// rules kube-derive uses to name CRDs, so the two agree):
/// - ending in `s`, `x`, `z`, `ch` or `sh`: add `es` (`…Class` → `…classes`);
/// - ending in a consonant followed by `y`: `y` becomes `ies` (`…Policy` → `…policies`);
/// - otherwise add `s` (`EKSControlPlane` → `ekscontrolplanes`, `…Gateway` → `…gateways`).
pub fn plural_of_kind(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y')
        && stem
            .chars()
            .last()
            .is_some_and(|c| !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u'))
    {
        return format!("{stem}ies");
    }
    format!("{lower}s")
}

/// The CRD name core expects for `kind` in `group`: `<lowercase plural>.<group>`
/// (see [`plural_of_kind`]).
pub fn expected_crd_name(kind: &str, group: &str) -> String {
    format!("{}.{group}", plural_of_kind(kind))
}

/// The schema of a ControlPlane kind's spec as its Template stamps it out: the same fields,
/// descriptions and rules, with `version` no longer required (ClusterClass topology writes
/// `Cluster.spec.topology.version` into the stamped object's `spec.version`).
pub fn control_plane_template_spec_schema<S: schemars::JsonSchema>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    let mut schema = S::json_schema(generator);
    if let Some(required) = schema
        .get_mut("required")
        .and_then(serde_json::Value::as_array_mut)
    {
        required.retain(|field| field != "version");
    }
    schema
}

/// Checks that a ControlPlane Template's `spec.template.spec` schema is the ControlPlane's
/// `spec` schema with only `version` no longer required (and its own description); says what
/// differs otherwise.
pub fn check_control_plane_template(
    control_plane: &CustomResourceDefinition,
    template: &CustomResourceDefinition,
) -> Result<(), String> {
    let schema = |crd: &CustomResourceDefinition, path: &[&str]| -> serde_json::Value {
        let crd = serde_json::to_value(crd).unwrap_or_default();
        let mut schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        for field in path {
            schema = &schema["properties"][*field];
        }
        schema.clone()
    };
    let mut stamped = schema(control_plane, &["spec"]);
    let mut templated = schema(template, &["spec", "template", "spec"]);
    let requires_version = |s: &serde_json::Value| {
        s["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|f| f == "version"))
    };
    if !requires_version(&stamped) {
        return Err("the control plane's spec does not require `version`".into());
    }
    if requires_version(&templated) {
        return Err("the template's spec requires `version`".into());
    }
    for s in [&mut stamped, &mut templated] {
        if let Some(obj) = s.as_object_mut() {
            obj.remove("required");
            obj.remove("description");
        }
    }
    if stamped != templated {
        return Err(
            "the template's spec schema differs from the control plane's beyond `version`".into(),
        );
    }
    Ok(())
}

/// A JSON merge patch the user supplies for a cloud request body (`requestOverrides`): any
/// object, kept as written.
pub fn free_form_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn contract_labels_join_served_versions_with_underscores() {
        let labels = contract_labels(&["v1alpha1", "v1alpha2"]);
        assert_eq!(labels.len(), 2);
        assert_eq!(labels["cluster.x-k8s.io/v1beta2"], "v1alpha1_v1alpha2");
        assert_eq!(labels["cluster.x-k8s.io/v1beta1"], "v1alpha1_v1alpha2");
        assert_eq!(
            contract_labels(&["v1alpha1"])["cluster.x-k8s.io/v1beta2"],
            "v1alpha1"
        );
    }

    fn version(name: &str, served: bool) -> CustomResourceDefinitionVersion {
        CustomResourceDefinitionVersion {
            name: name.into(),
            served,
            storage: served,
            ..Default::default()
        }
    }

    #[test]
    fn stamping_reads_only_served_versions_and_keeps_other_labels() {
        let mut crd = CustomResourceDefinition {
            metadata: ObjectMeta {
                labels: Some(BTreeMap::from([(
                    "cluster.x-k8s.io/provider".to_string(),
                    "infrastructure-eks".to_string(),
                )])),
                ..Default::default()
            },
            spec: CustomResourceDefinitionSpec {
                versions: vec![version("v1alpha1", true), version("v1alpha0", false)],
                ..Default::default()
            },
            status: None,
        };
        stamp_contract_labels(&mut crd);
        let labels = crd.metadata.labels.unwrap();
        assert_eq!(labels["cluster.x-k8s.io/v1beta2"], "v1alpha1");
        assert_eq!(labels["cluster.x-k8s.io/v1beta1"], "v1alpha1");
        assert_eq!(labels["cluster.x-k8s.io/provider"], "infrastructure-eks");
    }

    #[test]
    fn crd_names_are_the_lowercase_plural_and_the_group() {
        let cases = [
            ("EKSControlPlane", "ekscontrolplanes"),
            ("AKSMachinePool", "aksmachinepools"),
            ("GKECluster", "gkeclusters"),
            ("ClusterClass", "clusterclasses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("Mesh", "meshes"),
            ("Box", "boxes"),
        ];
        for (kind, plural) in cases {
            assert_eq!(plural_of_kind(kind), plural, "{kind}");
        }
        assert_eq!(
            expected_crd_name("EKSControlPlane", "controlplane.cluster.x-k8s.io"),
            "ekscontrolplanes.controlplane.cluster.x-k8s.io"
        );
    }

    mod agrees_with_kube_derive {
        use kube::{CustomResource, CustomResourceExt};
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
        #[kube(group = "example.io", version = "v1", kind = "TestPolicy", namespaced)]
        pub struct TestPolicySpec {
            pub x: i32,
        }

        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
        #[kube(group = "example.io", version = "v1", kind = "TestClass", namespaced)]
        pub struct TestClassSpec {
            pub x: i32,
        }

        #[test]
        fn expected_crd_names_match_the_names_kube_derive_generates() {
            assert_eq!(
                TestPolicy::crd().metadata.name.as_deref(),
                Some(super::expected_crd_name("TestPolicy", "example.io").as_str())
            );
            assert_eq!(
                TestClass::crd().metadata.name.as_deref(),
                Some(super::expected_crd_name("TestClass", "example.io").as_str())
            );
        }
    }
}
