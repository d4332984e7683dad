/**
 * Benchmark: sharded reconcilers (`--shards`) converging N Memcacheds spread over NAMESPACES
 * namespaces, on a control plane with sharded list and watch on (ShardedListAndWatch), for each
 * shard count in SHARDS, each on a fresh control plane. Per replica: objects received, CPU
 * seconds and peak RSS while converging; then time to settled, whether any resource was written
 * by two replicas (the audit log, by User-Agent), and how long after a shard holder's SIGKILL a
 * resource created in its range gets its Deployment (a standby takes the range over).
 *
 *   npm run bench:shards                          # N = 10000 over 16 namespaces; 1, 2 and 4 shards
 *   N=1000 SHARDS=1,2 npm run bench:shards
 *   N=1000 SHARDS=1 SCOPE=all npm run bench:shards  # one cluster-wide list and watch, not one per namespace
 *   N=10000 SHARDS=1 STANDBY=cold npm run bench:shards  # standbys with --warm-standby=false
 *
 * The namespaces are chosen so that each quarter of the hash space holds as many (so 1, 2 and 4
 * shards get equal work): the API server's FNV-1a hash spreads names that differ in a short
 * suffix unevenly (docs/sharding.md).
 */
import { type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KubeObject } from '../constructs/contract';
import { BuiltinTypes, customResourceType, memcachedKind } from '../constructs';
import { namespaceInRange, shardRange } from '../operator/runtime/cache/sharding';
import { withBenchCluster } from './cluster';
import {
  auditEnd,
  type BenchContext,
  forEachLine,
  kubectl,
  pool,
  ProcessMeter,
  scrape,
  scrapeTotal,
  sleep,
  startReconciler,
  stopProcess,
} from './measure';
import { shardHeldIn } from '../test/support/reconciler';
import { Tally } from './tally';

const N = Number(process.env.N ?? 10_000);
const SHARD_COUNTS = (process.env.SHARDS ?? '1,2,4').split(',').map(Number);
const NAMESPACES = Number(process.env.NAMESPACES ?? 16);
/**
 * `namespaces`: the reconcilers list and watch each namespace apart (`--namespaces`), as a scoped
 * operator does; `all`: one list and watch of every namespace, a cluster-wide cache.
 */
const SCOPE = process.env.SCOPE === 'all' ? 'all' : 'namespaces';
/** `warm`: standbys list and watch before they lead (the default); `cold`: `--warm-standby=false`. */
const STANDBY = process.env.STANDBY === 'cold' ? 'cold' : 'warm';
const LEASE_ID = 'memcached-bench';
const LEASE_NAMESPACE = 'memcached-system';
const OPERATOR_USER = 'system:serviceaccount:memcached-system:memcached-operator';
/** The reconciler's defaults: 15 s lease, 2 s retry. The takeover goal is lease + 2 retries. */
const TAKEOVER_GOAL_S = 15 + 2 * 2;
const memcachedType = customResourceType(memcachedKind);

interface Replica {
  readonly role: string;
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
  /** Objects received from the API server (list items and watch events). */
  readonly received: number;
  readonly reconciles: number;
  /** Keys in its work queues once the others had settled (`workqueue_depth`). */
  readonly queued: number;
  /** The same by result: success, error, requeue_after (a poll while waiting on children). */
  readonly reconcilesBy: Record<string, number>;
}

function reconcileResults(page: string): Record<string, number> {
  const by: Record<string, number> = {};
  for (const m of page.matchAll(/^controller_runtime_reconcile_total\{[^}]*result="([^"]+)"[^}]*\} (\S+)$/gm))
    by[m[1]!] = (by[m[1]!] ?? 0) + Number(m[2]);
  return by;
}

interface ShardRun {
  readonly scope: 'namespaces' | 'all';
  readonly shards: number;
  readonly n: number;
  readonly namespaces: number;
  readonly settledSeconds: number;
  readonly replicas: Replica[];
  /** Resources (Memcacheds and Deployments) written by more than one replica. */
  readonly writtenByTwo: number;
  readonly writers: number;
  /** From a shard holder's SIGKILL until a Memcached created in its range had its Deployment. */
  readonly takeoverSeconds: number;
}

/** `count` namespace names, as many in each quarter of the hash space. */
function balancedNamespaces(count: number): string[] {
  const quarters: string[][] = [[], [], [], []];
  for (let i = 0; quarters.some((q) => q.length < count / 4); i++) {
    const name = `bench-${createHash('sha256').update(String(i)).digest('hex').slice(0, 6)}`;
    const q = quarters.findIndex((_, k) => namespaceInRange(name, shardRange(k, 4)));
    if (quarters[q]!.length < count / 4) quarters[q]!.push(name);
  }
  return quarters.flat();
}

