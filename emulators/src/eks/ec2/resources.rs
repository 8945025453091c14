//! EC2's own actions on moto: subnets and VPCs, node instances, security groups, and the
//! inventory of everything moto holds.

use super::{Ec2, Ec2Error, Element, Launched, Subnet, created_id, numbered, tag_specification};

impl Ec2 {
    /// Looks subnets up.
    ///
    /// # Errors
    /// EC2's error (e.g. `InvalidSubnetID.NotFound`) or a transport failure.
    pub async fn describe_subnets(&self, ids: &[String]) -> Result<Vec<Subnet>, Ec2Error> {
        let params = numbered("SubnetId", ids);
        let xml = self.call("DescribeSubnets", params).await?;
        Ok(xml
            .path(&["subnetSet"])
            .map(|set| set.children_named("item").collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|item| Subnet {
                id: item.text_at(&["subnetId"]),
                az: item.text_at(&["availabilityZone"]),
                vpc: item.text_at(&["vpcId"]),
            })
            .collect())
    }

    /// Creates a VPC with `cidr`, tagged with `tags`; returns its id.
    ///
    /// # Errors
    /// EC2's error (e.g. `InvalidVpc.Range`) or a transport failure.
    pub async fn create_vpc(
        &self,
        cidr: &str,
        tags: &[(String, String)],
    ) -> Result<String, Ec2Error> {
        let mut params = vec![("CidrBlock".to_string(), cidr.to_string())];
        params.extend(tag_specification("vpc", tags));
        let xml = self.call("CreateVpc", params).await?;
        created_id("CreateVpc", xml.text_at(&["vpc", "vpcId"]))
    }

    /// Creates a subnet of `vpc` with `cidr` in zone `az`, tagged with `tags`; returns its id.
    ///
    /// # Errors
    /// EC2's error (e.g. `InvalidSubnet.Conflict`) or a transport failure.
    pub async fn create_subnet(
        &self,
        vpc: &str,
        cidr: &str,
        az: &str,
        tags: &[(String, String)],
    ) -> Result<String, Ec2Error> {
        let mut params = vec![
            ("VpcId".to_string(), vpc.to_string()),
            ("CidrBlock".to_string(), cidr.to_string()),
            ("AvailabilityZone".to_string(), az.to_string()),
        ];
        params.extend(tag_specification("subnet", tags));
        let xml = self.call("CreateSubnet", params).await?;
        created_id("CreateSubnet", xml.text_at(&["subnet", "subnetId"]))
    }

    /// Launches `count` instances of `instance_type` in `subnet`, tagged with `tags`, from an
    /// image found once with DescribeImages.
    ///
    /// # Errors
    /// EC2's error or a transport failure.
    pub async fn run_instances(
        &self,
        count: usize,
        instance_type: &str,
        subnet: &str,
        tags: &[(String, String)],
    ) -> Result<Vec<Launched>, Ec2Error> {
        let image = self.image().await?;
        let mut params = vec![
            ("ImageId".to_string(), image),
            ("MinCount".to_string(), count.to_string()),
            ("MaxCount".to_string(), count.to_string()),
            ("InstanceType".to_string(), instance_type.to_string()),
            ("SubnetId".to_string(), subnet.to_string()),
            (
                "TagSpecification.1.ResourceType".to_string(),
                "instance".to_string(),
            ),
        ];
        for (i, (key, value)) in tags.iter().enumerate() {
            params.push((format!("TagSpecification.1.Tag.{}.Key", i + 1), key.clone()));
            params.push((
                format!("TagSpecification.1.Tag.{}.Value", i + 1),
                value.clone(),
            ));
        }
        let xml = self.call("RunInstances", params).await?;
        let launched: Vec<Launched> = xml
            .path(&["instancesSet"])
            .map(|set| set.children_named("item").collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|item| Launched {
                id: item.text_at(&["instanceId"]),
                az: item.text_at(&["placement", "availabilityZone"]),
                private_dns: item.text_at(&["privateDnsName"]),
                private_ip: item.text_at(&["privateIpAddress"]),
                subnet: {
                    let s = item.text_at(&["subnetId"]);
                    if s.is_empty() { subnet.to_string() } else { s }
                },
            })
            .collect();
        if launched.len() != count || launched.iter().any(|l| l.id.is_empty()) {
            return Err(Ec2Error {
                action: "RunInstances".into(),
                code: None,
                message: format!(
                    "asked for {count} instances, the response lists {}",
                    launched.len()
                ),
            });
        }
        Ok(launched)
    }

