/**
 * Benchmark: a busy API server (#82). The API server is small (`--max-requests-inflight=20
 * --max-mutating-requests-inflight=10`), and each controller's ServiceAccount is squeezed into a
 * priority level of its own (testing/priority-level.ts: one nominal share, no borrowing, a queue
 * of one). N Memcacheds are created at once by an exempt admin; each controller runs as it ships,
 * with leader election on: our reconciler (the bundle the image runs, its default workers) and the
 * controller-runtime peer doing equal work (its default: one worker). Alternated, ROUNDS each, on
 * one control plane, so both meet the same server in the same hour.
 *
 *   npm run bench:busy              # N = 300, 2 rounds each
 *   N=150 ROUNDS=1 npm run bench:busy
 *
 * Per run: until N Deployments exist, until every status is settled (the bench's `converge`), the
 * requests the API server rejected for that controller's level (its
 * `apiserver_flowcontrol_rejected_requests_total`) and, for ours, the requests it sent again in
 * place (`rest_client_request_retries_total`).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tightPriorityLevel } from '../testing/priority-level';
import { withBenchCluster } from './cluster';
import { buildControllerRuntimePeer, measureControllerRuntime } from './controller-runtime-peer';
import { type BenchContext, type Measurement, measureReconciler } from './measure';

const N = Number(process.env.N ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SMALL_SERVER = ['--max-requests-inflight=20', '--max-mutating-requests-inflight=10'];

interface BusyRun {
  readonly controller: 'kit' | 'controller-runtime';
  readonly deploymentsSeconds: number;
  readonly settledSeconds: number;
  readonly rejected: number;
  readonly retries?: number;
  /** Ours: the resources whose `Created` Event was recorded (N: none lost to a 429). */
  readonly createdEvents?: number;
  /** Ours: error-level lines in its log (none for a 429 sent again), and whether it lost the lease. */
  readonly errorLines?: number;
  readonly leaseLost?: boolean;
  readonly cpuSeconds?: number;
  readonly peakRssMiB?: number;
}

/** Puts a ServiceAccount's every request under a tight priority level of its own, `name`. */
function squeeze(ctx: BenchContext, name: string, serviceAccount: { namespace: string; name: string }): void {
  execFileSync('kubectl', ['--kubeconfig', ctx.admin, 'apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: tightPriorityLevel({ name, serviceAccount }) }),
    stdio: ['pipe', 'ignore', 'inherit'],
  });
}

