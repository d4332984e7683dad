#!/usr/bin/env bash
# Builds Go's k8s.io/sample-controller (the canonical client-go controller: Foo -> Deployment)
# at the release matching a Kubernetes version (v1.X.Y -> v0.X.Y) from the Go module proxy,
# with its CRD, into a cache directory outside the repository. Prints that directory.
# A reference for the benchmarks to beat, never code of ours.
set -euo pipefail

K8S_VERSION="${1:-${OPKIT_K8S_VERSION:-v1.36.3}}"
MODULE_VERSION="v0.${K8S_VERSION#v1.}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/sample-controller-$MODULE_VERSION"
log() { echo "[build-sample-controller] $*" >&2; }

if [[ -x "$OUT/sample-controller" && -f "$OUT/crd-status-subresource.yaml" ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=../testing/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../testing/go-build.sh"
# client-go and apimachinery at the Kubernetes release's staging versions: after the control plane
# and the node, most of it is in Go's build cache already.
dir="$(go_module sample-controller-build 1.23.0 "k8s.io/sample-controller@$MODULE_VERSION")"
go_build "$dir" "$OUT/sample-controller" "" "" k8s.io/sample-controller
moddir="$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/sample-controller@$MODULE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
echo "$MODULE_VERSION" > "$OUT/VERSION"
# Last: the cache counts as whole once the CRD is there.
cp "$moddir/artifacts/examples/crd-status-subresource.yaml" "$OUT/crd-status-subresource.yaml.tmp"
chmod u+w "$OUT/crd-status-subresource.yaml.tmp"
mv "$OUT/crd-status-subresource.yaml.tmp" "$OUT/crd-status-subresource.yaml"
echo "$OUT"
