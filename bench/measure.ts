/**
 * The pieces of the convergence benchmarks: a reference client, our reconciler and Go's
 * k8s.io/sample-controller, each converging N resources on the same control plane, measured the
 * same way (time, CPU seconds and RSS of the process from /proc, writes from the API server's
 * audit log).
 */
import type { KubeObject, ResourceType } from '../constructs/contract';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { parseAllDocuments } from 'yaml';
import { BuiltinTypes, customResourceType, memcachedKind } from '../constructs';
import type { Memcached } from '../constructs';
import { memcachedController } from '../constructs/memcached/controller';
import { type KubeClient } from '../operator/runtime/client/client';
import { renderChildren } from '../operator/runtime/children/render';
import { NODE_RUNTIME, RECONCILER_NODE_FLAGS } from '../command/image/definition';
import type { NodeRuntimePackage } from '../command/image/node-runtime';
import { freePort } from '../testing/control-plane';
import { httpGet, serviceAccountKubeconfig } from '../test/support/reconciler';
import { nodeBinary } from './node-runtimes';
import { Tally } from './tally';

const ROOT = path.resolve(__dirname, '..');

/**
 * The tree whose reconciler is measured — its bundle (build/reconciler/main.js, bundled by
 * bench/cluster.ts) and its dist/ (the CRDs, the operator Deployment's flags and NODE_OPTIONS) —
 * while this tree's harness measures it: BENCH_RECONCILER_TREE, as bench:compare sets it for the
 * commit it compares with, so both sides are created, paced and timed by the same code.
 * @default this tree
 */
export const RECONCILER_TREE = process.env.BENCH_RECONCILER_TREE
  ? path.resolve(process.env.BENCH_RECONCILER_TREE)
  : ROOT;

/**
 * How many creations are in flight at once: BENCH_PACE=2 (a user's pace: each create waits for
 * one of two before it), or `burst` (all N at once, as fast as the client sends them).
 */
function creationPaceOf(pace: string): { readonly name: string; inFlight(n: number): number } {
  if (pace === 'burst') return { name: 'burst', inFlight: (n) => n };
  const inFlight = Number(pace);
  if (!Number.isInteger(inFlight) || inFlight < 1)
    throw new Error(`BENCH_PACE=${pace}: a number of creations in flight, or burst`);
  return { name: String(inFlight), inFlight: () => inFlight };
}

/** This process's creation pace (BENCH_PACE, read once). */
export const CREATION_PACE = creationPaceOf(process.env.BENCH_PACE ?? '2');

const memcachedType = customResourceType(memcachedKind);
const fooType: ResourceType = {
  group: 'samplecontroller.k8s.io',
  version: 'v1alpha1',
  kind: 'Foo',
  resource: 'foos',
  namespaced: true,
};
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface BenchContext {
  readonly admin: string;
  readonly client: KubeClient;
  /** The API server's audit log of write requests. */
  readonly auditLog: string;
  readonly timeoutMs: number;
  /** The kube-apiserver process, when it runs on this machine (its memory beside the contenders'). */
  readonly apiServerPid?: number;
}

