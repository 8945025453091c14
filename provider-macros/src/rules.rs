//! A provider's admission rules: the CEL rules beyond the schema that the API server checks on
//! every write of a kind, each with the message a user is shown. They are a table of data, one
//! file a provider (`src/api/rules.yaml`), keyed by the Rust struct they validate:
//!
//! ```yaml
//! EKSMachinePoolSpec:
//!   - rule: '!has(self.update) || !has(self.update.maxSurge)'
//!     message: 'spec.update.maxSurge is not supported on EKS: …'
//! ```
//!
//! `#[kind]` and `#[block]` add a struct's rules to it as one `#[x_kube]` attribute (after the
//! struct's own, which hold rules written as Rust expressions), and `kinds!` writes a test that
//! every rule of the table is in one of the provider's CRDs, so a misspelt key cannot drop one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use serde::Deserialize;
use syn::{ItemStruct, parse_quote};

/// One rule of the table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    rule: String,
    message: String,
}

/// The table: a struct's name, its rules in order.
type Table = BTreeMap<String, Vec<Entry>>;

/// Where the table of the crate being compiled is.
fn path() -> Option<PathBuf> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    Some(PathBuf::from(dir).join("src/api/rules.yaml"))
}

/// The table of the crate being compiled, with its path; none when the crate has no table.
fn table() -> syn::Result<Option<(PathBuf, Table)>> {
    let Some(path) = path().filter(|p| p.exists()) else {
        return Ok(None);
    };
    let error = |what: String| syn::Error::new(Span::call_site(), what);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| error(format!("cannot read {}: {e}", path.display())))?;
    let table = serde_saphyr::from_str(&text)
        .map_err(|e| error(format!("{} is not a table of rules: {e}", path.display())))?;
    Ok(Some((path, table)))
}

/// Adds the table's rules for `item` to it, and makes the crate rebuild when the table changes.
pub fn add(item: &mut ItemStruct) -> syn::Result<Tokens> {
    let Some((path, table)) = table()? else {
        return Ok(Tokens::new());
    };
    let path = path.display().to_string();
    if let Some(entries) = table.get(&item.ident.to_string()) {
        let rules = entries
            .iter()
            .map(|Entry { rule, message }| quote!(validation = Rule::new(#rule).message(#message)));
        item.attrs.push(parse_quote!(#[x_kube(#(#rules),*)]));
    }
    Ok(quote!(
        const _: &[u8] = include_bytes!(#path);
    ))
}

/// Every rule of the table, for the test that each is in a CRD.
pub fn all() -> syn::Result<Vec<String>> {
    Ok(table()?
        .map(|(_, table)| table.into_values().flatten().map(|e| e.rule).collect())
        .unwrap_or_default())
}
