#!/usr/bin/env bash
# Builds Traefik (an ingress controller) from its published Go module, into a cache directory
# outside the repository keyed by version. Prints the path of the binary. The real node runs it
# beside the plane, so an Ingress the kit's kinds make is served for real in the e2e tier.
#
# Why from source: no registry here serves Traefik's release binaries, but the Go module proxy
# serves github.com/traefik/traefik/v3 (its web UI is left as the module ships it: a placeholder).
set -euo pipefail

TRAEFIK_VERSION="${OPKIT_TRAEFIK_VERSION:-v3.5.3}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/traefik-$TRAEFIK_VERSION"
log() { echo "[build-traefik] $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT/traefik" traefik
module=github.com/traefik/traefik/v3
# Built inside a copy of its own module: its go.mod replaces modules (forks of go-http-auth, mux,
# minheap), which a module requiring it would not see.
source_dir="$(go mod download -json "$module@$TRAEFIK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$source_dir" ]] || { log "go mod download $module@$TRAEFIK_VERSION gave no source directory"; exit 1; }
cp -r "$source_dir" "$work/traefik"
chmod -R u+w "$work/traefik"
go_build "$work/traefik" "$OUT/traefik" "" "-X $module/pkg/version.Version=$TRAEFIK_VERSION" ./cmd/traefik
go_tool_end "$OUT/traefik"