/** What `shards` on the construct adds to the synthesized RBAC: listing the shard Leases. */
function grantLeaseList(ctx: BenchContext): void {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'bench-shard-leases', namespace: LEASE_NAMESPACE },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] }],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'bench-shard-leases', namespace: LEASE_NAMESPACE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name },
    subjects: [{ kind: 'ServiceAccount', name: 'memcached-operator', namespace: LEASE_NAMESPACE }],
  };
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-shards-')), 'rbac.json');
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role, binding] }));
  kubectl(ctx.admin, ['apply', '-f', file]);
}

/** The shard a replica holds (its `opkit_shard`, or the leader's lease without shards), if any. */
async function heldBy(metricsPort: number, shards: number): Promise<number | undefined> {
  const page = await scrape(metricsPort);
  if (shards === 1)
    return page.split('\n').some((l) => l.startsWith('leader_election_master_status{') && l.endsWith(' 1'))
      ? 0
      : undefined;
  return shardHeldIn(page);
}

/** Per object (namespace/resource/name), the User-Agents of the operator's writes to it since `from`. */
function writersByObject(auditLog: string, from: number): Map<string, Set<string>> {
  const writers = new Map<string, Set<string>>();
  forEachLine(auditLog, from, (line) => {
    if (!line.includes(OPERATOR_USER)) return;
    const e = JSON.parse(line);
    const ref = e.objectRef ?? {};
    if (e.user?.username !== OPERATOR_USER || !['memcacheds', 'deployments'].includes(ref.resource)) return;
    if (['get', 'list', 'watch'].includes(e.verb)) return;
    const key = `${ref.namespace}/${ref.resource}/${ref.name}`;
    if (!writers.has(key)) writers.set(key, new Set());
    writers.get(key)!.add(String(e.userAgent));
  });
  return writers;
}

function memcached(name: string, namespace: string): KubeObject {
  return { apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name, namespace }, spec: { size: 1 } };
}

async function runShards(ctx: BenchContext, shards: number): Promise<ShardRun> {
  grantLeaseList(ctx);
  const namespaces = balancedNamespaces(NAMESPACES);
  for (const ns of namespaces) kubectl(ctx.admin, ['create', 'namespace', ns]);
  const args = [
    '--leader-elect',
    `--leader-election-id=${LEASE_ID}`,
    `--leader-election-namespace=${LEASE_NAMESPACE}`,
    ...(shards > 1 ? [`--shards=${shards}`] : []),
    ...(STANDBY === 'cold' ? ['--warm-standby=false'] : []),
  ];
  // One replica per shard and one standby.
  const procs = await Promise.all(
    Array.from({ length: shards + 1 }, () => startReconciler(ctx, SCOPE === 'all' ? undefined : namespaces, { args })),
  );
  const say = (what: string) => process.stderr.write(`[bench] ${shards} shard(s): ${what}\n`);
  say(`${procs.length} replicas started`);
  let held: (number | undefined)[] = [];
  while (
    (held = await Promise.all(procs.map((p) => heldBy(p.metricsPort, shards)))).filter((h) => h !== undefined).length <
    shards
  )
    await sleep(200);
  say(`shards held: ${JSON.stringify(held)}`);
  const meters = procs.map((p) => new ProcessMeter(p.proc.pid!));
  const auditFrom = auditEnd(ctx.auditLog);
  const deployments = await Tally.start(ctx.client, BuiltinTypes.Deployment, namespaces, () => true);
  const settled = await Tally.start<KubeObject & { status?: any }>(
    ctx.client,
    memcachedType,
    namespaces,
    (m) =>
      m.status?.observedGeneration === m.metadata.generation &&
      m.status?.nodes?.length === 1 &&
      !!m.status.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True',
      ),
  );
  const t0 = performance.now();
  const objects = Array.from({ length: N }, (_, i) => memcached(`mc-${i}`, namespaces[i % namespaces.length]!));
  await pool(objects, 2, (o) => ctx.client.create(memcachedType, o, o.metadata.namespace));
  await deployments.reached(N, t0, ctx.timeoutMs, `${N} Deployments`);
  say(`${N} created and their Deployments made`);
  const settledMs = await settled.reached(N, t0, ctx.timeoutMs, `${N} Memcacheds settled`);
  say(`settled in ${(settledMs / 1000).toFixed(1)} s`);
  const usage = meters.map((m) => m.stop());
  await Promise.all([deployments.close(), settled.close()]);
  say('tallies closed');
  const replicas = await Promise.all(
    procs.map(async (p, i) => ({
      role: held[i] === undefined ? 'standby' : shards === 1 ? 'leader' : `shard ${held[i]}`,
      ...usage[i]!,
      received: await scrapeTotal(p.metricsPort, 'opkit_watch_events_total'),
      reconciles: await scrapeTotal(p.metricsPort, 'controller_runtime_reconcile_total'),
      // Keys waiting in its queues: a standby's are what it must work through once it leads.
      queued: await scrapeTotal(p.metricsPort, 'workqueue_depth'),
      reconcilesBy: reconcileResults(await scrape(p.metricsPort)),
    })),
  );
  say('replicas scraped');
  const writers = writersByObject(ctx.auditLog, auditFrom);
  say('audit log read');
  const takeoverSeconds = await takeover(ctx, procs, held, namespaces, shards);
  await Promise.all(procs.map((p) => stopProcess(p.proc)));
  return {
    scope: SCOPE,
    shards,
    n: N,
    namespaces: namespaces.length,
    settledSeconds: +(settledMs / 1000).toFixed(1),
    replicas: replicas.map(({ idleRssMiB: _idle, ...r }) => r),
    writtenByTwo: [...writers.values()].filter((w) => w.size > 1).length,
    writers: new Set([...writers.values()].flatMap((w) => [...w])).size,
    takeoverSeconds,
  };
}

