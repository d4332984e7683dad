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
# The tags are part of the key: a build with every service-discovery plugin is another binary.
OUT="$CACHE_ROOT/prometheus-$MODULE_VERSION-remove_all_sd"
log() { echo "[build-prometheus] $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT" prometheus promtool
# v0.MINOR.PATCH of the module is Prometheus 3.(MINOR-300).PATCH.
minor="${MODULE_VERSION#v0.}"
release="3.$((${minor%%.*} - 300)).${minor#*.}"
log "Prometheus $release (github.com/prometheus/prometheus $MODULE_VERSION)"
dir="$(go_module prometheus-build 1.25.0 "github.com/prometheus/prometheus@$MODULE_VERSION")"
# remove_all_sd: Prometheus's own build tag that leaves out every service-discovery plugin but
# file and http (the cloud SDKs and client-go are most of its build); the tests scrape static
# targets only.
go_build "$dir" "$OUT/" remove_all_sd \
  "-X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Branch=release" \
  github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
go_tool_end "$OUT"
