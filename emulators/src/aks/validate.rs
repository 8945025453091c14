//! AKS's and ARM's rules on names and request bodies, each refusal in the service's words and
//! naming the field.

use serde_json::Value;

use super::arm::{ArmError, str_of};
use super::catalog;

/// A managed cluster's name: 1–63 letters, digits, `-` and `_`, starting and ending with a
/// letter or digit (the specification's `resourceName` pattern).
pub fn cluster_name(name: &str) -> Result<(), ArmError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(ArmError::bad_request(
            "InvalidResourceName",
            format!(
                "Resource name '{name}' is invalid. A managed cluster name can be 1 to 63 characters long, contain letters, numbers, underscores and hyphens, and must start and end with a letter or number."
            ),
        ))
    }
}

/// An agent pool's name: 1–12 lower-case letters and digits, starting with a letter.
pub fn pool_name(name: &str) -> Result<(), ArmError> {
    let ok = !name.is_empty()
        && name.len() <= 12
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if ok {
        Ok(())
    } else {
        Err(ArmError::invalid_parameter(
            "agentPoolProfile.name",
            format!(
                "Agent pool name '{name}' is invalid: it must start with a lowercase letter, contain only lowercase letters and numbers, and be at most 12 characters long."
            ),
        ))
    }
}

/// `properties.dnsPrefix`: 1–54 letters, digits and `-`, starting and ending with a letter or
/// digit.
pub fn dns_prefix(prefix: &str) -> Result<(), ArmError> {
    let ok = !prefix.is_empty()
        && prefix.len() <= 54
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
        && prefix.starts_with(|c: char| c.is_ascii_alphanumeric())
        && prefix.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(ArmError::bad_request(
            "InvalidDnsPrefix",
            format!(
                "Invalid value '{prefix}' for properties.dnsPrefix: DNS prefix must contain between 1 and 54 characters, can contain only letters, numbers and hyphens, and must start and end with a letter or number."
            ),
        ))
    }
}

/// The offered version `given` means (`""`: the default), for `field`.
pub fn version(given: &str, field: &str, code: &str) -> Result<&'static str, ArmError> {
    if given.is_empty() {
        return Ok(catalog::DEFAULT_VERSION);
    }
    catalog::resolve(given).ok_or_else(|| {
        ArmError::bad_request(
            code,
            format!("Version {given} ({field}) is not supported in this region. Please use [az aks get-versions] command to get the supported version list in this region. Supported versions: {}.", catalog::VERSIONS.join(", ")),
        )
    })
}

/// `orchestratorVersion` of a pool against its control plane's version.
pub fn pool_not_above(pool: &str, pool_version: &str, control_plane: &str) -> Result<(), ArmError> {
    let (p, c) = (catalog::parse(pool_version), catalog::parse(control_plane));
    let above = match (p, c) {
        (Some((a, b, x)), Some((d, e, y))) => (a, b) > (d, e) || ((a, b) == (d, e) && x > y),
        _ => false,
    };
    if above {
        return Err(ArmError::bad_request(
            "NodePoolMcVersionIncompatible",
            format!(
                "Node pool {pool} version {pool_version} and control plane version {control_plane} are incompatible: a node pool cannot run a newer Kubernetes version than its control plane."
            ),
        ));
    }
    Ok(())
}

/// A node taint `key=value:Effect` (or `key:Effect`).
fn taint(t: &str) -> bool {
    let Some((kv, effect)) = t.rsplit_once(':') else {
        return false;
    };
    let key = kv.split('=').next().unwrap_or_default();
    !key.is_empty() && matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
}

