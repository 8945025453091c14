//! `infra_cluster!`, `control_plane!` and `machine_pool!`: a provider's side of the kernel's
//! per-role traits, written from the layout every provider's role module has.
//!
//! A role module (`reconcile/control_plane/`, `reconcile/machine_pool/`) holds the cloud's steps
//! in files of the same names on every cloud, and the macro joins them to the kernel:
//!
//! | kernel step | control plane | machine pool |
//! | --- | --- | --- |
//! | validate | `desired::validate(cp, infra)` → `desired::DesiredCluster` | `desired::validate(obj)` → `desired::PoolSpec` |
//! | connect | `connect(shared, reach)` in `mod.rs` (`reach.object`, `reach.infra`) → `At`, the `Connected<Clients, kubeconfig::Tokens>` | `connect(shared, reach)` (`reach.object`, `reach.place`) → `At`, the `PoolConnected<PoolClients>` |
//! | observe | `observe::observe(connected, look)` → `observe::ObservedCluster` | `observe::observe(at, look)` → `observe::ObservedPool` |
//! | diff | `diff::diff(desired, &cluster.detail)` → `diff::ClusterChange` | `diff::diff(&pool.detail, spec, scaling)` → `diff::PoolChange` |
//! | act | `act::act(connected, step, request)` | a step's own function: `act::create(at, PoolCreate)`, `act::tag(at, id, tags)`, `act::upgrade(at, to)`, `act::update(at, change)`, `act::delete(at)` |
//! | report | `observe::report(&detail)` → the status block | the same, with `pool_block` |
//!
//! The cloud's struct (`GkeControlPlane`, `GkeMachinePool`) holds the provider's
//! `Arc<crate::scope::Shared>`; where the cluster lives is `crate::scope::Infra`. The line also
//! gives the role's profile and makes `reconciler(shared)`. `infra_cluster!` makes only the
//! InfraCluster's struct and reconciler: its trait is the file's own `impl`.

use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Token, Type};

/// `control_plane! { EKS, tokens = …, create = … }` or
/// `machine_pool! { EKS, infra = PoolInfra, pool_block, tokens = …, create = …, names = …,
/// noun = … }`: the cloud's prefix, then options in any order.
pub struct RoleArgs {
    prefix: Ident,
    /// Where a pool's cluster lives, when it is more than `crate::scope::Infra`.
    infra: Option<Type>,
    /// The pool reports a status block of its own.
    pool_block: bool,
    /// The role's profile, `key = expression`: `tokens` (the idempotency tokens' limits),
    /// `create` (the name of the cloud's create call) and, for a pool, `names` (a
    /// `PoolNames`) and `noun` (what the cloud calls a pool).
    profile: Vec<(Ident, Expr)>,
    /// Every option as given, in order, for [`RoleArgs::takes`].
    given: Vec<Ident>,
}

/// The keys of a role's profile.
const PROFILE_KEYS: [&str; 4] = ["tokens", "create", "names", "noun"];

impl Parse for RoleArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = RoleArgs {
            prefix: input.parse()?,
            infra: None,
            pool_block: false,
            profile: Vec::new(),
            given: Vec::new(),
        };
        while input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let word: Ident = input.parse()?;
            if args.given.contains(&word) {
                return Err(syn::Error::new(
                    word.span(),
                    format!("`{word}` is given twice"),
                ));
            }
            args.given.push(word.clone());
            match word.to_string().as_str() {
                "pool_block" => args.pool_block = true,
                key if PROFILE_KEYS.contains(&key) => {
                    input.parse::<Token![=]>()?;
                    args.profile.push((word, input.parse()?));
                }
                "infra" => {
                    input.parse::<Token![=]>()?;
                    args.infra = Some(input.parse()?);
                }
                _ => {
                    return Err(syn::Error::new(
                        word.span(),
                        "expected `infra = Type`, `pool_block`, or a profile's \
                         `tokens`, `create`, `names` or `noun` = expression",
                    ));
                }
            }
        }
        Ok(args)
    }
}

