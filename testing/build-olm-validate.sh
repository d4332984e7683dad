#!/usr/bin/env bash
# Builds olm-validate (testing/olm-validate/main.go): operator-framework/api's bundle validators,
# as `operator-sdk bundle validate` runs them (default, OperatorHub v2, good practices), as a
# command the tests give bundle directories to. From the Go module proxy, into a cache directory
# outside the repository keyed by version. Prints the path of the binary.
set -euo pipefail

API_VERSION="${OPKIT_OPERATOR_FRAMEWORK_API_VERSION:-v0.45.0}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sum="$(sha256sum "$here/olm-validate/main.go" | cut -c1-12)"
OUT="$CACHE_ROOT/olm-validate-$API_VERSION-$sum"
log() { echo "[build-olm-validate] $*" >&2; }

# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT/olm-validate" olm-validate
dir="$(go_module olm-validate 1.24.0 "github.com/operator-framework/api@$API_VERSION")"
cp "$here/olm-validate/main.go" "$dir/main.go"
(cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
go_build "$dir" "$OUT/olm-validate" "" "" .
go_tool_end "$OUT/olm-validate"
