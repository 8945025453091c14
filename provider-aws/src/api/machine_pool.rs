use contract::api::MachinePoolSpecCommon;

/// One EKS managed node group. Count, version and zones come from the owning MachinePool.
#[provider_runtime::kind]
#[x_kube(validation = contract::naming::EKS_NODEGROUP.cel_validation("cloudName", "spec.cloudName"))]
pub struct EKSMachinePoolSpec {
    /// Machine type, disk, image, labels, taints, scaling, spot, update, subnets, as on every cloud.
    #[serde(flatten)]
    pub common: MachinePoolSpecCommon,
    /// What only EKS has.
    pub eks: EKSMachinePoolOptions,
}

/// EKS-only node-group options.
#[provider_runtime::block]
pub struct EKSMachinePoolOptions {
    /// The IAM role the nodes run as. Required to create a node group; a node group being
    /// adopted keeps the role it has, so it may be left out then.
    #[serde(rename = "nodeRoleARN")]
    #[schemars(length(min = 20, max = 2048))]
    #[x_kube(validation = kube::core::Rule::new("self.startsWith('arn:')").message("spec.eks.nodeRoleARN must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/eks-nodes"))]
    #[x_kube(validation = kube::core::Rule::new("self == oldSelf").message("spec.eks.nodeRoleARN is immutable on EKS; create a new EKSMachinePool instead"))]
    pub node_role_arn: Option<String>,
    /// More instance types beside spec.machineType (EKS picks among them, mostly for spot).
    /// Immutable.
    #[schemars(length(max = 19), inner(length(min = 1, max = 64)))]
    #[x_kube(validation = kube::core::Rule::new("self == oldSelf").message("spec.eks.additionalInstanceTypes is immutable on EKS; create a new EKSMachinePool instead"))]
    pub additional_instance_types: Vec<String>,
    /// A JSON merge patch applied to the body of EKS CreateNodegroup requests. The user's
    /// responsibility; fields the provider manages win.
    #[schemars(schema_with = "contract::crd::free_form_object")]
    pub request_overrides: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use contract::schema::{structural_problems, validation_rules};
    use kube::CustomResourceExt;

    fn schema() -> serde_json::Value {
        let crd = EKSMachinePool::crd();
        serde_json::to_value(
            crd.spec.versions[0]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema
                .as_ref()
                .unwrap(),
        )
        .unwrap()
    }

    fn rule_at(path: &str, fragment: &str) -> Option<String> {
        validation_rules(&schema())
            .into_iter()
            .find(|r| r.path == path && r.rule.contains(fragment))
            .and_then(|r| r.message)
    }

    #[test]
    fn the_schema_is_structural() {
        assert!(
            structural_problems(&schema()).is_empty(),
            "{:?}",
            structural_problems(&schema())
        );
    }

    #[test]
    fn max_surge_is_rejected_at_admission_with_a_message_naming_the_field_and_eks() {
        let message = rule_at(".spec", "self.update.maxSurge").expect("maxSurge rule");
        assert!(
            message.contains("spec.update.maxSurge") && message.contains("EKS"),
            "{message}"
        );
        let message = rule_at(".spec", "['0', '0%']").expect("maxUnavailable rule");
        assert!(message.contains("spec.update.maxUnavailable"), "{message}");
    }

    #[test]
    fn what_eks_cannot_change_on_a_node_group_is_immutable() {
        for (path, fragment, field) in [
            (".spec", "oldSelf.machineType", "spec.machineType"),
            (".spec", "oldSelf.diskSizeGB", "spec.diskSizeGB"),
            (".spec", "oldSelf.image", "spec.image"),
            (".spec", "oldSelf.spot", "spec.spot"),
            (".spec", "oldSelf.subnetIDs", "spec.subnetIDs"),
            (".spec.eks.nodeRoleARN", "oldSelf", "spec.eks.nodeRoleARN"),
            (
                ".spec.eks.additionalInstanceTypes",
                "oldSelf",
                "spec.eks.additionalInstanceTypes",
            ),
        ] {
            let message = rule_at(path, fragment).unwrap_or_else(|| panic!("no rule for {field}"));
            assert!(
                message.contains(field) && message.contains("immutable"),
                "{message}"
            );
        }
    }

    #[test]
    fn the_shared_machine_pool_rules_are_kept_beside_the_eks_ones() {
        assert!(rule_at(".spec.scaling", "self.minReplicas <= self.maxReplicas").is_some());
        assert!(rule_at(".spec", "has(oldSelf.cloudName)").is_some());
    }
}
