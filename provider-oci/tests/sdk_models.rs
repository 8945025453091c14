//! Our types of OCI's answers (`provider_oci::client::answers`) held to Oracle's own SDK models:
//! the fixtures under `tests/sdk-models/` are generated from the Go SDK's model files
//! (`generate.py`, see the README there). Every full fixture (every field the SDK declares)
//! reads; every minimal one (only the SDK's mandatory fields) reads once the fields we need
//! beyond the SDK are added, and without each of those the answer is refused with a message
//! naming it. A fixture no model here checks fails the walk of the folder.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use provider_oci::client::answers::{
    AvailabilityDomain, Cluster, ClusterOptions, ClusterSummary, InternetGateway, NatGateway, Node,
    NodePool, NodePoolOptions, NodePoolSummary, RouteTable, SecurityList, Service, ServiceGateway,
    Subnet, Vcn, WorkRequest, WorkRequestError,
};
use provider_runtime::{CloudError, read_answer};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads `body` as one of our types for `operation`.
type Reader = fn(&str, Value) -> Result<(), CloudError>;

fn reader<T: DeserializeOwned>(operation: &str, body: Value) -> Result<(), CloudError> {
    read_answer::<T>(operation, body).map(|_| ())
}

/// One SDK model and our type of it.
struct Model {
    /// `<package>/<Model>`, the fixtures' stem.
    fixture: &'static str,
    /// The operation whose answer (or list item) it is.
    operation: &'static str,
    /// Reads it as our type.
    read: Reader,
    /// The fields (paths in serde's form) our type needs that the SDK does not mark mandatory.
    beyond: &'static [&'static str],
}

const MODELS: &[Model] = &[
    Model {
        fixture: "containerengine/Cluster",
        operation: "GetCluster",
        read: reader::<Cluster>,
        beyond: &[
            "id",
            "lifecycleState",
            "kubernetesVersion",
            "type",
            "endpointConfig",
            "endpointConfig.isPublicIpEnabled",
        ],
    },
    Model {
        fixture: "containerengine/ClusterSummary",
        operation: "ListClusters",
        read: reader::<ClusterSummary>,
        beyond: &["id", "name", "lifecycleState"],
    },
    Model {
        fixture: "containerengine/ClusterOptions",
        operation: "GetClusterOptions",
        read: reader::<ClusterOptions>,
        beyond: &["kubernetesVersions"],
    },
    Model {
        fixture: "containerengine/NodePool",
        operation: "GetNodePool",
        read: reader::<NodePool>,
        beyond: &[
            "id",
            "lifecycleState",
            "nodeShape",
            "nodeConfigDetails",
            "nodeConfigDetails.size",
            "nodes[0].id",
        ],
    },
    Model {
        fixture: "containerengine/NodePoolSummary",
        operation: "ListNodePools",
        read: reader::<NodePoolSummary>,
        beyond: &["id", "name", "lifecycleState"],
    },
    Model {
        fixture: "containerengine/NodePoolOptions",
        operation: "GetNodePoolOptions",
        read: reader::<NodePoolOptions>,
        beyond: &["kubernetesVersions", "sources[0].sourceType"],
    },
    Model {
        fixture: "containerengine/Node",
        operation: "GetNodePool",
        read: reader::<Node>,
        beyond: &["id"],
    },
    Model {
        fixture: "containerengine/WorkRequest",
        operation: "GetWorkRequest",
        read: reader::<WorkRequest>,
        beyond: &["status"],
    },
    Model {
        fixture: "containerengine/WorkRequestError",
        operation: "ListWorkRequestErrors",
        read: reader::<WorkRequestError>,
        beyond: &[],
    },
    Model {
        fixture: "core/Vcn",
        operation: "GetVcn",
        read: reader::<Vcn>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/Subnet",
        operation: "GetSubnet",
        read: reader::<Subnet>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/InternetGateway",
        operation: "ListInternetGateways",
        read: reader::<InternetGateway>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/NatGateway",
        operation: "ListNatGateways",
        read: reader::<NatGateway>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/ServiceGateway",
        operation: "ListServiceGateways",
        read: reader::<ServiceGateway>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/Service",
        operation: "ListServices",
        read: reader::<Service>,
        beyond: &[],
    },
    Model {
        fixture: "core/RouteTable",
        operation: "ListRouteTables",
        read: reader::<RouteTable>,
        beyond: &["displayName"],
    },
    Model {
        fixture: "core/SecurityList",
        operation: "ListSecurityLists",
        read: reader::<SecurityList>,
        beyond: &[],
    },
    Model {
        fixture: "identity/AvailabilityDomain",
        operation: "ListAvailabilityDomains",
        read: reader::<AvailabilityDomain>,
        beyond: &[],
    },
];

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk-models")
}

