//! A corpus of invalid specs for the shared blocks, each with the message admission must give
//! (bad input gets a clear error and loses nothing).
//!
//! Every entry names the kind of object (by role), the stored spec for update cases, the spec
//! submitted, and a fragment of the error message the apiserver returns. The fragments were
//! checked against kube-apiserver v1.36.3 with CRDs composed as in the `test_crds` example
//! (`cargo run -p contract --example test_crds`); each provider's admission test replays the
//! corpus against its real CRDs, adding the provider's required fields
//! (`provider-aws/tests/admission.rs`), together with [`upstream`], Kubernetes' own cases.
//!
//! The unit tests here check the other direction: every fragment of a CEL entry appears in a
//! rule message of the generated schemas, so a reworded rule cannot silently drift from the
//! corpus.

pub mod upstream;

/// The object kind an entry is submitted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An `XCluster` (spec composes [`crate::api::ClusterSpecCommon`]).
    InfraCluster,
    /// An `XControlPlane` (spec composes [`crate::api::ControlPlaneSpecCommon`]).
    ControlPlane,
    /// An `XMachinePool` (spec composes [`crate::api::MachinePoolSpecCommon`]).
    MachinePool,
}

/// Where the rejection comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// One of our CEL rules (its message is ours).
    Cel,
    /// A schema keyword (`minimum`, `enum`, `pattern`, list-map keys); the apiserver words it.
    Schema,
}

/// One invalid input and the message it must produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadSpec {
    /// What the case shows, as a sentence.
    pub case: &'static str,
    /// The kind it is submitted as.
    pub role: Role,
    /// The field path the apiserver reports the error at, e.g. `spec.endpointAccess`.
    pub field: &'static str,
    /// For update cases: the spec stored first (JSON). `None` for create cases.
    pub stored: Option<&'static str>,
    /// The spec submitted (JSON), on create or as the update.
    pub spec: &'static str,
    /// A fragment of the apiserver's error message.
    pub message_contains: &'static str,
    /// Where the rejection comes from.
    pub source: Source,
}

const fn create(
    case: &'static str,
    role: Role,
    field: &'static str,
    spec: &'static str,
    message_contains: &'static str,
    source: Source,
) -> BadSpec {
    BadSpec {
        case,
        role,
        field,
        stored: None,
        spec,
        message_contains,
        source,
    }
}

const fn update(
    case: &'static str,
    role: Role,
    field: &'static str,
    stored: &'static str,
    spec: &'static str,
    message_contains: &'static str,
) -> BadSpec {
    BadSpec {
        case,
        role,
        field,
        stored: Some(stored),
        spec,
        message_contains,
        source: Source::Cel,
    }
}

use Role::{ControlPlane, InfraCluster, MachinePool};
use Source::{Cel, Schema};