/// An agent pool's properties at creation or update (`field`: where it sits in the request).
pub fn pool_properties(field: &str, props: &Value) -> Result<(), ArmError> {
    let count = props.get("count").and_then(Value::as_i64).unwrap_or(1);
    let system = str_of(props, "mode").eq_ignore_ascii_case("System");
    if !(0..=1000).contains(&count) || (system && count < 1) {
        return Err(ArmError::invalid_parameter(
            &format!("{field}.count"),
            format!(
                "The count {count} is out of range: it must be between {} and 1000.",
                u8::from(system)
            ),
        ));
    }
    let size = match str_of(props, "vmSize") {
        "" => catalog::DEFAULT_VM_SIZE,
        s => s,
    };
    let Some((cpus, memory)) = catalog::vm_size(size) else {
        return Err(ArmError::bad_request(
            "VMSizeNotSupported",
            format!(
                "The VM size of {size} ({field}.vmSize) is not supported in this region. Offered sizes: {}.",
                catalog::VM_SIZES
                    .iter()
                    .map(|s| s.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    if system && (cpus < 2 || memory < 4) {
        return Err(ArmError::invalid_parameter(
            &format!("{field}.vmSize"),
            format!(
                "System node pools must use a VM size with at least 2 vCPUs and 4 GiB of memory; {size} has {cpus} and {memory} GiB."
            ),
        ));
    }
    if !matches!(str_of(props, "osType"), "" | "Linux") {
        return Err(ArmError::invalid_parameter(
            &format!("{field}.osType"),
            "Only Linux node pools are emulated.",
        ));
    }
    if !matches!(str_of(props, "mode"), "" | "System" | "User") {
        return Err(ArmError::invalid_parameter(
            &format!("{field}.mode"),
            "mode must be System or User.",
        ));
    }
    for t in props["nodeTaints"].as_array().into_iter().flatten() {
        let t = t.as_str().unwrap_or_default();
        if !taint(t) {
            return Err(ArmError::invalid_parameter(
                &format!("{field}.nodeTaints"),
                format!(
                    "Taint '{t}' is not of the form key=value:NoSchedule|PreferNoSchedule|NoExecute."
                ),
            ));
        }
    }
    for z in props["availabilityZones"].as_array().into_iter().flatten() {
        if !matches!(z.as_str(), Some("1" | "2" | "3")) {
            return Err(ArmError::invalid_parameter(
                &format!("{field}.availabilityZones"),
                format!(
                    "Zone {z} does not exist in this region; zones are \"1\", \"2\" and \"3\"."
                ),
            ));
        }
    }
    if props["enableAutoScaling"] == true {
        let (min, max) = (
            props["minCount"].as_i64().unwrap_or(-1),
            props["maxCount"].as_i64().unwrap_or(-1),
        );
        if min < 0 || max < min.max(1) || max > 1000 {
            return Err(ArmError::invalid_parameter(
                &format!("{field}.minCount"),
                format!(
                    "With enableAutoScaling, minCount and maxCount must be set with 0 <= minCount <= maxCount <= 1000 (maxCount >= 1); got {min} and {max}."
                ),
            ));
        }
        if count < min || count > max {
            return Err(ArmError::invalid_parameter(
                &format!("{field}.count"),
                format!("The count {count} must be within minCount {min} and maxCount {max}."),
            ));
        }
    }
    Ok(())
}

/// The network profile's choices.
pub fn network_profile(np: &Value) -> Result<(), ArmError> {
    let plugin = str_of(np, "networkPlugin");
    if !matches!(plugin, "" | "azure" | "kubenet" | "none") {
        return Err(ArmError::invalid_parameter(
            "properties.networkProfile.networkPlugin",
            format!("'{plugin}' is not one of azure, kubenet, none."),
        ));
    }
    let policy = str_of(np, "networkPolicy");
    if !matches!(policy, "" | "none" | "azure" | "calico" | "cilium") {
        return Err(ArmError::invalid_parameter(
            "properties.networkProfile.networkPolicy",
            format!("'{policy}' is not one of none, azure, calico, cilium."),
        ));
    }
    let dataplane = str_of(np, "networkDataplane");
    if policy == "cilium" && dataplane != "cilium" {
        return Err(ArmError::invalid_parameter(
            "properties.networkProfile.networkPolicy",
            "networkPolicy cilium requires networkDataplane cilium.",
        ));
    }
    if dataplane == "cilium" && plugin != "azure" {
        return Err(ArmError::invalid_parameter(
            "properties.networkProfile.networkDataplane",
            "networkDataplane cilium requires networkPlugin azure.",
        ));
    }
    if plugin == "kubenet" && policy == "azure" {
        return Err(ArmError::invalid_parameter(
            "properties.networkProfile.networkPolicy",
            "networkPolicy azure is not supported with networkPlugin kubenet.",
        ));
    }
    Ok(())
}

/// An IPv4 CIDR `a.b.c.d/n`: its network address and prefix length.
pub fn cidr(text: &str) -> Option<(u32, u32)> {
    let (ip, len) = text.split_once('/')?;
    let len: u32 = len.parse().ok()?;
    let ip: std::net::Ipv4Addr = ip.parse().ok()?;
    (len <= 32).then(|| (u32::from(ip), len))
}

/// Whether CIDR `inner` lies inside `outer`.
pub fn cidr_within(inner: &str, outer: &str) -> bool {
    match (cidr(inner), cidr(outer)) {
        (Some((a, n)), Some((b, m))) => {
            let mask = |l: u32| if l == 0 { 0 } else { u32::MAX << (32 - l) };
            n >= m && (a & mask(m)) == (b & mask(m))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_prefixes_follow_aks_limits() {
        assert!(cluster_name("my-cluster_1").is_ok());
        assert!(cluster_name("-bad").is_err());
        assert!(cluster_name(&"a".repeat(64)).is_err());
        assert!(pool_name("pool1").is_ok());
        assert!(pool_name("Pool1").is_err());
        assert!(pool_name("averylongname").is_err());
        assert!(pool_name("1pool").is_err());
        assert!(dns_prefix("abc-1").is_ok());
        assert_eq!(dns_prefix("abc_").unwrap_err().code, "InvalidDnsPrefix");
    }

    #[test]
    fn pools_are_checked_field_by_field() {
        assert!(
            pool_properties(
                "p",
                &json!({"count": 2, "vmSize": "Standard_D2s_v5", "mode": "System"})
            )
            .is_ok()
        );
        assert_eq!(
            pool_properties("p", &json!({"vmSize": "Standard_Nope"}))
                .unwrap_err()
                .code,
            "VMSizeNotSupported"
        );
        let small =
            pool_properties("p", &json!({"vmSize": "Standard_B1s", "mode": "System"})).unwrap_err();
        assert!(small.message.contains("p.vmSize"), "{}", small.message);
        assert!(pool_properties("p", &json!({"count": 0, "mode": "System"})).is_err());
        assert!(pool_properties("p", &json!({"nodeTaints": ["a=b:Sometimes"]})).is_err());
        assert!(
            pool_properties(
                "p",
                &json!({"enableAutoScaling": true, "minCount": 1, "maxCount": 3, "count": 5})
            )
            .is_err()
        );
        assert!(pool_not_above("p", "1.33.3", "1.32.7").is_err());
        assert!(pool_not_above("p", "1.32.6", "1.32.7").is_ok());
        assert!(cidr_within("10.1.0.0/24", "10.1.0.0/16"));
        assert!(!cidr_within("10.2.0.0/24", "10.1.0.0/16"));
    }
}