fn fixture(model: &Model, kind: &str) -> Value {
    let path = folder().join(format!("{}.{kind}.json", model.fixture));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One step of a field's path: a key, or a key then an index (`nodes[0]`).
fn steps(path: &str) -> Vec<(String, Option<usize>)> {
    path.split('.')
        .map(|step| match step.split_once('[') {
            Some((key, index)) => (
                key.to_string(),
                Some(index.trim_end_matches(']').parse().unwrap()),
            ),
            None => (step.to_string(), None),
        })
        .collect()
}

/// The value at `path` in `v`, if there is one.
fn at<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    steps(path).iter().try_fold(v, |v, (key, index)| {
        let v = v.get(key)?;
        match index {
            Some(i) => v.get(i),
            None => Some(v),
        }
    })
}

/// `v` with the field at `path` removed.
fn without(mut v: Value, path: &str) -> Value {
    let steps = steps(path);
    let (last, parents) = steps.split_last().unwrap();
    let mut cursor = &mut v;
    for (key, index) in parents {
        cursor = &mut cursor[key.as_str()];
        if let Some(i) = index {
            cursor = &mut cursor[*i];
        }
    }
    assert!(last.1.is_none(), "{path}: the last step is a field");
    cursor.as_object_mut().unwrap().remove(&last.0);
    v
}

/// `v` with `path` set to `value`, making the objects on the way (and the arrays, of one).
fn with(mut v: Value, path: &str, value: Value) -> Value {
    let steps = steps(path);
    let (last, parents) = steps.split_last().unwrap();
    let mut cursor = &mut v;
    for (key, index) in parents {
        let object = cursor.as_object_mut().unwrap();
        cursor = object.entry(key.as_str()).or_insert_with(|| match index {
            Some(_) => Value::Array(vec![serde_json::json!({})]),
            None => serde_json::json!({}),
        });
        if let Some(i) = index {
            cursor = &mut cursor[*i];
        }
    }
    cursor
        .as_object_mut()
        .unwrap()
        .insert(last.0.clone(), value);
    v
}

#[test]
fn every_full_fixture_reads() {
    for model in MODELS {
        let read = (model.read)(model.operation, fixture(model, "full"));
        assert_eq!(read, Ok(()), "{}", model.fixture);
    }
}

#[test]
fn every_minimal_fixture_reads_with_the_fields_needed_beyond_the_sdk() {
    for model in MODELS {
        let full = fixture(model, "full");
        let mut minimal = fixture(model, "minimal");
        for path in model.beyond {
            // A field inside one the minimal answer leaves out is added with its parent.
            if at(&minimal, path).is_none() {
                let value = at(&full, path)
                    .unwrap_or_else(|| panic!("{}: the full fixture has no {path}", model.fixture));
                minimal = with(minimal, path, value.clone());
            }
        }
        let read = (model.read)(model.operation, minimal);
        assert_eq!(read, Ok(()), "{}", model.fixture);
    }
}

#[test]
fn an_answer_without_a_field_needed_beyond_the_sdk_is_refused_naming_it() {
    for model in MODELS {
        for path in model.beyond {
            let answer = without(fixture(model, "full"), path);
            assert_eq!(
                (model.read)(model.operation, answer),
                Err(CloudError::Transient(format!(
                    "{}: the answer has no `{path}`",
                    model.operation
                ))),
                "{}",
                model.fixture
            );
        }
    }
}

#[test]
fn an_answer_without_a_field_the_sdk_marks_mandatory_is_refused_naming_it() {
    for model in MODELS {
        let minimal = fixture(model, "minimal");
        let Some(fields) = minimal.as_object() else {
            continue;
        };
        for field in fields.keys() {
            let answer = without(fixture(model, "full"), field);
            assert_eq!(
                (model.read)(model.operation, answer),
                Err(CloudError::Transient(format!(
                    "{}: the answer has no `{field}`",
                    model.operation
                ))),
                "{}",
                model.fixture
            );
        }
    }
}

#[test]
fn every_fixture_in_the_folder_is_checked() {
    let checked: BTreeSet<String> = MODELS
        .iter()
        .flat_map(|m| ["full", "minimal"].map(|kind| format!("{}.{kind}.json", m.fixture)))
        .collect();
    let mut found = BTreeSet::new();
    for package in std::fs::read_dir(folder()).unwrap() {
        let package = package.unwrap().path();
        if !package.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&package).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "json") {
                let relative = file.strip_prefix(folder()).unwrap();
                found.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let unchecked: Vec<&String> = found.difference(&checked).collect();
    assert!(
        unchecked.is_empty(),
        "fixtures no model checks: {unchecked:?}"
    );
    let missing: Vec<&String> = checked.difference(&found).collect();
    assert!(missing.is_empty(), "fixtures missing: {missing:?}");
}
