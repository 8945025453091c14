//! The macros that write what every provider's API has in the same shape, so that a provider
//! writes only what is its cloud's:
//!
//! - [`macro@kind`] on a role's spec struct (`<P>ClusterSpec`, `<P>ControlPlaneSpec`,
//!   `<P>MachinePoolSpec`): the kube and serde attributes of the kind, its API group, names,
//!   short name, status type and printer columns, the same on every cloud.
//! - [`kinds!`]: for a cloud prefix such as `AKS`, the three Template kinds ClusterClass and
//!   `clusterctl generate` use, `crds()`, and the kernel's glue to the kinds (which role each
//!   plays, where its shared spec and status blocks are).
//!
//! - [`infra_cluster!`], [`control_plane!`] and [`machine_pool!`]: in a provider's role module,
//!   the cloud's struct, its reconciler and (for the control plane and the pool) its side of the
//!   kernel's trait for the role, joining the steps the module's files hold (see `roles.rs` for
//!   the layout they read).
//!
//! - [`macro@block`] on a block of a spec or status: the derives and serde conventions every
//!   block has.
//!
//! All are used through `provider_runtime`, which re-exports them.

mod block;
mod roles;
mod rules;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, ItemStruct, LitStr, Token, parse_macro_input};

/// One of the three roles a provider's kind plays.
#[derive(Clone, Copy)]
enum Role {
    Cluster,
    ControlPlane,
    MachinePool,
}

impl Role {
    /// The role a spec struct's name ends in, and the cloud prefix before it.
    fn of(spec: &str) -> Option<(Role, &str)> {
        let roles = [
            ("ClusterSpec", Role::Cluster),
            ("ControlPlaneSpec", Role::ControlPlane),
            ("MachinePoolSpec", Role::MachinePool),
        ];
        roles
            .into_iter()
            .find_map(|(suffix, role)| Some((role, spec.strip_suffix(suffix)?)))
            .filter(|(_, prefix)| !prefix.is_empty())
    }

    /// The kind's name after the prefix.
    fn name(self) -> &'static str {
        match self {
            Role::Cluster => "Cluster",
            Role::ControlPlane => "ControlPlane",
            Role::MachinePool => "MachinePool",
        }
    }

    /// The Cluster API group the kind is in.
    fn group(self) -> &'static str {
        match self {
            Role::ControlPlane => "controlplane.cluster.x-k8s.io",
            Role::Cluster | Role::MachinePool => "infrastructure.cluster.x-k8s.io",
        }
    }

    /// The short name's ending: `akscl`, `akscp`, `aksmp`.
    fn short(self) -> &'static str {
        match self {
            Role::Cluster => "cl",
            Role::ControlPlane => "cp",
            Role::MachinePool => "mp",
        }
    }

    /// The printer columns a kind of this role shows after `Cluster` and before `Ready` and
    /// `Age`: for a cluster kind, its cloud's own (`cloud`) and the network's id; for the
    /// others, the same on every cloud.
    fn columns(self, cloud: &[Column]) -> Vec<Column> {
        let column = |name: &str, kind: &str, path: &str| Column {
            name: LitStr::new(name, Span::call_site()),
            kind: LitStr::new(kind, Span::call_site()),
            path: LitStr::new(path, Span::call_site()),
        };
        match self {
            Role::Cluster => {
                let mut columns: Vec<Column> = cloud.iter().map(Column::clone).collect();
                columns.push(column("Network", "string", ".status.network.id"));
                columns
            }
            Role::ControlPlane => vec![
                column("Version", "string", ".status.version"),
                column("Endpoint", "string", ".spec.controlPlaneEndpoint.host"),
            ],
            Role::MachinePool => vec![
                column("Replicas", "integer", ".status.replicas"),
                column("Version", "string", ".status.version"),
            ],
        }
    }
}

/// A printer column: `column("Region", "string", ".spec.region")`.
#[derive(Clone)]
struct Column {
    name: LitStr,
    kind: LitStr,
    path: LitStr,
}

