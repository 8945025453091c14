//! The AKS provider passes every applicable check of the suite, run exactly as a provider
//! maintainer runs it: `conformance run --profile provider-azure/conformance.yaml` (the real
//! binary, two real management planes, the real clusterctl, the AKS emulator with real workload
//! API servers).

mod support;

#[test]
fn the_aks_provider_passes_every_applicable_check() {
    support::passes_every_applicable_check(
        "aks",
        "provider-azure/conformance.yaml",
        &["provider-azure", "emulator"],
        "-p provider-azure -p emulators",
    );
}
