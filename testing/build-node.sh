#!/usr/bin/env bash
# Builds what a real node runs beside the control plane (testing/plane/real-node.ts): kubelet and
# kube-proxy from k8s.io/kubernetes, containerd with ctr and its runc shim, the CNI plugins bridge,
# host-local and loopback, a pause program for the pod sandbox image, CoreDNS for cluster DNS
# (testing/node/coredns.go: only the plugins it needs) and rancher's local-path-provisioner for a
# default StorageClass, as kind ships them. From the Go module proxy
# (no registry here serves their release binaries), into a cache directory outside the repository
# keyed by version. Prints that directory. runc itself is the distribution's (Debian's runc).
set -euo pipefail

K8S_VERSION="${OPKIT_K8S_VERSION:-v1.36.3}"
CONTAINERD_VERSION="${OPKIT_CONTAINERD_VERSION:-v2.4.2}"
CNI_PLUGINS_VERSION="${OPKIT_CNI_PLUGINS_VERSION:-v1.10.0}"
COREDNS_VERSION="${OPKIT_COREDNS_VERSION:-v1.12.4}"
LOCAL_PATH_VERSION="${OPKIT_LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The node's own Go sources are part of the key: changed, they are another build.
sources_sum="$(cat "$here/node/pause.go" "$here/node/coredns.go" | sha256sum | cut -c1-12)"
OUT="$CACHE_ROOT/node-k8s-$K8S_VERSION-containerd-$CONTAINERD_VERSION-cni-$CNI_PLUGINS_VERSION-coredns-$COREDNS_VERSION-local-path-$LOCAL_PATH_VERSION-$sources_sum"
log() { echo "[build-node] $*" >&2; }

COMMANDS=(kubelet kube-proxy containerd ctr containerd-shim-runc-v2 cni/bridge cni/host-local cni/loopback pause coredns local-path-provisioner)
complete() {
  for f in "${COMMANDS[@]}"; do [[ -x "$OUT/$f" ]] || return 1; done
}
if complete; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { log "go is not installed; install Go >= 1.24"; exit 1; }
mkdir -p "$OUT/cni"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
# shellcheck source=go-build.sh
source "$here/go-build.sh"

missing=()
for cmd in kubelet kube-proxy; do [[ -x "$OUT/$cmd" ]] || missing+=("$cmd"); done
[[ ${#missing[@]} -eq 0 ]] || build_k8s_commands "$K8S_VERSION" "$OUT" "${missing[@]}"
containerd=github.com/containerd/containerd/v2
# The snapshotters that need C libraries or kernel features this node does not use are left out.
missing=()
for cmd in containerd ctr containerd-shim-runc-v2; do [[ -x "$OUT/$cmd" ]] || missing+=("$containerd/cmd/$cmd"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  dir="$(go_module containerd-build 1.23.0 "$containerd@$CONTAINERD_VERSION")"
  go_build "$dir" "$OUT/" "no_btrfs no_devmapper no_zfs" "" "${missing[@]}"
fi
plugins=github.com/containernetworking/plugins
missing=()
for p in main/bridge ipam/host-local main/loopback; do [[ -x "$OUT/cni/${p#*/}" ]] || missing+=("$plugins/plugins/$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  dir="$(go_module cni-plugins-build 1.23.0 "$plugins@$CNI_PLUGINS_VERSION")"
  go_build "$dir" "$OUT/cni/" "" "" "${missing[@]}"
fi
if [[ ! -x "$OUT/pause" ]]; then
  mkdir -p "$work/pause"
  cp "$here/node/pause.go" "$work/pause/main.go"
  printf 'module opkit.local/pause\n\ngo 1.23.0\n' > "$work/pause/go.mod"
  go_build "$work/pause" "$OUT/pause" "" "" .
fi
if [[ ! -x "$OUT/coredns" ]]; then
  dir="$(go_module coredns-build 1.24.0 "github.com/coredns/coredns@$COREDNS_VERSION")"
  cp "$here/node/coredns.go" "$dir/main.go"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
  go_build "$dir" "$OUT/coredns" "" "-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" .
fi
if [[ ! -x "$OUT/local-path-provisioner" ]]; then
  dir="$(go_module local-path-provisioner-build 1.23.0 "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION")"
  go_build "$dir" "$OUT/local-path-provisioner" "" "-X main.VERSION=$LOCAL_PATH_VERSION" github.com/rancher/local-path-provisioner
fi
log "built in $(($(date +%s) - start)) s: $OUT"
echo "$OUT"
