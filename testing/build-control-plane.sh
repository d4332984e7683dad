#!/usr/bin/env bash
# Builds the control-plane binaries the integration tests run (kube-apiserver,
# kube-controller-manager, kube-scheduler, etcd) and kwok (simulated kubelets, so pods
# run and claims bind) from their published Go modules, into a cache directory outside
# the repository keyed by version. Prints that directory.
#
# Why from source: no registry here serves Kubernetes release binaries, but the Go
# module proxy serves k8s.io/kubernetes and etcd. k8s.io/kubernetes requires its
# staging modules at v0.0.0 (resolved by in-repo replaces a dependent never sees),
# so a throwaway module pins each one to the matching published v0.x tag.
#
# Fallback (loud): Debian's kubernetes 1.20.2 source package and etcd-server; see
# build-control-plane-debian.sh.
set -euo pipefail

K8S_VERSION="${OPKIT_K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${OPKIT_ETCD_VERSION:-v3.6.16}"
# The release before it, for the etcd operator's upgrade tests (members rolled from one to the other).
ETCD_PREVIOUS_VERSION="${OPKIT_ETCD_PREVIOUS_VERSION:-v3.5.21}"
KWOK_VERSION="${OPKIT_KWOK_VERSION:-v0.8.0}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/control-plane-k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"

log() { echo "[build-control-plane] $*" >&2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ "${OPKIT_CONTROL_PLANE:-}" == debian ]]; then
  exec bash "$here/build-control-plane-debian.sh"
fi
# The Go module build runs in a child process, so that any failure in it (set -e) falls back.
if [[ "${1:-}" != --go-only ]]; then
  if out="$(bash "${BASH_SOURCE[0]}" --go-only)"; then
    echo "$out"
    exit 0
  fi
  log "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  log "!!! Could not build Kubernetes $K8S_VERSION from the Go module proxy (see above)."
  log "!!! FALLING BACK to Debian's Kubernetes 1.20.2: an OLD release without batch/v1 CronJob,"
  log "!!! policy/v1 PodDisruptionBudget or Pod Security admission. Some tests will not hold."
  log "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  exec bash "$here/build-control-plane-debian.sh"
fi

K8S_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler)
complete() {
  for f in "${K8S_COMMANDS[@]}" etcd "etcd-$ETCD_PREVIOUS_VERSION" etcdctl etcdutl kwok; do [[ -x "$OUT/$f" ]] || return 1; done
  [[ -d "$OUT/kwok-stages" ]]
}
if complete; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed; install Go >= 1.24 or set KUBEBUILDER_ASSETS"; exit 1; }

mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# shellcheck source=go-build.sh
source "$here/go-build.sh"

# kwok simulates the kubelets of fake nodes. Its stages (what happens to a node, pod or volume
# and when) ship inside its module; they are taken from the module cache into the binary cache
# here, never into the repository.
build_kwok() {
  local dir moddir
  dir="$(go_module kwok-build 1.23.0 "sigs.k8s.io/kwok@$KWOK_VERSION")"
  go_build "$dir" "$OUT/kwok" "" "" sigs.k8s.io/kwok/cmd/kwok
  moddir="$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [[ -d "$moddir/kustomize/stage" ]] || { log "no kustomize/stage in $moddir"; return 1; }
  rm -rf "$OUT/kwok-stages.tmp"
  mkdir -p "$OUT/kwok-stages.tmp"
  cp -r "$moddir/kustomize/stage/." "$OUT/kwok-stages.tmp/"
  chmod -R u+w "$OUT/kwok-stages.tmp"
  mv "$OUT/kwok-stages.tmp" "$OUT/kwok-stages"
}

# Kubernetes first: the real node's kubelet and kube-proxy (build-node.sh) and the bench's
# sample-controller are built from the same module versions, so they find most of it compiled.
missing=()
for cmd in "${K8S_COMMANDS[@]}"; do [[ -x "$OUT/$cmd" ]] || missing+=("$cmd"); done
[[ ${#missing[@]} -eq 0 ]] || build_k8s_commands "$K8S_VERSION" "$OUT" "${missing[@]}"
etcd_server=go.etcd.io/etcd/server/v3
[[ -x "$OUT/etcd" ]] || build_go_command "$etcd_server" "$ETCD_VERSION" "$etcd_server" "$OUT/etcd"
[[ -x "$OUT/etcd-$ETCD_PREVIOUS_VERSION" ]] ||
  build_go_command "$etcd_server" "$ETCD_PREVIOUS_VERSION" "$etcd_server" "$OUT/etcd-$ETCD_PREVIOUS_VERSION"
# etcdctl, for the etcd operator's backup tests (they run its backup Job's commands).
etcdctl=go.etcd.io/etcd/etcdctl/v3
[[ -x "$OUT/etcdctl" ]] || build_go_command "$etcdctl" "$ETCD_VERSION" "$etcdctl" "$OUT/etcdctl"
# etcdutl, which the etcd image carries beside etcdctl: the real node's e2e reads the backup Job's
# snapshots with `etcdutl snapshot status`.
etcdutl=go.etcd.io/etcd/etcdutl/v3
[[ -x "$OUT/etcdutl" ]] || build_go_command "$etcdutl" "$ETCD_VERSION" "$etcdutl" "$OUT/etcdutl"
[[ -x "$OUT/kwok" && -d "$OUT/kwok-stages" ]] || build_kwok

echo "$K8S_VERSION" > "$OUT/VERSION"
log "built in $(( $(date +%s) - start )) s: $OUT"
echo "$OUT"
