//! Prints the provider's CRDs as YAML (used by the manifest generator and for a quick look).

fn main() -> anyhow::Result<()> {
    for crd in provider_aws::api::crds() {
        println!("---\n{}", serde_saphyr::to_string(&crd)?);
    }
    Ok(())
}
