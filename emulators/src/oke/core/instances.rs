//! The compute instances behind node pools, read only: ListInstances and GetInstance.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::oke::Oke;
use crate::oke::api::{Answer, Req};
use crate::oke::error::OciError;
use crate::oke::state::State;

impl Oke {
    /// The compute instances of node pools, as `ListInstances` and `GetInstance` show them.
    pub(in crate::oke) fn instance_bodies(&self, st: &State) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for p in st.pools.values() {
            for (i, n) in p.nodes.iter().enumerate() {
                let cluster_short: String = p
                    .cluster
                    .chars()
                    .rev()
                    .take(11)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect();
                let pool_short: String =
                    p.id.chars()
                        .rev()
                        .take(11)
                        .collect::<String>()
                        .chars()
                        .rev()
                        .collect();
                out.insert(
                    n.id.clone(),
                    json!({
                        "id": n.id,
                        "compartmentId": p.compartment,
                        "availabilityDomain": n.availability_domain,
                        "faultDomain": n.fault_domain,
                        "displayName": format!("oke-c{cluster_short}-n{pool_short}-{i}"),
                        "shape": p.shape,
                        "shapeConfig": p.shape_config,
                        "region": self.config.region,
                        "lifecycleState": if n.leaving_at.is_some() { "TERMINATING" } else { "RUNNING" },
                        "timeCreated": n.time_created,
                        "freeformTags": p.node_config["freeformTags"].as_object().cloned().unwrap_or_default(),
                        "definedTags": {},
                        "metadata": { "oke-cluster-id": p.cluster, "oke-nodepool-id": p.id },
                        "sourceDetails": { "sourceType": "image", "imageId": p.source["imageId"] },
                    }),
                );
            }
        }
        out
    }

    /// `GET /20160918/instances?compartmentId=…`.
    pub(in crate::oke) fn list_instances(&self, req: &Req) -> Result<Answer, OciError> {
        let compartment = self.listed_compartment(req)?;
        let st = self.lock();
        let items: Vec<Value> = self
            .instance_bodies(&st)
            .into_values()
            .filter(|i| i["compartmentId"] == compartment)
            .filter(|i| {
                req.passes(
                    "lifecycleState",
                    i["lifecycleState"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        drop(st);
        req.page(items)
    }

    /// `GET /20160918/instances/<id>`.
    pub(in crate::oke) fn get_instance(&self, id: &str) -> Result<Answer, OciError> {
        let st = self.lock();
        self.instance_bodies(&st)
            .remove(id)
            .map(|b| Answer::json(200, b))
            .ok_or_else(|| OciError::not_found(format!("instance {id}")))
    }
}