impl Column {
    fn tokens(&self) -> Tokens {
        let Column { name, kind, path } = self;
        quote!(printcolumn(name = #name, type_ = #kind, json_path = #path))
    }
}

/// The arguments of `#[kind(..)]`: the cloud's own printer columns, if any.
struct KindArgs {
    columns: Vec<Column>,
}

impl Parse for KindArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut columns = Vec::new();
        while !input.is_empty() {
            let word: Ident = input.parse()?;
            if word != "column" {
                return Err(syn::Error::new(
                    word.span(),
                    "expected column(\"Name\", \"type\", \".json.path\")",
                ));
            }
            let content;
            syn::parenthesized!(content in input);
            let parts: Punctuated<LitStr, Token![,]> = Punctuated::parse_terminated(&content)?;
            let [name, kind, path]: [LitStr; 3] = parts
                .into_iter()
                .collect::<Vec<_>>()
                .try_into()
                .map_err(|_| syn::Error::new(word.span(), "a column is (name, type, JSON path)"))?;
            columns.push(Column { name, kind, path });
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(KindArgs { columns })
    }
}

/// Makes a role's spec struct a kind: `#[provider_runtime::kind]` on `AKSClusterSpec` makes
/// the namespaced kind `AKSCluster` (plural `aksclusters`, short name `akscl`, status
/// `AKSClusterStatus`, category `cluster-api`) in the role's Cluster API group, with the
/// printer columns every cloud shows (`Cluster`, the role's own, `Ready`, `Age`). A cluster
/// kind adds its cloud's columns before `Network`: `#[kind(column("Region", "string",
/// ".spec.region"))]`.
/// The struct keeps its own documentation, validation rules and extra derives.
#[proc_macro_attribute]
pub fn kind(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(args as KindArgs);
    let mut item = parse_macro_input!(item as ItemStruct);
    let made = kind_attributes(&args, &item).and_then(|attributes| {
        let rules = rules::add(&mut item)?;
        Ok(quote!(#attributes #item #rules))
    });
    made.unwrap_or_else(|e| e.to_compile_error()).into()
}

fn kind_attributes(args: &KindArgs, item: &ItemStruct) -> syn::Result<Tokens> {
    let spec = item.ident.to_string();
    let (role, prefix) = Role::of(&spec).ok_or_else(|| {
        syn::Error::new(
            item.ident.span(),
            "a kind's spec is named <Prefix>ClusterSpec, <Prefix>ControlPlaneSpec or <Prefix>MachinePoolSpec",
        )
    })?;
    let kind = format!("{prefix}{}", role.name());
    let plural = format!("{}s", kind.to_lowercase());
    // Written by `kinds!` in the provider's `api` module, the same for every provider.
    let status = format!("crate::api::{kind}Status");
    let short = format!("{}{}", prefix.to_lowercase(), role.short());
    let group = role.group();
    let columns = role
        .columns(&args.columns)
        .iter()
        .map(Column::tokens)
        .collect::<Vec<_>>();
    let derives = kind_derives();
    Ok(quote! {
        // kube's `printcolumn(..)` entries repeat `type_ = ..`, which clippy takes for duplicates.
        #[allow(clippy::duplicated_attributes)]
        #derives
        #[kube(
            group = #group,
            version = "v1alpha1",
            kind = #kind,
            plural = #plural,
            namespaced,
            status = #status,
            category = "cluster-api",
            shortname = #short,
            printcolumn(
                name = "Cluster",
                type_ = "string",
                json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",
                description = "The owning Cluster"
            ),
            #(#columns,)*
            printcolumn(
                name = "Ready",
                type_ = "string",
                json_path = ".status.conditions[?(@.type=='Ready')].status"
            ),
            printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
        )]
        #[serde(rename_all = "camelCase")]
    })
}

/// For a cloud prefix (`kinds!(AKS)`, in the module where `AKSClusterSpec`,
/// `AKSControlPlaneSpec` and `AKSMachinePoolSpec` are in scope with the cloud's status blocks
/// `AKSClusterObserved` and `AKSControlPlaneObserved`, and `AKSMachinePoolObserved` with
/// `kinds!(AKS, pool_block)`), writes:
///
/// - the three kinds' status structs: the role's shared block (flattened), the generation, the
///   cloud's block (`status.aks`) and, on the control plane and the pool, when request
///   overrides were last applied;
/// - the Template kinds `AKSClusterTemplate`, `AKSControlPlaneTemplate` and
///   `AKSMachinePoolTemplate`, whose `spec.template.spec` is the stamped kind's spec (the
///   control plane's without a required `version`: ClusterClass topology sets it);
/// - `crds()`, every CRD of the provider with the Cluster API contract labels stamped on;
/// - which role each kind plays and where its shared spec and status blocks are, for the kernel
///   (the InfraCluster's status is `{common, observedGeneration, <cloud>}`, its cloud block a
///   `<P>ClusterObserved`);
/// - a test that the control-plane template's schema is the control plane's less `version`.
#[proc_macro]
pub fn kinds(input: TokenStream) -> TokenStream {
    let args = parse_macro_input!(input as KindsArgs);
    kinds_tokens(&args).into()
}

/// `kinds!(AKS)`, or `kinds!(GKE, pool_block)` for a cloud whose pools report a block of their
/// own (`GKEMachinePoolObserved`).
struct KindsArgs {
    prefix: Ident,
    pool_block: bool,
}

impl Parse for KindsArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let prefix: Ident = input.parse()?;
        let mut pool_block = false;
        if input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let word: Ident = input.parse()?;
            if word != "pool_block" {
                return Err(syn::Error::new(word.span(), "expected `pool_block`"));
            }
            pool_block = true;
        }
        Ok(KindsArgs { prefix, pool_block })
    }
}