/** What one contender did converging N resources. */
export interface Measurement {
  readonly n: number;
  /** Until all N resources were created (for the reference: its Deployments). */
  readonly createdSeconds?: number;
  /** Until all N Deployments exist. */
  readonly deploymentsSeconds: number;
  /** Until every resource's status says its pod is available. */
  readonly settledSeconds?: number;
  readonly cpuSeconds?: number;
  readonly idleRssMiB?: number;
  readonly peakRssMiB?: number;
  /** Write requests (from the audit log) while converging. */
  readonly writes: number;
  /** The same, by verb and resource, e.g. `patch memcacheds/status`. */
  readonly writesBy?: Record<string, number>;
  /** Reconciles, where the process counts them (our reconciler's metrics). */
  readonly reconciles?: number;
  /** Objects its informers received (list items and watch events, bookmarks aside; our reconciler's metrics). */
  readonly watchEvents?: number;
  /** Bytes allocated on the V8 heap while converging (our reconciler, counted by bench/alloc-probe.cjs with BENCH_ALLOC=1). */
  readonly allocatedBytes?: number;
  /** All requests, where the process counts them (our reconciler's metrics). */
  readonly requests?: number;
  /** Requests sent again in place after a 429 or 503 (our reconciler's `rest_client_request_retries_total`). */
  readonly retries?: number;
  /** Write requests in the idle window after settling. */
  readonly idleWrites?: number;
  readonly idleSeconds?: number;
  /** The API server's resident memory once this contender's N resources had settled. */
  readonly apiServerRssMiB?: number;
  /** The Node.js version our reconciler ran on. */
  readonly node?: string;
  /** Where the memory is once settled, from the process's own metrics (Node's heap, and memory outside it). */
  readonly settledMemoryMiB?: {
    rss: number;
    heapTotal: number;
    heapUsed: number;
    external: number;
    spaces?: Record<string, number>;
  };
}

export function kubectl(kubeconfig: string, args: string[]): string {
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
}

/** Runs `fn` over items with `inFlight` concurrent calls. */
export async function pool<T>(items: T[], inFlight: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let item = items[next++]; item !== undefined; item = items[next++]) await fn(item);
    }),
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat; after the command name, indexes 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

export const mib = (b: number) => Math.round(b / 1024 / 1024);
const seconds = (ms: number) => +(ms / 1000).toFixed(2);

/** A process's CPU and memory from now on: its RSS sampled every 50 ms for the peak. */
export class ProcessMeter {
  private readonly cpuAtStart: number;
  readonly idleRss: number;
  private peakRss: number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.cpuAtStart = cpuSeconds(pid);
    this.idleRss = rssBytes(pid);
    this.peakRss = this.idleRss;
    this.timer = setInterval(() => {
      this.peakRss = Math.max(this.peakRss, rssBytes(pid));
    }, 50);
  }

  stop(): { cpuSeconds: number; idleRssMiB: number; peakRssMiB: number } {
    clearInterval(this.timer);
    this.peakRss = Math.max(this.peakRss, rssBytes(this.pid));
    return {
      cpuSeconds: +(cpuSeconds(this.pid) - this.cpuAtStart).toFixed(2),
      idleRssMiB: mib(this.idleRss),
      peakRssMiB: mib(this.peakRss),
    };
  }
}

/**
 * Write requests in the audit log by `user` in namespace `ns` from byte `from` on (Lease renewals
 * aside). Only the run's own namespace: other processes may act as the same ServiceAccount
 * meanwhile (the test suite's reconcilers run as the operator's), in namespaces of their own.
 * The log is read in chunks from that offset: at N = 10,000 it grows past the longest string V8
 * can hold.
 */
