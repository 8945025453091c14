//! CAPA (`AWSManagedControlPlane`, `AWSManagedCluster`, `AWSManagedMachinePool`, all
//! `v1beta2`) to ours on EKS.
//!
//! CAPA keeps everything of the cluster on its control plane (its `AWSManagedCluster` only
//! mirrors the endpoint), so our EKSCluster is written from the control plane: the region, the
//! network brought by id, the identity and the tags. The network is always brought: whether CAPA
//! made it or not, ours only reads it. The IAM roles stay as they are; an adopted cluster and an
//! adopted node group keep theirs, so ours needs no role ARN (CAPA knows role names, not the
//! account).

use serde_json::{Map, Value, json};

use super::{Fields, Note, Source, Translation, autoscaled, taints, version};

/// What the notes say of a field ours has no place for.
const NO_EQUIVALENT: &str = "no equivalent in EKSControlPlane/EKSMachinePool: what it made stays in AWS and nothing manages it any more";

/// CAPA's objects as ours.
pub fn translate(source: &Source) -> Translation {
    let mut t = Translation::default();
    let (infra, control_plane, notes) = control_plane(&source.control_plane);
    t.infra_cluster = infra;
    t.control_plane = control_plane;
    t.notes = notes;
    // The AWSManagedCluster holds only the endpoint, which the control plane publishes.
    let mut managed = Fields::new(&source.infra);
    managed.dropped(
        "controlPlaneEndpoint",
        "EKSControlPlane publishes the endpoint itself",
    );
    t.notes.extend(managed.finish(NO_EQUIVALENT));
    for pool in &source.pools {
        let (spec, notes) = machine_pool(&pool.infra, &pool.machine_pool);
        let name = pool.machine_pool["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        t.pools.push((name, spec));
        t.notes.extend(notes);
    }
    t
}

/// The EKSCluster spec and the EKSControlPlane spec for an `AWSManagedControlPlane`.
fn control_plane(cp: &Value) -> (Value, Value, Vec<Note>) {
    let mut f = Fields::new(cp);
    let mut infra = Map::new();
    let mut spec = Map::new();
    let mut eks = Map::new();

    if let Some(name) = f.mapped("eksClusterName", "EKSControlPlane spec.cloudName") {
        spec.insert("cloudName".into(), name.clone());
    }
    spec.insert("adoption".into(), json!({}));
    let running = cp["status"]["version"].as_str();
    match f.mapped("version", "EKSControlPlane spec.version") {
        Some(v) => {
            spec.insert(
                "version".into(),
                json!(version(v.as_str().unwrap_or_default())),
            );
        }
        None => {
            if let Some(v) = running {
                spec.insert("version".into(), json!(version(v)));
            }
        }
    }
    if let Some(region) = f.mapped("region", "EKSCluster spec.region") {
        infra.insert("region".into(), region.clone());
    }
    if let Some(partition) = f.str("partition")
        && partition != "aws"
    {
        f.refuse(
            "partition",
            "only the aws partition: the identity checks of adoption read commercial-region ARNs",
        );
    } else {
        f.dropped("partition", "the aws partition is the only one");
    }
    identity(&mut f);
    network(&mut f, &mut infra);
    if let Some(tags) = f.mapped("additionalTags", "EKSCluster spec.additionalTags") {
        let kept: Map<String, Value> = tags
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with("capi-managed-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !kept.is_empty() {
            infra.insert("additionalTags".into(), Value::Object(kept));
        }
    }

    // The role: kept as it is (EKS cannot change a cluster's role).
    for field in [
        "roleName",
        "rolePath",
        "roleAdditionalPolicies",
        "rolePermissionsBoundary",
    ] {
        f.unmanaged(
            field,
            "the cluster keeps its IAM role; ours neither needs its ARN for an adopted cluster nor manages IAM roles",
        );
    }

    let mut access = Map::new();
    if let Some(public) = f.mapped("endpointAccess.public", "spec.endpointAccess.public") {
        access.insert("public".into(), public.clone());
    }
    if let Some(private) = f.mapped("endpointAccess.private", "spec.endpointAccess.private") {
        access.insert("private".into(), private.clone());
    }
    if let Some(cidrs) = f.mapped(
        "endpointAccess.publicCIDRs",
        "spec.endpointAccess.publicCIDRs",
    ) {
        access.insert("publicCIDRs".into(), cidrs.clone());
    }
    if !access.is_empty() {
        spec.insert("endpointAccess".into(), Value::Object(access));
    }

    let mut logging = Map::new();
    for kind in [
        "apiServer",
        "audit",
        "authenticator",
        "controllerManager",
        "scheduler",
    ] {
        if let Some(on) = f.mapped(&format!("logging.{kind}"), &format!("spec.logging.{kind}")) {
            logging.insert(kind.into(), on.clone());
        }
    }
    if !logging.is_empty() {
        spec.insert("logging".into(), Value::Object(logging));
    }
    if let Some(key) = f.mapped("encryptionConfig.provider", "spec.encryption.kmsKeyID") {
        spec.insert("encryption".into(), json!({"kmsKeyID": key}));
    }
    f.dropped(
        "encryptionConfig.resources",
        "EKS encrypts Secrets, the only resource it takes",
    );

    addons(&mut f, &mut spec);
    authentication(&mut f, &mut eks);

    f.unmanaged(
        "associateOIDCProvider",
        "the IAM OIDC provider CAPA made for IRSA stays in IAM; ours does not manage IAM OIDC providers (the cluster's own issuer is unchanged)",
    );
    f.unmanaged(
        "oidcIdentityProviderConfig",
        "the cluster's OIDC identity provider stays associated; ours does not manage identity providers",
    );
    f.unmanaged(
        "iamAuthenticatorConfig",
        "the aws-auth ConfigMap in the workload cluster stays as it is; ours does not write it",
    );
    f.unmanaged(
        "upgradePolicy",
        "the cluster keeps its support policy; ours sets it only at creation (spec.eks.requestOverrides)",
    );
    f.unmanaged("vpcCni", "the VPC CNI add-on stays as it is");
    f.unmanaged("kubeProxy", "kube-proxy stays as it is");
    f.unmanaged(
        "bootstrapSelfManagedAddons",
        "fixed when EKS created the cluster",
    );
    f.unmanaged(
        "restrictPrivateSubnets",
        "fixed when the cluster was created; ours reads the cluster's subnets from EKS",
    );
    f.unmanaged(
        "secondaryCidrBlock",
        "the VPC keeps its secondary CIDR; ours brings the VPC as it is",
    );
    for field in [
        "bastion",
        "sshKeyName",
        "imageLookupBaseOS",
        "imageLookupFormat",
        "imageLookupOrg",
        "tokenMethod",
    ] {
        f.dropped(
            field,
            "only for CAPA's own machines and kubeconfig; ours writes its own kubeconfig",
        );
    }
    f.dropped(
        "controlPlaneEndpoint",
        "EKSControlPlane publishes the endpoint itself (the same one)",
    );

    spec.insert("eks".into(), Value::Object(eks));
    (
        Value::Object(infra),
        Value::Object(spec),
        f.finish(NO_EQUIVALENT),
    )
}

/// `spec.identityRef`: CAPA's controller identity is ours; the other two are not.
fn identity(f: &mut Fields) {
    match f.str("identityRef.kind") {
        None | Some("AWSClusterControllerIdentity") => {
            f.dropped(
                "identityRef",
                "the controller's own credentials, as EKSCluster spec.identityRef leaves them by default",
            );
        }
        Some(kind) => f.refuse(
            "identityRef",
            &format!(
                "{kind}: ours takes AWS credentials from the controller or from a Secret in the Cluster's namespace (EKSCluster spec.identityRef {{kind: Secret}}); move the Cluster once its identity is one of those"
            ),
        ),
    }
}

/// `spec.network`: always brought by id.
fn network(f: &mut Fields, infra: &mut Map<String, Value>) {
    let mut network = Map::new();
    if let Some(vpc) = f.mapped("network.vpc.id", "EKSCluster spec.network.id") {
        network.insert("id".into(), vpc.clone());
    }
    let subnets: Vec<Value> = f
        .get("network.subnets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("resourceID").or_else(|| s.get("id")).cloned())
        .filter(|id| id.as_str().is_some_and(|s| s.starts_with("subnet-")))
        .collect();
    if !subnets.is_empty() {
        f.mapped("network.subnets", "EKSCluster spec.network.subnetIDs");
        network.insert("subnetIDs".into(), Value::Array(subnets));
    }
    f.unmanaged(
        "network.vpc",
        "the VPC is brought by id: ours reads it and never changes or deletes it, even if CAPA made it",
    );
    for field in [
        "network.cni",
        "network.securityGroupOverrides",
        "network.additionalControlPlaneIngressRules",
        "network.additionalNodeIngressRules",
        "network.nodePortIngressRuleCidrBlocks",
    ] {
        f.unmanaged(
            field,
            "the security groups and rules stay as they are; ours does not manage them for a brought network",
        );
    }
    if !network.is_empty() {
        infra.insert("network".into(), Value::Object(network));
    }
}

/// `spec.addons`.
fn addons(f: &mut Fields, spec: &mut Map<String, Value>) {
    let Some(list) = f.mapped("addons", "spec.addons (name, version, configuration)") else {
        return;
    };
    let ours: Vec<Value> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let mut addon = Map::new();
            for key in ["name", "version", "configuration"] {
                if let Some(v) = a.get(key).filter(|v| !v.is_null()) {
                    addon.insert(key.into(), v.clone());
                }
            }
            Value::Object(addon)
        })
        .collect();
    let extras: Vec<&str> = [
        "conflictResolution",
        "serviceAccountRoleARN",
        "preserveOnDelete",
    ]
    .into_iter()
    .filter(|k| {
        list.as_array()
            .into_iter()
            .flatten()
            .any(|a| a.get(*k).is_some())
    })
    .collect();
    if !extras.is_empty() {
        f.unmanaged(
            "addons",
            &format!(
                "the add-ons' {} stay as EKS has them; ours manages name, version and configuration",
                extras.join(", ")
            ),
        );
    }
    spec.insert("addons".into(), Value::Array(ours));
}