/// "a" or "an" before a cloud's prefix, as it is read aloud (an AKS…, a GKE…).
fn article(prefix: &str) -> &'static str {
    if prefix.starts_with(['A', 'E', 'F', 'H', 'I', 'L', 'M', 'N', 'O', 'R', 'S', 'X']) {
        "an"
    } else {
        "a"
    }
}

/// The status struct of a role's kind: the shared block, the generation, the cloud's own block
/// (when it has one) and, but for the cluster kind, when request overrides were last applied.
fn status(prefix: &str, role: Role, block: bool) -> Tokens {
    let kind = format!("{prefix}{}", role.name());
    let name = format_ident!("{kind}Status");
    let observed = format_ident!("{kind}Observed");
    let field = format_ident!("{}", prefix.to_lowercase());
    let a = article(prefix);
    let doc = format!(" Observed state of {a} {kind}.");
    let (common, common_doc, block_doc) = match role {
        Role::Cluster => (
            quote!(::contract::api::InfraClusterStatusCommon),
            " Initialization, readiness, failure domains, the network and conditions, as on every cloud.",
            format!(" What only {prefix} reports of the network."),
        ),
        Role::ControlPlane => (
            quote!(::contract::api::ControlPlaneStatusCommon),
            " Initialization, version, endpoints, cloud id and name, operation, kubeconfig, conditions, as on every cloud.",
            format!(" What only {prefix} reports of the cluster."),
        ),
        Role::MachinePool => (
            quote!(::contract::api::MachinePoolStatusCommon),
            " Initialization, readiness, replicas, version, cloud id and name, operation, conditions, as on every cloud.",
            format!(" What only {prefix} reports of the pool."),
        ),
    };
    let block = block.then(|| {
        quote! {
            #[doc = #block_doc]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub #field: Option<#observed>,
        }
    });
    let overrides = (!matches!(role, Role::Cluster)).then(|| {
        let doc = format!(
            " When spec.{}.requestOverrides was last applied to {a} {prefix} request, and to which one.",
            prefix.to_lowercase()
        );
        quote! {
            #[doc = #doc]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub request_overrides: Option<::contract::api::RequestOverridesStatus>,
        }
    });
    let block_attributes = block::attributes();
    quote! {
        #[doc = #doc]
        #block_attributes
        pub struct #name {
            #[doc = #common_doc]
            #[serde(flatten)]
            pub common: #common,
            #[doc = " The generation the status describes."]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub observed_generation: Option<i64>,
            #block
            #overrides
        }
    }
}

