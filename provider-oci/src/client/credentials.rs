//! An OCI user's API signing key, from the identity Secret (`spec.identityRef`: keys `tenancy`,
//! `user`, `fingerprint` and `key`, the PEM private key, as Cluster API Provider OCI's
//! credential Secrets hold them, so teams moving over keep their Secrets) or, for the
//! controller's own identity, its environment (`OCI_TENANCY_ID`, `OCI_USER_ID`,
//! `OCI_CREDENTIALS_FINGERPRINT`, and `OCI_CREDENTIALS_KEY` holding the PEM or
//! `OCI_CREDENTIALS_KEY_PATH` naming a file).

use contract::conditions::Reason;
use oci_signer::ApiKey;
use provider_runtime::ProviderError;
use provider_runtime::identity::{self, Hidden, SecretIdentity};

/// Keys of the identity Secret.
pub const TENANCY_KEY: &str = "tenancy";
/// See [`TENANCY_KEY`].
pub const USER_KEY: &str = "user";
/// See [`TENANCY_KEY`].
pub const FINGERPRINT_KEY: &str = "fingerprint";
/// See [`TENANCY_KEY`].
pub const KEY_KEY: &str = "key";
/// A pass phrase of an encrypted key: refused (ring reads no encrypted keys).
pub const PASSPHRASE_KEY: &str = "passphrase";

/// An API key's parts. `Debug` never shows the private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    /// The tenancy OCID.
    pub tenancy: String,
    /// The user OCID.
    pub user: String,
    /// The key's fingerprint.
    pub fingerprint: String,
    /// The PEM private key.
    pem: Hidden<String>,
}

fn unauthorized(message: impl Into<String>) -> ProviderError {
    ProviderError::terminal(Reason::Unauthorized, message)
}

impl Credential {
    /// The key id, `<tenancy>/<user>/<fingerprint>`: the client cache's identity (the cache
    /// compares the whole credential, so a key replaced under the same id builds a new client).
    pub fn cache_id(&self) -> String {
        format!("{}/{}/{}", self.tenancy, self.user, self.fingerprint)
    }

    /// The signing key; `key` names where the PEM was read (a Secret's key, a variable).
    ///
    /// # Errors
    /// Terminal `Unauthorized` when the PEM is not an unencrypted RSA key.
    pub fn api_key(&self, key: &str) -> Result<ApiKey, ProviderError> {
        ApiKey::from_pem(&self.pem.0, &self.tenancy, &self.user, &self.fingerprint)
            .map_err(|e| unauthorized(format!("{key}: {e}")))
    }
}

/// Checks the tenancy and user OCIDs; `fields` names where each was read.
fn check_ids(tenancy: &str, user: &str, fields: [String; 2]) -> Result<(), ProviderError> {
    let [tenancy_field, user_field] = fields;
    if !tenancy.starts_with("ocid1.tenancy.") {
        return Err(unauthorized(format!(
            "{tenancy_field}: {tenancy:?} is not a tenancy OCID (ocid1.tenancy.oc1..…)"
        )));
    }
    if !user.starts_with("ocid1.user.") {
        return Err(unauthorized(format!(
            "{user_field}: {user:?} is not a user OCID (ocid1.user.oc1..…)"
        )));
    }
    Ok(())
}

impl identity::Credentials for Credential {
    /// A Secret's [`TENANCY_KEY`], [`USER_KEY`], [`FINGERPRINT_KEY`] and [`KEY_KEY`]; a key
    /// with a [`PASSPHRASE_KEY`] is refused.
    fn from_secret(secret: &SecretIdentity) -> Result<Self, ProviderError> {
        let source = secret.describe();
        let field = |key: &str| format!("{source}, key {key}");
        if secret.get(PASSPHRASE_KEY).is_some() {
            return Err(unauthorized(format!(
                "{source} holds a passphrase: encrypted API keys are not supported; store the key without its pass phrase (openssl rsa -in key.pem -out plain.pem)"
            )));
        }
        let [tenancy, user, fingerprint, pem] =
            secret.require([TENANCY_KEY, USER_KEY, FINGERPRINT_KEY, KEY_KEY])?;
        check_ids(tenancy, user, [field(TENANCY_KEY), field(USER_KEY)])?;
        let credential = Credential {
            tenancy: tenancy.to_string(),
            user: user.to_string(),
            fingerprint: fingerprint.to_string(),
            pem: Hidden(pem.to_string()),
        };
        credential.api_key(&field(KEY_KEY))?;
        Ok(credential)
    }

