import pino from 'pino';
import { Controller, onlyStatusChanged } from '../../../operator/runtime/controller';
import type { Informer, InformerHandler } from '../../../operator/runtime/informer';
import { Metrics } from '../../../operator/runtime/metrics';
import type { KubeObject } from '../../../operator/runtime/resource';

const base: KubeObject & { spec: unknown; status?: unknown } = {
  apiVersion: 'cache.example.com/v1', kind: 'Memcached',
  metadata: { name: 'm', namespace: 'ns', uid: 'u', generation: 1, resourceVersion: '1', labels: { a: 'b' } },
  spec: { size: 1 },
};
const changed = (patch: { metadata?: object; spec?: unknown; status?: unknown }) => ({ ...base, ...patch, metadata: { ...base.metadata, resourceVersion: '2', ...patch.metadata } });

test('only status and bookkeeping changed: a status write, a new resourceVersion, new managedFields', () => {
  expect(onlyStatusChanged(base, changed({ status: { nodes: ['p'] } }))).toBe(true);
  expect(onlyStatusChanged(base, changed({ metadata: { managedFields: [{ manager: 'x' }] } }))).toBe(true);
  expect(onlyStatusChanged(base, changed({ spec: { size: 2 }, metadata: { generation: 2 } }))).toBe(false);
  expect(onlyStatusChanged(base, changed({ metadata: { labels: { a: 'c' } } }))).toBe(false);
  expect(onlyStatusChanged(base, changed({ metadata: { annotations: { x: 'y' } } }))).toBe(false);
  expect(onlyStatusChanged(base, changed({ metadata: { finalizers: ['f'] } }))).toBe(false);
  expect(onlyStatusChanged(base, changed({ metadata: { deletionTimestamp: '2026-11-23T00:00:00Z' } }))).toBe(false);
});

test('the primary kind is reconciled on add, delete, resync and real changes, not on its own status writes', () => {
  /** How many keys one event leaves in a fresh controller's queue. */
  const queuedBy = (event: (h: InformerHandler<KubeObject>) => void) => {
    let handler!: InformerHandler<KubeObject>;
    const informer = { addHandler: (h: InformerHandler<KubeObject>) => { handler = h; } } as unknown as Informer;
    const controller = new Controller({
      name: 'test', reconciler: async () => undefined, logger: pino({ level: 'silent' }), metrics: new Metrics(),
      client: {} as never, recorder: {} as never,
    }).for(informer);
    event(handler);
    return controller.queue.length;
  };
  expect(queuedBy(h => h.onUpdate!(base, changed({ status: { nodes: ['p'] } })))).toBe(0);
  expect(queuedBy(h => h.onUpdate!(base, changed({ spec: { size: 2 }, metadata: { generation: 2 } })))).toBe(1);
  expect(queuedBy(h => h.onUpdate!(base, changed({ metadata: { deletionTimestamp: '2026-11-23T00:00:00Z' } })))).toBe(1);
  // A resync delivers the cached object as its own update.
  expect(queuedBy(h => h.onUpdate!(base, base))).toBe(1);
  expect(queuedBy(h => h.onAdd!(base))).toBe(1);
  expect(queuedBy(h => h.onDelete!(base))).toBe(1);
});
