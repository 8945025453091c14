//! The thin layer between the network services and the EC2 SDK: every call is counted in the
//! provider's metrics and its error classified; tags and filters are converted here.

use std::collections::BTreeMap;
use std::future::Future;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use aws_smithy_runtime_api::http::Response;
use provider_runtime::CloudCalls;

use crate::client::{CloudError, classify};

/// An EC2 client that counts its calls.
#[derive(Clone, Debug)]
pub struct Ec2 {
    client: aws_sdk_ec2::Client,
    calls: CloudCalls,
}

impl Ec2 {
    /// Wraps `client`, counting calls into `calls`.
    pub fn new(client: aws_sdk_ec2::Client, calls: CloudCalls) -> Self {
        Self { client, calls }
    }

    /// The SDK client, to build requests.
    pub fn sdk(&self) -> &aws_sdk_ec2::Client {
        &self.client
    }

    /// Sends one request built on [`Ec2::sdk`], counts it as `operation` and classifies its error.
    /// A `Retry-After` holds the action: EC2 is a Query API (every request is `POST /`) and
    /// throttles per action.
    pub async fn call<T, E, F>(&self, operation: &'static str, request: F) -> Result<T, CloudError>
    where
        F: Future<Output = Result<T, SdkError<E, Response>>>,
        E: ProvideErrorMetadata + std::error::Error,
    {
        let sent = self.calls.admit("ec2", operation)?;
        let result = request.await.map_err(classify);
        sent.answered(operation, result.as_ref().map(|_| ()));
        if let Err(error) = &result {
            tracing::debug!(operation, ?error, "EC2 call failed");
        }
        result
    }

    /// Adds `tags` to the resource `id` (CreateTags: an existing key takes the new value).
    pub async fn add_tags(
        &self,
        id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let request = self
            .client
            .create_tags()
            .resources(id)
            .set_tags(Some(sdk_tags(tags)));
        self.call("CreateTags", request.send()).await.map(|_| ())
    }
}

impl Ec2 {
    /// Removes the tag `(key, value)` from every EC2 resource that carries it: DescribeTags
    /// filtered by key and value, then DeleteTags on what it lists, a page at a time.
    pub async fn remove_tag(&self, (key, value): &(String, String)) -> Result<(), CloudError> {
        let filter = |name: &str, value: &str| {
            aws_sdk_ec2::types::Filter::builder()
                .name(name)
                .values(value)
                .build()
        };
        let mut token = None;
        loop {
            let request = self
                .client
                .describe_tags()
                .filters(filter("key", key))
                .filters(filter("value", value))
                .set_next_token(token.take());
            let out = self.call("DescribeTags", request.send()).await?;
            let ids: Vec<String> = out
                .tags()
                .iter()
                .filter_map(|t| t.resource_id().map(str::to_string))
                .collect();
            if !ids.is_empty() {
                let tag = Tag::builder().key(key).value(value).build();
                let request = self.client.delete_tags().set_resources(Some(ids)).tags(tag);
                self.call("DeleteTags", request.send()).await?;
            }
            match out.next_token() {
                Some(next) if !next.is_empty() => token = Some(next.to_string()),
                _ => return Ok(()),
            }
        }
    }
}

/// The tags of an EC2 resource as a map.
pub fn tags_of(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .filter_map(|t| {
            Some((
                t.key()?.to_string(),
                t.value().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

/// The tags as the SDK takes them.
pub fn sdk_tags(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

/// Tags applied by the create call itself, so a resource is never untagged, even for a moment.
pub fn tag_spec(resource_type: ResourceType, tags: &BTreeMap<String, String>) -> TagSpecification {
    TagSpecification::builder()
        .resource_type(resource_type)
        .set_tags(Some(sdk_tags(tags)))
        .build()
}

/// A Describe filter.
pub fn filter(
    name: impl Into<String>,
    values: impl IntoIterator<Item = impl Into<String>>,
) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(values.into_iter().map(Into::into).collect()))
        .build()
}

/// A filter on one tag's value.
pub fn tag_filter(key: &str, value: &str) -> Filter {
    filter(format!("tag:{key}"), [value])
}

/// Whether a failed delete or detach means the thing is already gone (or already detached).
pub fn is_gone(error: &CloudError) -> bool {
    match error {
        CloudError::NotFound(_) => true,
        CloudError::Invalid { code, .. } => {
            code.ends_with(".NotFound") || code == "Gateway.NotAttached"
        }
        _ => false,
    }
}

/// Whether a failed delete means something still depends on the resource (retry later).
pub fn is_in_use(error: &CloudError) -> bool {
    match error {
        CloudError::InUse(_) => true,
        CloudError::Invalid { code, .. } => {
            code.ends_with(".InUse") || code == "DependencyViolation"
        }
        _ => false,
    }
}

/// The tags of `want` that `have` lacks or holds with another value (tags never removed).
pub fn missing_tags(
    have: &BTreeMap<String, String>,
    want: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    want.iter()
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn missing_tags_lists_absent_and_changed_tags_but_never_extra_ones() {
        let have = map(&[("Name", "a"), ("team", "x"), ("extra", "1")]);
        let want = map(&[("Name", "a"), ("team", "y"), ("env", "prod")]);
        assert_eq!(
            missing_tags(&have, &want),
            map(&[("env", "prod"), ("team", "y")])
        );
        assert!(missing_tags(&want, &want).is_empty());
    }

    #[test]
    fn not_found_codes_and_a_detached_gateway_count_as_gone() {
        assert!(is_gone(&CloudError::NotFound("x".into())));
        for code in [
            "InvalidNatGatewayID.NotFound",
            "InvalidAssociationID.NotFound",
            "Gateway.NotAttached",
        ] {
            assert!(
                is_gone(&CloudError::Invalid {
                    code: code.into(),
                    message: String::new()
                }),
                "{code}"
            );
        }
        assert!(!is_gone(&CloudError::Invalid {
            code: "InvalidParameterValue".into(),
            message: String::new()
        }));
        assert!(!is_gone(&CloudError::Transient("x".into())));
    }

    #[test]
    fn dependency_violations_and_addresses_in_use_mean_retry_later() {
        assert!(is_in_use(&CloudError::InUse("DependencyViolation".into())));
        assert!(is_in_use(&CloudError::Invalid {
            code: "InvalidIPAddress.InUse".into(),
            message: String::new()
        }));
        assert!(!is_in_use(&CloudError::Invalid {
            code: "InvalidParameterValue".into(),
            message: String::new()
        }));
    }

    #[test]
    fn tags_convert_both_ways() {
        let tags = map(&[("Name", "n"), ("k", "")]);
        assert_eq!(tags_of(&sdk_tags(&tags)), tags);
        let spec = tag_spec(ResourceType::Vpc, &tags);
        assert_eq!(spec.resource_type(), Some(&ResourceType::Vpc));
        assert_eq!(spec.tags().len(), 2);
    }
}
