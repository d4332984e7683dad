#!/usr/bin/env bash
# Builds kstatus-check (testing/kstatus/main.go): kstatus, the readiness rules of
# sigs.k8s.io/cli-utils that Helm 4's --wait, Flux, kpt and Config Sync judge objects with, as a
# command the tests feed objects to. From the Go module proxy, into a cache directory outside the
# repository keyed by version. Prints the path of the binary.
set -euo pipefail

CLI_UTILS_VERSION="${OPKIT_CLI_UTILS_VERSION:-v0.37.2}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sum="$(sha256sum "$here/kstatus/main.go" | cut -c1-12)"
OUT="$CACHE_ROOT/kstatus-check-$CLI_UTILS_VERSION-$sum"
log() { echo "[build-kstatus] $*" >&2; }

# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT/kstatus-check" kstatus-check
dir="$(go_module kstatus-check 1.24.0 "sigs.k8s.io/cli-utils@$CLI_UTILS_VERSION")"
cp "$here/kstatus/main.go" "$dir/main.go"
(cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
go_build "$dir" "$OUT/kstatus-check" "" "" .
go_tool_end "$OUT/kstatus-check"