function auditWrites(
  log: string,
  user: string,
  ns: string,
  from: number,
): { writes: number; by: Record<string, number> } {
  let writes = 0;
  const by: Record<string, number> = {};
  forEachLine(log, from, (l) => {
    if (!l.includes(user)) return;
    const e = JSON.parse(l);
    if (
      e.user?.username === user &&
      e.objectRef?.namespace === ns &&
      WRITE_VERBS.has(e.verb) &&
      e.objectRef?.resource !== 'leases'
    ) {
      writes++;
      const what = `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
      by[what] = (by[what] ?? 0) + 1;
    }
  });
  return { writes, by };
}

/** Calls `fn` with each complete line of a file from byte `from` to its current end. */
export function forEachLine(file: string, from: number, fn: (line: string) => void): void {
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(8 * 1024 * 1024);
    let position = from;
    let rest = '';
    for (;;) {
      const read = fs.readSync(fd, chunk, 0, chunk.length, position);
      if (read === 0) break;
      position += read;
      const lines = (rest + chunk.toString('utf8', 0, read)).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) if (l) fn(l);
    }
    if (rest) fn(rest);
  } finally {
    fs.closeSync(fd);
  }
}

/** Where the audit log ends now: what is written after this is new. */
export const auditEnd = (log: string) => fs.statSync(log).size;

export async function deleteNamespace(ctx: BenchContext, ns: string): Promise<void> {
  // Waited for, so the garbage collector's work does not load the next measurement.
  kubectl(ctx.admin, ['delete', 'namespace', ns, '--timeout=1800s']);
}

/** The Deployment our reconciler renders for a Memcached of size 1, without its owner. */
export function memcachedDeployment(name: string, namespace: string): KubeObject {
  const d = renderChildren(memcachedController, {
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name, namespace, uid: 'none' },
    spec: { size: 1, image: 'memcached:1.6', containerPort: 11211 },
  })[0];
  if (!d) throw new Error('the memcached controller rendered no Deployment');
  delete d.metadata.ownerReferences;
  return d;
}

/**
 * Reference: one client creating the same N Deployments directly, 2 requests in flight — the
 * API server's write throughput here, the floor any controller creating N Deployments approaches.
 */
export async function measureReference(ctx: BenchContext, n: number): Promise<Measurement> {
  const ns = `bench-reference-${Math.random().toString(36).slice(2, 7)}`;
  kubectl(ctx.admin, ['create', 'namespace', ns]);
  const deployments = Array.from({ length: n }, (_, i) => memcachedDeployment(`ref-${i}`, ns));
  const available = await Tally.start<KubeObject & { status?: { availableReplicas?: number } }>(
    ctx.client,
    BuiltinTypes.Deployment,
    ns,
    (d) => d.status?.availableReplicas === 1,
  );
  const t0 = performance.now();
  await pool(deployments, CREATION_PACE.inFlight(deployments.length), (d) =>
    ctx.client.create(BuiltinTypes.Deployment, d, ns),
  );
  const deploymentsMs = performance.now() - t0;
  const settledMs = await available.reached(n, t0, ctx.timeoutMs, `${n} reference Deployments available`);
  await available.close();
  const apiServerRssMiB = ctx.apiServerPid ? mib(rssBytes(ctx.apiServerPid)) : undefined;
  await deleteNamespace(ctx, ns);
  return {
    n,
    apiServerRssMiB,
    createdSeconds: seconds(deploymentsMs),
    deploymentsSeconds: seconds(deploymentsMs),
    settledSeconds: seconds(settledMs),
    writes: n,
  };
}

/**
 * The flags the synthesized memcached operator Deployment gives the reconciler that matter here
 * (`--controllers`), so the bench runs exactly what the operator's ServiceAccount is granted.
 */
export function synthesizedControllersFlag(): string {
  const flag = (synthesizedContainer().args as string[] | undefined)?.find((a) => a.startsWith('--controllers='));
  if (!flag) throw new Error('dist/0001-memcached.k8s.yaml: the memcached-operator Deployment has no --controllers');
  return flag;
}

/** The plain environment values the synthesized operator Deployment sets (NODE_OPTIONS among them). */
export function synthesizedEnvironment(): Record<string, string> {
  const env = (synthesizedContainer().env ?? []) as { name: string; value?: string }[];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

function synthesizedContainer(): { args?: unknown; env?: unknown } {
  const file = fs.readFileSync(path.join(RECONCILER_TREE, 'dist', '0001-memcached.k8s.yaml'), 'utf8');
  const deployment = parseAllDocuments(file)
    .map((d) => d.toJS())
    .find((o) => o?.kind === 'Deployment' && o.metadata.name === 'memcached-operator');
  if (!deployment)
    throw new Error('dist/0001-memcached.k8s.yaml has no memcached-operator Deployment; run npm run synth');
  return deployment.spec.template.spec.containers[0];
}

/**
 * Whether our reconciler runs with bench/alloc-probe.cjs, which counts its allocations: only when
 * asked (BENCH_ALLOC=1), for the probe adds to the memory it measures (see the file).
 */
const COUNT_ALLOCATIONS = process.env.BENCH_ALLOC === '1';

/** Starts a process and stops it (SIGKILL) if the bench exits first. */
export function startProcess(
  bin: string,
  args: string[],
  stdoutFile?: string,
  env?: Record<string, string>,
): ChildProcess {
  const p = spawn(bin, args, {
    stdio: ['ignore', stdoutFile ? fs.openSync(stdoutFile, 'w') : 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  });
  const kill = () => p.kill('SIGKILL');
  process.once('exit', kill);
  p.once('exit', () => process.off('exit', kill));
  return p;
}

export async function stopProcess(p: ChildProcess): Promise<void> {
  // Ended already, by itself or by a signal (a SIGKILLed process has no exit code).
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
}

/**
 * What every controller is measured by: the bench creates `objects` 2 at a time, then waits until
 * N Deployments exist and N objects are `settled`, metering the controller process (`pid`) and
 * counting the writes of its `user` while converging and over `idleSeconds` once settled.
 * `onSettled` runs between the two, outside either count.
 */
export async function converge<T extends KubeObject>(
  ctx: BenchContext,
  run: {
    pid: number;
    user: string;
    ns: string;
    type: ResourceType<T>;
    objects: KubeObject[];
    settled: (obj: T) => boolean;
    idleSeconds: number;
    onSettled?: () => Promise<void>;
    /** Bytes the process has allocated so far, where it counts them. */
    allocatedBytes?: () => number;
    /** Creations in flight at once: 2, as users create; N, all at once. @default 2 */
    createInFlight?: number;
  },
): Promise<Measurement> {
  const n = run.objects.length;
  const meter = new ProcessMeter(run.pid);
  const allocatedAtStart = run.allocatedBytes?.();
  const auditFrom = auditEnd(ctx.auditLog);
  const created = await Tally.start(ctx.client, BuiltinTypes.Deployment, run.ns, () => true);
  const settled = await Tally.start<T>(ctx.client, run.type, run.ns, run.settled);
  const t0 = performance.now();
  await pool(run.objects, run.createInFlight ?? CREATION_PACE.inFlight(run.objects.length), (o) =>
    ctx.client.create(run.type, o, run.ns),
  );
  const createdMs = performance.now() - t0;
  const deploymentsMs = await created.reached(n, t0, ctx.timeoutMs, `${n} Deployments`);
  const settledMs = await settled.reached(n, t0, ctx.timeoutMs, `${n} ${run.type.resource} settled`);
  const usage = meter.stop();
  const allocatedAtEnd = run.allocatedBytes?.();
  const allocatedBytes =
    allocatedAtStart === undefined || allocatedAtEnd === undefined || Number.isNaN(allocatedAtEnd)
      ? undefined
      : allocatedAtEnd - allocatedAtStart;
  const apiServerRssMiB = ctx.apiServerPid ? mib(rssBytes(ctx.apiServerPid)) : undefined;
  await Promise.all([created.close(), settled.close()]);
  const converging = auditWrites(ctx.auditLog, run.user, run.ns, auditFrom);
  await run.onSettled?.();
  const idleFrom = auditEnd(ctx.auditLog);
  await sleep(run.idleSeconds * 1000);
  const idle = auditWrites(ctx.auditLog, run.user, run.ns, idleFrom);
  return {
    n,
    createdSeconds: seconds(createdMs),
    deploymentsSeconds: seconds(deploymentsMs),
    settledSeconds: seconds(settledMs),
    ...usage,
    allocatedBytes,
    apiServerRssMiB,
    writes: converging.writes,
    writesBy: converging.by,
    idleWrites: idle.writes,
    idleSeconds: run.idleSeconds,
  };
}

/**
 * Starts our reconciler — the esbuild bundle the image ships, on the image's Node, as the
 * memcached operator's ServiceAccount, with the synthesized `--controllers` and the Deployment's
 * NODE_OPTIONS — on one namespace (or several), and waits until it is ready (its caches synced).
 */
export async function startReconciler(
  ctx: BenchContext,
  ns: string | readonly string[] | undefined,
  options: { workers?: number; nodeArgs?: string[]; args?: string[]; node?: NodeRuntimePackage } = {},
): Promise<{ proc: ChildProcess; metricsPort: number; allocatedBytes: () => number }> {
  const [health, metrics] = [await freePort(), await freePort()];
  const allocFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-alloc-')), 'allocated');
  const rec = startProcess(
    // The Node the image ships, unless another is asked for.
    nodeBinary(options.node ?? NODE_RUNTIME),
    [
      // As the image runs it.
      ...RECONCILER_NODE_FLAGS,
      ...(options.nodeArgs ?? []),
      // With BENCH_ALLOC=1, counts the bytes it allocates (a file it rewrites 4 times a second).
      ...(COUNT_ALLOCATIONS ? ['--require', path.join(ROOT, 'bench', 'alloc-probe.cjs')] : []),
      path.join(RECONCILER_TREE, 'build', 'reconciler', 'main.js'),
      `--kubeconfig=${serviceAccountKubeconfig({ kubeconfig: ctx.admin })}`,
      synthesizedControllersFlag(),
      // One namespace, several, or (undefined) every namespace.
      ...(ns === undefined ? [] : [typeof ns === 'string' ? `--namespace=${ns}` : `--namespaces=${ns.join(',')}`]),
      '--log-level=warn',
      // Read over plain HTTP below; the secure endpoint is tested elsewhere.
      '--metrics-secure=false',
      ...(options.workers ? [`--max-concurrent-reconciles=${options.workers}`] : []),
      `--health-probe-bind-address=127.0.0.1:${health}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      ...(options.args ?? []),
    ],
    // Its standard output (e.g. with BENCH_NODE_ARGS=--trace-gc), for a look at where memory goes.
    process.env.BENCH_RECONCILER_STDOUT,
    // As the operator's pod runs it (NODE_OPTIONS).
    { ...synthesizedEnvironment(), BENCH_ALLOC_FILE: allocFile },
  );
  rec.once('exit', () => {
    fs.rmSync(path.dirname(allocFile), { recursive: true, force: true });
  });
  await waitReady(rec, health, 'the reconciler');
  const allocatedBytes = () => (COUNT_ALLOCATIONS ? Number(fs.readFileSync(allocFile, 'utf8')) : NaN);
  return { proc: rec, metricsPort: metrics, allocatedBytes };
}

/** Waits for a controller's /readyz; one that never gets there (say, RBAC that does not cover a watch) must not hang the bench. */
export async function waitReady(
  proc: ChildProcess,
  healthPort: number,
  what: string,
  timeoutMs = 300_000,
): Promise<void> {
  const readyBy = Date.now() + timeoutMs;
  while ((await httpGet(`http://127.0.0.1:${healthPort}/readyz`).catch(() => ({ status: 0 }))).status !== 200) {
    if (Date.now() > readyBy || proc.exitCode !== null)
      throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/** The sum of a metric's samples in a Prometheus exposition, e.g. every controller's reconciles. */
function sumSamples(exposition: readonly string[], name: string): number {
  return exposition
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => Number(l.split(' ').pop()))
    .reduce((a, b) => a + b, 0);
}

/** The same, scraped from a process's /metrics. */
export async function scrapeTotal(metricsPort: number, name: string): Promise<number> {
  return sumSamples((await scrape(metricsPort)).split('\n'), name);
}

/**
 * A process's /metrics page, asked again until it answers: at N = 10,000 the page holds a
 * condition series per resource and takes seconds to make, and a page read as empty would sum to 0.
 */
export async function scrape(metricsPort: number): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const { status, body } = await httpGet(`http://127.0.0.1:${metricsPort}/metrics`, 60_000);
    if (status === 200) return body;
    if (attempt === 5) throw new Error(`no /metrics from port ${metricsPort} (status ${status})`);
    await sleep(1000);
  }
}

