//! The GKE provider passes every applicable check of the suite, run exactly as a provider
//! maintainer runs it: `conformance run --profile provider-gcp/conformance.yaml` (the real
//! binary, two real management planes, the real clusterctl, the GKE emulator with real
//! workload API servers).

mod support;

#[test]
fn the_gke_provider_passes_every_applicable_check() {
    support::passes_every_applicable_check(
        "gke",
        "provider-gcp/conformance.yaml",
        &["provider-gcp", "emulator"],
        "-p provider-gcp -p emulators",
    );
}
