//! Building the two kubeconfig Secrets (`<cluster>-kubeconfig` with a token,
//! `<cluster>-user-kubeconfig` with an exec plugin) with the name, type, label and controller
//! owner both carry, and reading the kubeconfig back out of one.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::{
    ClusterEntry, ContextEntry, ExecPlugin, Kubeconfig, KubeconfigError, NamedCluster,
    NamedContext, NamedUser, UserEntry,
};
use crate::api::{ApiEndpoint, Endpoint, EndpointName};
use crate::capi::{CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE};

/// The Secret data key holding the kubeconfig.
pub const KUBECONFIG_DATA_KEY: &str = "value";

/// `<cluster>-kubeconfig`: the contract Secret's name.
pub fn kubeconfig_secret_name(cluster_name: &str) -> String {
    format!("{cluster_name}-kubeconfig")
}

/// `<cluster>-user-kubeconfig`: the user Secret's name.
pub fn user_kubeconfig_secret_name(cluster_name: &str) -> String {
    format!("{cluster_name}-user-kubeconfig")
}

fn kubeconfig_secret(
    name: String,
    cluster_name: &str,
    namespace: &str,
    mut owner: OwnerReference,
    config: &Kubeconfig,
) -> Secret {
    owner.controller = Some(true);
    Secret {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                CLUSTER_NAME_LABEL.to_owned(),
                cluster_name.to_owned(),
            )])),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        type_: Some(CLUSTER_SECRET_TYPE.to_owned()),
        data: Some(BTreeMap::from([(
            KUBECONFIG_DATA_KEY.to_owned(),
            ByteString(config.to_yaml().into_bytes()),
        )])),
        ..Secret::default()
    }
}

/// The kubeconfig of the contract Secret: one cluster, one token user, one context
/// (`<cluster>-admin@<cluster>`), server `https://host:port` of `endpoint`.
pub fn cluster_kubeconfig(
    cluster_name: &str,
    endpoint: &ApiEndpoint,
    ca_pem: &[u8],
    token: &str,
) -> Kubeconfig {
    let user = format!("{cluster_name}-admin");
    let context = format!("{user}@{cluster_name}");
    Kubeconfig {
        api_version: "v1".into(),
        kind: "Config".into(),
        clusters: vec![NamedCluster {
            name: cluster_name.to_owned(),
            cluster: ClusterEntry {
                server: endpoint.https_url(),
                certificate_authority_data: Some(STANDARD.encode(ca_pem)),
            },
        }],
        contexts: vec![NamedContext {
            name: context.clone(),
            context: ContextEntry {
                cluster: cluster_name.to_owned(),
                user: user.clone(),
                namespace: None,
            },
        }],
        users: vec![NamedUser {
            name: user,
            user: UserEntry {
                token: Some(token.to_owned()),
                ..UserEntry::default()
            },
        }],
        current_context: context,
    }
}

/// The `<cluster>-kubeconfig` Secret Cluster API core reads to reach the workload cluster.
///
/// Guarantees: name `<cluster>-kubeconfig` in `namespace`; type `cluster.x-k8s.io/secret`;
/// label `cluster.x-k8s.io/cluster-name=<cluster>`; data key `value` holding a YAML kubeconfig
/// whose current context's server is `https://<endpoint.host>:<endpoint.port>`, trusting
/// `ca_pem`, authenticating with `token`; `owner` as the only owner reference, with
/// `controller: true` (set here whatever the caller passed).
pub fn cluster_kubeconfig_secret(
    cluster_name: &str,
    namespace: &str,
    owner: OwnerReference,
    endpoint: &ApiEndpoint,
    ca_pem: &[u8],
    token: &str,
) -> Secret {
    let config = cluster_kubeconfig(cluster_name, endpoint, ca_pem, token);
    kubeconfig_secret(
        kubeconfig_secret_name(cluster_name),
        cluster_name,
        namespace,
        owner,
        &config,
    )
}

/// The kubeconfig of the user Secret: per endpoint a cluster and a context named
/// `<cluster>-<endpoint name>`, one exec user `<cluster>-user`; current context the preferred
/// endpoint's, or the first endpoint's when the preferred one is not among `endpoints`.
///
/// # Errors
/// [`KubeconfigError::NoEndpoints`] when `endpoints` is empty.
pub fn user_kubeconfig(
    cluster_name: &str,
    endpoints: &[Endpoint],
    preferred: EndpointName,
    ca_pem: &[u8],
    exec: ExecPlugin,
) -> Result<Kubeconfig, KubeconfigError> {
    let current = endpoints
        .iter()
        .find(|e| e.name == preferred)
        .or_else(|| endpoints.first())
        .ok_or_else(|| KubeconfigError::NoEndpoints {
            cluster: cluster_name.to_owned(),
        })?;
    let entry_name = |e: &Endpoint| format!("{cluster_name}-{}", e.name.as_str());
    let user = format!("{cluster_name}-user");
    let ca = STANDARD.encode(ca_pem);
    Ok(Kubeconfig {
        api_version: "v1".into(),
        kind: "Config".into(),
        clusters: endpoints
            .iter()
            .map(|e| NamedCluster {
                name: entry_name(e),
                cluster: ClusterEntry {
                    server: e.api_endpoint().https_url(),
                    certificate_authority_data: Some(ca.clone()),
                },
            })
            .collect(),
        contexts: endpoints
            .iter()
            .map(|e| NamedContext {
                name: entry_name(e),
                context: ContextEntry {
                    cluster: entry_name(e),
                    user: user.clone(),
                    namespace: None,
                },
            })
            .collect(),
        users: vec![NamedUser {
            name: user,
            user: UserEntry {
                exec: Some(exec),
                ..UserEntry::default()
            },
        }],
        current_context: entry_name(current),
    })
}

