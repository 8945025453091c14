#!/usr/bin/env bash
# Builds the Go peer the benchmark compares against: Cluster API Provider AWS, from its published
# Go module, into the cache, and prints the directory holding `cluster-api-provider-aws` and
# `crds/` (testbed/go-peer.sh; `CAPA_ASSETS` names a prebuilt one).
#
#   testbed/build-capa.sh            # builds (if needed) and prints the directory
#
# v2.13.0 is the only release the Go module proxy serves here (it still speaks the v1beta1
# contract, which Cluster API v1.14 accepts).
set -euo pipefail
source "$(dirname "$0")/go-peer.sh"
build_go_peer capa v2.13.0 sigs.k8s.io/cluster-api-provider-aws/v2 cluster-api-provider-aws CAPA_ASSETS
