/**
 * Benchmark: how long the reconciler takes to converge N Memcached resources, and its memory
 * while doing it, against a real control plane (the test harness's, or OPKIT_KUBECONFIG).
 *
 * Reference, measured in the same run on the same API server: one client creating the same N
 * Deployments directly, 2 requests in flight — the API server's write throughput here, the
 * floor any reconciler converging N resources approaches.
 *
 *   npm run bench:converge            # N = 100
 *   N=200 WORKERS=2 npm run bench:converge
 *   N=1000 IDLE_S=120 npm run bench:converge         # and count writes over 2 idle minutes
 *   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench:converge   # profile the reconciler
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { BuiltinTypes, customResourceType, memcachedKind } from '../constructs';
import type { Memcached } from '../constructs';
import { memcachedController } from '../constructs/memcached/controller';
import { renderChildren } from '../operator/runtime/render';

const desiredDeployment = (m: Memcached) => renderChildren(memcachedController, m as never)[0];
import { KubeClient } from '../operator/runtime/client';
import { KubeObject } from '../operator/runtime/resource';
import { freePort, startControlPlane } from '../test/harness/control-plane';
import { httpGet, serviceAccountKubeconfig } from '../test/support/reconciler';

const ROOT = path.resolve(__dirname, '..');
const N = Number(process.env.N ?? 100);
const WORKERS = Number(process.env.WORKERS ?? 4);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const IDLE_S = Number(process.env.IDLE_S ?? 0);
const memcachedType = customResourceType(memcachedKind);

function kubectl(kubeconfig: string, args: string[]): string {
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
}

/** Runs `fn` over items with `inFlight` concurrent calls. */
async function pool<T>(items: T[], inFlight: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/**
 * The flags the synthesized memcached operator Deployment gives the reconciler that matter here
 * (`--controllers`), so the bench runs exactly what the operator's ServiceAccount is granted.
 */
export function synthesizedControllersFlag(): string {
  const file = fs.readFileSync(path.join(ROOT, 'dist', '0001-memcached.k8s.yaml'), 'utf8');
  const deployment = parseAllDocuments(file).map(d => d.toJS()).find(o => o?.kind === 'Deployment' && o.metadata.name === 'memcached-operator');
  const flag = (deployment?.spec.template.spec.containers[0].args as string[] | undefined)?.find(a => a.startsWith('--controllers='));
  if (!flag) throw new Error('dist/0001-memcached.k8s.yaml has no memcached-operator Deployment with --controllers; run npm run synth');
  return flag;
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  // utime and stime are fields 14 and 15 of stat; after the command name, indexes 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function main(): Promise<void> {
  const cp = await startControlPlane({ verbose: true });
  try {
    const admin = cp.kubeconfig;
    kubectl(admin, ['apply', '--server-side', '-f', path.join(ROOT, 'dist')]);
    kubectl(admin, ['wait', '--for', 'condition=established', 'crd/memcacheds.cache.example.com']);
    execFileSync(process.execPath, [path.join(ROOT, 'operator', 'bundle.mjs')], { cwd: ROOT, stdio: 'ignore' });
    const kc = new KubeConfig();
    kc.loadFromFile(admin);
    const client = new KubeClient(kc, { fieldManager: 'bench' });

    // Namespaces of their own, so the bench can also run in a cluster used for other things.
    const suffix = Math.random().toString(36).slice(2, 7);
    const referenceNs = `bench-reference-${suffix}`;
    const benchNs = `bench-${suffix}`;

    // Reference: N Deployments created directly.
    kubectl(admin, ['create', 'namespace', referenceNs]);
    const deployments = Array.from({ length: N }, (_, i) => {
      const d = desiredDeployment({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: `ref-${i}`, namespace: referenceNs, uid: 'none' }, spec: { size: 1, image: 'memcached:1.6', containerPort: 11211 } } as Memcached);
      delete (d.metadata as { ownerReferences?: unknown }).ownerReferences;
      return d;
    });
    let t0 = performance.now();
    await pool(deployments, 2, d => client.create(BuiltinTypes.Deployment, d, referenceNs));
    const referenceMs = performance.now() - t0;
    // ...and until kube-controller-manager has made their ReplicaSets and pods: the part of
    // convergence that is not the reconciler's.
    while ((await client.list(BuiltinTypes.Pod, referenceNs)).items.length < N) await new Promise(r => setTimeout(r, 100));
    const referencePodsMs = performance.now() - t0;
    kubectl(admin, ['delete', 'namespace', referenceNs, '--timeout=120s']);

    // The reconciler, as the operator ServiceAccount, running the bundle the image ships.
    kubectl(admin, ['create', 'namespace', benchNs]);
    const [health, metrics] = [await freePort(), await freePort()];
    const rec = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(ROOT, 'build', 'reconciler', 'main.js'),
      `--kubeconfig=${serviceAccountKubeconfig({ kubeconfig: admin })}`, synthesizedControllersFlag(), `--namespace=${benchNs}`, '--log-level=warn',
      // Read over plain HTTP below; the secure endpoint is tested elsewhere.
      '--metrics-secure=false',
      `--max-concurrent-reconciles=${WORKERS}`,
      `--health-probe-bind-address=127.0.0.1:${health}`, `--metrics-bind-address=127.0.0.1:${metrics}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    // Never leave it running, whatever happens below.
    process.once('exit', () => rec.kill('SIGKILL'));
    const readyBy = Date.now() + 60_000;
    while ((await httpGet(`http://127.0.0.1:${health}/readyz`)).status !== 200) {
      // Caches that never sync (say, RBAC that does not cover a watch) must not hang the bench.
      if (Date.now() > readyBy || rec.exitCode !== null) throw new Error('the reconciler did not become ready within 60 s');
      await new Promise(r => setTimeout(r, 100));
    }
    await new Promise(r => setTimeout(r, 1000));
    const idleRss = rssBytes(rec.pid!);
    const cpuAtStart = cpuSeconds(rec.pid!);
    let peakRss = idleRss;
    const sampler = setInterval(() => { peakRss = Math.max(peakRss, rssBytes(rec.pid!)); }, 50);

    const memcacheds = Array.from({ length: N }, (_, i) => ({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: `mc-${i}`, namespace: benchNs }, spec: { size: 1 } }));
    t0 = performance.now();
    await pool(memcacheds, 2, m => client.create(memcachedType, m as unknown as KubeObject, benchNs));
    const createMs = performance.now() - t0;
    let deploymentsMs = 0;
    // Converged: every Memcached has its Deployment and a status that reflects its pod.
    for (;;) {
      if (!deploymentsMs && (await client.list(BuiltinTypes.Deployment, benchNs)).items.length === N) deploymentsMs = performance.now() - t0;
      const list = await client.list<Memcached & KubeObject>(memcachedType, benchNs);
      const done = list.items.filter(m => m.status?.observedGeneration === m.metadata.generation && m.status?.nodes?.length === m.spec.size).length;
      if (done === N) break;
      if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`not converged after ${TIMEOUT_MS / 1000} s: ${done}/${N} Memcacheds`);
      await new Promise(r => setTimeout(r, 100));
    }
    const convergeMs = performance.now() - t0;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, rssBytes(rec.pid!));
    const cpuUsed = cpuSeconds(rec.pid!) - cpuAtStart;
    const deps = await client.list(BuiltinTypes.Deployment, benchNs);
    const requestCount = async (methods?: string[]) => (await httpGet(`http://127.0.0.1:${metrics}/metrics`)).body.split('\n')
      .filter(l => l.startsWith('rest_client_requests_total') && (!methods || methods.some(m => l.includes(`method="${m}"`))))
      .map(l => Number(l.split(' ').pop())).reduce((a, b) => a + b, 0);
    const requests = await requestCount();
    // Settled: how many writes the reconciler makes while nothing changes (IDLE_S seconds).
    const writeMethods = ['POST', 'PUT', 'PATCH', 'DELETE'];
    const writesBefore = await requestCount(writeMethods);
    await new Promise(r => setTimeout(r, IDLE_S * 1000));
    const idleWrites = (await requestCount(writeMethods)) - writesBefore;
    rec.kill('SIGTERM');
    await new Promise(r => rec.once('exit', r));
    kubectl(admin, ['delete', 'namespace', benchNs, '--wait=false']);
    client.close();

    const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
    console.log(JSON.stringify({
      kubernetes: cp.version, n: N, workers: WORKERS,
      referenceDeploymentsCreatedSeconds: +(referenceMs / 1000).toFixed(2),
      referencePodsCreatedSeconds: +(referencePodsMs / 1000).toFixed(2),
      memcachedsCreatedSeconds: +(createMs / 1000).toFixed(2),
      reconcilerDeploymentsSeconds: +(deploymentsMs / 1000).toFixed(2),
      convergeSeconds: +(convergeMs / 1000).toFixed(2),
      deploymentsVsReference: +(deploymentsMs / referenceMs).toFixed(2),
      convergeVsReferencePods: +(convergeMs / referencePodsMs).toFixed(2),
      deploymentsCreated: deps.items.length,
      reconcilerRequests: requests,
      idleSeconds: IDLE_S,
      idleWrites,
      requestsPerMemcached: +(requests / N).toFixed(2),
      reconcilerCpuSeconds: +cpuUsed.toFixed(2),
      idleRssMiB: +mib(idleRss), peakRssMiB: +mib(peakRss), peakVsIdleRss: +(peakRss / idleRss).toFixed(2),
    }, null, 2));
  } finally {
    await cp.stop();
  }
}

if (require.main === module) {
  main().catch(err => {
    console.error(err);
    process.exit(1);
  });
}