fn kinds_tokens(args: &KindsArgs) -> Tokens {
    let rules = match rules::all() {
        Ok(rules) => rules,
        Err(e) => return e.to_compile_error(),
    };
    let p = args.prefix.to_string();
    let statuses = [
        status(&p, Role::Cluster, true),
        status(&p, Role::ControlPlane, true),
        status(&p, Role::MachinePool, args.pool_block),
    ];
    let names = |role: Role| format_ident!("{p}{}", role.name());
    let [cluster, control_plane, machine_pool] =
        [Role::Cluster, Role::ControlPlane, Role::MachinePool].map(names);
    let cluster_spec = format_ident!("{cluster}Spec");
    let cluster_observed = format_ident!("{cluster}Observed");
    let cluster_status = format_ident!("{cluster}Status");
    // The status block of what only this cloud reports: `eks`, `gke`, …
    let block = format_ident!("{}", p.to_lowercase());
    let templates = [
        template(&p, Role::Cluster),
        template(&p, Role::ControlPlane),
        template(&p, Role::MachinePool),
    ];
    let control_plane_observed = format_ident!("{control_plane}Observed");
    let control_plane_status = format_ident!("{control_plane}Status");
    let cluster_names = format_ident!("{p}_CLUSTER");
    let machine_pool_status = format_ident!("{machine_pool}Status");
    let (machine_pool_observed, pool_observed_arg, pool_block_field) = if args.pool_block {
        let observed = format_ident!("{machine_pool}Observed");
        (
            quote!(#observed),
            quote!(observed),
            quote!(#block: observed,),
        )
    } else {
        (quote!(()), quote!(_), quote!())
    };
    let cluster_template = format_ident!("{cluster}Template");
    let control_plane_template = format_ident!("{control_plane}Template");
    let machine_pool_template = format_ident!("{machine_pool}Template");
    quote! {
        #(#statuses)*

        #(#templates)*

        /// Every CRD this provider installs, with the Cluster API contract labels stamped on.
        pub fn crds() -> Vec<::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> {
            use ::kube::CustomResourceExt as _;
            let mut crds = vec![
                #cluster::crd(),
                #cluster_template::crd(),
                #control_plane::crd(),
                #control_plane_template::crd(),
                #machine_pool::crd(),
                #machine_pool_template::crd(),
            ];
            for crd in &mut crds {
                ::contract::crd::stamp_contract_labels(crd);
            }
            crds
        }

        ::provider_runtime::provider_object!(#cluster, ::provider_runtime::Role::InfraCluster);
        ::provider_runtime::provider_object!(#control_plane, ::provider_runtime::Role::ControlPlane);
        ::provider_runtime::provider_object!(#machine_pool, ::provider_runtime::Role::InfraMachinePool);

        impl ::provider_runtime::infra_cluster::ManagedInfraCluster for #cluster {
            type Observed = #cluster_observed;
            type Status = #cluster_status;

            fn spec_common(&self) -> &::contract::api::ClusterSpecCommon {
                &self.spec.common
            }

            fn status_common(&self) -> Option<&::contract::api::InfraClusterStatusCommon> {
                self.status.as_ref().map(|s| &s.common)
            }

            fn observed(&self) -> Option<&#cluster_observed> {
                self.status.as_ref()?.#block.as_ref()
            }

            fn status_of(
                common: ::contract::api::InfraClusterStatusCommon,
                observed: Option<#cluster_observed>,
            ) -> #cluster_status {
                #cluster_status {
                    common,
                    observed_generation: None,
                    #block: observed,
                }
            }
        }

        impl ::provider_runtime::control_plane::ManagedControlPlane for #control_plane {
            type OwnInfra = #cluster_spec;
            type Observed = #control_plane_observed;
            type Status = #control_plane_status;
            const CLUSTER_NAMES: &'static ::contract::naming::NameLimits = &::contract::naming::#cluster_names;

            fn spec_common(&self) -> &::contract::api::ControlPlaneSpecCommon {
                &self.spec.common
            }

            fn status_common(&self) -> Option<&::contract::api::ControlPlaneStatusCommon> {
                self.status.as_ref().map(|s| &s.common)
            }

            fn request_overrides_status(&self) -> Option<&::contract::api::RequestOverridesStatus> {
                self.status.as_ref()?.request_overrides.as_ref()
            }

            fn own_infrastructure(&self) -> Option<&#cluster_spec> {
                self.spec.infrastructure.as_ref()
            }

            fn status_of(
                common: ::contract::api::ControlPlaneStatusCommon,
                request_overrides: Option<::contract::api::RequestOverridesStatus>,
                observed: Option<#control_plane_observed>,
            ) -> #control_plane_status {
                #control_plane_status {
                    common,
                    observed_generation: None,
                    #block: observed,
                    request_overrides,
                }
            }
        }

        impl ::provider_runtime::machine_pool::ManagedMachinePool for #machine_pool {
            type Observed = #machine_pool_observed;
            type Status = #machine_pool_status;

            fn status_of(
                common: ::contract::api::MachinePoolStatusCommon,
                request_overrides: Option<::contract::api::RequestOverridesStatus>,
                #pool_observed_arg: Option<#machine_pool_observed>,
            ) -> #machine_pool_status {
                #machine_pool_status {
                    common,
                    observed_generation: None,
                    #pool_block_field
                    request_overrides,
                }
            }

            fn spec_common(&self) -> &::contract::api::MachinePoolSpecCommon {
                &self.spec.common
            }

            fn status_common(&self) -> Option<&::contract::api::MachinePoolStatusCommon> {
                self.status.as_ref().map(|s| &s.common)
            }

            fn request_overrides_status(&self) -> Option<&::contract::api::RequestOverridesStatus> {
                self.status.as_ref()?.request_overrides.as_ref()
            }
        }

        #[cfg(test)]
        mod kinds_tests {
            #[test]
            fn the_control_plane_template_spec_is_the_control_plane_spec_without_a_required_version() {
                use ::kube::CustomResourceExt as _;
                let checked = ::contract::crd::check_control_plane_template(
                    &super::#control_plane::crd(),
                    &super::#control_plane_template::crd(),
                );
                assert_eq!(checked, Ok(()));
            }

            #[test]
            fn every_rule_of_the_rule_table_is_in_a_crd() {
                let crds = ::serde_json::to_string(&super::crds()).unwrap_or_default();
                let rules: &[&str] = &[#(#rules),*];
                for rule in rules {
                    let quoted = ::serde_json::to_string(rule).unwrap_or_default();
                    assert!(crds.contains(&quoted), "src/api/rules.yaml: {rule} is in no CRD: is its struct's name right?");
                }
            }
        }
    }
}

