//! TagResource, UntagResource and ListTagsForResource on cluster, nodegroup, add-on, access entry
//! and identity provider config ARNs.

use serde::Deserialize;
use serde_json::{Value, json};

use super::Eks;
use super::api::Call;
use super::error::EksError;
use super::state::{State, Tags};

#[derive(Debug, Default, Deserialize)]
struct TagRequest {
    tags: Option<Tags>,
}

/// The tags of the resource with `arn`.
fn tags_of<'a>(st: &'a mut State, arn: &str) -> Option<&'a mut Tags> {
    // arn:aws:eks:<region>:<account>:<kind>/<cluster>/...
    let resource = arn.splitn(6, ':').nth(5)?;
    let mut parts = resource.split('/');
    let kind = parts.next()?;
    let cluster = st.clusters.get_mut(parts.next()?)?;
    match kind {
        "cluster" => (cluster.arn == arn).then_some(&mut cluster.tags),
        "nodegroup" => cluster
            .nodegroups
            .values_mut()
            .find(|n| n.arn == arn)
            .map(|n| &mut n.tags),
        "addon" => cluster
            .addons
            .values_mut()
            .find(|a| a.arn == arn)
            .map(|a| &mut a.tags),
        "access-entry" => cluster
            .access_entries
            .values_mut()
            .find(|e| e.arn == arn)
            .map(|e| &mut e.tags),
        "identityproviderconfig" => cluster
            .idps
            .values_mut()
            .find(|i| i.arn == arn)
            .map(|i| &mut i.tags),
        _ => None,
    }
}

fn check_arn(arn: &str) -> Result<(), EksError> {
    if !arn.starts_with("arn:aws:eks:") || arn.split(':').count() < 6 {
        return Err(EksError::bad_request(format!(
            "{arn} is not a valid EKS resource ARN"
        )));
    }
    Ok(())
}

fn not_found(arn: &str) -> EksError {
    EksError::tag_not_found(format!("Resource not found: {arn}"))
}

impl Eks {
    pub(super) fn list_tags(&self, arn: &str) -> Result<Value, EksError> {
        check_arn(arn)?;
        let mut st = self.lock();
        let tags = tags_of(&mut st, arn).ok_or_else(|| not_found(arn))?;
        Ok(json!({"tags": tags}))
    }

    pub(super) fn tag_resource(&self, arn: &str, call: &Call) -> Result<Value, EksError> {
        check_arn(arn)?;
        let req: TagRequest = call
            .parse()
            .map_err(|e| EksError::bad_request(e.message.clone()))?;
        let new = req.tags.unwrap_or_default();
        if new.is_empty() {
            return Err(EksError::bad_request("tags must contain at least one tag"));
        }
        if let Some(k) = new
            .keys()
            .find(|k| k.to_ascii_lowercase().starts_with("aws:"))
        {
            return Err(EksError::bad_request(format!(
                "Tag keys starting with 'aws:' are reserved: {k}"
            )));
        }
        if let Some(k) = new.keys().find(|k| k.is_empty() || k.chars().count() > 128) {
            return Err(EksError::bad_request(format!(
                "Tag key '{k}' must be 1-128 characters"
            )));
        }
        if let Some(v) = new.values().find(|v| v.chars().count() > 256) {
            return Err(EksError::bad_request(format!(
                "Tag value '{v}' is longer than 256 characters"
            )));
        }
        let mut st = self.lock();
        let tags = tags_of(&mut st, arn).ok_or_else(|| not_found(arn))?;
        let mut merged = tags.clone();
        merged.extend(new);
        if merged.len() > 50 {
            return Err(EksError::bad_request("A resource can have at most 50 tags"));
        }
        *tags = merged;
        Ok(json!({}))
    }

    pub(super) fn untag_resource(&self, arn: &str, call: &Call) -> Result<Value, EksError> {
        check_arn(arn)?;
        let keys = call.params("tagKeys");
        if keys.is_empty() {
            return Err(EksError::bad_request(
                "tagKeys must contain at least one key",
            ));
        }
        let mut st = self.lock();
        let tags = tags_of(&mut st, arn).ok_or_else(|| not_found(arn))?;
        for k in keys {
            tags.remove(&k);
        }
        Ok(json!({}))
    }
}
