/**
 * Benchmark: what rendering a reconcile's desired children through a cdk8s construct costs,
 * against a reference measured in the same run: building the same object as a plain literal
 * (structuredClone of a template plus the per-object fields). And what keeping them costs: the
 * heap that KEPT resources' renders hold in the reconciler's render cache (every resource's render
 * is kept, within its byte budget), against the JSON bytes that budget counts.
 *
 *   npm run bench:render
 *   KEPT=10000 npm run bench:render
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type { Memcached } from '../constructs';
import type { RenderedChildren } from '../constructs/contract/render';
import { memcachedController } from '../constructs/memcached/controller';
import { renderChildren, renderChildrenWithWaits } from '../operator/runtime/children/render';
import { RenderCache } from '../operator/runtime/children/render-cache';

const desiredDeployment = (m: Memcached) => renderChildren(memcachedController, m)[0];

const ITERATIONS = Number(process.env.ITERATIONS ?? 5000);
const KEPT = Number(process.env.KEPT ?? 10000);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** The heap in use once what is unreachable has been collected. */
function heapUsedAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The heap KEPT renders hold in a render cache, as the reconciler keeps them (frozen, with their digests). */
function keptRenders(): { heapBytes: number; budgetBytes: number } {
  const cache = new RenderCache<RenderedChildren>(Infinity);
  const before = heapUsedAfterGc();
  for (let i = 0; i < KEPT; i++) {
    const mc = memcached(i);
    cache.get(`bench/mc-${i}`, JSON.stringify(mc), () => renderChildrenWithWaits(memcachedController, mc));
  }
  const heapBytes = heapUsedAfterGc() - before;
  if (cache.size !== KEPT) throw new Error(`kept ${cache.size} renders, not ${KEPT}`);
  return { heapBytes, budgetBytes: cache.bytes };
}

function memcached(i: number): Memcached {
  return {
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: `mc-${i}`, namespace: 'bench', uid: `uid-${i}`, generation: 1 },
    spec: { size: 1 + (i % 10), image: 'memcached:1.6', containerPort: 11211, memory: '64Mi' },
  };
}

function time(fn: (i: number) => unknown): number {
  for (let i = 0; i < 500; i++) fn(i); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1e3 / ITERATIONS; // µs per call
}

const template = desiredDeployment(memcached(0)) as any;
const literal = (i: number) => {
  const mc = memcached(i);
  const d = structuredClone(template);
  d.metadata.name = mc.metadata.name;
  d.metadata.ownerReferences[0].name = mc.metadata.name;
  d.metadata.ownerReferences[0].uid = mc.metadata.uid;
  d.spec.replicas = mc.spec.size;
  d.metadata.labels['app.kubernetes.io/instance'] = mc.metadata.name;
  return d;
};

const construct = time((i) => desiredDeployment(memcached(i)));
const reference = time(literal);
const kept = keptRenders();
const kib = (bytes: number) => +(bytes / 1024).toFixed(2);
console.log(
  JSON.stringify(
    {
      iterations: ITERATIONS,
      constructRenderMicros: +construct.toFixed(1),
      literalReferenceMicros: +reference.toFixed(1),
      constructVsLiteral: +(construct / reference).toFixed(1),
      keptRenders: KEPT,
      keptHeapMiB: +(kept.heapBytes / 2 ** 20).toFixed(1),
      keptHeapKiBPerRender: kib(kept.heapBytes / KEPT),
      budgetKiBPerRender: kib(kept.budgetBytes / KEPT),
      heapPerBudgetByte: +(kept.heapBytes / kept.budgetBytes).toFixed(2),
    },
    null,
    2,
  ),
);