/// The `<cluster>-user-kubeconfig` Secret, for people and tools: same type, label and owner as
/// the contract Secret; the kubeconfig of [`user_kubeconfig`]. It holds no token, client key or
/// client certificate: credentials come from `exec` at use.
///
/// # Errors
/// [`KubeconfigError::NoEndpoints`] when `endpoints` is empty.
pub fn user_kubeconfig_secret(
    cluster_name: &str,
    namespace: &str,
    owner: OwnerReference,
    endpoints: &[Endpoint],
    preferred: EndpointName,
    ca_pem: &[u8],
    exec: ExecPlugin,
) -> Result<Secret, KubeconfigError> {
    let config = user_kubeconfig(cluster_name, endpoints, preferred, ca_pem, exec)?;
    Ok(kubeconfig_secret(
        user_kubeconfig_secret_name(cluster_name),
        cluster_name,
        namespace,
        owner,
        &config,
    ))
}

/// Reads the kubeconfig under data key `value` of a kubeconfig Secret.
///
/// # Errors
/// [`KubeconfigError::Parse`] when the key is missing or does not hold a kubeconfig.
pub fn kubeconfig_from_secret(secret: &Secret) -> Result<Kubeconfig, KubeconfigError> {
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get(KUBECONFIG_DATA_KEY))
        .ok_or_else(|| KubeconfigError::Parse(format!("no data key \"{KUBECONFIG_DATA_KEY}\"")))?;
    Kubeconfig::parse(&bytes.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubeconfig::{EXEC_API_VERSION, ExecEnvVar};

    const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn owner() -> OwnerReference {
        OwnerReference {
            api_version: "controlplane.cluster.x-k8s.io/v1alpha1".into(),
            kind: "EKSControlPlane".into(),
            name: "c1-cp".into(),
            uid: "1234".into(),
            controller: None,
            block_owner_deletion: None,
        }
    }

    fn endpoint(name: EndpointName, host: &str, port: i32) -> Endpoint {
        Endpoint {
            name,
            host: host.into(),
            port,
        }
    }

    fn eks_exec() -> ExecPlugin {
        ExecPlugin {
            install_hint: Some("install the AWS CLI".into()),
            env: vec![ExecEnvVar {
                name: "AWS_PROFILE".into(),
                value: "dev".into(),
            }],
            ..ExecPlugin::new("aws", ["eks", "get-token", "--cluster-name", "ns-c1"])
        }
    }

    #[test]
    fn the_cluster_secret_has_the_contract_name_type_label_and_owner() {
        let ep = ApiEndpoint {
            host: "abc.eks.amazonaws.com".into(),
            port: 443,
        };
        let s = cluster_kubeconfig_secret("c1", "ns", owner(), &ep, CA, "tok");
        assert_eq!(s.metadata.name.as_deref(), Some("c1-kubeconfig"));
        assert_eq!(s.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(s.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
        assert_eq!(
            s.metadata
                .labels
                .as_ref()
                .unwrap()
                .get(CLUSTER_NAME_LABEL)
                .map(String::as_str),
            Some("c1")
        );
        let owners = s.metadata.owner_references.as_ref().unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].kind, "EKSControlPlane");
        assert_eq!(owners[0].controller, Some(true));
    }

    #[test]
    fn the_cluster_kubeconfig_server_is_the_endpoint_and_the_token_is_used() {
        let ep = ApiEndpoint {
            host: "abc.eks.amazonaws.com".into(),
            port: 443,
        };
        let s = cluster_kubeconfig_secret("c1", "ns", owner(), &ep, CA, "k8s-aws-v1.tok");
        let cfg = kubeconfig_from_secret(&s).unwrap();
        assert_eq!(
            cfg.current_server(),
            Some("https://abc.eks.amazonaws.com:443")
        );
        assert_eq!(
            cfg.current_user().unwrap().token.as_deref(),
            Some("k8s-aws-v1.tok")
        );
        let ca = cfg
            .cluster("c1")
            .unwrap()
            .certificate_authority_data
            .clone()
            .unwrap();
        assert_eq!(STANDARD.decode(ca).unwrap(), CA);
        assert_eq!(cfg.api_version, "v1");
        assert_eq!(cfg.kind, "Config");
    }

    #[test]
    fn the_kubeconfig_is_written_as_yaml_with_kubeconfig_key_names() {
        let ep = ApiEndpoint {
            host: "h".into(),
            port: 6443,
        };
        let yaml = cluster_kubeconfig("c1", &ep, CA, "t").to_yaml();
        assert!(!yaml.trim_start().starts_with('{'), "{yaml}");
        for key in [
            "current-context:",
            "certificate-authority-data:",
            "apiVersion:",
        ] {
            assert!(yaml.contains(key), "{key} missing in {yaml}");
        }
    }

    #[test]
    fn an_ipv6_endpoint_is_bracketed_in_the_server_url() {
        let ep = ApiEndpoint {
            host: "2001:db8::1".into(),
            port: 443,
        };
        assert_eq!(
            cluster_kubeconfig("c", &ep, CA, "t").current_server(),
            Some("https://[2001:db8::1]:443")
        );
    }

    #[test]
    fn the_user_secret_has_one_context_per_endpoint_and_the_preferred_one_current() {
        let eps = [
            endpoint(EndpointName::Public, "pub.example.com", 443),
            endpoint(EndpointName::Private, "10.0.0.5", 443),
        ];
        let s = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &eps,
            EndpointName::Private,
            CA,
            eks_exec(),
        )
        .unwrap();
        assert_eq!(s.metadata.name.as_deref(), Some("c1-user-kubeconfig"));
        assert_eq!(s.type_.as_deref(), Some(CLUSTER_SECRET_TYPE));
        assert_eq!(
            s.metadata.owner_references.as_ref().unwrap()[0].controller,
            Some(true)
        );
        let cfg = kubeconfig_from_secret(&s).unwrap();
        let names: Vec<&str> = cfg.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["c1-public", "c1-private"]);
        assert_eq!(cfg.current_context, "c1-private");
        assert_eq!(cfg.current_server(), Some("https://10.0.0.5:443"));
        assert_eq!(
            cfg.server_of("c1-public"),
            Some("https://pub.example.com:443")
        );
    }

    #[test]
    fn the_user_kubeconfig_holds_no_static_credential_only_the_exec_plugin() {
        let eps = [endpoint(EndpointName::Public, "pub.example.com", 443)];
        let s = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &eps,
            EndpointName::Public,
            CA,
            eks_exec(),
        )
        .unwrap();
        let raw =
            String::from_utf8(s.data.as_ref().unwrap()[KUBECONFIG_DATA_KEY].0.clone()).unwrap();
        assert!(!raw.contains("token:"), "{raw}");
        assert!(!raw.contains("client-key-data"), "{raw}");
        assert!(!raw.contains("client-certificate-data"), "{raw}");
        let cfg = Kubeconfig::parse(raw.as_bytes()).unwrap();
        assert!(!cfg.has_static_credential());
        let exec = cfg.current_user().unwrap().exec.clone().unwrap();
        assert_eq!(exec.command, "aws");
        assert_eq!(exec.api_version, EXEC_API_VERSION);
        assert_eq!(exec.args[..2], ["eks", "get-token"]);
        assert_eq!(exec.install_hint.as_deref(), Some("install the AWS CLI"));
        assert_eq!(exec.env[0].name, "AWS_PROFILE");
        assert!(raw.contains("interactiveMode: IfAvailable"), "{raw}");
    }

    #[test]
    fn a_missing_preferred_endpoint_falls_back_to_the_first() {
        let eps = [endpoint(EndpointName::Private, "10.0.0.5", 443)];
        let cfg = user_kubeconfig("c1", &eps, EndpointName::Public, CA, eks_exec()).unwrap();
        assert_eq!(cfg.current_context, "c1-private");
    }

    #[test]
    fn a_user_kubeconfig_without_endpoints_is_refused() {
        let err = user_kubeconfig_secret(
            "c1",
            "ns",
            owner(),
            &[],
            EndpointName::Public,
            CA,
            eks_exec(),
        )
        .unwrap_err();
        assert!(matches!(err, KubeconfigError::NoEndpoints { .. }));
    }

    #[test]
    fn the_cluster_kubeconfig_counts_as_a_static_credential() {
        let ep = ApiEndpoint {
            host: "h".into(),
            port: 443,
        };
        assert!(cluster_kubeconfig("c", &ep, CA, "t").has_static_credential());
    }

    #[test]
    fn a_secret_without_the_value_key_is_not_a_kubeconfig() {
        assert!(kubeconfig_from_secret(&Secret::default()).is_err());
        assert!(Kubeconfig::parse(b"- just\n- a list\n").is_err());
    }
}