    /// The controller's environment ([`from_env`]).
    async fn from_controller() -> Result<Self, ProviderError> {
        from_env(|k| std::env::var(k).ok())
    }
}

/// The controller's own API key from its environment (`var` reads a variable).
///
/// # Errors
/// Terminal `Unauthorized` when a part is missing or the key cannot be read.
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Credential, ProviderError> {
    let get = |k: &str| {
        var(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let (Some(tenancy), Some(user), Some(fingerprint)) = (
        get("OCI_TENANCY_ID"),
        get("OCI_USER_ID"),
        get("OCI_CREDENTIALS_FINGERPRINT"),
    ) else {
        return Err(unauthorized(
            "no OCI credentials: set spec.identityRef to a Secret holding tenancy, user, fingerprint and key, or give the controller OCI_TENANCY_ID, OCI_USER_ID, OCI_CREDENTIALS_FINGERPRINT and OCI_CREDENTIALS_KEY (or OCI_CREDENTIALS_KEY_PATH)",
        ));
    };
    let source = "the controller's OCI credentials";
    let field = |var: &str| format!("{source}, {var}");
    check_ids(
        &tenancy,
        &user,
        [field("OCI_TENANCY_ID"), field("OCI_USER_ID")],
    )?;
    let (pem, read_from) = match (get("OCI_CREDENTIALS_KEY"), get("OCI_CREDENTIALS_KEY_PATH")) {
        (Some(pem), _) => (pem, field("OCI_CREDENTIALS_KEY")),
        (None, Some(path)) => (
            std::fs::read_to_string(&path)
                .map_err(|e| unauthorized(format!("{source}: reading the key file {path}: {e}")))?,
            format!("{source}, the key file {path} (OCI_CREDENTIALS_KEY_PATH)"),
        ),
        (None, None) => {
            return Err(unauthorized(
                "the controller has OCI_TENANCY_ID and OCI_USER_ID but neither OCI_CREDENTIALS_KEY nor OCI_CREDENTIALS_KEY_PATH",
            ));
        }
    };
    let credential = Credential {
        tenancy,
        user,
        fingerprint,
        pem: Hidden(pem),
    };
    credential.api_key(&read_from)?;
    Ok(credential)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_must_name_every_part_and_a_readable_key() {
        let none = from_env(|_| None).unwrap_err().to_string();
        assert!(none.contains("OCI_TENANCY_ID"), "{none}");
        let vars = |k: &str| match k {
            "OCI_TENANCY_ID" => Some("ocid1.tenancy.oc1..a".to_string()),
            "OCI_USER_ID" => Some("ocid1.user.oc1..b".to_string()),
            "OCI_CREDENTIALS_FINGERPRINT" => Some("aa:bb".to_string()),
            "OCI_CREDENTIALS_KEY" => Some("not a key".to_string()),
            _ => None,
        };
        let bad = from_env(vars).unwrap_err().to_string();
        assert!(bad.contains("RSA private key"), "{bad}");
        assert!(bad.contains("OCI_CREDENTIALS_KEY"), "{bad}");
        let wrong = from_env(|k| match k {
            "OCI_TENANCY_ID" => Some("tenancy".to_string()),
            other => vars(other),
        })
        .unwrap_err()
        .to_string();
        assert!(wrong.contains("not a tenancy OCID"), "{wrong}");
        assert!(wrong.contains("OCI_TENANCY_ID"), "{wrong}");
    }
}
