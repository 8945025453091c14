//! Where the provider's AWS credentials come from: a Secret named by `identityRef` in the
//! cluster's namespace, or the controller's own (its environment).
//!
//! Credentials never reach logs, events, conditions or status: [`AwsCredentials`] prints
//! only its access key id.

use contract::api::{IdentityKind, IdentityRef};
use contract::conditions::Reason;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use provider_runtime::ProviderError;

/// Static AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    /// Access key id (not secret).
    pub access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

impl AwsCredentials {
    /// Credentials from their parts.
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token,
        }
    }

    /// The controller's own credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
    /// `AWS_SESSION_TOKEN`.
    pub fn from_env() -> Option<Self> {
        let id = std::env::var("AWS_ACCESS_KEY_ID")
            .ok()
            .filter(|v| !v.is_empty())?;
        let secret = std::env::var("AWS_SECRET_ACCESS_KEY")
            .ok()
            .filter(|v| !v.is_empty())?;
        Some(Self::new(
            id,
            secret,
            std::env::var("AWS_SESSION_TOKEN")
                .ok()
                .filter(|v| !v.is_empty()),
        ))
    }

    /// As the SDK's credential type.
    pub fn to_sdk(&self) -> aws_credential_types::Credentials {
        aws_credential_types::Credentials::new(
            &self.access_key_id,
            &self.secret_access_key,
            self.session_token.clone(),
            None,
            "capi-provider-eks",
        )
    }
}

/// Secret keys read from an identity Secret.
pub const ACCESS_KEY_ID_KEY: &str = "AccessKeyID";
/// See [`ACCESS_KEY_ID_KEY`].
pub const SECRET_ACCESS_KEY_KEY: &str = "SecretAccessKey";
/// See [`ACCESS_KEY_ID_KEY`]; optional.
pub const SESSION_TOKEN_KEY: &str = "SessionToken";
/// Resolves the credentials for an object in `namespace`. `identity_ref` `None` or kind
/// `Controller` means the controller's own; kind `Secret` reads that Secret by name in the
/// object's namespace.
///
/// # Errors
/// Terminal `Unauthorized` when the Secret is missing or incomplete, or when the controller has
/// no credentials of its own; Kube errors otherwise.
pub async fn resolve_credentials(
    client: &kube::Client,
    namespace: &str,
    identity_ref: Option<&IdentityRef>,
) -> Result<AwsCredentials, ProviderError> {
    let secret_name = match identity_ref {
        Some(IdentityRef {
            kind: IdentityKind::Secret,
            name: Some(name),
            ..
        }) => name.clone(),
        Some(IdentityRef {
            kind: IdentityKind::Secret,
            name: None,
            ..
        }) => {
            return Err(ProviderError::terminal(
                Reason::InvalidSpec,
                "identityRef of kind Secret needs a name",
            ));
        }
        _ => {
            return AwsCredentials::from_env().ok_or_else(|| {
                ProviderError::terminal(
                    Reason::Unauthorized,
                    "the controller has no AWS credentials of its own (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); set spec.identityRef to a Secret",
                )
            });
        }
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let Some(secret) = secrets.get_opt(&secret_name).await? else {
        return Err(ProviderError::terminal(
            Reason::Unauthorized,
            format!("identity Secret {namespace}/{secret_name} not found"),
        ));
    };
    credentials_from_secret(&secret).ok_or_else(|| {
        ProviderError::terminal(
            Reason::Unauthorized,
            format!("identity Secret {namespace}/{secret_name} must hold {ACCESS_KEY_ID_KEY} and {SECRET_ACCESS_KEY_KEY}"),
        )
    })
}

/// Reads the credential keys of an identity Secret.
pub fn credentials_from_secret(secret: &Secret) -> Option<AwsCredentials> {
    let data = secret.data.as_ref()?;
    let text = |key: &str| {
        data.get(key)
            .and_then(|v| String::from_utf8(v.0.clone()).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Some(AwsCredentials::new(
        text(ACCESS_KEY_ID_KEY)?,
        text(SECRET_ACCESS_KEY_KEY)?,
        text(SESSION_TOKEN_KEY),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn debug_output_never_shows_the_secret_key() {
        let c = AwsCredentials::new(
            "AKIDEXAMPLE",
            "very-secret-value",
            Some("session-secret".into()),
        );
        let printed = format!("{c:?}");
        assert!(printed.contains("AKIDEXAMPLE"));
        assert!(!printed.contains("very-secret-value"));
        assert!(!printed.contains("session-secret"));
    }

    #[test]
    fn a_secret_needs_both_keys() {
        let mut secret = Secret {
            data: Some([(ACCESS_KEY_ID_KEY.to_string(), ByteString(b"AKID".to_vec()))].into()),
            ..Secret::default()
        };
        assert_eq!(credentials_from_secret(&secret), None);
        secret.data.as_mut().unwrap().insert(
            SECRET_ACCESS_KEY_KEY.to_string(),
            ByteString(b"s3cr3t\n".to_vec()),
        );
        assert_eq!(
            credentials_from_secret(&secret),
            Some(AwsCredentials::new("AKID", "s3cr3t", None))
        );
    }
}
