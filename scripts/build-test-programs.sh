#!/usr/bin/env bash
# Builds every program the tests run, before any test: the control plane, the real node, the
# bench's Go peers, kstatus, OLM's bundle validators and OLM itself, helm, Prometheus, Traefik, kube-router and cert-manager, each from its Go module with the one recipe of
# testing/go-build.sh and cached by version outside the repository. Prints each build's time and
# the total. .ci/run calls it; `npm test` alone builds the same through its set-ups when missing.
#
# The order lets builds share Go's build cache: Kubernetes' packages are compiled for the control
# plane, then found again by the node's kubelet and kube-proxy, the bench's controller-runtime peer
# and sample-controller (client-go at the same release).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

builds=(
  testing/build-control-plane.sh
  testing/build-node.sh
  bench/build-controller-runtime-peer.sh
  bench/build-sample-controller.sh
  testing/build-kstatus.sh
  testing/build-olm-validate.sh
  testing/build-olm.sh
  testing/build-helm.sh
  testing/build-prometheus.sh
  testing/build-traefik.sh
  testing/build-kube-router.sh
  testing/build-cert-manager.sh
)
total_start=$SECONDS
summary=()
for script in "${builds[@]}"; do
  started=$SECONDS
  echo "::group::$script"
  bash "$root/$script" > /dev/null
  echo "::endgroup::"
  summary+=("$(printf '%5d s  %s' $((SECONDS - started)) "$script")")
done
echo "Programs the tests run, built or found in the cache:"
printf '  %s\n' "${summary[@]}"
printf '  %5d s  in all\n' $((SECONDS - total_start))
