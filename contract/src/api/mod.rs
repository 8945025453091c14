//! The spec and status blocks every provider composes into its CRDs.
//!
//! The same concept has the same name, shape and admission rules on every cloud; only the block
//! named after the cloud (`eks:`, `aks:`, `gke:`, `oke:`) differs, and that lives in the
//! provider crate.
//!
//! Every type here serializes with camelCase names and has a JSON schema whose descriptions come
//! from the `///` comments (they are what `kubectl explain` shows). Admission rules are CEL
//! (`x-kubernetes-validations`), kept to what Kubernetes 1.33 accepts and bounded (`maxItems`,
//! `maxLength`, `maxProperties`) so the estimated CEL cost stays within the apiserver's budget.
//! Every rule's message names the field it is about, as the user writes it under `spec`.
//!
//! # Composing
//! [`ClusterSpecCommon`], [`ControlPlaneSpecCommon`], [`MachinePoolSpecCommon`] and the three
//! `…StatusCommon` blocks are meant to be embedded with `#[serde(flatten)]` in a provider's spec
//! and status. Flattening works with the schema generation kube uses: the block's properties,
//! `required` list and object-level CEL rules land on the provider's object (see the tests in
//! [`crate::schema`]).
//!
//! # Layout
//! Every item is re-exported here, so `contract::api::X` is the path to use:
//! - [`endpoints`]: the API server's endpoints and their reachability;
//! - [`infra_cluster`]: region, network, identity, tags and the InfraCluster status;
//! - [`adoption`]: adopting a cloud resource, its plan, and the deletion policy;
//! - [`control_plane`]: the ControlPlane spec and status blocks;
//! - [`machine_pool`]: node shape, labels, taints, scaling, updates and the pool status;
//! - [`version`]: `spec.version` and its admission rules;
//! - [`operation`]: the cloud operation in flight and the `requestOverrides` record.

pub mod adoption;
pub mod control_plane;
pub mod endpoints;
pub mod infra_cluster;
pub mod machine_pool;
pub mod operation;
pub mod version;

pub use adoption::{
    Adoption, AdoptionPhase, AdoptionStatus, DeletionPolicy, MAX_ADOPTION_ROWS, PlannedChange,
};
pub use control_plane::{
    Addon, ControlPlaneInitialization, ControlPlaneSpecCommon, ControlPlaneStatusCommon,
    Encryption, KubeconfigStatus, Logging, OidcIssuer, VersionReplicas,
};
pub use endpoints::{
    ApiEndpoint, Endpoint, EndpointAccess, EndpointName, EndpointPreference, MAX_PUBLIC_CIDRS,
};
pub use infra_cluster::{
    AdditionalTags, ClusterSpecCommon, FailureDomain, IdentityKind, IdentityRef,
    InfraClusterInitialization, InfraClusterStatusCommon, MAX_ADDITIONAL_TAGS, MAX_TAG_KEY_LEN,
    MAX_TAG_VALUE_LEN, NetworkSpec, NetworkStatus, SubnetStatus,
};
pub use machine_pool::{
    LABEL_VALUE_PATTERN, MachinePoolInitialization, MachinePoolSpecCommon, MachinePoolStatusCommon,
    NodeScaling, QUALIFIED_NAME_LENGTHS, QUALIFIED_NAME_PATTERN, Taint, TaintEffect,
    UpdateStrategy,
};
pub use operation::{Operation, OperationKind, RequestOverridesStatus};
pub use version::{VERSION_FORM_RULE, VERSION_NO_DOWNGRADE_RULE, VERSION_PREFIX_RULE, Version};

