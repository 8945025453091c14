//! A minimal EC2 and Auto Scaling Query-protocol client for moto in server mode: the node
//! instances of emulated nodegroups, the Auto Scaling group holding them and each cluster's
//! security group live there, so a provider (or a test) that looks at EC2 or Auto Scaling sees
//! what it would see behind real EKS.
//!
//! Requests are form-encoded POSTs (`Action=…&Version=2016-11-15&…`) over plain HTTP with an
//! `Authorization` header whose credential scope tells moto the account and region; moto does not
//! check the signature, so it is a placeholder. Responses are XML, read with a small parser that
//! knows elements, text and the five predefined entities — all that EC2's responses use.
//!
//! This module holds the client, its errors and its one Query-protocol call; [`resources`] the
//! EC2 actions (VPCs, subnets, instances, security groups, the inventory), [`autoscaling`] the
//! Auto Scaling ones, [`iam`] the IAM role, [`xml`] the response parser.

mod autoscaling;
mod iam;
mod resources;
mod xml;

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

pub use xml::{Element, parse};
