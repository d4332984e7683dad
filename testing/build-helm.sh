#!/usr/bin/env bash
# Builds Helm (the `helm` command) from its published Go module, into a cache directory outside
# the repository keyed by version. Prints the path of the binary. The tests lint, render and
# install the operator charts the kit writes with it.
#
# Why from source: no registry here serves Helm's release binaries, but the Go module proxy
# serves helm.sh/helm. The version is set as Helm's own release build sets it (ldflags).
set -euo pipefail

HELM_VERSION="${OPKIT_HELM_VERSION:-v4.3.1}"
MAJOR="${HELM_VERSION%%.*}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/helm-$HELM_VERSION"
log() { echo "[build-helm] $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT/helm" helm
dir="$(go_module helm-build 1.25.0 "helm.sh/helm/$MAJOR/cmd/helm@$HELM_VERSION")"
go_build "$dir" "$OUT/helm" "" "-X helm.sh/helm/$MAJOR/internal/version.version=$HELM_VERSION" "helm.sh/helm/$MAJOR/cmd/helm"
go_tool_end "$OUT/helm"