/**
 * Our reconciler — the esbuild bundle the image ships (build it first), as the memcached
 * operator's ServiceAccount, with the synthesized `--controllers` — converging N Memcacheds of
 * size 1 created 2 at a time; then `idleSeconds` of counting writes once everything is settled.
 */
export async function measureReconciler(
  ctx: BenchContext,
  n: number,
  options: {
    workers?: number;
    idleSeconds: number;
    nodeArgs?: string[];
    /** More flags of the reconciler. */
    args?: string[];
    /** @default the image's Node */
    node?: NodeRuntimePackage;
    /**
     * Runs once every resource has settled, with their namespace (e.g. to measure `plan` over
     * them) and a function that stops the reconciler (e.g. to restart one over them).
     */
    afterSettled?: (namespace: string, stopReconciler: () => Promise<void>) => Promise<void>;
    /** Creations in flight at once. @default CREATION_PACE's (BENCH_PACE, 2 unless set) */
    createInFlight?: number;
  },
): Promise<Measurement> {
  const ns = `bench-${Math.random().toString(36).slice(2, 7)}`;
  kubectl(ctx.admin, ['create', 'namespace', ns]);
  const node = options.node ?? NODE_RUNTIME;
  const { proc: rec, metricsPort: metrics, allocatedBytes } = await startReconciler(ctx, ns, { ...options, node });
  await sleep(1000);
  const memcacheds = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: `mc-${i}`, namespace: ns },
    spec: { size: 1 },
  }));
  let requests = 0;
  let retries = 0;
  let reconciles = 0;
  let watchEvents = 0;
  let settledMemoryMiB: Measurement['settledMemoryMiB'];
  const measured = await converge<Memcached & KubeObject>(ctx, {
    pid: rec.pid!,
    user: 'system:serviceaccount:memcached-system:memcached-operator',
    ns,
    // The Memcached kind's type: its objects are Memcacheds.
    type: memcachedType as ResourceType<Memcached & KubeObject>,
    objects: memcacheds,
    // Settled: every Memcached of this generation says Available, its pod listed.
    settled: (m) =>
      m.status?.observedGeneration === m.metadata.generation &&
      m.status?.nodes?.length === 1 &&
      !!m.status.conditions?.some((c) => c.type === 'Available' && c.status === 'True'),
    idleSeconds: options.idleSeconds,
    allocatedBytes,
    createInFlight: options.createInFlight,
    onSettled: async () => {
      if (process.env.BENCH_HEAP_SNAPSHOT === '1') {
        // With BENCH_NODE_ARGS=--heapsnapshot-signal=SIGUSR2: the settled heap, written to the cwd.
        rec.kill('SIGUSR2');
        await sleep(15_000);
      }
      // Retried, with a minute to answer: at N = 10,000 a reconciler just settled took longer than
      // httpGet's 2 s, and the figures read from a failed scrape were zeros and NaN.
      const exposition = (await scrape(metrics)).split('\n');
      requests = sumSamples(exposition, 'rest_client_requests_total');
      retries = sumSamples(exposition, 'rest_client_request_retries_total');
      reconciles = sumSamples(exposition, 'controller_runtime_reconcile_total');
      watchEvents = sumSamples(exposition, 'opkit_watch_events_total');
      const gauge = (name: string) =>
        mib(
          Number(
            exposition
              .find((l) => l.startsWith(`${name} `))
              ?.split(' ')
              .pop() ?? NaN,
          ),
        );
      settledMemoryMiB = {
        rss: gauge('process_resident_memory_bytes'),
        heapTotal: gauge('nodejs_heap_size_total_bytes'),
        heapUsed: gauge('nodejs_heap_size_used_bytes'),
        external: gauge('nodejs_external_memory_bytes'),
        // V8's spaces, committed: where heap above what is used sits.
        spaces: Object.fromEntries(
          exposition
            .filter((l) => l.startsWith('nodejs_heap_space_size_total_bytes{'))
            .map((l) => [/space="([^"]+)"/.exec(l)?.[1] ?? '?', +(Number(l.split(' ').pop()) / 1048576).toFixed(1)]),
        ),
      };
      await options.afterSettled?.(ns, () => stopProcess(rec));
    },
  });
  await stopProcess(rec);
  await deleteNamespace(ctx, ns);
  return { ...measured, requests, retries, reconciles, watchEvents, settledMemoryMiB, node: node.version };
}

