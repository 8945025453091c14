//! The EKS provider passes every applicable check of the suite, run exactly as a provider
//! maintainer runs it: `conformance run --profile provider-aws/conformance.yaml` (the real
//! binary, two real management planes, the real clusterctl, the EKS emulator and moto).
//!
//! The suite's crate does not depend on the provider: the profile names the binaries, which
//! `cargo test --workspace --all-targets` (scripts/test.sh) builds.

mod support;

#[test]
fn the_eks_provider_passes_every_applicable_check() {
    support::passes_every_applicable_check(
        "eks",
        "provider-aws/conformance.yaml",
        &["provider-aws", "emulator"],
        "-p provider-aws -p emulators",
    );
}
