#!/usr/bin/env bash
# The demo on the local default: a real management plane, an emulated EKS (moto + our emulator
# with real workload API servers) and provider-aws; one managed cluster created from the eks
# cluster template with the real clusterctl, its progress shown as conditions change, and its
# nodes listed through the new kubeconfig. Options go on from there:
#   --cloud eks|gke|aks|oke|both|all   --upgrade-to v1.33.0   --scale 3   --delete   --keep
#   --cluster-delay 30   (see --help; --cloud gke runs the GKE emulator and provider-gcp instead,
#   aks the AKS emulator and provider-azure, oke the OKE emulator and provider-oci; both runs EKS
#   and GKE, all every cloud)
set -euo pipefail
cd "$(dirname "$0")/.."
TESTBED_ASSETS=$(bash testbed/build-assets.sh)
MOTO_SERVER=$(bash emulators/moto/ensure-moto.sh)
export TESTBED_ASSETS MOTO_SERVER
cargo build --quiet -p provider-aws -p provider-gcp -p provider-azure -p provider-oci -p demo
exec "${CARGO_TARGET_DIR:-target}/debug/demo" "$@"
