#!/usr/bin/env bash
# Builds the bench's controller-runtime peers (bench/controller-runtime: a kubebuilder-style
# Memcached operator, and with --equal-work one that does what ours does) from its go.mod, with
# modules from the Go module proxy, into a cache directory outside the repository named by a hash
# of its sources. Prints that directory, which also holds the CRD and a VERSION file
# (controller-runtime's version).
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/controller-runtime" && pwd)"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
HASH="$(cat "$SRC"/*.go "$SRC/go.mod" "$SRC/go.sum" "$SRC/crd.yaml" | sha256sum | cut -c1-12)"
OUT="$CACHE_ROOT/controller-runtime-peer-$HASH"
log() { echo "[build-controller-runtime-peer] $*" >&2; }

if [[ -x "$OUT/memcached-operator" && -f "$OUT/crd.yaml" ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=../testing/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../testing/go-build.sh"
# Its go.sum is checked in: resolve nothing, change nothing in the repository.
GO_BUILD_MOD=readonly go_build "$SRC" "$OUT/memcached-operator" "" "" .
(cd "$SRC" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-runtime) > "$OUT/VERSION"
# Last: the cache counts as whole once the CRD is there.
cp "$SRC/crd.yaml" "$OUT/crd.yaml"
echo "$OUT"
