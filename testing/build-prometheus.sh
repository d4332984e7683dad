#!/usr/bin/env bash
# Builds Prometheus and promtool from Prometheus's published Go module, into a cache directory
# outside the repository keyed by version. Prints the directory holding both. The monitoring
# tests scrape a running reconciler with it and evaluate the synthesized alerting rules.
#
# Why from source: no registry here serves Prometheus's release archives, but the Go module proxy
# serves github.com/prometheus/prometheus (Prometheus 3.x is its module version v0.3xx.y). The web
# UI's assets are not built in (the tests use only the HTTP API); the version is set as
# Prometheus's own release build sets it (ldflags).
set -euo pipefail

MODULE_VERSION="${OPKIT_PROMETHEUS_MODULE_VERSION:-v0.316.0}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/prometheus-$MODULE_VERSION"
log() { echo "[build-prometheus] $*" >&2; }

if [[ -x "$OUT/prometheus" && -x "$OUT/promtool" ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { log "go is not installed; install Go >= 1.24"; exit 1; }
mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
# v0.MINOR.PATCH of the module is Prometheus 3.(MINOR-300).PATCH.
minor="${MODULE_VERSION#v0.}"
release="3.$((${minor%%.*} - 300)).${minor#*.}"
cat > "$work/go.mod" <<MOD
module opkit.local/prometheus-build

go 1.25.0
MOD
log "building Prometheus $release (github.com/prometheus/prometheus $MODULE_VERSION)"
(cd "$work" && GOFLAGS=-mod=mod go get "github.com/prometheus/prometheus@$MODULE_VERSION" >/dev/null 2>&1)
ldflags="-s -w -X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Branch=release"
for cmd in prometheus promtool; do
  (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags netgo \
    -ldflags "$ldflags" -o "$OUT/$cmd.tmp" "github.com/prometheus/prometheus/cmd/$cmd")
done
for cmd in prometheus promtool; do mv "$OUT/$cmd.tmp" "$OUT/$cmd"; done
log "built in $(($(date +%s) - start)) s: $OUT"
echo "$OUT"
