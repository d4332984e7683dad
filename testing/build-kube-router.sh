#!/usr/bin/env bash
# Builds kube-router from its published Go module, into a cache directory outside the repository
# keyed by version. Prints the path of the binary. The e2e tier runs only its network policy
# controller (--run-firewall) beside the real node, so the NetworkPolicies the kit synthesizes are
# enforced there for real (testing/node/network-policies.ts).
#
# Why kube-router: its enforcer is iptables and ipset, which this kernel has. The enforcers that
# queue packets through nftables (kubernetes-sigs/kube-network-policies, kind's) need the kernel's
# nft_queue (CONFIG_NFT_QUEUE), which this kernel is built without, with no loadable modules
# (`zcat /proc/config.gz | grep -E 'NFT_QUEUE|CONFIG_MODULES'`).
# Why from source: no registry here serves its release binaries, but the Go module proxy serves
# github.com/cloudnativelabs/kube-router/v2 at v2.1.0 only. Advisories are reported against that
# release's dependencies; it runs here only as a test's enforcer on this machine's own loopback and
# pod bridge, with a kubeconfig of its own, never in anything the kit ships.
set -euo pipefail

KUBE_ROUTER_VERSION="${OPKIT_KUBE_ROUTER_VERSION:-v2.1.0}"
CACHE_ROOT="${OPKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-operator-kit}"
OUT="$CACHE_ROOT/kube-router-$KUBE_ROUTER_VERSION"
log() { echo "[build-kube-router] $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_tool_begin "$OUT" "$OUT/kube-router" kube-router
module=github.com/cloudnativelabs/kube-router/v2
# Built inside a copy of its own module, with the dependency versions its go.sum pins.
source_dir="$(go mod download -json "$module@$KUBE_ROUTER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$source_dir" ]] || { log "go mod download $module@$KUBE_ROUTER_VERSION gave no source directory"; exit 1; }
cp -r "$source_dir" "$work/kube-router"
chmod -R u+w "$work/kube-router"
go_build "$work/kube-router" "$OUT/kube-router" "" "-X $module/pkg/version.Version=$KUBE_ROUTER_VERSION" ./cmd/kube-router
go_tool_end "$OUT/kube-router"
