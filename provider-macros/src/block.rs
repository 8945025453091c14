//! `#[block]`: a block of a kind's spec or status (`spec.gke`, `status.oke`, a shared
//! sub-object), written the way every block of every provider is: the same derives, camelCase
//! field names, and an unset optional or empty list left out of the object rather than written
//! as `null` or `[]`.

use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::{Fields, ItemStruct, Type, parse_quote};

/// The last segment of a field's type when it is `Option<…>` or `Vec<…>`.
fn container(ty: &Type) -> Option<&'static str> {
    let Type::Path(path) = ty else {
        return None;
    };
    match path.path.segments.last()?.ident.to_string().as_str() {
        "Option" => Some("Option::is_none"),
        "Vec" => Some("Vec::is_empty"),
        _ => None,
    }
}

/// The derives and serde attributes of every block, and of every kind's status.
pub fn attributes() -> Tokens {
    quote! {
        #[derive(
            ::kube::KubeSchema,
            ::serde::Serialize,
            ::serde::Deserialize,
            Clone,
            Debug,
            Default,
            PartialEq
        )]
        #[serde(rename_all = "camelCase")]
    }
}

/// The struct with its derives and serde attributes: every `Option` or `Vec` field that has
/// no serde attribute of its own is defaulted when absent and left out when unset or empty.
pub fn block(mut item: ItemStruct) -> syn::Result<Tokens> {
    let Fields::Named(fields) = &mut item.fields else {
        return Err(syn::Error::new_spanned(
            &item.ident,
            "a block is a struct with named fields",
        ));
    };
    for field in &mut fields.named {
        let has_serde = field.attrs.iter().any(|a| a.path().is_ident("serde"));
        if let (false, Some(empty)) = (has_serde, container(&field.ty)) {
            field
                .attrs
                .push(parse_quote!(#[serde(default, skip_serializing_if = #empty)]));
        }
    }
    let attributes = attributes();
    Ok(quote! {
        #attributes
        #item
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn optional_and_list_fields_are_left_out_when_unset_unless_they_say_otherwise() {
        let item: ItemStruct = syn::parse_str(
            "struct B { a: Option<String>, b: Vec<String>, #[serde(default)] c: Option<u8>, d: bool }",
        )
        .unwrap();
        let code = block(item).unwrap().to_string();
        assert!(
            code.contains("skip_serializing_if = \"Option::is_none\")] a"),
            "{code}"
        );
        assert!(
            code.contains("skip_serializing_if = \"Vec::is_empty\")] b"),
            "{code}"
        );
        assert!(code.contains("# [serde (default)] c"), "{code}");
        assert!(code.contains("d : bool"), "{code}");
        assert!(code.contains("rename_all = \"camelCase\""), "{code}");
    }

    #[test]
    fn a_tuple_struct_is_refused() {
        let item: ItemStruct = syn::parse_str("struct T(u8);").unwrap();
        assert!(block(item).is_err());
    }
}
