import type { KubeObject } from '../../../../constructs/contract';
import pino from 'pino';
import { Controller, onlyStatusChanged } from '../../../../operator/runtime/controller/controller';
import { TerminalError } from '../../../../operator/runtime/controller/errors';
import type { Informer, InformerHandler } from '../../../../operator/runtime/cache/informer';
import { Metrics } from '../../../../operator/runtime/observability/metrics';

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
function idleController(
  options: { priorityQueue?: boolean; statusWriteWaitMs?: (key: string) => number } = {},
): Controller {
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

/** An informer that records the handlers a controller adds to it, and caches what `cached` holds. */
function recordingInformer(
  handlers: InformerHandler<KubeObject>[],
  cached: ReadonlyMap<string, KubeObject> = new Map(),
): Informer {
  return {
    addHandler: (h: InformerHandler<KubeObject>) => {
      handlers.push(h);
    },
    get: (key: string) => cached.get(key),
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
    const cached = new Map<string, KubeObject>();
    const controller = idleController({ priorityQueue })
      .for(recordingInformer(handlers, cached))
      .owns(recordingInformer(handlers), { apiVersion: 'cache.example.com/v1', kind: 'Memcached' });
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
    return { primary, owned, controller, cached, order };
  }

  /** A Memcached whose status says it was reconciled at its generation. */
  const settled = (name: string) => ({ ...memcached(name), status: { observedGeneration: 1 } });

  test('a resource created while a restarted controller works through its initial list goes first', async () => {
    const { primary, owned, order } = setup();
    primary.onAdd!(settled('old-1'), true);
    owned.onAdd!(deploymentOf('old-2'), true);
    primary.onAdd!(settled('old-3'), true);
    primary.onAdd!(memcached('new'), false);
    expect(await order()).toEqual(['ns/new', 'ns/old-1', 'ns/old-2', 'ns/old-3']);
  });

  test('a replica that stood by (its informers ran while another led): what its children did meanwhile waits, once it leads, behind a resource created meanwhile', async () => {
    const { primary, owned, controller, cached, order } = setup();
    // While it stood by: its cache listed settled resources, their Deployments kept changing
    // (the leader converging them), and a resource was created after the leader died.
    for (const name of ['old-1', 'old-2', 'old-3']) {
      cached.set(`ns/${name}`, settled(name));
      primary.onAdd!(settled(name), true);
    }
    for (const name of ['old-1', 'old-2', 'old-3'])
      owned.onUpdate!(deploymentOf(name), {
        ...deploymentOf(name),
        metadata: { ...deploymentOf(name).metadata, resourceVersion: '2' },
      });
    cached.set('ns/new', memcached('new'));
    primary.onAdd!(memcached('new'), false);
    controller.prepareToLead();
    expect(await order()).toEqual(['ns/new', 'ns/old-1', 'ns/old-2', 'ns/old-3']);
  });

  test('of the initial list, what its status shows still waiting on a reconcile goes ahead of the re-checks', async () => {
    const { primary, order } = setup();
    const changed = { ...settled('changed'), metadata: { ...settled('changed').metadata, generation: 2 } };
    const deleting = {
      ...settled('deleting'),
      metadata: { ...settled('deleting').metadata, deletionTimestamp: '2026-11-26T00:00:00Z' },
    };
    const conditionBehind = {
      ...memcached('condition-behind'),
      metadata: { ...memcached('condition-behind').metadata, generation: 3 },
      status: { conditions: [{ type: 'Available', status: 'True', observedGeneration: 2 }] },
    };
    const noGenerations = { ...memcached('no-generations'), status: { phase: 'Running' } };
    for (const o of [
      settled('settled'),
      memcached('never-reconciled'),
      noGenerations,
      changed,
      deleting,
      conditionBehind,
    ])
      primary.onAdd!(o, true);
    expect(await order()).toEqual([
      'ns/never-reconciled',
      'ns/changed',
      'ns/deleting',
      'ns/condition-behind',
      'ns/settled',
      'ns/no-generations',
    ]);
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

describe('changes a pending status write can take in wait for it', () => {
  const owner = { apiVersion: 'cache.example.com/v1', kind: 'Memcached', name: 'm', uid: 'u', controller: true };
  const deployment: KubeObject & { spec: unknown; status?: unknown } = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'm', namespace: 'ns', resourceVersion: '1', ownerReferences: [owner] },
    spec: { replicas: 1 },
    status: { replicas: 0 },
  };
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'm-abc', namespace: 'ns', resourceVersion: '1' },
  };
  const next = <T extends KubeObject>(o: T, patch: object): T => ({
    ...o,
    ...patch,
    metadata: { ...o.metadata, resourceVersion: String(Number(o.metadata.resourceVersion) + 1) },
  });

  /**
   * A controller owning Deployments and reading Pods (mapped to `m`), whose resource's status may
   * next be written `waitMs` from now; its queue's length after one event of each informer.
   */
  function setup(waitMs: number) {
    const handlers: InformerHandler<KubeObject>[] = [];
    const asked: string[] = [];
    const controller = idleController({
      statusWriteWaitMs: (key) => {
        asked.push(key);
        return waitMs;
      },
    })
      .owns(recordingInformer(handlers), { apiVersion: 'cache.example.com/v1', kind: 'Memcached' })
      .watchesForStatus(recordingInformer(handlers), () => [{ namespace: 'ns', name: 'm' }]);
    const [owned, pods] = handlers as [InformerHandler<KubeObject>, InformerHandler<KubeObject>];
    return { controller, owned, pods, asked };
  }

  test("while the owner's status write waits, a child's add, status update and spec change and a pod's change are queued for it, not at once", async () => {
    const { controller, owned, pods, asked } = setup(60_000);
    owned.onAdd!(deployment, false);
    owned.onUpdate!(deployment, next(deployment, { status: { replicas: 1 } }));
    owned.onUpdate!(deployment, next(deployment, { spec: { replicas: 2 } }));
    pods.onAdd!(pod, false);
    pods.onUpdate!(pod, next(pod, { status: { phase: 'Running' } }));
    pods.onDelete!(pod);
    expect(controller.queue.length).toBe(0);
    expect(asked.every((k) => k === 'ns/m')).toBe(true);
    expect(asked.length).toBeGreaterThanOrEqual(6);
    controller.queue.shutDown();
  });

  test("a child's delete is queued at once, and so is any change when the status write may be now", () => {
    const deleted = setup(60_000);
    deleted.owned.onDelete!(deployment);
    expect(deleted.controller.queue.length).toBe(1);
    const now = setup(0);
    now.owned.onUpdate!(deployment, next(deployment, { status: { replicas: 1 } }));
    expect(now.controller.queue.length).toBe(1);
    const podNow = setup(0);
    podNow.pods.onAdd!(pod, false);
    expect(podNow.controller.queue.length).toBe(1);
    for (const s of [deleted, now, podNow]) s.controller.queue.shutDown();
  });

  test('the deferred status input arrives when the wait is over', async () => {
    const { controller, owned } = setup(20);
    owned.onUpdate!(deployment, next(deployment, { status: { replicas: 1 } }));
    expect(controller.queue.length).toBe(0);
    // Waits on the queue handing the key out, not on a clock.
    expect(await controller.queue.get()).toBe('ns/m');
    controller.queue.shutDown();
  });
});
