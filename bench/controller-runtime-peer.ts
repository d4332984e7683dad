/**
 * The controller-runtime peers: bench/controller-runtime, built by
 * bench/build-controller-runtime-peer.sh, at controller-runtime's defaults (1 worker, its priority
 * queue, no client-side rate limit). Measured exactly as our reconciler is (bench/measure.ts
 * `converge`): N Memcacheds of size 1 created 2 at a time, each becoming a Deployment.
 * - lean: a Memcached operator written the way kubebuilder scaffolds one (a Deployment created,
 *   a status counting available replicas; no Pods watched, no Events); settled when every
 *   Memcached counts its pod available;
 * - equal work (`--equal-work`): what our reconciler does — the Deployment our construct renders,
 *   a Pod cache, the status ours writes (pod names, Available / Progressing / Degraded) and the
 *   same Events; settled exactly as ours is.
 */
import type { KubeObject, ResourceType } from '../constructs/contract';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../testing/control-plane';
import {
  type BenchContext,
  goPeerDir,
  controllerNamespace,
  converge,
  kubectl,
  type Measurement,
  memcachedDeployment,
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

type PeerMemcached = KubeObject & {
  status?: {
    availableReplicas?: number;
    observedGeneration?: number;
    nodes?: string[];
    conditions?: { type: string; status: string }[];
  };
};

/** Where the equal-work peer puts each Memcached's name and namespace in its Deployment template. */
const PLACEHOLDER = { name: '__NAME__', namespace: '__NAMESPACE__' };

/** The peer as BENCH_CONTROLLER_RUNTIME_PEER_DIR names it, else built (cached by a hash of its sources). */
export function buildControllerRuntimePeer(): { dir: string; version: string } {
  const dir = goPeerDir(
    'BENCH_CONTROLLER_RUNTIME_PEER_DIR',
    path.join(ROOT, 'bench', 'build-controller-runtime-peer.sh'),
  );
  return { dir, version: fs.readFileSync(path.join(dir, 'VERSION'), 'utf8').trim() };
}

export async function measureControllerRuntime(
  ctx: BenchContext,
  n: number,
  options: {
    dir: string;
    idleSeconds: number;
    equalWork?: boolean;
    /** With a Lease in its namespace, as kubebuilder scaffolds it (`--leader-elect`). @default false */
    leaderElect?: boolean;
    /** Creations in flight at once. @default 2 */
    createInFlight?: number;
    /** Runs once its ServiceAccount exists, before it starts (e.g. to put it under a priority level). */
    beforeStart?: (serviceAccount: { namespace: string; name: string }) => void;
  },
): Promise<Measurement> {
  kubectl(ctx.admin, ['apply', '--server-side', '-f', path.join(options.dir, 'crd.yaml')]);
  kubectl(ctx.admin, ['wait', '--for', 'condition=established', 'crd/benchmemcacheds.cache.bench.example.com']);
  const { ns, kubeconfig, user, remove } = controllerNamespace(ctx, 'bench-cr', 'memcached-operator');
  options.beforeStart?.({ namespace: ns, name: 'memcached-operator' });
  const health = await freePort();
  const equalWork: string[] = [];
  const templateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-peer-'));
  if (options.equalWork) {
    // The Deployment our Memcached construct renders, so both make exactly the same child.
    const template = path.join(templateDir, 'deployment.json');
    fs.writeFileSync(template, JSON.stringify(memcachedDeployment(PLACEHOLDER.name, PLACEHOLDER.namespace)));
    equalWork.push('--equal-work', `--deployment-template=${template}`);
  }
  const peer = startProcess(path.join(options.dir, 'memcached-operator'), [
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${ns}`,
    `--health-probe-bind-address=127.0.0.1:${health}`,
    '--zap-log-level=error',
    ...equalWork,
    ...(options.leaderElect ? ['--leader-elect'] : []),
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
    settled: options.equalWork
      ? (m) =>
          m.status?.observedGeneration === m.metadata.generation &&
          m.status?.nodes?.length === 1 &&
          !!m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')
      : (m) => m.status?.observedGeneration === m.metadata.generation && m.status?.availableReplicas === 1,
    idleSeconds: options.idleSeconds,
    createInFlight: options.createInFlight,
  });
  await stopProcess(peer);
  fs.rmSync(templateDir, { recursive: true, force: true });
  await remove();
  return measured;
}