/// `spec.accessConfig` and `spec.accessEntries`.
fn authentication(f: &mut Fields, eks: &mut Map<String, Value>) {
    let mut access = Map::new();
    match f.str("accessConfig.authenticationMode") {
        Some("config_map") => f.refuse(
            "accessConfig.authenticationMode",
            "config_map: ours manages access with EKS access entries (API or API_AND_CONFIG_MAP); switch the cluster to api_and_config_map in CAPA first",
        ),
        Some(mode) => {
            f.mapped(
                "accessConfig.authenticationMode",
                "EKSControlPlane spec.eks.access.authenticationMode",
            );
            access.insert("authenticationMode".into(), json!(mode.to_ascii_uppercase()));
        }
        None => {}
    }
    if let Some(admin) = f.mapped(
        "accessConfig.bootstrapClusterCreatorAdminPermissions",
        "EKSControlPlane spec.eks.access.bootstrapClusterCreatorAdmin",
    ) {
        access.insert("bootstrapClusterCreatorAdmin".into(), admin.clone());
    }
    if let Some(entries) = f.get("accessEntries").and_then(Value::as_array) {
        let mut ours = Vec::new();
        for e in entries {
            let policies = e["accessPolicies"].as_array().cloned().unwrap_or_default();
            let scoped = policies
                .iter()
                .any(|p| p["accessScope"]["type"].as_str() == Some("namespace"));
            let kind = e["type"].as_str().unwrap_or("standard");
            if scoped || kind != "standard" {
                f.refuse(
                    "accessEntries",
                    &format!(
                        "{}: ours has standard access entries with cluster-wide policies only",
                        e["principalARN"].as_str().unwrap_or_default()
                    ),
                );
                continue;
            }
            let mut entry = json!({"principalARN": e["principalARN"]});
            if let Some(groups) = e.get("kubernetesGroups").filter(|g| !g.is_null()) {
                entry["kubernetesGroups"] = groups.clone();
            }
            if let Some(user) = e.get("username").filter(|u| !u.is_null()) {
                entry["username"] = user.clone();
            }
            let arns: Vec<Value> = policies.iter().map(|p| p["policyARN"].clone()).collect();
            if !arns.is_empty() {
                entry["policyARNs"] = Value::Array(arns);
            }
            ours.push(entry);
        }
        f.mapped("accessEntries", "EKSControlPlane spec.eks.access.entries");
        access.insert("entries".into(), Value::Array(ours));
    }
    if !access.is_empty() {
        eks.insert("access".into(), Value::Object(access));
    }
}