/** Requests the API server has rejected (429) for priority level `level` so far. */
function rejectedFor(ctx: BenchContext, level: string): number {
  // The server's metrics page is larger than a default buffer.
  const page = execFileSync('kubectl', ['--kubeconfig', ctx.admin, 'get', '--raw', '/metrics'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return page
    .split('\n')
    .filter(
      (l) => l.startsWith('apiserver_flowcontrol_rejected_requests_total{') && l.includes(`priority_level="${level}"`),
    )
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

function busyRun(controller: BusyRun['controller'], m: Measurement, rejected: number): BusyRun {
  return {
    controller,
    deploymentsSeconds: m.deploymentsSeconds,
    settledSeconds: m.settledSeconds ?? Number.NaN,
    rejected,
    retries: m.retries,
    cpuSeconds: m.cpuSeconds,
    peakRssMiB: m.peakRssMiB,
  };
}

/** The Memcacheds of namespace `ns` whose `Created` Event was recorded. */
function createdEvents(ctx: BenchContext, ns: string): number {
  const events = JSON.parse(
    execFileSync('kubectl', ['--kubeconfig', ctx.admin, 'get', 'events', '-n', ns, '-o', 'json'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    }),
  ) as { items: { reason?: string; involvedObject?: { kind?: string; name?: string } }[] };
  return new Set(
    events.items
      .filter((e) => e.reason === 'Created' && e.involvedObject?.kind === 'Memcached')
      .map((e) => e.involvedObject?.name),
  ).size;
}

async function measureKit(ctx: BenchContext): Promise<BusyRun> {
  const level = 'opkit-tight-kit';
  squeeze(ctx, level, { namespace: 'memcached-system', name: 'memcached-operator' });
  const before = rejectedFor(ctx, level);
  // Its log (warn and up), read for error lines and a lost lease.
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-busy-'));
  const log = path.join(logDir, 'reconciler.log');
  process.env.BENCH_RECONCILER_STDOUT = log;
  let events = 0;
  const m = await measureReconciler(ctx, N, {
    idleSeconds: 0,
    createInFlight: N,
    args: [
      '--leader-elect',
      '--leader-election-id=memcached-bench-busy',
      '--leader-election-namespace=memcached-system',
    ],
    afterSettled: (ns) => {
      events = createdEvents(ctx, ns);
      return Promise.resolve();
    },
  });
  delete process.env.BENCH_RECONCILER_STDOUT;
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  fs.rmSync(logDir, { recursive: true, force: true });
  return {
    ...busyRun('kit', m, rejectedFor(ctx, level) - before),
    createdEvents: events,
    errorLines: lines.filter((l) => l.includes('"level":50')).length,
    leaseLost: lines.some((l) => l.includes('leader lease lost')),
  };
}

async function measurePeer(ctx: BenchContext, dir: string): Promise<BusyRun> {
  const level = 'opkit-tight-peer';
  let before = 0;
  const m = await measureControllerRuntime(ctx, N, {
    dir,
    idleSeconds: 0,
    equalWork: true,
    leaderElect: true,
    createInFlight: N,
    beforeStart: (serviceAccount) => {
      squeeze(ctx, level, serviceAccount);
      before = rejectedFor(ctx, level);
    },
  });
  return busyRun('controller-runtime', m, rejectedFor(ctx, level) - before);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function table(runs: BusyRun[]): string {
  const of = (c: BusyRun['controller']) => runs.filter((r) => r.controller === c);
  const [kit, peer] = [of('kit'), of('controller-runtime')];
  const ratio = (f: (r: BusyRun) => number) => (median(kit.map(f)) / median(peer.map(f))).toFixed(2);
  const rows = runs.map(
    (r) =>
      `| ${r.controller} | ${r.deploymentsSeconds} s | ${r.settledSeconds} s | ${r.rejected} | ${r.retries ?? '–'} | ${r.createdEvents ?? '–'} | ${r.errorLines === undefined ? '–' : `${r.errorLines}${r.leaseLost ? ', lease lost' : ''}`} | ${r.cpuSeconds ?? '–'} | ${r.peakRssMiB ?? '–'} MiB |`,
  );
  return [
    `N = ${N} created at once, a server of ${SMALL_SERVER.join(' ')}, each controller's ServiceAccount in a priority level of one share, no borrowing, a queue of one; leader election on:`,
    '',
    '| controller | N Deployments | N statuses settled | requests rejected (429) | sent again in place | Created Events | error lines | CPU-s | peak RSS |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Medians, kit ÷ controller-runtime: Deployments ${ratio((r) => r.deploymentsSeconds)}×, settled ${ratio((r) => r.settledSeconds)}×.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const peer = buildControllerRuntimePeer();
  const runs: BusyRun[] = [];
  await withBenchCluster(
    async (ctx) => {
      for (let round = 0; round < ROUNDS; round++) {
        // Alternated (kit, peer, peer, kit, …): a drift of the machine falls on both.
        const order = round % 2 === 0 ? (['kit', 'peer'] as const) : (['peer', 'kit'] as const);
        for (const who of order) {
          process.stderr.write(`[busy] round ${String(round + 1)}: ${who}, ${String(N)} Memcacheds at once…\n`);
          const run = who === 'kit' ? await measureKit(ctx) : await measurePeer(ctx, peer.dir);
          process.stderr.write(`[busy] ${JSON.stringify(run)}\n`);
          runs.push(run);
        }
      }
    },
    { extraApiserverArgs: SMALL_SERVER },
  );
  console.log(JSON.stringify(runs, null, 2));
  console.log(table(runs));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
