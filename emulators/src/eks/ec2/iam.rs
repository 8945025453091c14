//! IAM on moto: the role a cluster or nodegroup is given.

use super::{Ec2, Ec2Error, IAM_VERSION, created_id};

impl Ec2 {
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
}
