/**
 * Benchmark: how long our reconciler takes to converge N Memcached resources, its CPU and
 * memory, against a reference client measured in the same run on the same control plane (the
 * test harness's, or OPKIT_KUBECONFIG with OPKIT_AUDIT_LOG). One N, JSON out; `npm run bench`
 * (bench/run.ts) runs the whole comparison and writes RESULTS.md.
 *
 *   npm run bench:converge            # N = 100
 *   N=200 WORKERS=2 npm run bench:converge
 *   N=1000 IDLE_S=120 npm run bench:converge         # and count writes over 2 idle minutes
 *   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench:converge   # profile the reconciler
 *   BENCH_SKIP_REFERENCE=1 …                         # the reconciler alone, e.g. to try node flags
 *   BENCH_NODE_ARGS=--trace-gc BENCH_RECONCILER_STDOUT=/tmp/gc.log npm run bench:converge   # its GC, heap by heap
 *   BENCH_CACHE_MEMORY=1 …                           # once settled, the heap bytes per cached object (bench/cache-memory.ts)
 *   BENCH_RELIST=50 …                                # once settled, restarts over them with 50 created during each relist (bench/relist.ts)
 *   BENCH_TRACING=1 …                                # with --otlp-endpoint: every reconcile traced, to a sink here
 *   BENCH_PACE=burst …                               # all N created at once (default 2 in flight, a user's pace)
 *   BENCH_RECONCILER_TREE=/tmp/other …               # another tree's reconciler (its bundle, its dist/), this harness
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { withBenchCluster } from './cluster';
import { CREATION_PACE, measureReconciler, measureReference, RECONCILER_TREE } from './measure';
import { measureRelist } from './relist';
import { startOtlpReceiver } from '../test/support/otlp';

const N = Number(process.env.N ?? 100);
const WORKERS = process.env.WORKERS ? Number(process.env.WORKERS) : undefined;
const IDLE_S = Number(process.env.IDLE_S ?? 0);

async function main(): Promise<void> {
  await withBenchCluster(async (ctx, cluster) => {
    const reference = process.env.BENCH_SKIP_REFERENCE === '1' ? undefined : await measureReference(ctx, N);
    // Counting spans and keeping nothing: what is measured is the reconciler's cost of tracing.
    const sink = process.env.BENCH_TRACING === '1' ? await startOtlpReceiver(200, { keep: false }) : undefined;
    const ours = await measureReconciler(ctx, N, {
      args: sink ? [`--otlp-endpoint=${sink.endpoint}`] : [],
      workers: WORKERS,
      idleSeconds: IDLE_S,
      nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      afterSettled: async (namespace, stopReconciler) => {
        if (process.env.BENCH_CACHE_MEMORY === '1') {
          const script = path.join(__dirname, 'cache-memory.ts');
          const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script, ctx.admin, namespace], {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          process.stderr.write(`[bench] cache memory: ${out}`);
        }
        const fresh = Number(process.env.BENCH_RELIST ?? 0);
        if (fresh > 0) {
          await stopReconciler();
          const before = await measureRelist(ctx, namespace, N, { priorityQueue: false, newResources: fresh });
          const after = await measureRelist(ctx, namespace, N + fresh, { priorityQueue: true, newResources: fresh });
          process.stderr.write(`[bench] relist: ${JSON.stringify({ before, after })}\n`);
        }
      },
    });
    await sink?.close();
    console.log(
      JSON.stringify(
        {
          kubernetes: cluster.version,
          n: N,
          pace: CREATION_PACE.name,
          reconcilerTree: RECONCILER_TREE,
          workers: WORKERS ?? 'default',
          ...(sink ? { tracing: { ...sink.counts } } : {}),
          reference,
          ours,
          deploymentsVsReference: reference && +(ours.deploymentsSeconds / reference.deploymentsSeconds).toFixed(2),
          settledVsReference: reference && +(ours.settledSeconds! / reference.settledSeconds!).toFixed(2),
        },
        null,
        2,
      ),
    );
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
