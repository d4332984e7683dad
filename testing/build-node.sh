#!/usr/bin/env bash
# Builds what a real node runs beside the control plane (testing/plane/real-node.ts): kubelet and
# kube-proxy from k8s.io/kubernetes, containerd with ctr and its runc shim, the CNI plugins bridge,
# host-local and loopback, and a pause program for the pod sandbox image. From the Go module proxy
# (no registry here serves their release binaries), into a cache directory outside the repository
# keyed by version. Prints that directory. runc itself is the distribution's (Debian's runc).
set -euo pipefail

K8S_VERSION="${OPKIT_K8S_VERSION:-v1.36.3}"
CONTAINERD_VERSION="${OPKIT_CONTAINERD_VERSION:-v2.4.2}"
CNI_PLUGINS_VERSION="${OPKIT_CNI_PLUGINS_VERSION:-v1.10.0}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pause_sum="$(sha256sum "$here/node/pause.go" | cut -c1-12)"
OUT="$CACHE_ROOT/node-k8s-$K8S_VERSION-containerd-$CONTAINERD_VERSION-cni-$CNI_PLUGINS_VERSION-pause-$pause_sum"
log() { echo "[build-node] $*" >&2; }

COMMANDS=(kubelet kube-proxy containerd ctr containerd-shim-runc-v2 cni/bridge cni/host-local cni/loopback pause)
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

for cmd in kubelet kube-proxy; do
  [[ -x "$OUT/$cmd" ]] || build_k8s_command "$K8S_VERSION" "$cmd" "$OUT"
done
containerd=github.com/containerd/containerd/v2
# The snapshotters that need C libraries or kernel features this node does not use are left out.
for cmd in containerd ctr containerd-shim-runc-v2; do
  [[ -x "$OUT/$cmd" ]] ||
    build_go_command "$containerd" "$CONTAINERD_VERSION" "$containerd/cmd/$cmd" "$OUT/$cmd" "no_btrfs no_devmapper no_zfs"
done
plugins=github.com/containernetworking/plugins
for p in main/bridge ipam/host-local main/loopback; do
  [[ -x "$OUT/cni/${p#*/}" ]] || build_go_command "$plugins" "$CNI_PLUGINS_VERSION" "$plugins/plugins/$p" "$OUT/cni/${p#*/}"
done
if [[ ! -x "$OUT/pause" ]]; then
  log "building pause (testing/node/pause.go)"
  mkdir -p "$work/pause"
  cp "$here/node/pause.go" "$work/pause/main.go"
  printf 'module opkit.local/pause\n\ngo 1.23.0\n' > "$work/pause/go.mod"
  (cd "$work/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/pause.tmp" .)
  mv "$OUT/pause.tmp" "$OUT/pause"
fi
log "built in $(($(date +%s) - start)) s: $OUT"
echo "$OUT"
