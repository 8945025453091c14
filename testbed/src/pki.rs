//! Throwaway certificate authorities and certificates for loopback test servers.
//!
//! Everything here is generated per run and never leaves the run's temporary directory.

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType,
};

/// A PEM certificate with its PEM (PKCS#8) private key.
#[derive(Clone)]
pub struct CertPair {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PKCS#8 PEM.
    pub key_pem: String,
}

impl std::fmt::Debug for CertPair {
    // The key is a credential: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertPair").finish_non_exhaustive()
    }
}

/// A certificate authority that signs serving and client certificates.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
    cert_pem: String,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

impl Authority {
    /// Creates a new self-signed CA with the given common name.
    pub fn new(common_name: &str) -> Result<Self, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name = name(common_name, None);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        let cert_pem = issuer.pem();
        Ok(Self { issuer, cert_pem })
    }

    /// The CA certificate, PEM: what clients put in their trust bundle.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A serving certificate valid for `localhost`, `127.0.0.1` and the extra names and IPs given.
    pub fn serving(
        &self,
        common_name: &str,
        extra_dns: &[&str],
        extra_ips: &[IpAddr],
    ) -> Result<CertPair, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name = name(common_name, None);
        let mut sans = vec![
            SanType::DnsName("localhost".try_into()?),
            SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        ];
        for dns in extra_dns {
            sans.push(SanType::DnsName((*dns).try_into()?));
        }
        for ip in extra_ips {
            sans.push(SanType::IpAddress(*ip));
        }
        params.subject_alt_names = sans;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    /// A client certificate with the given user name (CN) and groups (O).
    pub fn client(&self, user: &str, group: Option<&str>) -> Result<CertPair, rcgen::Error> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name = name(user, group);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    fn sign(&self, params: CertificateParams) -> Result<CertPair, rcgen::Error> {
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A fresh key pair, PKCS#8 PEM, for signing service-account tokens.
pub fn signing_key_pem() -> Result<(String, String), rcgen::Error> {
    let key = KeyPair::generate()?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

fn name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    if let Some(org) = organization {
        dn.push(DnType::OrganizationName, org);
    }
    dn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serving_certificate_is_signed_by_its_authority_and_never_debug_prints_its_key() {
        let ca = Authority::new("test-ca").unwrap();
        let pair = ca.serving("server", &["example.test"], &[]).unwrap();
        assert!(pair.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pair.key_pem.contains("PRIVATE KEY"));
        assert_ne!(pair.cert_pem, ca.cert_pem());
        assert!(!format!("{pair:?}").contains("PRIVATE"));
    }
}