/** SIGKILLs the holder of shard 0 and times a new Memcached of its range to its Deployment. */
async function takeover(
  ctx: BenchContext,
  procs: { proc: ChildProcess }[],
  held: (number | undefined)[],
  namespaces: string[],
  shards: number,
): Promise<number> {
  const victim = procs[held.indexOf(0)]!;
  const ns = namespaces.find((n) => namespaceInRange(n, shardRange(0, shards)))!;
  const t0 = performance.now();
  victim.proc.kill('SIGKILL');
  await ctx.client.create(memcachedType, memcached('after-kill', ns), ns);
  for (;;) {
    const found = await ctx.client.get(BuiltinTypes.Deployment, 'after-kill', ns).catch(() => undefined);
    if (found) return +((performance.now() - t0) / 1000).toFixed(1);
    if (performance.now() - t0 > 120_000) throw new Error('no takeover within 120 s');
    await sleep(100);
  }
}

function table(runs: ShardRun[]): string {
  const one = runs.find((r) => r.shards === 1);
  const busiest = (r: ShardRun) => r.replicas.filter((x) => x.role !== 'standby');
  const max = (r: ShardRun, f: (x: Replica) => number) => Math.max(...busiest(r).map(f));
  const ratio = (r: ShardRun, f: (x: Replica) => number) => (one ? (max(r, f) / max(one, f)).toFixed(2) : '–');
  const rows = runs.map((r) => {
    const goal = (1.2 / r.shards).toFixed(2);
    return `| ${r.shards} | ${max(r, (x) => x.received)} (${ratio(r, (x) => x.received)}; goal ≤ ${goal}) | ${max(r, (x) => x.cpuSeconds)} (${ratio(r, (x) => x.cpuSeconds)}) | ${max(r, (x) => x.peakRssMiB)} MiB (${ratio(r, (x) => x.peakRssMiB)}) | ${r.settledSeconds} s | ${r.writtenByTwo} of ${r.writers} writers | ${r.takeoverSeconds} s (goal ≤ ${TAKEOVER_GOAL_S} s) |`;
  });
  const standbys = runs.map((r) => {
    const s = r.replicas.filter((x) => x.role === 'standby');
    return `${r.shards} shard(s): ${s.map((x) => `${x.peakRssMiB} MiB peak, ${x.received} objects received, ${x.queued} keys queued`).join('; ')}`;
  });
  return [
    `N = ${runs[0]?.n}, ${runs[0]?.namespaces} namespaces (${SCOPE === 'all' ? 'one cluster-wide list and watch' : 'a list and watch per namespace'}), ${STANDBY} standbys; per active replica, the busiest (ratio to 1 shard):`,
    '',
    '| shards | objects received | CPU-s | peak RSS | settled | resources written by two replicas | takeover after SIGKILL |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `The standby while the others converged (${STANDBY}): ${standbys.join('; ')}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const runs: ShardRun[] = [];
  for (const shards of SHARD_COUNTS) {
    await withBenchCluster(
      async (ctx) => {
        const run = await runShards(ctx, shards);
        process.stderr.write(`[bench] ${JSON.stringify(run)}\n`);
        runs.push(run);
      },
      { featureGates: { ShardedListAndWatch: true } },
    );
  }
  console.log(JSON.stringify(runs, null, 2));
  console.log(table(runs));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
