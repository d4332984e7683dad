/**
 * Where the bytes of our informer caches go, per cached object: for each type the Memcached
 * controller caches (Memcacheds, Deployments, Pods), the live objects of one namespace are listed
 * and kept as the informers keep them (cacheTransform, their strings pooled across the three
 * types as the informers' are), and the V8 heap they hold is measured
 * after a full collection — against the same objects kept whole, as listed. Run it over settled
 * resources (bench/converge.ts does with BENCH_CACHE_MEMORY=1):
 *
 *   node --expose-gc --import tsx bench/cache-memory.ts <kubeconfig> <namespace>
 *
 * Prints JSON: per type, the count, bytes per object kept whole and as cached, and the JSON size
 * of each part (metadata, spec, status) of a cached object.
 */
import type { KubeObject, ResourceType } from '../constructs/contract';
import { BuiltinTypes, customResourceType, memcachedKind } from '../constructs';
import { cacheTransform, FieldSetPool } from '../operator/runtime/cache/cache-transform';
import { StringPool } from '../operator/runtime/cache/string-pool';
import { HttpKubeClient } from '../operator/runtime/client/client';
import { loadKubeConfig } from '../operator/runtime/client/kubeconfig';

/** The reconciler's field manager (runOperator's default): the managedFields entry the cache keeps. */
const FIELD_MANAGER = 'cdk8s-operator-kit';

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function listAll(client: HttpKubeClient, type: ResourceType, namespace: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.list(type, namespace, { limit: '500', ...(token ? { continue: token } : {}) });
    items.push(...page.items);
    token = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (token);
  return items;
}

/** Heap bytes per object that `keep` leaves reachable, the listed objects themselves dropped. */
async function heldBytes(
  list: () => Promise<KubeObject[]>,
  keep: (o: KubeObject) => KubeObject,
  held: unknown[],
): Promise<{ count: number; bytesPerObject: number; kept: KubeObject[] }> {
  const before = heapUsed();
  const kept = (await list()).map(keep);
  held.push(kept);
  const after = heapUsed();
  return { count: kept.length, bytesPerObject: Math.round((after - before) / Math.max(1, kept.length)), kept };
}

const jsonBytes = (x: unknown) => (x === undefined ? 0 : Buffer.byteLength(JSON.stringify(x)));

async function main(): Promise<void> {
  const [kubeconfig, namespace] = process.argv.slice(2);
  if (!kubeconfig || !namespace) throw new Error('usage: cache-memory.ts <kubeconfig> <namespace>');
  const client = new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), { fieldManager: 'bench' });
  const held: unknown[] = [];
  const report: Record<string, unknown> = {};
  // One for the three types, as the process's informers share one.
  const strings = new StringPool();
  try {
    for (const [name, type] of [
      ['Memcached', customResourceType(memcachedKind)],
      ['Deployment', BuiltinTypes.Deployment],
      ['Pod', BuiltinTypes.Pod],
    ] as const) {
      const whole = await heldBytes(
        () => listAll(client, type, namespace),
        (o) => o,
        held,
      );
      const transform = cacheTransform(FIELD_MANAGER, type, new FieldSetPool());
      const keep = (o: KubeObject) => {
        const kept = transform(o);
        strings.internIn(kept);
        return kept;
      };
      const cached = await heldBytes(() => listAll(client, type, namespace), keep, held);
      const n = Math.max(1, cached.kept.length);
      const part = (f: (o: KubeObject & { spec?: unknown; status?: unknown }) => unknown) =>
        Math.round(cached.kept.reduce((sum, o) => sum + jsonBytes(f(o)), 0) / n);
      report[name] = {
        count: cached.count,
        heapBytesPerObjectWhole: whole.bytesPerObject,
        heapBytesPerObjectCached: cached.bytesPerObject,
        jsonBytesPerCachedObject: {
          metadata: part((o) => ({ ...o.metadata, managedFields: undefined })),
          managedFields: part((o) => o.metadata.managedFields),
          spec: part((o) => o.spec),
          status: part((o) => o.status),
        },
      };
    }
  } finally {
    client.close();
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