/// The corpus.
pub const BAD_SPECS: &[BadSpec] = &[
    create(
        "a version without the v is rejected with the right form",
        ControlPlane,
        "spec.version",
        r#"{"version":"1.31"}"#,
        r#"must start with "v", e.g. "v1.31" or "v1.31.2""#,
        Cel,
    ),
    create(
        "a version that is not vMAJOR.MINOR[.PATCH] is rejected",
        ControlPlane,
        "spec.version",
        r#"{"version":"v1.31.x"}"#,
        r#"must have the form vMAJOR.MINOR or vMAJOR.MINOR.PATCH, e.g. "v1.31" or "v1.31.2""#,
        Cel,
    ),
    update(
        "a minor downgrade is rejected",
        ControlPlane,
        "spec.version",
        r#"{"version":"v1.31"}"#,
        r#"{"version":"v1.30"}"#,
        "downgrades are not supported",
    ),
    create(
        "an endpoint access with neither public nor private is rejected",
        ControlPlane,
        "spec.endpointAccess",
        r#"{"version":"v1.31","endpointAccess":{"public":false}}"#,
        "spec.endpointAccess: at least one of public and private must be true",
        Cel,
    ),
    create(
        "a preferred endpoint that is not enabled is rejected",
        ControlPlane,
        "spec.endpointAccess",
        r#"{"version":"v1.31","endpointAccess":{"public":true,"preferred":"Private"}}"#,
        "spec.endpointAccess.preferred must name an enabled endpoint",
        Cel,
    ),
    create(
        "public CIDRs without a public endpoint are rejected",
        ControlPlane,
        "spec.endpointAccess",
        r#"{"version":"v1.31","endpointAccess":{"public":false,"private":true,"publicCIDRs":["203.0.113.0/24"]}}"#,
        "spec.endpointAccess.publicCIDRs is only allowed when public is true",
        Cel,
    ),
    create(
        "a public CIDR that is not a CIDR is rejected",
        ControlPlane,
        "spec.endpointAccess.publicCIDRs",
        r#"{"version":"v1.31","endpointAccess":{"publicCIDRs":["203.0.113.0/24","nope"]}}"#,
        "spec.endpointAccess.publicCIDRs must hold only CIDR blocks such as 203.0.113.0/24",
        Cel,
    ),
    create(
        "two add-ons of the same name are rejected",
        ControlPlane,
        "spec.addons[1]",
        r#"{"version":"v1.31","addons":[{"name":"coredns"},{"name":"coredns"}]}"#,
        "Duplicate value",
        Schema,
    ),
    update(
        "a control plane's cloud name cannot change",
        ControlPlane,
        "spec.cloudName",
        r#"{"version":"v1.31","cloudName":"n1"}"#,
        r#"{"version":"v1.31","cloudName":"n2"}"#,
        "spec.cloudName is immutable",
    ),
    update(
        "a control plane's cloud name cannot be removed",
        ControlPlane,
        "spec",
        r#"{"version":"v1.31","cloudName":"n1"}"#,
        r#"{"version":"v1.31"}"#,
        "spec.cloudName cannot be removed once set",
    ),
    create(
        "scaling with min above max is rejected",
        MachinePool,
        "spec.scaling",
        r#"{"machineType":"m5.large","scaling":{"minReplicas":3,"maxReplicas":2}}"#,
        "spec.scaling.minReplicas must not be greater than spec.scaling.maxReplicas",
        Cel,
    ),
    create(
        "a negative minimum is rejected",
        MachinePool,
        "spec.scaling.minReplicas",
        r#"{"machineType":"m5.large","scaling":{"minReplicas":-1,"maxReplicas":2}}"#,
        "spec.scaling.minReplicas in body should be greater than or equal to 0",
        Schema,
    ),
    create(
        "maxSurge and maxUnavailable both zero are rejected",
        MachinePool,
        "spec.update",
        r#"{"machineType":"m5.large","update":{"maxSurge":0,"maxUnavailable":"0%"}}"#,
        "spec.update.maxSurge and spec.update.maxUnavailable must not both be 0",
        Cel,
    ),
    create(
        "a percentage above 100 is rejected",
        MachinePool,
        "spec.update.maxSurge",
        r#"{"machineType":"m5.large","update":{"maxSurge":"150%"}}"#,
        "spec.update.maxSurge must be a number of 0 or more, or a percentage from 0% to 100%",
        Cel,
    ),
    create(
        "a negative maxUnavailable is rejected",
        MachinePool,
        "spec.update.maxUnavailable",
        r#"{"machineType":"m5.large","update":{"maxUnavailable":-1}}"#,
        "spec.update.maxUnavailable must be a number of 0 or more, or a percentage from 0% to 100%",
        Cel,
    ),
    create(
        "an unknown taint effect is rejected",
        MachinePool,
        "spec.taints[0].effect",
        r#"{"machineType":"m5.large","taints":[{"key":"dedicated","effect":"Sometimes"}]}"#,
        r#"supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#,
        Schema,
    ),
    update(
        "a pool's cloud name cannot change",
        MachinePool,
        "spec.cloudName",
        r#"{"machineType":"m5.large","cloudName":"p1"}"#,
        r#"{"machineType":"m5.large","cloudName":"p2"}"#,
        "spec.cloudName is immutable",
    ),
    create(
        "a Secret identity without a name is rejected",
        InfraCluster,
        "spec.identityRef",
        r#"{"region":"us-east-1","identityRef":{"kind":"Secret"}}"#,
        "spec.identityRef.name is required when spec.identityRef.kind is Secret",
        Cel,
    ),
    create(
        "a Controller identity with a name is rejected",
        InfraCluster,
        "spec.identityRef",
        r#"{"region":"us-east-1","identityRef":{"kind":"Controller","name":"x"}}"#,
        "spec.identityRef.name must be empty when spec.identityRef.kind is Controller",
        Cel,
    ),
    create(
        "a network both brought and created is rejected",
        InfraCluster,
        "spec.network",
        r#"{"region":"us-east-1","network":{"id":"vpc-1","cidrBlock":"10.0.0.0/16"}}"#,
        "spec.network: set either id/subnetIDs (bring your own network) or cidrBlock (the provider creates one), not both",
        Cel,
    ),
    create(
        "a network CIDR that is not a CIDR is rejected",
        InfraCluster,
        "spec.network.cidrBlock",
        r#"{"region":"us-east-1","network":{"cidrBlock":"10.0.0.0/33"}}"#,
        "spec.network.cidrBlock must be a CIDR block such as 10.0.0.0/16",
        Cel,
    ),
    create(
        "a user tag forging the ownership tag is rejected",
        InfraCluster,
        "spec.additionalTags",
        r#"{"region":"us-east-1","additionalTags":{"capi-managed-eks":"default_c1"}}"#,
        "must not start with capi-managed-",
        Cel,
    ),
    update(
        "the region cannot change",
        InfraCluster,
        "spec.region",
        r#"{"region":"us-east-1"}"#,
        r#"{"region":"us-west-2"}"#,
        "spec.region is immutable",
    ),
    update(
        "the network cannot change once set",
        InfraCluster,
        "spec.network",
        r#"{"region":"us-east-1","network":{"cidrBlock":"10.0.0.0/16"}}"#,
        r#"{"region":"us-east-1","network":{"cidrBlock":"10.1.0.0/16"}}"#,
        "spec.network is immutable once set",
    ),
    create(
        "a label key with a space is rejected",
        MachinePool,
        "spec.labels",
        r#"{"machineType":"m5.large","labels":{"node role":"x"}}"#,
        "spec.labels keys must be Kubernetes label keys",
        Cel,
    ),
    create(
        "a label key whose prefix is not a DNS subdomain is rejected",
        MachinePool,
        "spec.labels",
        r#"{"machineType":"m5.large","labels":{"Example.COM/role":"x"}}"#,
        "spec.labels keys must be Kubernetes label keys",
        Cel,
    ),
    create(
        "a label key whose name is longer than 63 characters is rejected",
        MachinePool,
        "spec.labels",
        r#"{"machineType":"m5.large","labels":{"example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":"x"}}"#,
        "spec.labels keys must be Kubernetes label keys",
        Cel,
    ),
    create(
        "a label value that ends with a dash is rejected",
        MachinePool,
        "spec.labels.role",
        r#"{"machineType":"m5.large","labels":{"role":"web-"}}"#,
        "spec.labels.role in body should match",
        Schema,
    ),
    create(
        "a taint key that starts with a dash is rejected",
        MachinePool,
        "spec.taints[0].key",
        r#"{"machineType":"m5.large","taints":[{"key":"-dedicated","effect":"NoSchedule"}]}"#,
        "spec.taints[].key must be a qualified name",
        Cel,
    ),
    create(
        "a taint key with two slashes is rejected",
        MachinePool,
        "spec.taints[0].key",
        r#"{"machineType":"m5.large","taints":[{"key":"example.com/a/b","effect":"NoSchedule"}]}"#,
        "spec.taints[].key must be a qualified name",
        Cel,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ClusterSpecCommon, ControlPlaneSpecCommon, MachinePoolSpecCommon};
    use crate::schema::{crd_schema, validation_rules};

    fn rule_texts() -> Vec<String> {
        let schemas = [
            crd_schema::<ClusterSpecCommon>(),
            crd_schema::<ControlPlaneSpecCommon>(),
            crd_schema::<MachinePoolSpecCommon>(),
        ];
        schemas
            .iter()
            .flat_map(validation_rules)
            .flat_map(|r| [r.message, r.message_expression])
            .flatten()
            .map(|t| t.replace("\\\"", "\""))
            .collect()
    }

    #[test]
    fn every_cel_case_names_a_message_our_schemas_carry() {
        let texts = rule_texts();
        for bad in BAD_SPECS.iter().filter(|b| b.source == Source::Cel) {
            assert!(
                texts.iter().any(|t| t.contains(bad.message_contains)),
                "no rule message for case: {}",
                bad.case
            );
        }
    }

    #[test]
    fn every_case_is_json_and_names_the_field_it_is_about() {
        for bad in BAD_SPECS {
            assert!(
                serde_json::from_str::<serde_json::Value>(bad.spec).is_ok(),
                "{}",
                bad.case
            );
            if let Some(stored) = bad.stored {
                assert!(serde_json::from_str::<serde_json::Value>(stored).is_ok());
            }
            assert!(bad.field.starts_with("spec"), "{}", bad.case);
        }
    }
}
