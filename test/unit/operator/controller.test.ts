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

/** A controller whose reconciler does nothing, for what lands in its queue. */
function idleController(options: { priorityQueue?: boolean } = {}): Controller {
  return new Controller({
    name: 'test',
    reconciler: async () => undefined,
    logger: pino({ level: 'silent' }),
    metrics: new Metrics(),
    client: {} as never,
    recorder: {} as never,
    ...options,
  });
}

/** An informer that only records the handlers a controller adds to it. */
function recordingInformer(handlers: InformerHandler<KubeObject>[]): Informer {
  return {
    addHandler: (h: InformerHandler<KubeObject>) => {
      handlers.push(h);
    },
  } as unknown as Informer;
}

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
    const handlers: InformerHandler<KubeObject>[] = [];
    const informer = recordingInformer(handlers);
    const controller = idleController().for(informer);
    const [handler] = handlers;
    if (!handler) throw new Error('the controller added no handler');
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
      h.onAdd!(base, false);
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

describe('priorities: the initial list and resyncs wait for changes', () => {
  const memcached = (name: string) => ({ ...base, metadata: { ...base.metadata, name, uid: `uid-${name}` } });
  const deploymentOf = (name: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion: '1',
      ownerReferences: [
        { apiVersion: 'cache.example.com/v1', kind: 'Memcached', name, uid: `uid-${name}`, controller: true },
      ],
    },
  });

  /** A controller for Memcacheds owning Deployments, the handlers its two informers got, and its queue's order. */
  function setup(priorityQueue?: boolean) {
    const handlers: InformerHandler<KubeObject>[] = [];
    const informer = () => recordingInformer(handlers);
    const controller = idleController({ priorityQueue })
      .for(informer())
      .owns(informer(), { apiVersion: 'cache.example.com/v1', kind: 'Memcached' });
    const [primary, owned] = handlers as [InformerHandler<KubeObject>, InformerHandler<KubeObject>];
    const order = async () => {
      const keys: string[] = [];
      while (controller.queue.length > 0) {
        const key = await controller.queue.get();
        if (key === undefined) break;
        keys.push(key);
        controller.queue.done(key);
      }
      return keys;
    };
    return { primary, owned, order };
  }

  test('a resource created while a restarted controller works through its initial list goes first', async () => {
    const { primary, owned, order } = setup();
    primary.onAdd!(memcached('old-1'), true);
    owned.onAdd!(deploymentOf('old-2'), true);
    primary.onAdd!(memcached('old-3'), true);
    primary.onAdd!(memcached('new'), false);
    expect(await order()).toEqual(['ns/new', 'ns/old-1', 'ns/old-2', 'ns/old-3']);
  });

  test('a resync (the cached object as its own update) waits; a change, a child change and a delete do not', async () => {
    const { primary, owned, order } = setup();
    const resynced = memcached('resynced');
    primary.onUpdate!(resynced, resynced);
    const child = deploymentOf('child-changed');
    owned.onUpdate!(child, child);
    primary.onUpdate!(memcached('changed'), {
      ...memcached('changed'),
      spec: { size: 2 },
      metadata: { ...memcached('changed').metadata, resourceVersion: '2', generation: 2 },
    });
    owned.onUpdate!(child, { ...child, metadata: { ...child.metadata, resourceVersion: '2' } });
    primary.onDelete!(memcached('deleted'));
    expect(await order()).toEqual(['ns/changed', 'ns/child-changed', 'ns/deleted', 'ns/resynced']);
  });

  test('with priorityQueue false, keys keep the order they came in', async () => {
    const { primary, order } = setup(false);
    primary.onAdd!(memcached('old-1'), true);
    primary.onAdd!(memcached('new'), false);
    expect(await order()).toEqual(['ns/old-1', 'ns/new']);
  });
});