/// The EKSMachinePool spec for an `AWSManagedMachinePool` under `machine_pool`.
fn machine_pool(pool: &Value, machine_pool: &Value) -> (Value, Vec<Note>) {
    let mut f = Fields::new(pool);
    let mut spec = Map::new();
    if let Some(name) = f.mapped("eksNodegroupName", "EKSMachinePool spec.cloudName") {
        spec.insert("cloudName".into(), name.clone());
    }
    spec.insert("adoption".into(), json!({}));
    match f.mapped("instanceType", "EKSMachinePool spec.machineType") {
        Some(t) => {
            spec.insert("machineType".into(), t.clone());
        }
        // CAPA sends no instance type then, and EKS picks its default.
        None => {
            spec.insert("machineType".into(), json!("t3.medium"));
        }
    }
    match f.str("amiType") {
        Some("CUSTOM") => f.refuse(
            "amiType",
            "CUSTOM: the node group's AMI comes from a launch template, which ours does not manage",
        ),
        Some(ami) => {
            f.mapped("amiType", "EKSMachinePool spec.image");
            spec.insert("image".into(), json!(ami));
        }
        None => {}
    }
    if let Some(size) = f.mapped("diskSize", "EKSMachinePool spec.diskSizeGB") {
        spec.insert("diskSizeGB".into(), size.clone());
    }
    if let Some(labels) = f.mapped("labels", "EKSMachinePool spec.labels") {
        spec.insert("labels".into(), labels.clone());
    }
    if let Some(taints) = taints(&mut f, "taints", "EKSMachinePool spec.taints") {
        spec.insert("taints".into(), taints);
    }
    if f.str("capacityType")
        .is_some_and(|c| c.eq_ignore_ascii_case("spot"))
    {
        f.mapped("capacityType", "EKSMachinePool spec.spot");
        spec.insert("spot".into(), json!(true));
    } else {
        f.dropped("capacityType", "on-demand, ours' default");
    }
    if let Some(subnets) = f.mapped("subnetIDs", "EKSMachinePool spec.subnetIDs") {
        spec.insert("subnetIDs".into(), subnets.clone());
    }
    f.unmanaged(
        "availabilityZones",
        "the node group keeps its subnets; ours does not move a node group between zones",
    );
    f.unmanaged(
        "availabilityZoneSubnetType",
        "the node group keeps its subnets",
    );
    if let Some(n) = f.mapped(
        "updateConfig.maxUnavailable",
        "EKSMachinePool spec.update.maxUnavailable",
    ) {
        spec.insert("update".into(), json!({"maxUnavailable": n}));
    } else if let Some(p) = f.mapped(
        "updateConfig.maxUnavailablePercentage",
        "EKSMachinePool spec.update.maxUnavailable (a percentage)",
    ) {
        spec.insert("update".into(), json!({"maxUnavailable": format!("{p}%")}));
    }
    if autoscaled(machine_pool) {
        let (min, max) = (f.get("scaling.minSize"), f.get("scaling.maxSize"));
        if let (Some(min), Some(max)) = (min, max) {
            f.mapped(
                "scaling",
                "EKSMachinePool spec.scaling (minReplicas, maxReplicas)",
            );
            spec.insert(
                "scaling".into(),
                json!({"minReplicas": min, "maxReplicas": max}),
            );
        }
    } else {
        f.dropped(
            "scaling",
            "the MachinePool sets the count, so ours keeps the node group's size fixed at it (the plan shows the range going)",
        );
    }
    for field in [
        "roleName",
        "rolePath",
        "roleAdditionalPolicies",
        "rolePermissionsBoundary",
    ] {
        f.unmanaged(
            field,
            "the node group keeps its IAM role; ours does not manage IAM roles",
        );
    }
    f.unmanaged("amiVersion", "the node group keeps its AMI release until its next upgrade, which ours makes to the MachinePool's version");
    if f.get("awsLaunchTemplate").is_some() {
        f.refuse(
            "awsLaunchTemplate",
            "the node group runs from a launch template, which ours does not manage",
        );
    }
    f.unmanaged("remoteAccess", "fixed when EKS created the node group");
    f.unmanaged(
        "lifecycleHooks",
        "the Auto Scaling group keeps its hooks; ours does not manage them",
    );
    f.unmanaged(
        "nodeRepairConfig",
        "the node group keeps its repair setting; ours does not manage it",
    );
    f.unmanaged(
        "additionalTags",
        "the node group keeps its tags; ours adds its ownership tag beside them",
    );
    f.dropped("providerIDList", "ours writes it from EKS's instances");
    // The node role stays as it is (adopted node groups keep theirs).
    spec.insert("eks".into(), json!({}));
    let notes = f.finish(NO_EQUIVALENT);
    (Value::Object(spec), notes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::peer::{Outcome, Peer, PeerPool, refused_fields};

    fn outcome_of<'a>(notes: &'a [Note], field: &str) -> Option<&'a Outcome> {
        notes.iter().find(|n| n.field == field).map(|n| &n.outcome)
    }

    /// A Cluster as CAPA's EKS flavor renders it, with the defaults CAPA's webhooks write.
    fn source() -> Source {
        Source {
            cluster: json!({"kind": "Cluster", "metadata": {"name": "c1", "namespace": "team"}}),
            infra: json!({"kind": "AWSManagedCluster", "metadata": {"name": "c1"}, "spec": {
                "controlPlaneEndpoint": {"host": "abc.eks.amazonaws.com", "port": 443}}}),
            control_plane: json!({"kind": "AWSManagedControlPlane", "metadata": {"name": "c1-control-plane"}, "spec": {
                "eksClusterName": "team_c1-control-plane",
                "region": "us-west-2",
                "version": "v1.31.0",
                "roleName": "eks-controlplane",
                "network": {"vpc": {"id": "vpc-1", "cidrBlock": "10.0.0.0/16"},
                            "subnets": [{"id": "subnet-a", "availabilityZone": "us-west-2a"}, {"id": "subnet-b"}],
                            "cni": {"cniIngressRules": [{"protocol": "tcp"}]}},
                "endpointAccess": {"public": true, "private": false},
                "logging": {"apiServer": true, "audit": false},
                "additionalTags": {"team": "platform", "capi-managed-eks": "x"},
                "bastion": {"enabled": false},
                "tokenMethod": "iam-authenticator",
                "accessConfig": {"authenticationMode": "api_and_config_map"},
                "vpcCni": {"disable": false},
                "identityRef": {"kind": "AWSClusterControllerIdentity", "name": "default"},
                "partition": "aws",
                "addons": [{"name": "coredns", "version": "v1.11.1-eksbuild.1", "conflictResolution": "overwrite"}],
                "somethingNew": {"deep": 1},
            }, "status": {"version": "v1.31.4"}}),
            pools: vec![PeerPool {
                machine_pool: json!({"kind": "MachinePool", "metadata": {"name": "c1-pool-0"}}),
                infra: json!({"kind": "AWSManagedMachinePool", "metadata": {"name": "c1-pool-0"}, "spec": {
                    "eksNodegroupName": "team_c1-pool-0",
                    "instanceType": "t3.large",
                    "amiType": "AL2023_x86_64_STANDARD",
                    "scaling": {"minSize": 1, "maxSize": 3},
                    "taints": [{"key": "k", "value": "v", "effect": "no-schedule"}],
                    "updateConfig": {"maxUnavailablePercentage": 20},
                    "capacityType": "onDemand",
                    "roleName": "nodes",
                    "providerIDList": ["aws:///us-west-2a/i-1"],
                }}),
            }],
            region: None,
            related: Vec::new(),
        }
    }

    #[test]
    fn a_capa_cluster_becomes_ours_by_name_on_its_brought_network() {
        let t = Peer::Capa.translate(&source());
        assert!(!t.refused(), "{:#?}", t.notes);
        let cp = &t.control_plane;
        assert_eq!(cp["kind"], "EKSControlPlane");
        assert_eq!(cp["apiVersion"], "controlplane.cluster.x-k8s.io/v1alpha1");
        assert_eq!(cp["metadata"]["name"], "c1-control-plane");
        assert_eq!(
            cp["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
            "c1"
        );
        assert_eq!(
            cp["metadata"]["annotations"][crate::peer::MIGRATED_FROM_ANNOTATION],
            "AWSManagedControlPlane/c1-control-plane"
        );
        let spec = &cp["spec"];
        assert_eq!(spec["cloudName"], "team_c1-control-plane");
        assert_eq!(spec["adoption"], json!({}));
        assert_eq!(spec["version"], "v1.31.0");
        assert_eq!(
            spec["endpointAccess"],
            json!({"public": true, "private": false})
        );
        assert_eq!(spec["logging"], json!({"apiServer": true, "audit": false}));
        assert_eq!(
            spec["eks"]["access"]["authenticationMode"],
            "API_AND_CONFIG_MAP"
        );
        assert!(spec["eks"].get("roleARN").is_none());
        assert_eq!(
            spec["addons"],
            json!([{"name": "coredns", "version": "v1.11.1-eksbuild.1"}])
        );

        let infra = &t.infra_cluster;
        assert_eq!(infra["kind"], "EKSCluster");
        assert_eq!(infra["spec"]["region"], "us-west-2");
        assert_eq!(
            infra["spec"]["network"],
            json!({"id": "vpc-1", "subnetIDs": ["subnet-a", "subnet-b"]})
        );
        assert_eq!(infra["spec"]["additionalTags"], json!({"team": "platform"}));
        assert!(infra["spec"].get("identityRef").is_none());

        let (mp, pool) = &t.pools[0];
        assert_eq!(mp, "c1-pool-0");
        let spec = &pool["spec"];
        assert_eq!(spec["cloudName"], "team_c1-pool-0");
        assert_eq!(spec["machineType"], "t3.large");
        assert_eq!(spec["image"], "AL2023_x86_64_STANDARD");
        assert_eq!(
            spec["taints"],
            json!([{"key": "k", "value": "v", "effect": "NoSchedule"}])
        );
        assert_eq!(spec["update"], json!({"maxUnavailable": "20%"}));
        assert!(
            spec.get("scaling").is_none(),
            "the MachinePool sets the count"
        );
        assert!(spec.get("spot").is_none());
    }

    #[test]
    fn every_field_capa_set_has_a_note_and_unknown_ones_are_named() {
        let t = Peer::Capa.translate(&source());
        let of = |field: &str| outcome_of(&t.notes, field).cloned();
        assert!(matches!(
            of("spec.eksClusterName"),
            Some(Outcome::Mapped(_))
        ));
        assert!(matches!(of("spec.roleName"), Some(Outcome::Unmanaged(_))));
        assert!(matches!(of("spec.bastion"), Some(Outcome::Dropped(_))));
        assert!(matches!(
            of("spec.network.cni"),
            Some(Outcome::Unmanaged(_))
        ));
        assert!(matches!(
            of("spec.network.vpc"),
            Some(Outcome::Unmanaged(_))
        ));
        assert!(matches!(of("spec.addons"), Some(Outcome::Mapped(_))));
        assert!(
            t.notes
                .iter()
                .any(|n| n.field == "spec.addons" && matches!(n.outcome, Outcome::Unmanaged(_))),
            "conflictResolution has no equivalent"
        );
        assert!(matches!(
            of("spec.somethingNew.deep"),
            Some(Outcome::Unmanaged(_))
        ));
        assert!(matches!(
            of("spec.controlPlaneEndpoint"),
            Some(Outcome::Dropped(_))
        ));
        assert!(matches!(of("spec.scaling"), Some(Outcome::Dropped(_))));
        assert!(matches!(
            of("spec.providerIDList"),
            Some(Outcome::Dropped(_))
        ));
    }

    #[test]
    fn what_ours_cannot_take_over_refuses_the_move() {
        let mut s = source();
        s.control_plane["spec"]["accessConfig"]["authenticationMode"] = json!("config_map");
        s.control_plane["spec"]["identityRef"] =
            json!({"kind": "AWSClusterRoleIdentity", "name": "r"});
        s.pools[0].infra["spec"]["amiType"] = json!("CUSTOM");
        let t = Peer::Capa.translate(&s);
        let refused = refused_fields(&t);
        assert_eq!(
            refused,
            [
                "spec.identityRef",
                "spec.accessConfig.authenticationMode",
                "spec.amiType"
            ]
        );
    }

    #[test]
    fn an_autoscaled_pool_keeps_its_range_and_a_missing_version_is_the_running_one() {
        let mut s = source();
        s.pools[0].machine_pool["metadata"]["annotations"] =
            json!({"cluster.x-k8s.io/replicas-managed-by": "cluster-autoscaler"});
        s.control_plane["spec"]
            .as_object_mut()
            .unwrap()
            .remove("version");
        let t = Peer::Capa.translate(&s);
        assert_eq!(
            t.pools[0].1["spec"]["scaling"],
            json!({"minReplicas": 1, "maxReplicas": 3})
        );
        assert_eq!(t.control_plane["spec"]["version"], "v1.31.4");
    }
}
