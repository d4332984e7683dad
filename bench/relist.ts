/**
 * Responsiveness during a relist: our reconciler restarted over N settled Memcacheds lists them
 * (and their Deployments and Pods) and queues one reconcile of each — no-ops, all of them. A
 * resource created in that minute should not wait behind them. This restarts the reconciler,
 * creates new Memcacheds from the moment it is ready, and measures each one's time from its
 * create to its Deployment (the first apply), with the priority queue on or off.
 */
import type { KubeObject } from '../constructs/contract';
import pino from 'pino';
import { BuiltinTypes, customResourceType, memcachedKind } from '../constructs';
import { Informer } from '../operator/runtime/cache/informer';
import { type BenchContext, scrapeTotal, sleep, startReconciler, stopProcess } from './measure';

const memcachedType = customResourceType(memcachedKind);

export interface RelistMeasurement {
  /** Memcacheds settled in the namespace when the reconciler restarted. */
  readonly n: number;
  readonly priorityQueue: boolean;
  /** New Memcacheds created from the moment the restarted reconciler was ready. */
  readonly created: number;
  /** From each one's create to its Deployment: the median, the 99th percentile and the longest. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** From the restart until the reconciler was ready (its caches listed). */
  readonly readySeconds: number;
  /** From ready until it had reconciled every old resource once and its queue was empty. */
  readonly drainSeconds: number;
}

/** The p-th percentile (0–100) of sorted values, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? NaN;
}

export async function measureRelist(
  ctx: BenchContext,
  namespace: string,
  n: number,
  options: { priorityQueue: boolean; newResources: number; intervalMs?: number },
): Promise<RelistMeasurement> {
  const prefix = `new-${options.priorityQueue ? 'pq' : 'fifo'}-`;
  // When each new Deployment appears, from a watch opened before the restart.
  const appeared = new Map<string, number>();
  const stop = new AbortController();
  const deployments = new Informer<KubeObject>(ctx.client, BuiltinTypes.Deployment, {
    namespace,
    logger: pino({ level: 'warn' }),
    resyncPeriodMs: 0,
    // Only the names matter here: the bench keeps nothing else of 10,000 Deployments.
    transform: (o) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name } }),
  });
  deployments.addHandler({
    onAdd: (d) => {
      const name = d.metadata.name ?? '';
      if (name.startsWith(prefix) && !appeared.has(name)) appeared.set(name, performance.now());
    },
  });
  const watching = deployments.run(stop.signal);
  await deployments.waitForSync();

  const t0 = performance.now();
  const { proc, metricsPort } = await startReconciler(ctx, namespace, {
    args: [`--priority-queue=${options.priorityQueue}`],
  });
  const readyAt = performance.now();
  const createdAt = new Map<string, number>();
  for (let i = 0; i < options.newResources; i++) {
    const name = `${prefix}${i}`;
    // From the request: the reconciler can apply the Deployment before the create's answer is read.
    createdAt.set(name, performance.now());
    await ctx.client.create(
      memcachedType,
      { apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name, namespace }, spec: { size: 1 } },
      namespace,
    );
    await sleep(options.intervalMs ?? 50);
  }
  const deadline = Date.now() + ctx.timeoutMs;
  while (appeared.size < options.newResources) {
    if (Date.now() > deadline) throw new Error(`only ${appeared.size} of ${options.newResources} new Deployments`);
    await sleep(50);
  }
  // The relist is over when every old resource has been reconciled once and nothing waits.
  const drained = async () =>
    (await scrapeTotal(metricsPort, 'controller_runtime_reconcile_total')) >= n &&
    (await scrapeTotal(metricsPort, 'workqueue_depth')) === 0;
  while (!(await drained())) {
    if (Date.now() > deadline) throw new Error(`the restarted reconciler did not work through ${n} resources`);
    await sleep(200);
  }
  const drainedAt = performance.now();
  await stopProcess(proc);
  stop.abort();
  await watching;
  const latencies = [...createdAt].map(([name, at]) => (appeared.get(name) ?? NaN) - at).sort((a, b) => a - b);
  return {
    n,
    priorityQueue: options.priorityQueue,
    created: options.newResources,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    maxMs: Math.round(latencies[latencies.length - 1] ?? NaN),
    readySeconds: +((readyAt - t0) / 1000).toFixed(2),
    drainSeconds: +((drainedAt - readyAt) / 1000).toFixed(2),
  };
}