/**
 * A namespace for a Go controller under test, with an identity of its own there (a ServiceAccount
 * bound to cluster-admin) so its writes can be told apart in the audit log: its kubeconfig, its
 * user name in the audit log, and what removes both.
 */
export function controllerNamespace(
  ctx: BenchContext,
  prefix: string,
  serviceAccount: string,
): { ns: string; kubeconfig: string; user: string; remove: () => Promise<void> } {
  const ns = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  kubectl(ctx.admin, ['create', 'namespace', ns]);
  kubectl(ctx.admin, ['create', 'serviceaccount', serviceAccount, '-n', ns]);
  const binding = `${ns}-${serviceAccount}`;
  kubectl(ctx.admin, [
    'create',
    'clusterrolebinding',
    binding,
    '--clusterrole=cluster-admin',
    `--serviceaccount=${ns}:${serviceAccount}`,
  ]);
  return {
    ns,
    kubeconfig: serviceAccountKubeconfig({ kubeconfig: ctx.admin, namespace: ns, serviceAccount }),
    user: `system:serviceaccount:${ns}:${serviceAccount}`,
    remove: async () => {
      await deleteNamespace(ctx, ns);
      kubectl(ctx.admin, ['delete', 'clusterrolebinding', binding]);
    },
  };
}

/**
 * A Go peer's directory: the one `env` names when a set-up built it already (the test tier's, or
 * scripts/build-test-programs.sh), else what its build script prints last (it builds once and caches).
 */