/// Makes a struct a block of a kind's spec or status (`GKEClusterOptions`,
/// `OKEControlPlaneObserved`): derives the schema, serde, `Clone`, `Debug`, `Default` and
/// `PartialEq`, names fields in camelCase, and leaves an `Option` or `Vec` field that has no
/// serde attribute of its own out of the object when it is unset or empty.
#[proc_macro_attribute]
pub fn block(_args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = parse_macro_input!(item as ItemStruct);
    let made = rules::add(&mut item).and_then(|rules| {
        let block = block::block(item)?;
        Ok(quote!(#block #rules))
    });
    made.unwrap_or_else(|e| e.to_compile_error()).into()
}

/// `infra_cluster!(GKE)`, in a provider's `reconcile/cluster.rs`: the struct `GkeInfraCluster`
/// (the provider's `Arc<scope::Shared>`), whose `InfraClusterCloud` impl the file writes, and
/// `reconciler(shared)`, the generic InfraCluster reconciler over it.
#[proc_macro]
pub fn infra_cluster(input: TokenStream) -> TokenStream {
    let args = parse_macro_input!(input as roles::RoleArgs);
    roles::infra_cluster(&args).into()
}

/// `control_plane! { GKE, tokens = GKE_UNSENT_TOKEN, create = "CreateCluster" }`, in a
/// provider's `reconcile/control_plane/mod.rs`: the struct `GkeControlPlane` (the provider's
/// `Arc<scope::Shared>`), its `ControlPlaneCloud` impl, each step the function of the same name
/// in the module's files (`desired::validate`, `connect(shared, reach)` here, `observe::observe`,
/// `diff::diff`, `act::act`, `observe::report`), and `reconciler(shared)`, the generic
/// reconciler over it with the profile the line gives (the idempotency tokens' limits, the
/// create call's name) and the provider's `scope::Shared` pacing.
#[proc_macro]
pub fn control_plane(input: TokenStream) -> TokenStream {
    let args = parse_macro_input!(input as roles::RoleArgs);
    roles::control_plane(&args).into()
}

/// `machine_pool! { GKE, pool_block, tokens = …, create = "CreateNodePool", names = …, noun =
/// "node pool" }`, in a provider's `reconcile/machine_pool/mod.rs`: the struct `GkeMachinePool`,
/// its `MachinePoolCloud` impl and `reconciler(shared)` from the module's files, as
/// [`control_plane!`] does, with a function a step for `act` (`act::create`, `act::tag`,
/// `act::upgrade`, `act::update`, `act::delete`); the profile adds how pools are named
/// (`names`, a `PoolNames`) and what the cloud calls one (`noun`). `pool_block` where the pool
/// reports a status block of its own (`observe::report`), `infra = T` where a pool's cluster
/// lives in more than `scope::Infra`.
#[proc_macro]
pub fn machine_pool(input: TokenStream) -> TokenStream {
    let args = parse_macro_input!(input as roles::RoleArgs);
    roles::machine_pool(&args).into()
}

/// A role's Template kind and the resource it stamps out.
fn template(prefix: &str, role: Role) -> Tokens {
    let kind = format!("{prefix}{}", role.name());
    let template_kind = format!("{kind}Template");
    let plural = format!("{}s", template_kind.to_lowercase());
    let group = role.group();
    let article = article(prefix);
    let spec_type = format_ident!("{kind}Spec");
    let template_spec = format_ident!("{template_kind}Spec");
    let resource = format_ident!("{template_kind}Resource");
    let doc_kind = format!(" Template of {article} {kind}.");
    let doc_template = format!(" The {kind} to stamp out.");
    let doc_resource = format!(" The stamped-out {kind}.");
    let spec_field = match role {
        Role::ControlPlane => {
            let doc = format!(
                " Its spec: the {kind}'s, except that `version` may be left out (ClusterClass"
            );
            let schema = format!("contract::crd::control_plane_template_spec_schema::<{kind}Spec>");
            quote! {
                #[doc = #doc]
                #[doc = " topology sets it from Cluster.spec.topology.version)."]
                #[schemars(schema_with = #schema)]
                pub spec: ::serde_json::Value,
            }
        }
        Role::Cluster | Role::MachinePool => quote! {
            #[doc = " Its spec."]
            pub spec: #spec_type,
        },
    };
    let derives = kind_derives();
    quote! {
        #[doc = #doc_kind]
        #derives
        #[kube(
            group = #group,
            version = "v1alpha1",
            kind = #template_kind,
            plural = #plural,
            namespaced,
            category = "cluster-api"
        )]
        pub struct #template_spec {
            #[doc = #doc_template]
            pub template: #resource,
        }

        #[doc = #doc_resource]
        #[derive(::kube::KubeSchema, ::serde::Serialize, ::serde::Deserialize, Clone, Debug, PartialEq)]
        pub struct #resource {
            #spec_field
        }
    }
}

