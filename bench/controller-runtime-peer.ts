/**
 * The controller-runtime peer: bench/controller-runtime, a Memcached operator written the way
 * kubebuilder scaffolds one, at controller-runtime's defaults (1 worker, its priority queue, no
 * client-side rate limit), built by bench/build-controller-runtime-peer.sh. Measured exactly as
 * our reconciler is (bench/measure.ts `converge`): N Memcacheds of size 1 created 2 at a time,
 * each becoming a Deployment; settled when every Memcached's status counts its pod available.
 */
import type { KubeObject, ResourceType } from '../constructs/contract';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../testing/control-plane';
import {
  type BenchContext,
  buildCached,
  controllerNamespace,
  converge,
  kubectl,
  type Measurement,
  startProcess,
  stopProcess,
  waitReady,
} from './measure';

const ROOT = path.resolve(__dirname, '..');

const peerMemcachedType: ResourceType = {
  group: 'cache.bench.example.com',
  version: 'v1alpha1',
  kind: 'Memcached',
  resource: 'benchmemcacheds',
  namespaced: true,
};

type PeerMemcached = KubeObject & { status?: { availableReplicas?: number; observedGeneration?: number } };

/** Builds the peer (cached by a hash of its sources); returns its directory. */
export function buildControllerRuntimePeer(): { dir: string; version: string } {
  const dir = buildCached(path.join(ROOT, 'bench', 'build-controller-runtime-peer.sh'));
  return { dir, version: fs.readFileSync(path.join(dir, 'VERSION'), 'utf8').trim() };
}

export async function measureControllerRuntime(
  ctx: BenchContext,
  n: number,
  options: { dir: string; idleSeconds: number },
): Promise<Measurement> {
  kubectl(ctx.admin, ['apply', '--server-side', '-f', path.join(options.dir, 'crd.yaml')]);
  kubectl(ctx.admin, ['wait', '--for', 'condition=established', 'crd/benchmemcacheds.cache.bench.example.com']);
  const { ns, kubeconfig, user, remove } = controllerNamespace(ctx, 'bench-cr', 'memcached-operator');
  const health = await freePort();
  const peer = startProcess(path.join(options.dir, 'memcached-operator'), [
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${ns}`,
    `--health-probe-bind-address=127.0.0.1:${health}`,
    '--zap-log-level=error',
  ]);
  await waitReady(peer, health, 'the controller-runtime peer');
  const memcacheds = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'cache.bench.example.com/v1alpha1',
    kind: 'Memcached',
    metadata: { name: `mc-${i}`, namespace: ns },
    spec: { size: 1 },
  }));
  const measured = await converge<PeerMemcached>(ctx, {
    pid: peer.pid ?? 0,
    user,
    ns,
    type: peerMemcachedType,
    objects: memcacheds,
    settled: (m) => m.status?.observedGeneration === m.metadata.generation && m.status?.availableReplicas === 1,
    idleSeconds: options.idleSeconds,
  });
  await stopProcess(peer);
  await remove();
  return measured;
}