    /// Terminates instances (a no-op for an empty list).
    ///
    /// # Errors
    /// EC2's error or a transport failure.
    pub async fn terminate_instances(&self, ids: &[String]) -> Result<(), Ec2Error> {
        if ids.is_empty() {
            return Ok(());
        }
        let params = numbered("InstanceId", ids);
        self.call("TerminateInstances", params).await.map(|_| ())
    }

    /// Creates a security group in `vpc`, tagged with `tags`; returns its id.
    ///
    /// # Errors
    /// EC2's error (e.g. `InvalidGroup.Duplicate`) or a transport failure.
    pub async fn create_security_group(
        &self,
        vpc: &str,
        name: &str,
        description: &str,
        tags: &[(String, String)],
    ) -> Result<String, Ec2Error> {
        let mut params = vec![
            ("VpcId".to_string(), vpc.to_string()),
            ("GroupName".to_string(), name.to_string()),
            ("GroupDescription".to_string(), description.to_string()),
        ];
        params.extend(tag_specification("security-group", tags));
        let xml = self.call("CreateSecurityGroup", params).await?;
        created_id("CreateSecurityGroup", xml.text_at(&["groupId"]))
    }

    /// Deletes a security group; one already gone is not an error.
    ///
    /// # Errors
    /// EC2's error (e.g. `DependencyViolation`) or a transport failure.
    pub async fn delete_security_group(&self, id: &str) -> Result<(), Ec2Error> {
        match self
            .call("DeleteSecurityGroup", vec![("GroupId".into(), id.into())])
            .await
        {
            Err(e) if e.code.as_deref() == Some("InvalidGroup.NotFound") => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Every network resource and instance moto holds, with its tags: VPCs, subnets, internet
    /// and NAT gateways, Elastic IPs, route tables, security groups and instances (for the
    /// control endpoint's inventory). NAT gateways and instances that are deleted or
    /// terminated are left out.
    ///
    /// # Errors
    /// EC2's error or a transport failure.
    pub async fn inventory(&self) -> Result<Vec<crate::kit::InventoryItem>, Ec2Error> {
        // (action, set element, id element, kind, state element)
        const KINDS: [(&str, &str, &str, &str, &[&str]); 8] = [
            ("DescribeVpcs", "vpcSet", "vpcId", "ec2:vpc", &["state"]),
            (
                "DescribeSubnets",
                "subnetSet",
                "subnetId",
                "ec2:subnet",
                &["state"],
            ),
            (
                "DescribeInternetGateways",
                "internetGatewaySet",
                "internetGatewayId",
                "ec2:internet-gateway",
                &[],
            ),
            (
                "DescribeNatGateways",
                "natGatewaySet",
                "natGatewayId",
                "ec2:nat-gateway",
                &["state"],
            ),
            (
                "DescribeAddresses",
                "addressesSet",
                "allocationId",
                "ec2:elastic-ip",
                &[],
            ),
            (
                "DescribeRouteTables",
                "routeTableSet",
                "routeTableId",
                "ec2:route-table",
                &[],
            ),
            (
                "DescribeSecurityGroups",
                "securityGroupInfo",
                "groupId",
                "ec2:security-group",
                &[],
            ),
            (
                "DescribeInstances",
                "reservationSet",
                "instanceId",
                "ec2:instance",
                &["instanceState", "name"],
            ),
        ];
        let mut out = Vec::new();
        for (action, set, id, kind, state) in KINDS {
            let xml = self.call(action, Vec::new()).await?;
            let Some(set) = xml.path(&[set]) else {
                continue;
            };
            // Instances sit one level deeper, in each reservation's instancesSet.
            let items: Vec<&Element> = if kind == "ec2:instance" {
                set.descendants("instancesSet")
                    .flat_map(|s| s.children_named("item"))
                    .collect()
            } else {
                set.children_named("item").collect()
            };
            for item in items {
                let state = if state.is_empty() {
                    String::new()
                } else {
                    item.text_at(state)
                };
                if matches!(state.as_str(), "deleted" | "terminated") {
                    continue;
                }
                let tags: std::collections::BTreeMap<String, String> = item
                    .path(&["tagSet"])
                    .map(|t| {
                        t.children_named("item")
                            .map(|i| (i.text_at(&["key"]), i.text_at(&["value"])))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(crate::kit::InventoryItem::new(
                    kind,
                    item.text_at(&[id]),
                    tags.get("Name").cloned().unwrap_or_default(),
                    "",
                    &tags,
                    state,
                ));
            }
        }
        Ok(out)
    }
}