/// The derives of every kind made here.
fn kind_derives() -> proc_macro2::TokenStream {
    quote! {
        #[derive(
            ::kube::CustomResource,
            ::kube::KubeSchema,
            ::serde::Serialize,
            ::serde::Deserialize,
            Clone,
            Debug,
            PartialEq
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_its_role_and_cloud() {
        assert!(matches!(
            Role::of("AKSClusterSpec"),
            Some((Role::Cluster, "AKS"))
        ));
        assert!(matches!(
            Role::of("EKSControlPlaneSpec"),
            Some((Role::ControlPlane, "EKS"))
        ));
        assert!(matches!(
            Role::of("GKEMachinePoolSpec"),
            Some((Role::MachinePool, "GKE"))
        ));
        assert!(Role::of("ClusterSpec").is_none(), "no cloud prefix");
        assert!(Role::of("AKSClusterOptions").is_none(), "not a spec");
    }

    #[test]
    fn the_article_follows_how_the_prefix_is_read() {
        assert_eq!(article("AKS"), "an");
        assert_eq!(article("EKS"), "an");
        assert_eq!(article("OKE"), "an");
        assert_eq!(article("GKE"), "a");
        assert_eq!(article("DOKS"), "a");
    }

    #[test]
    fn a_cluster_kind_shows_its_clouds_columns_then_the_network() {
        let region = Column {
            name: LitStr::new("Region", Span::call_site()),
            kind: LitStr::new("string", Span::call_site()),
            path: LitStr::new(".spec.region", Span::call_site()),
        };
        let names =
            |columns: Vec<Column>| columns.iter().map(|c| c.name.value()).collect::<Vec<_>>();
        assert_eq!(
            names(Role::Cluster.columns(std::slice::from_ref(&region))),
            ["Region", "Network"]
        );
        assert_eq!(
            names(Role::ControlPlane.columns(&[region])),
            ["Version", "Endpoint"]
        );
        assert_eq!(
            names(Role::MachinePool.columns(&[])),
            ["Replicas", "Version"]
        );
    }

    #[test]
    fn kinds_takes_a_prefix_and_at_most_the_pool_block() {
        let args: KindsArgs = syn::parse_str("GKE, pool_block").unwrap_or_else(|e| panic!("{e}"));
        assert!(args.pool_block && args.prefix == "GKE");
        let args: KindsArgs = syn::parse_str("AKS").unwrap_or_else(|e| panic!("{e}"));
        assert!(!args.pool_block);
        assert!(syn::parse_str::<KindsArgs>("AKS, pools").is_err());
    }
}
