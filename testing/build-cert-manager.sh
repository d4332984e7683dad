#!/usr/bin/env bash
# Builds cert-manager-controller (testing/cert-manager/main.go): cert-manager's certificate
# controllers with its CA and self-signed issuers, from its published Go module, so the tests of
# an EtcdCluster's spec.tls.issuerRef run against cert-manager itself. Into a cache directory
# outside the repository keyed by version and the main's content; prints that directory, which
# holds the binary and cert-manager's CRDs (deploy/crds of the same module).
#
# Why a main of our own: the Go module proxy serves github.com/cert-manager/cert-manager (its
# library: every controller registers itself) but not github.com/cert-manager/cert-manager/cmd/controller,
# the module of its released binary (`go list -m -versions github.com/cert-manager/cert-manager/cmd/controller`
# fails: the proxy has no such module and github.com is out of reach). Built inside a copy of the
# library module, with the dependency versions its go.sum pins.
set -euo pipefail

CERT_MANAGER_VERSION="${OPKIT_CERT_MANAGER_VERSION:-v1.21.2}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sum="$(sha256sum "$here/cert-manager/main.go" | cut -c1-12)"
OUT="$CACHE_ROOT/cert-manager-$CERT_MANAGER_VERSION-$sum"
log() { echo "[build-cert-manager] $*" >&2; }

# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT" cert-manager-controller
module=github.com/cert-manager/cert-manager
source_dir="$(go mod download -json "$module@$CERT_MANAGER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$source_dir" ]] || { log "go mod download $module@$CERT_MANAGER_VERSION gave no source directory"; exit 1; }
cp -r "$source_dir" "$work/cert-manager"
chmod -R u+w "$work/cert-manager"
mkdir -p "$work/cert-manager/cmd/opkit-cert-manager-controller"
cp "$here/cert-manager/main.go" "$work/cert-manager/cmd/opkit-cert-manager-controller/main.go"
mkdir -p "$OUT/crds"
cp "$source_dir"/deploy/crds/cert-manager.io_*.yaml "$OUT/crds/"
chmod u+w "$OUT"/crds/*.yaml
go_build "$work/cert-manager" "$OUT/cert-manager-controller" "" "" ./cmd/opkit-cert-manager-controller
go_tool_end "$OUT"
