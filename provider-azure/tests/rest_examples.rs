//! Microsoft's published examples of the ARM operations the provider calls (held under
//! `tests/rest-examples/`, see its README) read through the provider's answer types, the way
//! the provider reads them: with `read_answer` under the operation's ARM name.
//!
//! Every held file must be listed in [`HELD`], so an example added without a check fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use provider_azure::client::answers::{
    AgentPool, CredentialResults, Identified, ManagedCluster, Named, Page, ResourceGroup, ScaleSet,
    ScaleSetVm, Subnet, VirtualNetwork,
};
use provider_runtime::read_answer;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads one answer body as the provider does; the error names the operation and the field.
type Check = fn(&str, Value) -> Result<(), String>;

fn reads<T: DeserializeOwned>(operation: &str, body: Value) -> Result<(), String> {
    read_answer::<T>(operation, body)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A held example: its path under `rest-examples/`, the operation it shows, and how the
/// provider reads that operation's answer bodies (none: the provider reads only the status and
/// the headers).
struct Held {
    path: &'static str,
    operation: &'static str,
    checks: &'static [Check],
}

const HELD: &[Held] = &[
    Held {
        path: "containerservice/ManagedClustersGet.json",
        operation: "ManagedClusters_Get",
        checks: &[reads::<ManagedCluster>],
    },
    Held {
        path: "containerservice/ManagedClustersCreate_UpdateWithEnableAzureRBAC.json",
        operation: "ManagedClusters_CreateOrUpdate",
        // The provider reads the id of a create's answer; the whole cluster reads too.
        checks: &[reads::<Identified>, reads::<ManagedCluster>],
    },
    Held {
        path: "containerservice/ManagedClustersListByResourceGroup.json",
        operation: "ManagedClusters_ListByResourceGroup",
        checks: &[reads::<Page<Named>>, reads::<Page<ManagedCluster>>],
    },
    Held {
        path: "containerservice/ManagedClustersListClusterUserCredentials.json",
        operation: "ManagedClusters_ListClusterUserCredentials",
        checks: &[reads::<CredentialResults>],
    },
    Held {
        path: "containerservice/ManagedClustersUpdateTags.json",
        operation: "ManagedClusters_UpdateTags",
        checks: &[],
    },
    Held {
        path: "containerservice/ManagedClustersDelete.json",
        operation: "ManagedClusters_Delete",
        checks: &[],
    },
    Held {
        path: "containerservice/AgentPoolsGet.json",
        operation: "AgentPools_Get",
        checks: &[reads::<AgentPool>],
    },
    Held {
        path: "containerservice/AgentPoolsCreate_Update.json",
        operation: "AgentPools_CreateOrUpdate",
        checks: &[reads::<Identified>, reads::<AgentPool>],
    },
    Held {
        path: "containerservice/AgentPools_Update.json",
        operation: "AgentPools_CreateOrUpdate",
        checks: &[reads::<Identified>, reads::<AgentPool>],
    },
    Held {
        path: "containerservice/AgentPoolsDelete.json",
        operation: "AgentPools_Delete",
        checks: &[],
    },
    Held {
        path: "resources/GetResourceGroups.json",
        operation: "ResourceGroups_Get",
        checks: &[reads::<ResourceGroup>],
    },
    Held {
        path: "resources/CreateResourceGroup.json",
        operation: "ResourceGroups_CreateOrUpdate",
        checks: &[],
    },
    Held {
        path: "network/VirtualNetworkGetWithSubnetDelegation.json",
        operation: "VirtualNetworks_Get",
        checks: &[reads::<VirtualNetwork>],
    },
    Held {
        path: "network/VirtualNetworkGetWithServiceAssociationLink.json",
        operation: "VirtualNetworks_Get",
        checks: &[reads::<VirtualNetwork>],
    },
    Held {
        path: "network/SubnetGet.json",
        operation: "Subnets_Get",
        checks: &[reads::<Subnet>],
    },
    Held {
        path: "compute/VirtualMachineScaleSet_List_MinimumSet_Gen.json",
        operation: "VirtualMachineScaleSets_List",
        checks: &[reads::<Page<ScaleSet>>],
    },
    Held {
        path: "compute/VirtualMachineScaleSetVM_List_MinimumSet_Gen.json",
        operation: "VirtualMachineScaleSetVMs_List",
        checks: &[reads::<Page<ScaleSetVm>>],
    },
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rest-examples")
}

fn example(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).expect(path);
    serde_json::from_str(&text).expect(path)
}

/// The bodies of an example's answers, by HTTP status.
fn bodies(example: &Value) -> Vec<(String, Value)> {
    let responses = example
        .get("responses")
        .and_then(Value::as_object)
        .expect("an example has responses");
    responses
        .iter()
        .filter_map(|(status, r)| Some((status.clone(), r.get("body")?.clone())))
        .collect()
}

