#!/usr/bin/env bash
# Builds the Operator Lifecycle Manager as a cluster runs it, for the e2e tier's real install of a
# kit bundle: OLM's two controllers (olm-operator and catalog-operator, one module), operator-registry's
# `opm` (which serves a file-based catalog over gRPC) and grpc_health_probe (what OLM's catalog pods
# are probed with). From the Go module proxy, into a cache directory outside the repository keyed by
# version, with OLM's CRDs copied from its module beside them. Prints that directory.
set -euo pipefail

OLM_VERSION="${OPKIT_OLM_VERSION:-v0.38.0}"
# The operator-registry release OLM's go.mod requires (v1.60.0 does not build with OLM v0.38.0).
REGISTRY_VERSION="${OPKIT_OPERATOR_REGISTRY_VERSION:-v1.61.0}"
HEALTH_PROBE_VERSION="${OPKIT_GRPC_HEALTH_PROBE_VERSION:-v0.4.63}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$CACHE_ROOT/olm-$OLM_VERSION-registry-$REGISTRY_VERSION-probe-$HEALTH_PROBE_VERSION"
log() { echo "[build-olm] $*" >&2; }

# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT" olm catalog opm grpc_health_probe crds
started=$SECONDS
olm_module=github.com/operator-framework/operator-lifecycle-manager
dir="$(go_module olm 1.24.0 "$olm_module@$OLM_VERSION")"
go_build "$dir" "$OUT/" "" "" "$olm_module/cmd/olm" "$olm_module/cmd/catalog"
# Copied whole, then moved into place: a crds/ directory is a finished one.
rm -rf "$OUT/crds" "$OUT/crds.tmp" && mkdir -p "$OUT/crds.tmp"
cp "$(cd "$dir" && go list -m -f '{{.Dir}}' "$olm_module")"/deploy/chart/crds/*.yaml "$OUT/crds.tmp/"
chmod u+w "$OUT"/crds.tmp/*.yaml && mv "$OUT/crds.tmp" "$OUT/crds"
# opm's image handling names gpgme (cgo) unless told to use the pure-Go OpenPGP verifier.
dir="$(go_module opm 1.24.0 "github.com/operator-framework/operator-registry@$REGISTRY_VERSION")"
go_build "$dir" "$OUT/opm" "containers_image_openpgp json1" "" github.com/operator-framework/operator-registry/cmd/opm
dir="$(go_module grpc-health-probe 1.24.0 "github.com/grpc-ecosystem/grpc-health-probe@$HEALTH_PROBE_VERSION")"
go_build "$dir" "$OUT/grpc_health_probe" "" "" github.com/grpc-ecosystem/grpc-health-probe
log "OLM $OLM_VERSION, opm $REGISTRY_VERSION and grpc_health_probe $HEALTH_PROBE_VERSION in $((SECONDS - started)) s"
go_tool_end "$OUT"
