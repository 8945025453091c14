//! `control_plane!` and `machine_pool!`: a provider's side of the kernel's per-role traits,
//! written from the layout every provider's role module has.
//!
//! A role module (`reconcile/control_plane/`, `reconcile/machine_pool/`) holds the cloud's steps
//! in files of the same names on every cloud, and the macro joins them to the kernel:
//!
//! | kernel step | control plane | machine pool |
//! | --- | --- | --- |
//! | validate | `desired::validate(cp, infra)` → `desired::DesiredCluster` | `desired::validate(obj)` → `desired::PoolSpec` |
//! | connect | `connect(shared, cp, infra, reach)` in `mod.rs` → `Connected<Clients, kubeconfig::Tokens>` | `connect(shared, obj, place, reach)` → `PoolConnected<PoolClients>` |
//! | observe | `observe::observe(connected, look)` → `observe::ObservedCluster` | `observe::observe(at, look)` → `observe::ObservedPool` |
//! | diff | `diff::diff(desired, &cluster.detail)` → `diff::ClusterChange` | `diff::diff(&pool.detail, spec, scaling)` → `diff::PoolChange` |
//! | act | `act::act(connected, step, request)` | a step's own function: `act::create(at, PoolCreate)`, `act::tag(at, id, tags)`, `act::upgrade(at, to)`, `act::update(at, change)`, `act::delete(at)` |
//! | report | `observe::report(&detail)` → the status block | the same, with `pool_block` |
//!
//! The cloud's struct (`GkeControlPlane`, `GkeMachinePool`) holds the provider's
//! `Arc<crate::scope::Shared>`; where the cluster lives is `crate::scope::Infra`.

use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Token, Type};

/// `control_plane!(EKS, extra = ClusterExtras)` or
/// `machine_pool!(EKS, infra = PoolInfra, pool_block)`: the cloud's prefix, then options.
pub struct RoleArgs {
    prefix: Ident,
    /// What the control plane's look gathers besides the cluster (EKS's add-ons and access
    /// entries), handed to `diff`.
    extra: Option<Type>,
    /// Where a pool's cluster lives, when it is more than `crate::scope::Infra`.
    infra: Option<Type>,
    /// The pool reports a status block of its own.
    pool_block: bool,
}

impl Parse for RoleArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = RoleArgs {
            prefix: input.parse()?,
            extra: None,
            infra: None,
            pool_block: false,
        };
        while input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let word: Ident = input.parse()?;
            match word.to_string().as_str() {
                "pool_block" => args.pool_block = true,
                "extra" | "infra" => {
                    input.parse::<Token![=]>()?;
                    let ty: Type = input.parse()?;
                    match word.to_string().as_str() {
                        "extra" => args.extra = Some(ty),
                        _ => args.infra = Some(ty),
                    }
                }
                _ => {
                    return Err(syn::Error::new(
                        word.span(),
                        "expected `extra = Type`, `infra = Type` or `pool_block`",
                    ));
                }
            }
        }
        Ok(args)
    }
}

/// `GKE` → `Gke`: how the cloud's structs are named.
fn camel(prefix: &str) -> String {
    let mut chars = prefix.chars();
    chars.next().map_or_else(String::new, |first| {
        first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect()
    })
}

/// The cloud's struct for a role, with its documentation.
fn cloud_struct(cloud: &Ident, doc: &str) -> Tokens {
    quote! {
        #[doc = #doc]
        pub struct #cloud {
            shared: ::std::sync::Arc<crate::scope::Shared>,
        }
    }
}

