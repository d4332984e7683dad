/**
 * Benchmark: what rendering a reconcile's desired children through a cdk8s construct costs,
 * against a reference measured in the same run: building the same object as a plain literal
 * (structuredClone of a template plus the per-object fields).
 *
 *   npm run bench:render
 */
import type { Memcached } from '../constructs';
import { memcachedController } from '../constructs/memcached/controller';
import { renderChildren } from '../operator/runtime/children/render';

const desiredDeployment = (m: Memcached) => renderChildren(memcachedController, m)[0];

const ITERATIONS = Number(process.env.ITERATIONS ?? 5000);

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
console.log(
  JSON.stringify(
    {
      iterations: ITERATIONS,
      constructRenderMicros: +construct.toFixed(1),
      literalReferenceMicros: +reference.toFixed(1),
      constructVsLiteral: +(construct / reference).toFixed(1),
    },
    null,
    2,
  ),
);
