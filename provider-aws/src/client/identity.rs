//! Where the provider's AWS credentials come from: a Secret named by `identityRef` in the
//! cluster's namespace, or the controller's own (its environment).
//!
//! Credentials never reach logs, events, conditions or status: [`AwsCredentials`] prints
//! only its access key id.

use contract::conditions::Reason;
use provider_runtime::ProviderError;
use provider_runtime::identity::{self, Hidden, SecretIdentity};

/// Static AWS credentials. `Debug` shows only the access key id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AwsCredentials {
    /// Access key id (not secret).
    pub access_key_id: String,
    secret_access_key: Hidden<String>,
    session_token: Option<Hidden<String>>,
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
            secret_access_key: Hidden(secret_access_key.into()),
            session_token: session_token.map(Hidden),
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
            &self.secret_access_key.0,
            self.session_token.clone().map(|t| t.0),
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

impl identity::Credentials for AwsCredentials {
    /// A Secret's [`ACCESS_KEY_ID_KEY`] and [`SECRET_ACCESS_KEY_KEY`] (and optionally
    /// [`SESSION_TOKEN_KEY`]).
    fn from_secret(secret: &SecretIdentity) -> Result<Self, ProviderError> {
        let [id, key] = secret.require([ACCESS_KEY_ID_KEY, SECRET_ACCESS_KEY_KEY])?;
        let session = secret.get(SESSION_TOKEN_KEY).map(str::to_string);
        Ok(AwsCredentials::new(id, key, session))
    }

    /// The controller's environment ([`AwsCredentials::from_env`]).
    async fn from_controller() -> Result<Self, ProviderError> {
        AwsCredentials::from_env().ok_or_else(|| {
            ProviderError::terminal(
                Reason::Unauthorized,
                "the controller has no AWS credentials of its own (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); set spec.identityRef to a Secret",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::Secret;

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
        let read = |s: &Secret| {
            <AwsCredentials as identity::Credentials>::from_secret(&SecretIdentity::from_secret(
                "ns", "aws", s,
            ))
        };
        assert_eq!(
            read(&secret).unwrap_err().to_string(),
            "identity Secret ns/aws must hold AccessKeyID and SecretAccessKey (non-empty UTF-8 text; SecretAccessKey is missing, blank or not text)"
        );
        secret.data.as_mut().unwrap().insert(
            SECRET_ACCESS_KEY_KEY.to_string(),
            ByteString(b"s3cr3t\n".to_vec()),
        );
        assert_eq!(
            read(&secret).unwrap(),
            AwsCredentials::new("AKID", "s3cr3t", None)
        );
    }
}