pub fn control_plane(args: &RoleArgs) -> Tokens {
    let p = args.prefix.to_string();
    let cloud = format_ident!("{}ControlPlane", camel(&p));
    let object = format_ident!("{p}ControlPlane");
    let infra_cluster = format_ident!("{p}Cluster");
    let doc = format!(
        " {p}, for the generic ControlPlane reconciler: the steps of this module's files, \
         joined by `provider_runtime::control_plane!`."
    );
    let strukt = cloud_struct(&cloud, &doc);
    let (extra, diff) = match &args.extra {
        Some(extra) => (
            quote!(#extra),
            quote!(diff::diff(desired, &cluster.detail, extra)),
        ),
        None => (quote!(()), quote!(diff::diff(desired, &cluster.detail))),
    };
    let cp = quote!(::provider_runtime::control_plane);
    let error = quote!(::provider_runtime::ProviderError);
    quote! {
        #strukt

        impl #cp::ControlPlaneCloud for #cloud {
            type Object = crate::api::#object;
            type InfraCluster = crate::api::#infra_cluster;
            type Infra = crate::scope::Infra;
            type Desired = desired::DesiredCluster;
            type Clients = Clients;
            type Tokens = kubeconfig::Tokens;
            type Detail = observe::ObservedCluster;
            type Extra = #extra;
            type Change = diff::ClusterChange;

            fn validate(
                &self,
                cp: &Self::Object,
                infra: &Self::Infra,
            ) -> Result<Self::Desired, #error> {
                desired::validate(cp, infra)
            }

            async fn connect(
                &self,
                cp: &Self::Object,
                infra: Self::Infra,
                reach: #cp::Reach<'_>,
            ) -> Result<#cp::Connected<Self::Clients, Self::Tokens>, #error> {
                connect(&self.shared, cp, infra, reach).await
            }

            async fn observe(
                &self,
                connected: &#cp::Connected<Self::Clients, Self::Tokens>,
                look: #cp::Look<'_>,
            ) -> Result<#cp::Observed<Self::Detail, Self::Extra>, #error> {
                observe::observe(connected, look).await
            }

            #[allow(unused_variables)]
            fn diff(
                &self,
                desired: &Self::Desired,
                cluster: &#cp::ManagedCluster<Self::Detail>,
                extra: &Self::Extra,
            ) -> ::contract::plan::CloudStep<Self::Change> {
                #diff
            }

            async fn act(
                &self,
                connected: &#cp::Connected<Self::Clients, Self::Tokens>,
                step: #cp::Step<'_, Self::Desired, Self::Change>,
                request: &#cp::Request,
            ) -> Result<#cp::Started<#cp::ManagedCluster<Self::Detail>>, #error> {
                act::act(connected, step, request).await
            }

            fn report(
                &self,
                cluster: &Self::Detail,
            ) -> <Self::Object as #cp::ManagedControlPlane>::Observed {
                observe::report(cluster)
            }
        }
    }
}

