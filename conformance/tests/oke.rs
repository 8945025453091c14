//! The OKE provider passes every applicable check of the suite, run exactly as a provider
//! maintainer runs it: `conformance run --profile provider-oci/conformance.yaml` (the real
//! binary, two real management planes, the real clusterctl, the OKE emulator with real workload
//! API servers).

mod support;

#[test]
fn the_oke_provider_passes_every_applicable_check() {
    support::passes_every_applicable_check(
        "oke",
        "provider-oci/conformance.yaml",
        &["provider-oci", "emulator"],
        "-p provider-oci -p emulators",
    );
}
