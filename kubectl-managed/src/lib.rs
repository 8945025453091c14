//! `kubectl managed`: the command-line side of the managed-Kubernetes providers. Today one
//! command, `migrate`, which moves a Cluster from CAPA, CAPZ, CAPG or CAPOCI onto ours without
//! recreating anything in the cloud (see the crate's README).

pub mod kube_api;
pub mod migrate;
pub mod peer;
pub mod record;
pub mod report;