pub fn machine_pool(args: &RoleArgs) -> Tokens {
    let p = args.prefix.to_string();
    let cloud = format_ident!("{}MachinePool", camel(&p));
    let object = format_ident!("{p}MachinePool");
    let control_plane = format_ident!("{p}ControlPlane");
    let infra_cluster = format_ident!("{p}Cluster");
    let doc = format!(
        " {p}, for the generic MachinePool reconciler: the steps of this module's files, \
         joined by `provider_runtime::machine_pool!`."
    );
    let strukt = cloud_struct(&cloud, &doc);
    let infra = args
        .infra
        .as_ref()
        .map_or_else(|| quote!(crate::scope::Infra), |infra| quote!(#infra));
    let report = match args.pool_block {
        true => quote!(observe::report(pool)),
        false => quote!(),
    };
    let mp = quote!(::provider_runtime::machine_pool);
    let error = quote!(::provider_runtime::ProviderError);
    quote! {
        #strukt

        impl #mp::MachinePoolCloud for #cloud {
            type Object = crate::api::#object;
            type ControlPlane = crate::api::#control_plane;
            type InfraCluster = crate::api::#infra_cluster;
            type Infra = #infra;
            type Spec = desired::PoolSpec;
            type Clients = PoolClients;
            type Detail = observe::ObservedPool;
            type Change = diff::PoolChange;

            fn validate(&self, obj: &Self::Object) -> Result<Self::Spec, #error> {
                desired::validate(obj)
            }

            async fn connect(
                &self,
                obj: &Self::Object,
                place: ::provider_runtime::cluster_objects::PoolPlace<Self::ControlPlane, Self::Infra>,
                reach: #mp::PoolReach<'_>,
            ) -> Result<#mp::PoolConnected<Self::Clients>, #error> {
                connect(&self.shared, obj, place, reach).await
            }

            async fn observe(
                &self,
                at: &#mp::PoolConnected<Self::Clients>,
                look: #mp::PoolLook<'_>,
            ) -> Result<#mp::PoolObserved<Self::Detail>, #error> {
                observe::observe(at, look).await
            }

            fn diff(
                &self,
                want: &#mp::PoolWant<'_, Self::Spec>,
                pool: &#mp::ManagedPool<Self::Detail>,
            ) -> ::contract::plan::CloudStep<Self::Change> {
                diff::diff(&pool.detail, want.spec, want.scaling)
            }

            async fn act(
                &self,
                at: &#mp::PoolConnected<Self::Clients>,
                step: #mp::PoolStep<'_, Self::Spec, Self::Change>,
                request: &::provider_runtime::control_plane::Request,
            ) -> Result<::provider_runtime::control_plane::Started<#mp::ManagedPool<Self::Detail>>, #error> {
                match step {
                    #mp::PoolStep::Create { want, version } => act::create(at, #mp::PoolCreate { want, version, request }).await,
                    #mp::PoolStep::Tag { id, tags } => act::tag(at, id, tags).await,
                    #mp::PoolStep::Upgrade { to } => act::upgrade(at, to).await,
                    #mp::PoolStep::Update { change } => act::update(at, change).await,
                    #mp::PoolStep::Delete => act::delete(at).await,
                }
            }

            #[allow(unused_variables)]
            fn report(
                &self,
                pool: &Self::Detail,
            ) -> <Self::Object as #mp::ManagedMachinePool>::Observed {
                #report
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_names_the_clouds_structs() {
        assert_eq!(camel("GKE"), "Gke");
        assert_eq!(camel("OKE"), "Oke");
        assert_eq!(camel(""), "");
    }

    #[test]
    fn options_follow_the_prefix_in_any_order() {
        let args: RoleArgs = syn::parse_str("EKS, pool_block, infra = PoolInfra").unwrap();
        assert_eq!(args.prefix, "EKS");
        assert!(args.pool_block && args.infra.is_some() && args.extra.is_none());
        let args: RoleArgs = syn::parse_str("AKS").unwrap();
        assert!(!args.pool_block && args.infra.is_none());
        assert!(syn::parse_str::<RoleArgs>("AKS, blocks").is_err());
        assert!(syn::parse_str::<RoleArgs>("AKS, extra").is_err());
    }

    #[test]
    fn a_control_plane_without_extras_diffs_on_the_detail_alone() {
        let args: RoleArgs = syn::parse_str("GKE").unwrap();
        let code = control_plane(&args).to_string();
        assert!(
            code.contains("diff :: diff (desired , & cluster . detail)"),
            "{code}"
        );
        assert!(code.contains("type Extra = ()"), "{code}");
        let args: RoleArgs = syn::parse_str("EKS, extra = ClusterExtras").unwrap();
        let code = control_plane(&args).to_string();
        assert!(code.contains("& cluster . detail , extra"), "{code}");
        assert!(code.contains("pub struct EksControlPlane"), "{code}");
    }

    #[test]
    fn a_pool_without_a_block_reports_nothing() {
        let args: RoleArgs = syn::parse_str("AKS").unwrap();
        assert!(
            !machine_pool(&args)
                .to_string()
                .contains("observe :: report")
        );
        let args: RoleArgs = syn::parse_str("GKE, pool_block").unwrap();
        assert!(
            machine_pool(&args)
                .to_string()
                .contains("observe :: report (pool)")
        );
    }
}
