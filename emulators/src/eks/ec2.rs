//! A minimal EC2 and Auto Scaling Query-protocol client for moto in server mode: the node
//! instances of emulated nodegroups, the Auto Scaling group holding them and each cluster's
//! security group live there, so a provider (or a test) that looks at EC2 or Auto Scaling sees
//! what it would see behind real EKS.
//!
//! Requests are form-encoded POSTs (`Action=…&Version=2016-11-15&…`) over plain HTTP with an
//! `Authorization` header whose credential scope tells moto the account and region; moto does not
//! check the signature, so it is a placeholder. Responses are XML, read with a small parser that
//! knows elements, text and the five predefined entities — all that EC2's responses use.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tokio::sync::OnceCell;

const VERSION: &str = "2016-11-15";
/// The Auto Scaling API's version (the same Query protocol; moto tells the two apart by the
/// service in the credential scope).
const AUTOSCALING_VERSION: &str = "2011-01-01";
/// IAM's Query API version.
const IAM_VERSION: &str = "2010-05-08";

/// How many times a request that got no answer from moto is sent again (after 1, 2, 4, 8 and
/// 16 s). With a few hundred provider-built networks in it, moto (one Python process) took over
/// 30 s to answer for minutes at a time; three tries then failed node groups (CREATE_FAILED),
/// which real EKS does not do when its own EC2 calls are slow.
const SEND_RETRIES: u32 = 5;
/// RFC 3986 unreserved characters stay; everything else is percent-encoded.
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Why an EC2 call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("EC2 {action}: {}{message}", code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default())]
pub struct Ec2Error {
    /// The action called.
    pub action: String,
    /// EC2's error code (`InvalidSubnetID.NotFound`, …); `None` when no EC2 answer was had.
    pub code: Option<String>,
    /// What went wrong.
    pub message: String,
}

/// An instance EC2 launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    /// `i-…`.
    pub id: String,
    /// The availability zone.
    pub az: String,
    /// `ip-….<region>.compute.internal`.
    pub private_dns: String,
    /// The private IPv4 address.
    pub private_ip: String,
    /// The subnet it runs in.
    pub subnet: String,
}

/// A subnet as DescribeSubnets reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subnet {
    /// `subnet-…`.
    pub id: String,
    /// Its availability zone.
    pub az: String,
    /// Its VPC.
    pub vpc: String,
}

/// An Auto Scaling group as DescribeAutoScalingGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoScalingGroup {
    /// Its instances: (id, availability zone).
    pub instances: Vec<(String, String)>,
    /// Its tags: (key, value).
    pub tags: Vec<(String, String)>,
}

/// The client.
#[derive(Debug)]
pub struct Ec2 {
    endpoint: String,
    region: String,
    access_key: String,
    http: reqwest::Client,
    image: OnceCell<String>,
}

impl Ec2 {
    /// A client for the EC2 endpoint at `endpoint` (e.g. `http://127.0.0.1:5000`), signing its
    /// credential scope with `access_key` for `region`.
    pub fn new(endpoint: &str, region: &str, access_key: &str) -> Self {
        let http = crate::kit::http_client(Duration::from_secs(30));
        Self {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            region: region.to_string(),
            access_key: access_key.to_string(),
            http,
            image: OnceCell::new(),
        }
    }

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

