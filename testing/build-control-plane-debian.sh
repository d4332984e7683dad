#!/usr/bin/env bash
# Fallback builder: Kubernetes 1.20.2 from Debian's `kubernetes` source package (complete with
# vendor/), compiled with Debian's Go 1.19, and etcd from Debian's `etcd-server`. Known to build
# here, but old: no batch/v1 CronJob, policy/v1 PDB, CEL rules or Pod Security admission, so
# some integration tests cannot hold. Prints the directory holding the binaries.
# Needs root (apt-get). Used by build-control-plane.sh when the Go module build fails, or
# directly with OPKIT_CONTROL_PLANE=debian.
set -euo pipefail

CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/control-plane-debian-kubernetes-1.20.2"
log() { echo "[build-control-plane:debian] $*" >&2; }

if [[ -x "$OUT/kube-apiserver" && -x "$OUT/kube-controller-manager" && -x "$OUT/etcd" ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
src_list=/etc/apt/sources.list.d/opkit-deb-src.sources
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  log "adding a deb-src entry for bookworm main ($src_list)"
  cat > "$src_list" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
apt-get update -qq
# golang-1.19-go installs under /usr/lib/go-1.19 without taking over `go` on PATH.
apt-get install -y -qq golang-1.19-go etcd-server dpkg-dev rsync >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq kubernetes >/dev/null 2>&1
srcdir="$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)"
cd "$srcdir"
# The GOPATH layout debian/rules sets up.
mkdir -p .go/src/k8s.io
ln -sfn ../../.. .go/src/k8s.io/kubernetes
log "building kube-apiserver and kube-controller-manager 1.20.2 with Go 1.19 (about 10 CPU-minutes)"
env GOPATH="$PWD/.go" PATH="/usr/lib/go-1.19/bin:$PATH" CGO_ENABLED=0 HOME="$work/home" GO111MODULE=off \
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" >&2
mkdir -p "$OUT"
cp _output/bin/kube-apiserver _output/bin/kube-controller-manager "$OUT/"
cp /usr/bin/etcd "$OUT/etcd"
echo "v1.20.2" > "$OUT/VERSION"
echo "$OUT"
