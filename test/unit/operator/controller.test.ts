import type { KubeObject } from '../../../constructs/contract';
import pino from 'pino';
import { Controller, onlyStatusChanged } from '../../../operator/runtime/controller';
import { TerminalError } from '../../../operator/runtime/errors';
import type { Informer, InformerHandler } from '../../../operator/runtime/informer';
import { Metrics } from '../../../operator/runtime/metrics';

const base: KubeObject & { spec: unknown; status?: unknown } = {
  apiVersion: 'cache.example.com/v1',
  kind: 'Memcached',
  metadata: { name: 'm', namespace: 'ns', uid: 'u', generation: 1, resourceVersion: '1', labels: { a: 'b' } },
  spec: { size: 1 },
};
const changed = (patch: { metadata?: object; spec?: unknown; status?: unknown }) => ({
  ...base,
  ...patch,
  metadata: { ...base.metadata, resourceVersion: '2', ...patch.metadata },
});

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
    const informer = {
      addHandler: (h: InformerHandler<KubeObject>) => {
        handler = h;
      },
    } as unknown as Informer;
    const controller = new Controller({
      name: 'test',
      reconciler: async () => undefined,
      logger: pino({ level: 'silent' }),
      metrics: new Metrics(),
      client: {} as never,
      recorder: {} as never,
    }).for(informer);
    event(handler);
    return controller.queue.length;
  };
  expect(
    queuedBy((h) => {
      h.onUpdate!(base, changed({ status: { nodes: ['p'] } }));
    }),
  ).toBe(0);
  expect(
    queuedBy((h) => {
      h.onUpdate!(base, changed({ spec: { size: 2 }, metadata: { generation: 2 } }));
    }),
  ).toBe(1);
  expect(
    queuedBy((h) => {
      h.onUpdate!(base, changed({ metadata: { deletionTimestamp: '2026-11-23T00:00:00Z' } }));
    }),
  ).toBe(1);
  // A resync delivers the cached object as its own update.
  expect(
    queuedBy((h) => {
      h.onUpdate!(base, base);
    }),
  ).toBe(1);
  expect(
    queuedBy((h) => {
      h.onAdd!(base);
    }),
  ).toBe(1);
  expect(
    queuedBy((h) => {
      h.onDelete!(base);
    }),
  ).toBe(1);
});

test('a TerminalError from a reconciler is not retried (and counted); any other error is', async () => {
  const metrics = new Metrics();
  const seen: string[] = [];
  const controller = new Controller({
    name: 'terminal',
    logger: pino({ level: 'silent' }),
    metrics,
    client: {} as never,
    recorder: {} as never,
    rateLimiter: { baseDelayMs: 5, maxDelayMs: 5 },
    reconciler: async (req) => {
      seen.push(req.name);
      if (req.name === 'bad-spec') throw new TerminalError('cannot be satisfied', 'Unsatisfiable');
      if (req.name === 'flaky' && seen.filter((n) => n === 'flaky').length < 3) throw new Error('connection reset');
    },
  });
  controller.start();
  controller.queue.add('ns/bad-spec');
  controller.queue.add('ns/flaky');
  const deadline = Date.now() + 5000;
  while (seen.filter((n) => n === 'flaky').length < 3 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  await controller.stop();
  expect(seen.filter((n) => n === 'bad-spec')).toHaveLength(1);
  expect(seen.filter((n) => n === 'flaky')).toHaveLength(3);
  const terminal = await metrics.registry.getSingleMetric('controller_runtime_terminal_reconcile_errors_total')!.get();
  expect(terminal.values[0]?.value).toBe(1);
});