export function goPeerDir(env: string, script: string): string {
  const given = process.env[env];
  if (given) return given;
  return buildCached(script);
}

/** Runs a build script that caches what it builds and prints the cache directory last; returns it. */
function buildCached(script: string): string {
  return (
    execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .pop() ?? ''
  );
}

/**
 * Go's k8s.io/sample-controller at its defaults (2 workers, client-go's default rate limits, a
 * 30 s resync), built by bench/build-sample-controller.sh: N Foos of 1 replica created 2 at a
 * time, each becoming a Deployment; settled when every Foo's status counts 1 available replica.
 */
export async function measureSampleController(
  ctx: BenchContext,
  n: number,
  options: { dir: string; idleSeconds: number },
): Promise<Measurement> {
  kubectl(ctx.admin, ['apply', '-f', path.join(options.dir, 'crd-status-subresource.yaml')]);
  kubectl(ctx.admin, ['wait', '--for', 'condition=established', 'crd/foos.samplecontroller.k8s.io']);
  const { ns, kubeconfig, user, remove } = controllerNamespace(ctx, 'bench-go', 'sample-controller');
  const go = startProcess(path.join(options.dir, 'sample-controller'), [`--kubeconfig=${kubeconfig}`]);
  await sleep(3000);
  if (go.exitCode !== null) throw new Error('sample-controller exited at start');
  const foos = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: `foo-${i}`, namespace: ns },
    spec: { deploymentName: `foo-${i}`, replicas: 1 },
  }));
  const measured = await converge<KubeObject & { status?: { availableReplicas?: number } }>(ctx, {
    pid: go.pid!,
    user,
    ns,
    type: fooType,
    objects: foos,
    settled: (f) => f.status?.availableReplicas === 1,
    idleSeconds: options.idleSeconds,
  });
  await stopProcess(go);
  await remove();
  return measured;
}