fn default_true() -> bool {
    true
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Schema checks the block modules' tests share.
#[cfg(test)]
mod test_support {
    use crate::schema::{structural_problems, validation_rules};
    use serde_json::Value;

    pub(crate) fn assert_structural(name: &str, schema: &Value) {
        let problems = structural_problems(schema);
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }

    /// `(path, rule fragment, message fragment)` for every rule a block must carry.
    pub(crate) fn expect_rules(schema: &Value, expected: &[(&str, &str, &str)]) {
        let rules = validation_rules(schema);
        for (path, rule, message) in expected {
            let hit = rules.iter().any(|r| {
                r.path == *path
                    && r.rule.contains(rule)
                    && r.message
                        .as_deref()
                        .or(r.message_expression.as_deref())
                        .is_some_and(|m| m.contains(message))
            });
            assert!(
                hit,
                "missing rule at {path}: {rule} / {message} in {rules:#?}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::assert_structural;
    use super::*;
    use crate::schema::{crd_schema, unbounded_values, validation_rules};

    #[test]
    fn every_block_has_a_structural_schema() {
        let schemas = [
            ("ApiEndpoint", crd_schema::<ApiEndpoint>()),
            ("EndpointAccess", crd_schema::<EndpointAccess>()),
            ("Endpoint", crd_schema::<Endpoint>()),
            ("Logging", crd_schema::<Logging>()),
            ("Encryption", crd_schema::<Encryption>()),
            ("Addon", crd_schema::<Addon>()),
            ("OidcIssuer", crd_schema::<OidcIssuer>()),
            ("IdentityRef", crd_schema::<IdentityRef>()),
            ("AdditionalTags", crd_schema::<AdditionalTags>()),
            ("NetworkSpec", crd_schema::<NetworkSpec>()),
            ("NodeScaling", crd_schema::<NodeScaling>()),
            ("Taint", crd_schema::<Taint>()),
            ("UpdateStrategy", crd_schema::<UpdateStrategy>()),
            ("Version", crd_schema::<Version>()),
            ("Operation", crd_schema::<Operation>()),
            ("KubeconfigStatus", crd_schema::<KubeconfigStatus>()),
            ("FailureDomain", crd_schema::<FailureDomain>()),
            ("VersionReplicas", crd_schema::<VersionReplicas>()),
            ("ClusterSpecCommon", crd_schema::<ClusterSpecCommon>()),
            (
                "ControlPlaneSpecCommon",
                crd_schema::<ControlPlaneSpecCommon>(),
            ),
            (
                "MachinePoolSpecCommon",
                crd_schema::<MachinePoolSpecCommon>(),
            ),
            (
                "InfraClusterStatusCommon",
                crd_schema::<InfraClusterStatusCommon>(),
            ),
            (
                "ControlPlaneStatusCommon",
                crd_schema::<ControlPlaneStatusCommon>(),
            ),
            (
                "MachinePoolStatusCommon",
                crd_schema::<MachinePoolStatusCommon>(),
            ),
        ];
        for (name, schema) in &schemas {
            assert_structural(name, schema);
        }
    }

    #[test]
    fn spec_blocks_bound_every_value_cel_rules_can_see() {
        for (name, schema) in [
            ("ClusterSpecCommon", crd_schema::<ClusterSpecCommon>()),
            (
                "ControlPlaneSpecCommon",
                crd_schema::<ControlPlaneSpecCommon>(),
            ),
            (
                "MachinePoolSpecCommon",
                crd_schema::<MachinePoolSpecCommon>(),
            ),
        ] {
            let unbounded = unbounded_values(&schema);
            assert!(unbounded.is_empty(), "{name}: {unbounded:?}");
        }
    }

    #[test]
    fn every_rule_message_names_the_spec_field() {
        for schema in [
            crd_schema::<ClusterSpecCommon>(),
            crd_schema::<ControlPlaneSpecCommon>(),
            crd_schema::<MachinePoolSpecCommon>(),
        ] {
            for rule in validation_rules(&schema) {
                let message = rule.message.or(rule.message_expression).unwrap_or_default();
                assert!(
                    message.contains("spec."),
                    "{} at {} has message {message:?}",
                    rule.rule,
                    rule.path
                );
            }
        }
    }
}
