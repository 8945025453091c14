//! Auto Scaling on moto: the group (and its launch configuration) holding a nodegroup's
//! instances, attaching and detaching them, reading and deleting it.

use super::{AutoScalingGroup, Ec2, Ec2Error, numbered};

impl Ec2 {
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
}