/// The `.json` files under `dir`, relative to the examples' root, with `/` between parts.
fn files(dir: &Path, into: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, into);
        } else if path.extension().is_some_and(|e| e == "json") {
            let rel = path.strip_prefix(root()).unwrap();
            into.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn every_held_example_is_checked() {
    let mut found = Vec::new();
    files(&root(), &mut found);
    found.sort();
    let listed: Vec<&str> = HELD.iter().map(|h| h.path).collect();
    let unchecked: Vec<&String> = found
        .iter()
        .filter(|f| !listed.contains(&f.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "held examples that no check reads: {unchecked:?}"
    );
    let missing: Vec<&&str> = listed
        .iter()
        .filter(|l| !found.iter().any(|f| f == **l))
        .collect();
    assert!(missing.is_empty(), "listed examples not held: {missing:?}");
}

#[test]
fn every_answer_body_of_an_operation_read_reads_as_the_provider_s_type() {
    let mut failures = Vec::new();
    for held in HELD {
        let ex = example(held.path);
        if let Some(op) = ex.get("operationId").and_then(Value::as_str) {
            assert_eq!(op, held.operation, "{}", held.path);
        }
        let answers = bodies(&ex);
        if !held.checks.is_empty() {
            assert!(!answers.is_empty(), "{} shows no answer body", held.path);
        }
        for (status, body) in answers {
            for check in held.checks {
                if let Err(e) = check(held.operation, body.clone()) {
                    failures.push(format!("{} ({status}): {e}", held.path));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_examples_read_as_the_provider_understands_them() {
    let get = example("containerservice/AgentPoolsGet.json");
    let pool: AgentPool = read_answer("AgentPools_Get", get["responses"]["200"]["body"].clone())
        .expect("AgentPoolsGet reads");
    assert_eq!(pool.properties.count, 3);
    assert_eq!(pool.etag(), Some("ebwiyfneowv"));
    assert_eq!(pool.properties.autoscaling("AgentPools_Get").unwrap(), None);

    let update = example("containerservice/AgentPools_Update.json");
    let pool: AgentPool = read_answer(
        "AgentPools_CreateOrUpdate",
        update["responses"]["200"]["body"].clone(),
    )
    .unwrap();
    assert_eq!(
        pool.properties
            .autoscaling("AgentPools_CreateOrUpdate")
            .unwrap(),
        Some((2, 2))
    );

    let cluster = example("containerservice/ManagedClustersGet.json");
    let c: ManagedCluster = read_answer(
        "ManagedClusters_Get",
        cluster["responses"]["200"]["body"].clone(),
    )
    .unwrap();
    assert_eq!(
        c.properties.node_resource_group,
        "MC_rg1_clustername1_location1"
    );
    assert_eq!(c.etag.as_deref(), Some("beywbwei"));
    assert_eq!(c.properties.agent_pool_profiles[0].name, "nodepool1");
}

#[test]
fn an_agent_pool_lacking_a_field_a_decision_needs_is_refused_naming_it() {
    // Autoscaling on, no minCount: refused, never read as 0.
    let update = example("containerservice/AgentPools_Update.json");
    let mut body = update["responses"]["200"]["body"].clone();
    body["properties"]
        .as_object_mut()
        .unwrap()
        .remove("minCount");
    let pool: AgentPool = read_answer("AgentPools_Get", body).unwrap();
    let e = pool.properties.autoscaling("AgentPools_Get").unwrap_err();
    assert!(e.to_string().contains("properties.minCount"), "{e}");
    assert!(e.to_string().contains("AgentPools_Get"), "{e}");

    // No mode (as Microsoft's own Get example): refused where the mode is compared, never read
    // as User.
    let get = example("containerservice/AgentPoolsGet.json");
    let pool: AgentPool =
        read_answer("AgentPools_Get", get["responses"]["200"]["body"].clone()).unwrap();
    let e = pool.properties.mode("AgentPools_Get").unwrap_err();
    assert!(e.to_string().contains("properties.mode"), "{e}");

    // No count: refused by the read itself.
    let mut body = get["responses"]["200"]["body"].clone();
    body["properties"].as_object_mut().unwrap().remove("count");
    let e = read_answer::<AgentPool>("AgentPools_Get", body).unwrap_err();
    assert!(e.to_string().contains("properties.count"), "{e}");
}

#[test]
fn a_managed_cluster_lacking_its_state_is_refused_naming_it() {
    let cluster = example("containerservice/ManagedClustersGet.json");
    let mut body = cluster["responses"]["200"]["body"].clone();
    body["properties"]
        .as_object_mut()
        .unwrap()
        .remove("provisioningState");
    let e = read_answer::<ManagedCluster>("ManagedClusters_Get", body).unwrap_err();
    assert!(
        e.to_string().contains("properties.provisioningState"),
        "{e}"
    );
}
