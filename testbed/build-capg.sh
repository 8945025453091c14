#!/usr/bin/env bash
# Builds the Go peer for GKE: Cluster API Provider GCP (its GKE controllers run only with its GKE
# feature gate on; they speak the v1beta1 contract, which Cluster API v1.14 accepts), from its
# published Go module, into the cache, and prints the directory holding
# `cluster-api-provider-gcp` and `crds/` (testbed/go-peer.sh; `CAPG_ASSETS` names a prebuilt one).
#
#   testbed/build-capg.sh            # builds (if needed) and prints the directory
set -euo pipefail
source "$(dirname "$0")/go-peer.sh"
build_go_peer capg v1.13.1 sigs.k8s.io/cluster-api-provider-gcp cluster-api-provider-gcp CAPG_ASSETS