    /// Creates the Auto Scaling group `name` (and its launch configuration of the same name)
    /// over `subnets`, empty — the emulator launches the instances and attaches them — and
    /// tagged with `tags`, each propagated at launch.
    ///
    /// # Errors
    /// Auto Scaling's error (e.g. `AlreadyExists`) or a transport failure.
    pub async fn create_auto_scaling_group(
        &self,
        name: &str,
        instance_type: &str,
        subnets: &[String],
        max: i64,
        tags: &[(String, String)],
    ) -> Result<(), Ec2Error> {
        let image = self.image().await?;
        let launch_config = vec![
            ("LaunchConfigurationName".to_string(), name.to_string()),
            ("ImageId".to_string(), image),
            ("InstanceType".to_string(), instance_type.to_string()),
        ];
        match self
            .autoscaling("CreateLaunchConfiguration", launch_config)
            .await
        {
            Err(e) if e.code.as_deref() == Some("AlreadyExists") => {}
            other => {
                other?;
            }
        }
        let mut params = vec![
            ("AutoScalingGroupName".to_string(), name.to_string()),
            ("LaunchConfigurationName".to_string(), name.to_string()),
            ("MinSize".to_string(), "0".to_string()),
            ("MaxSize".to_string(), max.max(1).to_string()),
            ("DesiredCapacity".to_string(), "0".to_string()),
            ("VPCZoneIdentifier".to_string(), subnets.join(",")),
        ];
        for (i, (key, value)) in tags.iter().enumerate() {
            let n = i + 1;
            params.push((format!("Tags.member.{n}.Key"), key.clone()));
            params.push((format!("Tags.member.{n}.Value"), value.clone()));
            params.push((format!("Tags.member.{n}.PropagateAtLaunch"), "true".into()));
            params.push((format!("Tags.member.{n}.ResourceId"), name.to_string()));
            params.push((
                format!("Tags.member.{n}.ResourceType"),
                "auto-scaling-group".into(),
            ));
        }
        match self.autoscaling("CreateAutoScalingGroup", params).await {
            Err(e) if e.code.as_deref() == Some("AlreadyExists") => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Puts launched instances into the group `name`, first raising its maximum to `max` (an
    /// Auto Scaling group refuses to hold more than its maximum; the minimum stays 0, so the
    /// group never launches anything itself).
    ///
    /// # Errors
    /// Auto Scaling's error or a transport failure.
    pub async fn attach_instances(
        &self,
        name: &str,
        ids: &[String],
        max: i64,
    ) -> Result<(), Ec2Error> {
        if ids.is_empty() {
            return Ok(());
        }
        self.autoscaling(
            "UpdateAutoScalingGroup",
            vec![
                ("AutoScalingGroupName".into(), name.into()),
                ("MaxSize".into(), max.max(1).to_string()),
            ],
        )
        .await?;
        let mut params = vec![("AutoScalingGroupName".to_string(), name.to_string())];
        params.extend(numbered("InstanceIds.member", ids));
        self.autoscaling("AttachInstances", params)
            .await
            .map(|_| ())
    }

    /// Takes instances out of the group `name` (its desired capacity down by as many) before
    /// they are terminated, so the group never replaces them.
    ///
    /// # Errors
    /// Auto Scaling's error or a transport failure.
    pub async fn detach_instances(&self, name: &str, ids: &[String]) -> Result<(), Ec2Error> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut params = vec![
            ("AutoScalingGroupName".to_string(), name.to_string()),
            ("ShouldDecrementDesiredCapacity".to_string(), "true".into()),
        ];
        params.extend(numbered("InstanceIds.member", ids));
        self.autoscaling("DetachInstances", params)
            .await
            .map(|_| ())
    }

    /// The group `name` as Auto Scaling describes it: its instances (id, zone) and its tags;
    /// `None` when there is no such group.
    ///
    /// # Errors
    /// Auto Scaling's error or a transport failure.
    pub async fn describe_auto_scaling_group(
        &self,
        name: &str,
    ) -> Result<Option<AutoScalingGroup>, Ec2Error> {
        let xml = self
            .autoscaling(
                "DescribeAutoScalingGroups",
                vec![("AutoScalingGroupNames.member.1".into(), name.into())],
            )
            .await?;
        let Some(group) = xml.descendants("AutoScalingGroups").next().and_then(|set| {
            set.children_named("member")
                .find(|m| m.text_at(&["AutoScalingGroupName"]) == name)
        }) else {
            return Ok(None);
        };
        let instances = group
            .path(&["Instances"])
            .map(|set| {
                set.children_named("member")
                    .map(|m| (m.text_at(&["InstanceId"]), m.text_at(&["AvailabilityZone"])))
                    .collect()
            })
            .unwrap_or_default();
        let tags = group
            .path(&["Tags"])
            .map(|set| {
                set.children_named("member")
                    .map(|m| (m.text_at(&["Key"]), m.text_at(&["Value"])))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(AutoScalingGroup { instances, tags }))
    }

    /// Deletes the group `name` and its launch configuration; either already gone is not an
    /// error.
    ///
    /// # Errors
    /// Auto Scaling's error or a transport failure.
    pub async fn delete_auto_scaling_group(&self, name: &str) -> Result<(), Ec2Error> {
        let gone = |e: &Ec2Error| {
            e.code.as_deref() == Some("ValidationError") && e.message.contains("not found")
        };
        match self
            .autoscaling(
                "DeleteAutoScalingGroup",
                vec![
                    ("AutoScalingGroupName".into(), name.into()),
                    ("ForceDelete".into(), "true".into()),
                ],
            )
            .await
        {
            Err(e) if !gone(&e) => return Err(e),
            _ => {}
        }
        match self
            .autoscaling(
                "DeleteLaunchConfiguration",
                vec![("LaunchConfigurationName".into(), name.into())],
            )
            .await
        {
            Err(e) if !gone(&e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Creates the IAM role `name` that `service` (`eks.amazonaws.com`) may assume; returns
    /// its ARN. A role of that name already there is not an error (its ARN is returned).
    ///
    /// # Errors
    /// IAM's error or a transport failure.
    pub async fn create_role(&self, name: &str, service: &str) -> Result<String, Ec2Error> {
        let trust = serde_json::json!({
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Principal": {"Service": service},
                "Action": "sts:AssumeRole",
            }],
        })
        .to_string();
        let created = self
            .query(
                "iam",
                IAM_VERSION,
                "CreateRole",
                vec![
                    ("RoleName".into(), name.into()),
                    ("AssumeRolePolicyDocument".into(), trust),
                ],
            )
            .await;
        let xml = match created {
            Err(e) if e.code.as_deref() == Some("EntityAlreadyExists") => {
                self.query(
                    "iam",
                    IAM_VERSION,
                    "GetRole",
                    vec![("RoleName".into(), name.into())],
                )
                .await?
            }
            other => other?,
        };
        let arn = xml
            .descendants("Arn")
            .map(|e| e.text.trim().to_string())
            .find(|a| !a.is_empty())
            .unwrap_or_default();
        created_id("CreateRole", arn)
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

    async fn image(&self) -> Result<String, Ec2Error> {
        self.image
            .get_or_try_init(|| async {
                let xml = self
                    .call("DescribeImages", vec![("Owner.1".into(), "amazon".into())])
                    .await?;
                let mut first = xml
                    .descendants("imageId")
                    .map(|e| e.text.trim().to_string())
                    .filter(|s| !s.is_empty());
                if let Some(id) = first.next() {
                    return Ok(id);
                }
                let xml = self.call("DescribeImages", Vec::new()).await?;
                let mut any = xml
                    .descendants("imageId")
                    .map(|e| e.text.trim().to_string())
                    .filter(|s| !s.is_empty());
                any.next().ok_or_else(|| Ec2Error {
                    action: "DescribeImages".into(),
                    code: None,
                    message: "no image is registered".into(),
                })
            })
            .await
            .cloned()
    }

    async fn call(&self, action: &str, params: Vec<(String, String)>) -> Result<Element, Ec2Error> {
        self.query("ec2", VERSION, action, params).await
    }

    async fn autoscaling(
        &self,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Element, Ec2Error> {
        self.query("autoscaling", AUTOSCALING_VERSION, action, params)
            .await
    }

    /// One Query-protocol call to `service` (`ec2`, `autoscaling`).
    async fn query(
        &self,
        service: &str,
        version: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Element, Ec2Error> {
        let fail = |code: Option<String>, message: String| Ec2Error {
            action: action.to_string(),
            code,
            message,
        };
        let mut body = format!("Action={action}&Version={version}");
        for (k, v) in &params {
            body.push('&');
            body.push_str(&utf8_percent_encode(k, FORM).to_string());
            body.push('=');
            body.push_str(&utf8_percent_encode(v, FORM).to_string());
        }
        let now = jiff::Timestamp::now();
        let amz_date = now.strftime("%Y%m%dT%H%M%SZ").to_string();
        let date = now.strftime("%Y%m%d").to_string();
        let authorization = format!(
            "AWS4-HMAC-SHA256 Credential={}/{date}/{}/{service}/aws4_request, SignedHeaders=host;x-amz-date, Signature={}",
            self.access_key,
            self.region,
            "0".repeat(64)
        );
        // moto is one Python process: on a loaded machine a connection can be refused or cut.
        // A request that got no answer is sent again (EC2's own SDKs retry the same way); an
        // answer, even an error, is final.
        let mut attempt = 0;
        let response = loop {
            let sent = self
                .http
                .post(format!("{}/", self.endpoint))
                .header(
                    "content-type",
                    "application/x-www-form-urlencoded; charset=utf-8",
                )
                .header("x-amz-date", &amz_date)
                .header("authorization", &authorization)
                .timeout(answer_within(action))
                .body(body.clone())
                .send()
                .await;
            match sent {
                Ok(r) => break r,
                Err(e) if attempt < SEND_RETRIES => {
                    attempt += 1;
                    tracing::debug!(action, attempt, error = %e, "EC2 request got no answer; sending it again");
                    tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
                }
                Err(e) => return Err(fail(None, format!("request failed: {e}"))),
            }
        };
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| fail(None, format!("reading the response: {e}")))?;
        let xml =
            parse(&text).map_err(|e| fail(None, format!("unreadable response ({status}): {e}")))?;
        if !status.is_success() || xml.name == "Response" && xml.path(&["Errors"]).is_some() {
            let error = xml.descendants("Error").next();
            let code = error
                .map(|e| e.text_at(&["Code"]))
                .filter(|c| !c.is_empty());
            let message = error
                .map(|e| e.text_at(&["Message"]))
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(fail(code, message));
        }
        Ok(xml)
    }
}

/// How long moto may take to answer `action`. Its first DescribeImages builds moto's whole AMI
/// catalogue, which took over 30 s on a loaded two-core machine (CI, with several beds, clouds
/// and providers at once): the node group then failed with NodeCreationFailure.
fn answer_within(action: &str) -> Duration {
    if action == "DescribeImages" {
        Duration::from_secs(180)
    } else {
        Duration::from_secs(30)
    }
}

/// A Query-protocol list: `<prefix>.1=<first>`, `<prefix>.2=<second>`, ….
fn numbered(prefix: &str, values: &[String]) -> Vec<(String, String)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("{prefix}.{}", i + 1), v.clone()))
        .collect()
}

/// `TagSpecification.1.*` parameters putting `tags` on the created `resource_type`.
fn tag_specification(resource_type: &str, tags: &[(String, String)]) -> Vec<(String, String)> {
    if tags.is_empty() {
        return Vec::new();
    }
    let mut params = vec![(
        "TagSpecification.1.ResourceType".to_string(),
        resource_type.to_string(),
    )];
    for (i, (key, value)) in tags.iter().enumerate() {
        params.push((format!("TagSpecification.1.Tag.{}.Key", i + 1), key.clone()));
        params.push((
            format!("TagSpecification.1.Tag.{}.Value", i + 1),
            value.clone(),
        ));
    }
    params
}

/// The id a create call answered with, or an error when the answer carries none.
fn created_id(action: &str, id: String) -> Result<String, Ec2Error> {
    if id.is_empty() {
        return Err(Ec2Error {
            action: action.to_string(),
            code: None,
            message: "the response carries no id".into(),
        });
    }
    Ok(id)
}

/// An XML element: its local name, child elements and concatenated text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    /// The name without namespace prefix.
    pub name: String,
    /// Child elements in order.
    pub children: Vec<Element>,
    /// The element's own text (entities decoded), child text excluded.
    pub text: String,
}

impl Element {
    /// Direct children named `name`.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The element reached by following direct children named by `path`.
    pub fn path(&self, path: &[&str]) -> Option<&Element> {
        let mut here = self;
        for step in path {
            here = here.children.iter().find(|c| c.name == *step)?;
        }
        Some(here)
    }

    /// The trimmed text at `path`, empty when absent.
    pub fn text_at(&self, path: &[&str]) -> String {
        self.path(path)
            .map(|e| e.text.trim().to_string())
            .unwrap_or_default()
    }

    /// Every element named `name` at any depth, document order.
    pub fn descendants<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        let mut stack: Vec<&Element> = self.children.iter().rev().collect();
        std::iter::from_fn(move || {
            while let Some(e) = stack.pop() {
                stack.extend(e.children.iter().rev());
                if e.name == name {
                    return Some(e);
                }
            }
            None
        })
    }
}

/// Parses an XML document into its root element.
///
/// # Errors
/// On unbalanced or truncated markup.
pub fn parse(xml: &str) -> Result<Element, String> {
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut rest = xml;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("<?") {
            rest = after
                .find("?>")
                .map(|i| &after[i + 2..])
                .ok_or("unterminated declaration")?;
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after
                .find("-->")
                .map(|i| &after[i + 3..])
                .ok_or("unterminated comment")?;
        } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").ok_or("unterminated CDATA")?;
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&after[..end]);
            }
            rest = &after[end + 3..];
        } else if let Some(after) = rest.strip_prefix("<!") {
            rest = after
                .find('>')
                .map(|i| &after[i + 1..])
                .ok_or("unterminated doctype")?;
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>').ok_or("unterminated end tag")?;
            let name = local(after[..end].trim());
            let done = stack.pop().ok_or("unbalanced end tag")?;
            if done.name != name || stack.is_empty() {
                return Err(format!("end tag </{name}> does not close <{}>", done.name));
            }
            if let Some(parent) = stack.last_mut() {
                parent.children.push(done);
            }
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('<') {
            let end = after.find('>').ok_or("unterminated start tag")?;
            let tag = &after[..end];
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = local(tag.split_whitespace().next().unwrap_or_default());
            let element = Element {
                name: name.to_string(),
                ..Element::default()
            };
            if self_closing {
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(element);
                }
            } else {
                stack.push(element);
            }
            rest = &after[end + 1..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&decode_entities(&rest[..end]));
            }
            rest = &rest[end..];
        }
    }
    if stack.len() != 1 {
        return Err("unclosed element".into());
    }
    let document = stack.pop().unwrap_or_default();
    document
        .children
        .into_iter()
        .next()
        .ok_or_else(|| "no root element".into())
}

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_reads_nested_items_text_and_entities() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<RunInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>r-1</requestId>
  <instancesSet>
    <item>
      <instanceId>i-0123</instanceId>
      <placement><availabilityZone>us-west-2a</availabilityZone><tenancy/></placement>
      <privateDnsName>ip-10-0-1-5.us-west-2.compute.internal</privateDnsName>
      <tagSet><item><key>a&amp;b</key><value>c</value></item></tagSet>
    </item>
    <item><instanceId>i-0456</instanceId></item>
  </instancesSet>
</RunInstancesResponse>"#;
        let root = parse(xml).unwrap();
        assert_eq!(root.name, "RunInstancesResponse");
        let items: Vec<_> = root
            .path(&["instancesSet"])
            .unwrap()
            .children_named("item")
            .collect();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].text_at(&["placement", "availabilityZone"]),
            "us-west-2a"
        );
        assert_eq!(items[0].text_at(&["tagSet", "item", "key"]), "a&b");
        assert_eq!(items[1].text_at(&["privateDnsName"]), "");
        assert_eq!(root.descendants("instanceId").count(), 2);
    }

    #[test]
    fn unbalanced_markup_is_an_error() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("<a>").is_err());
        assert!(parse("").is_err());
    }
}