impl RoleArgs {
    /// An error naming the first option given that `role!` does not take (of `takes`).
    fn takes(&self, role: &str, takes: &[&str]) -> Result<(), Tokens> {
        match self.given.iter().find(|k| !takes.iter().any(|t| *k == t)) {
            None => Ok(()),
            Some(key) => {
                let message = format!("{role}! takes no `{key}` (it takes {})", takes.join(", "));
                let span = key.span();
                Err(quote::quote_spanned!(span=> compile_error!(#message);))
            }
        }
    }

    /// The profile's expression under `key`, or an error naming the macro and the key.
    fn setting(&self, role: &str, key: &str) -> Result<&Expr, Tokens> {
        self.profile
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value)
            .ok_or_else(|| {
                let message = format!("{role}! needs `{key} = …` for the role's profile");
                let span = self.prefix.span();
                quote::quote_spanned!(span=> compile_error!(#message);)
            })
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

/// The cloud's struct for a role (`doc` its documentation), and `reconciler(shared)`: the
/// kernel's generic `reconciler` type over it, for the kind `object`, made with `profile` (a
/// `let profile = …;` the constructor takes) when the role has one.
fn struct_and_reconciler(
    cloud: &Ident,
    doc: &str,
    object: &str,
    reconciler: Tokens,
    profile: Option<Tokens>,
) -> Tokens {
    let reconciler_doc =
        format!(" The {object} reconciler: the generic one over this cloud's steps.");
    let made = match profile {
        Some(profile) => quote! {
            #profile
            #reconciler::new(crate::scope::PROVIDER, profile, #cloud { shared })
        },
        None => quote!(#reconciler::new(crate::scope::PROVIDER, #cloud { shared })),
    };
    quote! {
        #[doc = #doc]
        pub struct #cloud {
            shared: ::std::sync::Arc<crate::scope::Shared>,
        }

        #[doc = #reconciler_doc]
        pub fn reconciler(shared: ::std::sync::Arc<crate::scope::Shared>) -> #reconciler<#cloud> {
            #made
        }
    }
}

/// `let profile = …;`: the role's profile of kind `kind`, with the fields every role's has (the
/// cloud's name `p`, the tokens' limits and the create call's name, the provider's pacing), and
/// the role's `own`.
fn profile(kind: Tokens, p: &str, (tokens, create): (&Expr, &Expr), own: Tokens) -> Tokens {
    quote! {
        let profile = #kind {
            cloud: #p,
            token_limits: &#tokens,
            create_call: #create,
            poll: shared.pacing.poll,
            rest: shared.pacing.rest,
            #own
        };
    }
}

/// `infra_cluster!(GKE)`: the struct `GkeInfraCluster` (the provider's `Arc<scope::Shared>`),
/// whose `InfraClusterCloud` impl the provider's `reconcile/cluster.rs` writes, and
/// `reconciler(shared)`, the generic InfraCluster reconciler over it.
pub fn infra_cluster(args: &RoleArgs) -> Tokens {
    if let Err(e) = args.takes("infra_cluster", &[]) {
        return e;
    }
    let p = args.prefix.to_string();
    let cloud = format_ident!("{}InfraCluster", camel(&p));
    let doc = format!(" {p}'s network, for the generic InfraCluster reconciler.");
    let reconciler = quote!(::provider_runtime::infra_cluster::InfraClusterReconciler);
    struct_and_reconciler(&cloud, &doc, &format!("{p}Cluster"), reconciler, None)
}

pub fn control_plane(args: &RoleArgs) -> Tokens {
    control_plane_role(args).unwrap_or_else(|error| error)
}

/// [`control_plane`]'s code, or the `compile_error!` of an option it lacks or does not take.
fn control_plane_role(args: &RoleArgs) -> Result<Tokens, Tokens> {
    args.takes("control_plane", &["tokens", "create"])?;
    let tokens = args.setting("control_plane", "tokens")?;
    let create = args.setting("control_plane", "create")?;
    let p = args.prefix.to_string();
    let cloud = format_ident!("{}ControlPlane", camel(&p));
    let object = format_ident!("{p}ControlPlane");
    let doc = format!(
        " {p}, for the generic ControlPlane reconciler: the steps of this module's files, \
         joined by `provider_runtime::control_plane!`."
    );
    let cp = quote!(::provider_runtime::control_plane);
    let error = quote!(::provider_runtime::ProviderError);
    let profile = profile(
        quote!(#cp::ControlPlaneProfile),
        &p,
        (tokens, create),
        // Every cloud here picks the patch of a minor itself (EKS, AKS and GKE pick it; OKE
        // offers exact patches, and the newest of the minor is asked for).
        quote!(minors_only: true),
    );
    let reconciler = quote!(#cp::ControlPlaneReconciler);
    let made = struct_and_reconciler(&cloud, &doc, &object.to_string(), reconciler, Some(profile));
    Ok(quote! {
        #made

        /// What `connect` is given: the kernel's `Reach` for this cloud's kinds.
        type Reach<'a> = #cp::Reach<'a, crate::api::#object, crate::scope::Infra>;

        /// A pass's cluster, connected: its name, tags, token source and this cloud's clients.
        type At = #cp::Connected<Clients, kubeconfig::Tokens>;

        impl #cp::ControlPlaneCloud for #cloud {
            type Object = crate::api::#object;
            type Infra = crate::scope::Infra;
            type Desired = desired::DesiredCluster;
            type Clients = Clients;
            type Tokens = kubeconfig::Tokens;
            type Detail = observe::ObservedCluster;
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
                reach: Reach<'_>,
            ) -> Result<#cp::Connected<Self::Clients, Self::Tokens>, #error> {
                connect(&self.shared, reach).await
            }

            async fn observe(
                &self,
                connected: &#cp::Connected<Self::Clients, Self::Tokens>,
                look: #cp::Look<'_>,
            ) -> Result<#cp::Observed<Self::Detail>, #error> {
                observe::observe(connected, look).await
            }

            fn diff(
                &self,
                desired: &Self::Desired,
                cluster: &#cp::ManagedCluster<Self::Detail>,
            ) -> ::contract::plan::CloudStep<Self::Change> {
                diff::diff(desired, &cluster.detail)
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

            fn as_spec(&self, cluster: &Self::Detail) -> ::serde_json::Value {
                diff::as_spec(cluster)
            }
        }
    })
}

pub fn machine_pool(args: &RoleArgs) -> Tokens {
    machine_pool_role(args).unwrap_or_else(|error| error)
}

/// [`machine_pool`]'s code, or the `compile_error!` of an option it lacks or does not take.
fn machine_pool_role(args: &RoleArgs) -> Result<Tokens, Tokens> {
    let takes = ["infra", "pool_block", "tokens", "create", "names", "noun"];
    args.takes("machine_pool", &takes)?;
    let setting = |key| args.setting("machine_pool", key);
    let (tokens, create, names, noun) = (
        setting("tokens")?,
        setting("create")?,
        setting("names")?,
        setting("noun")?,
    );
    let p = args.prefix.to_string();
    let cloud = format_ident!("{}MachinePool", camel(&p));
    let object = format_ident!("{p}MachinePool");
    let control_plane = format_ident!("{p}ControlPlane");
    let doc = format!(
        " {p}, for the generic MachinePool reconciler: the steps of this module's files, \
         joined by `provider_runtime::machine_pool!`."
    );
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
    let profile = profile(
        quote!(#mp::MachinePoolProfile),
        &p,
        (tokens, create),
        // Autoscaled replicas are the provider's to keep.
        quote!(noun: #noun, names: #names, replicas_manager: crate::scope::PROVIDER),
    );
    let reconciler = quote!(#mp::MachinePoolReconciler);
    let made = struct_and_reconciler(&cloud, &doc, &object.to_string(), reconciler, Some(profile));
    Ok(quote! {
        #made

        /// What `connect` is given: the kernel's `PoolReach` for this cloud's kinds.
        type Reach<'a> = #mp::PoolReach<'a, crate::api::#object, crate::api::#control_plane, #infra>;

        /// A pass's pool, connected: its names, tags and this cloud's clients.
        type At = #mp::PoolConnected<PoolClients>;

        impl #mp::MachinePoolCloud for #cloud {
            type Object = crate::api::#object;
            type ControlPlane = crate::api::#control_plane;
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
                reach: Reach<'_>,
            ) -> Result<#mp::PoolConnected<Self::Clients>, #error> {
                connect(&self.shared, reach).await
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
                    #mp::PoolStep::Untag { id, key } => act::untag(at, id, key).await,
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

            fn as_spec(&self, pool: &Self::Detail) -> ::serde_json::Value {
                diff::as_spec(pool)
            }
        }
    })
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
        assert!(args.pool_block && args.infra.is_some());
        let args: RoleArgs = syn::parse_str("AKS").unwrap();
        assert!(!args.pool_block && args.infra.is_none());
        assert!(syn::parse_str::<RoleArgs>("AKS, blocks").is_err());
        assert!(syn::parse_str::<RoleArgs>("AKS, infra").is_err());
    }

    #[test]
    fn a_control_plane_diffs_on_the_detail_and_names_its_struct_by_the_prefix() {
        let args: RoleArgs = syn::parse_str("EKS, tokens = T, create = \"CreateCluster\"").unwrap();
        let code = control_plane(&args).to_string();
        assert!(
            code.contains("diff :: diff (desired , & cluster . detail)"),
            "{code}"
        );
        assert!(code.contains("pub struct EksControlPlane"), "{code}");
    }

    #[test]
    fn an_infra_cluster_is_its_struct_and_reconciler() {
        let args: RoleArgs = syn::parse_str("OKE").unwrap();
        let code = infra_cluster(&args).to_string();
        assert!(code.contains("pub struct OkeInfraCluster"), "{code}");
        assert!(code.contains("InfraClusterReconciler :: new"), "{code}");
    }

    #[test]
    fn a_pool_without_a_block_reports_nothing() {
        let profile = "tokens = T, create = C, names = N, noun = \"agent pool\"";
        let args: RoleArgs = syn::parse_str(&format!("AKS, {profile}")).unwrap();
        assert!(
            !machine_pool(&args)
                .to_string()
                .contains("observe :: report")
        );
        let args: RoleArgs = syn::parse_str(&format!("GKE, pool_block, {profile}")).unwrap();
        assert!(
            machine_pool(&args)
                .to_string()
                .contains("observe :: report (pool)")
        );
    }

    #[test]
    fn a_profile_without_a_key_is_a_compile_error_naming_it() {
        let args: RoleArgs = syn::parse_str("OKE, tokens = T").unwrap();
        let code = control_plane(&args).to_string();
        assert!(code.contains("compile_error"), "{code}");
        assert!(code.contains("needs `create = …`"), "{code}");
        let args: RoleArgs = syn::parse_str("OKE, tokens = T, create = C, noun = N").unwrap();
        let code = machine_pool(&args).to_string();
        assert!(code.contains("machine_pool! needs `names = …`"), "{code}");
        assert!(syn::parse_str::<RoleArgs>("OKE, token = T").is_err());
    }

    #[test]
    fn an_option_given_twice_or_to_a_role_that_takes_none_is_an_error() {
        assert!(syn::parse_str::<RoleArgs>("OKE, tokens = T, tokens = U").is_err());
        let args: RoleArgs = syn::parse_str("OKE, pool_block, tokens = T, create = C").unwrap();
        let code = control_plane(&args).to_string();
        assert!(
            code.contains("control_plane! takes no `pool_block`"),
            "{code}"
        );
        let code = infra_cluster(&args).to_string();
        assert!(
            code.contains("infra_cluster! takes no `pool_block`"),
            "{code}"
        );
    }
}
