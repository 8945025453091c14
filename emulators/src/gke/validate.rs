//! GKE's and Compute Engine's input rules, and the enum spellings Google's clients send (GKE's
//! Rust client sends enums as numbers, `$alt=json;enum-encoding=int`; they are stored by name).

use std::net::Ipv4Addr;

use serde_json::Value;

use super::error::GoogleError;

/// Cluster and node-pool names: lowercase letters, digits and hyphens, starting with a letter,
/// ending with a letter or digit, at most 40 characters.
pub fn gke_name(what: &str, name: &str) -> Result<(), GoogleError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(GoogleError::invalid(format!(
            "Invalid value for field \"{what}.name\": {name:?}. The name must be 1 to 40 \
             characters long, consist of lowercase letters, digits and hyphens, start with a \
             letter and end with a letter or digit."
        )))
    }
}

/// Compute resource names (RFC 1035, at most 63 characters).
pub fn compute_name(name: &str) -> Result<(), GoogleError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(GoogleError::invalid(format!(
            "Invalid value for field 'resource.name': '{name}'. Must be a match of regex \
             '(?:[a-z](?:[-a-z0-9]{{0,61}}[a-z0-9])?)'"
        )))
    }
}

/// Google Cloud resource labels: at most 64; keys 1–63 characters of lowercase letters, digits,
/// `_` and `-`, starting with a letter; values at most 63 of the same.
pub fn labels(field: &str, labels: &Value) -> Result<(), GoogleError> {
    let Some(map) = labels.as_object() else {
        return Ok(());
    };
    if map.len() > 64 {
        return Err(GoogleError::invalid(format!(
            "Invalid value for field \"{field}\": at most 64 labels are allowed, got {}.",
            map.len()
        )));
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    for (k, v) in map {
        let value = v.as_str().unwrap_or_default();
        let key_ok = !k.is_empty()
            && k.len() <= 63
            && k.starts_with(|c: char| c.is_ascii_lowercase())
            && k.chars().all(allowed);
        let value_ok = value.len() <= 63 && value.chars().all(allowed);
        if !key_ok || !value_ok {
            return Err(GoogleError::invalid(format!(
                "Invalid value for field \"{field}\": label {k:?}={value:?} is not valid. Keys \
                 and values may contain only lowercase letters, digits, underscores and \
                 hyphens, at most 63 characters; keys must start with a lowercase letter."
            )));
        }
    }
    Ok(())
}

/// A location that looks like a region (`us-central1`) or a zone (`us-central1-a`).
pub fn location(location: &str) -> Result<(), GoogleError> {
    let region = super::state::region_of(location);
    let ok = region.split_once('-').is_some_and(|(geo, rest)| {
        !geo.is_empty()
            && geo.chars().all(|c| c.is_ascii_lowercase())
            && rest.ends_with(|c: char| c.is_ascii_digit())
            && rest
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    if ok {
        Ok(())
    } else {
        Err(GoogleError::invalid(format!(
            "Location \"{location}\" is not a valid Google Cloud region or zone."
        )))
    }
}

/// An IPv4 CIDR block: `(network, prefix)`, host bits zero.
pub fn cidr(field: &str, text: &str) -> Result<(u32, u8), GoogleError> {
    let bad = || {
        GoogleError::invalid(format!(
            "Invalid value for field '{field}': '{text}'. Invalid IPCidrRange: {text}."
        ))
    };
    let (ip, prefix) = text.split_once('/').ok_or_else(bad)?;
    let ip: Ipv4Addr = ip.parse().map_err(|_| bad())?;
    let prefix: u8 = prefix.parse().map_err(|_| bad())?;
    if !(8..=29).contains(&prefix) {
        return Err(bad());
    }
    let base = u32::from(ip);
    let mask = u32::MAX << (32 - prefix);
    if base & !mask != 0 {
        return Err(bad());
    }
    Ok((base, prefix))
}

/// Whether two CIDR blocks overlap.
pub fn overlaps(a: (u32, u8), b: (u32, u8)) -> bool {
    let prefix = a.1.min(b.1);
    let mask = u32::MAX << (32 - prefix);
    a.0 & mask == b.0 & mask
}

/// Rewrites an enum given as a number into its name, by `names[number]` (`None` entries are
/// numbers the enum skips).
fn name_enum(value: &mut Value, names: &[Option<&str>]) {
    if let Some(n) = value.as_u64()
        && let Some(Some(name)) = names.get(n as usize)
    {
        *value = Value::String((*name).to_string());
    }
}

fn at<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, key| v.get_mut(*key))
}

const EFFECT: &[Option<&str>] = &[
    Some("EFFECT_UNSPECIFIED"),
    Some("NO_SCHEDULE"),
    Some("PREFER_NO_SCHEDULE"),
    Some("NO_EXECUTE"),
];
const CHANNEL: &[Option<&str>] = &[
    Some("UNSPECIFIED"),
    Some("RAPID"),
    Some("REGULAR"),
    Some("STABLE"),
    Some("EXTENDED"),
];
const ENCRYPTION_STATE: &[Option<&str>] = &[
    Some("UNKNOWN"),
    Some("ENCRYPTED"),
    Some("DECRYPTED"),
    Some("ALL_OBJECTS_ENCRYPTION_ENABLED"),
];
const LOGGING_COMPONENT: &[Option<&str>] = &[
    Some("COMPONENT_UNSPECIFIED"),
    Some("SYSTEM_COMPONENTS"),
    Some("WORKLOADS"),
    Some("APISERVER"),
    Some("SCHEDULER"),
    Some("CONTROLLER_MANAGER"),
    None,
    Some("KCP_SSHD"),
    Some("KCP_CONNECTION"),
    Some("KCP_HPA"),
    Some("KCP_VPA"),
];
const STRATEGY: &[Option<&str>] = &[
    Some("NODE_POOL_UPDATE_STRATEGY_UNSPECIFIED"),
    None,
    Some("BLUE_GREEN"),
    Some("SURGE"),
    None,
    Some("SHORT_LIVED"),
];
const LOCATION_POLICY: &[Option<&str>] = &[
    Some("LOCATION_POLICY_UNSPECIFIED"),
    Some("BALANCED"),
    Some("ANY"),
];
const STACK_TYPE: &[Option<&str>] = &[
    Some("STACK_TYPE_UNSPECIFIED"),
    Some("IPV4"),
    Some("IPV4_IPV6"),
];
const WORKLOAD_METADATA: &[Option<&str>] = &[
    Some("MODE_UNSPECIFIED"),
    Some("GCE_METADATA"),
    Some("GKE_METADATA"),
];

/// Names the enums of a `NodeConfig`.
pub fn node_config_enums(config: &mut Value) {
    if let Some(taints) = config.get_mut("taints").and_then(Value::as_array_mut) {
        for t in taints {
            if let Some(e) = t.get_mut("effect") {
                name_enum(e, EFFECT);
            }
        }
    }
    if let Some(mode) = at(config, &["workloadMetadataConfig", "mode"]) {
        name_enum(mode, WORKLOAD_METADATA);
    }
}

/// Names the enums of a `NodePool`.
pub fn pool_enums(pool: &mut Value) {
    if let Some(config) = pool.get_mut("config") {
        node_config_enums(config);
    }
    if let Some(s) = at(pool, &["upgradeSettings", "strategy"]) {
        name_enum(s, STRATEGY);
    }
    if let Some(p) = at(pool, &["autoscaling", "locationPolicy"]) {
        name_enum(p, LOCATION_POLICY);
    }
}

/// Names the enums of a `Cluster` (and of its node pools).
pub fn cluster_enums(cluster: &mut Value) {
    if let Some(c) = at(cluster, &["releaseChannel", "channel"]) {
        name_enum(c, CHANNEL);
    }
    if let Some(s) = at(cluster, &["databaseEncryption", "state"]) {
        name_enum(s, ENCRYPTION_STATE);
    }
    if let Some(components) = at(
        cluster,
        &["loggingConfig", "componentConfig", "enableComponents"],
    )
    .and_then(Value::as_array_mut)
    {
        for c in components {
            name_enum(c, LOGGING_COMPONENT);
        }
    }
    if let Some(s) = at(cluster, &["ipAllocationPolicy", "stackType"]) {
        name_enum(s, STACK_TYPE);
    }
    if let Some(config) = cluster.get_mut("nodeConfig") {
        node_config_enums(config);
    }
    if let Some(pools) = cluster.get_mut("nodePools").and_then(Value::as_array_mut) {
        for p in pools {
            pool_enums(p);
        }
    }
}

/// Names the enums of one `ClusterUpdate` field's value (`desiredX`).
pub fn update_enums(field: &str, value: &mut Value) {
    match field {
        "desiredReleaseChannel" => {
            if let Some(c) = value.get_mut("channel") {
                name_enum(c, CHANNEL);
            }
        }
        "desiredDatabaseEncryption" => {
            if let Some(s) = value.get_mut("state") {
                name_enum(s, ENCRYPTION_STATE);
            }
        }
        "desiredLoggingConfig" => {
            if let Some(components) =
                at(value, &["componentConfig", "enableComponents"]).and_then(Value::as_array_mut)
            {
                for c in components {
                    name_enum(c, LOGGING_COMPONENT);
                }
            }
        }
        _ => {}
    }
}

/// A string field, `""` when absent or null.
pub fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// An integer field that may come as a JSON string (int64) or number; 0 when absent.
pub fn int_of(value: &Value, key: &str) -> i64 {
    match value.get(key) {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

/// The last path segment of a resource URL or path (`…/networks/n` → `n`).
pub fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_follow_gke_rules() {
        assert!(gke_name("cluster", "capi-demo-1").is_ok());
        for bad in ["", "Capi", "1abc", "abc-", "a_b", &"a".repeat(41)] {
            let e = gke_name("cluster", bad).unwrap_err();
            assert_eq!(e.status, "INVALID_ARGUMENT");
            assert!(e.message.contains("cluster.name"), "{}", e.message);
        }
        assert!(compute_name(&"a".repeat(63)).is_ok());
        assert!(compute_name(&"a".repeat(64)).is_err());
    }

    #[test]
    fn labels_cidrs_and_locations() {
        assert!(
            labels(
                "resourceLabels",
                &json!({"capi-managed-gke": "default_demo"})
            )
            .is_ok()
        );
        assert!(labels("resourceLabels", &json!({"Team": "a"})).is_err());
        assert!(labels("resourceLabels", &json!({"team": "A B"})).is_err());
        assert_eq!(cidr("f", "10.0.0.0/16").unwrap().1, 16);
        assert!(cidr("f", "10.0.0.1/16").is_err());
        assert!(cidr("f", "10.0.0.0/30").is_err());
        assert!(overlaps(
            cidr("f", "10.0.0.0/16").unwrap(),
            cidr("f", "10.0.8.0/24").unwrap()
        ));
        assert!(!overlaps(
            cidr("f", "10.0.0.0/16").unwrap(),
            cidr("f", "10.1.0.0/16").unwrap()
        ));
        assert!(location("us-central1").is_ok());
        assert!(location("us-central1-a").is_ok());
        assert!(location("mars").is_err());
    }

    #[test]
    fn numbered_enums_get_their_names() {
        let mut c = json!({
            "releaseChannel": {"channel": 2},
            "loggingConfig": {"componentConfig": {"enableComponents": [1, 3]}},
            "nodePools": [{"config": {"taints": [{"key": "k", "effect": 3}]}, "upgradeSettings": {"strategy": 3}}]
        });
        cluster_enums(&mut c);
        assert_eq!(c["releaseChannel"]["channel"], "REGULAR");
        assert_eq!(
            c["loggingConfig"]["componentConfig"]["enableComponents"],
            json!(["SYSTEM_COMPONENTS", "APISERVER"])
        );
        assert_eq!(
            c["nodePools"][0]["config"]["taints"][0]["effect"],
            "NO_EXECUTE"
        );
        assert_eq!(c["nodePools"][0]["upgradeSettings"]["strategy"], "SURGE");
    }
}
