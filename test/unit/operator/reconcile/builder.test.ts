import type { KubeObject, Observed } from '../../../../constructs/contract';
import pino from 'pino';
import { k8s } from 'cdk8s-plus-27';
import { BuiltinTypes, type ControllerDeclaration, CustomResourceKind, t, waitsFor } from '../../../../constructs';
import { buildController } from '../../../../operator/runtime/reconcile/builder';
import type { KubeClient } from '../../../../operator/runtime/client/client';
import { ApiError } from '../../../../operator/runtime/client/errors';
import { TerminalError } from '../../../../operator/runtime/controller/errors';
import type { ReconcileContext } from '../../../../operator/runtime/controller/controller';
import { Manager } from '../../../../operator/runtime/controller/manager';
import { Metrics } from '../../../../operator/runtime/observability/metrics';
import { VirtualClock } from '../support/virtual-clock';

const logger = pino({ level: 'silent' });

const widgetKind = new CustomResourceKind({
  group: 'test.example.com',
  kind: 'Widget',
  versions: ['v1'],
  description: 'A widget.',
  spec: t.object({ replicas: t.integer({ required: true }), config: t.boolean() }),
  status: t.object({ ready: t.boolean(), conditions: t.array(t.object({ type: t.string() })) }),
});

/** Renders a Deployment, and a ConfigMap only when the spec asks for one. */
const widgetController: ControllerDeclaration = {
  name: 'widget',
  for: widgetKind,
  owns: [BuiltinTypes.Deployment, BuiltinTypes.ConfigMap],
  deletes: [BuiltinTypes.ConfigMap],
  render: (scope, w, { owner }) => {
    const meta = { name: w.metadata.name, namespace: w.metadata.namespace, ownerReferences: [owner] };
    new k8s.KubeDeployment(scope, 'd', {
      metadata: meta,
      spec: {
        replicas: w.spec.replicas,
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    if (w.spec.config) new k8s.KubeConfigMap(scope, 'c', { metadata: meta, data: { a: 'b' } });
  },
  status: (w, o) => ({
    ready: !o.applyError,
    conditions: [
      o.applyError
        ? {
            type: 'Degraded',
            status: 'True',
            reason: 'InvalidChildren',
            message: o.applyError,
            lastTransitionTime: 't',
            observedGeneration: w.metadata.generation,
          }
        : {
            type: 'Degraded',
            status: 'False',
            reason: 'AsExpected',
            message: 'ok',
            lastTransitionTime: 't',
            observedGeneration: w.metadata.generation,
          },
    ],
  }),
};

/** A client that records writes and refuses Deployments with replicas < 0 as the API server would. */
function fakeClient() {
  const writes: string[] = [];
  const applied: KubeObject[] = [];
  const statuses: unknown[] = [];
  const deletes: { name: string; uid?: string }[] = [];
  const patches: any[] = [];
  /** The status the server holds of an object, by `Kind/name`: what an apply answers with, as the API server's does. */
  const serverStatus = new Map<string, unknown>();
  const client = {
    fieldManager: 'test',
    apply: async (type: { kind: string }, obj: KubeObject, opts: { subresource?: string; dryRun?: boolean } = {}) => {
      // A dry run (the whole-or-nothing check of a change) writes nothing.
      if (!opts.dryRun) {
        writes.push(`apply ${type.kind}${opts.subresource ? `/${opts.subresource}` : ''} ${obj.metadata.name}`);
        if (opts.subresource === 'status') statuses.push(obj.status);
        else applied.push(obj);
      }
      if (type.kind === 'Deployment' && (obj as any).spec.replicas < 0)
        throw new ApiError(
          422,
          'Invalid',
          'Deployment.apps "w" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        );
      if (type.kind === 'Deployment' && obj.metadata.uid === 'immutable-uid')
        throw new ApiError(
          422,
          'Invalid',
          'Deployment.apps "w" is invalid: spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: field is immutable',
        );
      const status = serverStatus.get(`${type.kind}/${obj.metadata.name}`);
      return { ...obj, metadata: { ...obj.metadata, uid: `uid-${obj.metadata.name}` }, ...(status ? { status } : {}) };
    },
    mergePatch: async (type: { kind: string }, name: string, _ns: string | undefined, patch: any) => {
      writes.push(`patch ${type.kind} ${name} finalizers=${JSON.stringify(patch.metadata.finalizers)}`);
      patches.push(patch);
      return {};
    },
    create: async (type: { kind: string }, obj: KubeObject) => {
      writes.push(`create ${type.kind} ${obj.metadata.name}`);
      applied.push(obj);
      return obj;
    },
    delete: async (type: { kind: string }, name: string, _ns?: string, options: { uid?: string } = {}) => {
      writes.push(`delete ${type.kind} ${name}`);
      deletes.push({ name, uid: options.uid });
    },
  } as unknown as KubeClient;
  return { client, writes, applied, statuses, deletes, patches, serverStatus };
}

/** The widget's Deployment as the API server has it after our apply: nothing left to apply. */
function appliedDeployment(): KubeObject {
  const owner = {
    apiVersion: 'test.example.com/v1',
    kind: 'Widget',
    name: 'w',
    uid: 'u-w',
    controller: true,
    blockOwnerDeletion: true,
  };
  const ownerFields = {
    '.': {},
    'f:apiVersion': {},
    'f:blockOwnerDeletion': {},
    'f:controller': {},
    'f:kind': {},
    'f:name': {},
    'f:uid': {},
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'w',
      namespace: 'ns',
      ownerReferences: [owner],
      managedFields: [
        {
          manager: 'test',
          operation: 'Apply',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"u-w"}': ownerFields } },
            'f:spec': {
              'f:replicas': {},
              'f:selector': {},
              'f:template': {
                'f:metadata': { 'f:labels': { 'f:a': {} } },
                'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
              },
            },
          },
        },
      ],
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  };
}

/** A builder's controller over a fake client; status writes at once unless `statusCoalesceMs` says otherwise. */
function setup(statusCoalesceMs = 0, decl: ControllerDeclaration = widgetController, clock = new VirtualClock()) {
  const { client, writes, applied, statuses, deletes, patches, serverStatus } = fakeClient();
  const mgr = new Manager({ client, logger, metrics: new Metrics() });
  const events: string[] = [];
  const metrics = new Metrics();
  const controller = buildController(mgr, decl, {
    client,
    logger,
    metrics,
    statusCoalesceMs,
    clock,
    recorder: {
      record: async (_o: unknown, type: string, reason: string) => {
        events.push(`${type}/${reason}`);
      },
    } as never,
  });
  const cache = (type: { group: string; resource: string }, obj: KubeObject) => {
    const inf = mgr.informer(type as never) as any;
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const old = inf.get(key);
    inf.store.put(key, obj);
    // As a watch event would: handlers see it (and the controller maps it to requests).
    inf.emit((h: any) => (old ? h.onUpdate?.(old, obj) : h.onAdd?.(obj)));
  };
  const uncache = (type: { group: string; resource: string }, key: string) => {
    const inf = mgr.informer(type as never) as any;
    const old = inf.get(key);
    inf.store.remove(key);
    inf.emit((h: any) => h.onDelete?.(old));
  };
  /** Keys the controller's queue holds now (drained). */
  const queued = async (): Promise<string[]> => {
    const q = controller.queue;
    const out: string[] = [];
    while (q.length > 0) {
      const key = (await q.get())!;
      out.push(key);
      q.done(key);
    }
    return out;
  };
  const ctx = {
    client,
    logger,
    recorder: (controller as any).options.recorder,
    signal: new AbortController().signal,
  } as ReconcileContext;
  const reconcile = () => (controller as any).options.reconciler({ namespace: 'ns', name: 'w' }, ctx);
  const widget = (spec: object, generation: number, status?: object): KubeObject => ({
    apiVersion: 'test.example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'ns', uid: 'u-w', generation },
    spec,
    status,
  });
  return {
    mgr,
    controller,
    clock,
    metrics,
    serverStatus,
    writes,
    applied,
    statuses,
    deletes,
    patches,
    events,
    cache,
    uncache,
    queued,
    reconcile,
    widget,
    widgetType: { group: 'test.example.com', resource: 'widgets' },
  };
}

describe('the controller builder', () => {
  test('applies what the construct renders, records an Event per change, writes the status', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: 1, config: true }, 1));
    await s.reconcile();
    expect(s.writes).toEqual(['apply Deployment w', 'apply ConfigMap w', 'apply Widget/status w']);
    expect(s.events).toEqual(['Normal/Created', 'Normal/Created']);
  });

  test('a reconcile that runs before the cache shows its own write does not write the child again; once the cache moves on, it reads the cache', async () => {
    const s = setup();
    const client = (s.controller as any).options.client;
    const apply = client.apply;
    // The API server's answer: the Deployment as applied, at resourceVersion 6.
    client.apply = async (type: { kind: string }, obj: KubeObject, opts?: object) => {
      const answer = await apply(type, obj, opts);
      const applied = appliedDeployment();
      return type.kind === 'Deployment'
        ? { ...applied, metadata: { ...applied.metadata, resourceVersion: '6' } }
        : answer;
    };
    const deployments = s.mgr.informer(BuiltinTypes.Deployment) as any;
    // The cache has seen the Deployments' stream up to 5: not our write.
    deployments.reflector.streams[0].resourceVersion = '5';
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    await s.reconcile();
    // Reconciled again (its status write came back) before the Deployment's watch event did.
    await s.reconcile();
    const deploymentWrites = () => s.writes.filter((w) => w.startsWith('apply Deployment'));
    expect(deploymentWrites()).toEqual(['apply Deployment w']);
    expect(s.events).toEqual(['Normal/Created']);
    // The watch catches up past it, and then the child is deleted by someone: made again.
    deployments.reflector.streams[0].resourceVersion = '7';
    await s.reconcile();
    expect(deploymentWrites()).toEqual(['apply Deployment w', 'apply Deployment w']);
    expect(s.events).toEqual(['Normal/Created', 'Normal/Created']);
  });

  test('coalesces status writes: the first waits for the new children to settle, then one write; later ones at least the window apart', async () => {
    const s = setup(200);
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    // Children created: the status waits (a requeue), the Events do not.
    expect(await s.reconcile()).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(s.writes).toEqual(['apply Deployment w']);
    expect(s.events).toEqual(['Normal/Created']);
    // A child event within the window: still one status write pending, no Event twice.
    s.cache(BuiltinTypes.Deployment, appliedDeployment());
    s.clock.advance(50);
    const second = await s.reconcile();
    expect(second.requeueAfterMs).toBeLessThanOrEqual(200);
    expect(s.writes).toEqual(['apply Deployment w']);
    s.clock.advance(200);
    expect(await s.reconcile()).toBeUndefined();
    expect(s.writes).toEqual(['apply Deployment w', 'apply Widget/status w']);
    expect(s.events).toEqual(['Normal/Created']);
    // A change right after that write waits out the window too.
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1, { ready: false, conditions: [] }));
    expect(await s.reconcile()).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(s.writes.filter((w) => w.includes('/status'))).toHaveLength(1);
  });

  test('a status-only update is no reason to reconcile, unless the render read the status: then what it renders may differ', async () => {
    // A kind that stops rendering its ConfigMap once its status says so (as a restore stops making
    // its Jobs once Restored): the status it writes must reach its next render.
    const s = setup(0, {
      ...widgetController,
      render: (scope, w, context) =>
        widgetController.render?.(
          scope,
          { ...w, spec: { ...w.spec, config: (w.status as { done?: boolean } | undefined)?.done !== true } },
          context,
        ),
    });
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    expect(await s.queued()).toEqual(['ns/w']);
    await s.reconcile();
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1, { done: true }));
    expect(await s.queued()).toEqual(['ns/w']);
    // One that never reads it: no reconcile for a status-only update.
    const plain = setup();
    plain.cache(plain.widgetType, plain.widget({ replicas: 1 }, 1));
    expect(await plain.queued()).toEqual(['ns/w']);
    await plain.reconcile();
    plain.cache(plain.widgetType, plain.widget({ replicas: 1 }, 1, { done: true }));
    expect(await plain.queued()).toEqual([]);
    // One that names the fields it reads: reconciled for a change of those, not of the others.
    const named = setup(0, {
      ...widgetController,
      renderReadsStatus: ['done'],
      render: (scope, w, context) =>
        widgetController.render?.(
          scope,
          { ...w, spec: { ...w.spec, config: (w.status as { done?: boolean }).done !== true } },
          context,
        ),
    });
    named.cache(named.widgetType, named.widget({ replicas: 1 }, 1));
    expect(await named.queued()).toEqual(['ns/w']);
    await named.reconcile();
    named.cache(named.widgetType, named.widget({ replicas: 1 }, 1, { ready: true, conditions: [{ type: 'A' }] }));
    expect(await named.queued()).toEqual([]);
    named.cache(named.widgetType, named.widget({ replicas: 1 }, 1, { ready: true, done: true }));
    expect(await named.queued()).toEqual(['ns/w']);
  });

  test('while its status write waits, a change of its child is queued for when the wait ends; a delete of the child at once', async () => {
    const s = setup(60_000);
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    expect(await s.queued()).toEqual(['ns/w']);
    expect(await s.reconcile()).toEqual({ requeueAfterMs: 60_000 });
    const applied = appliedDeployment();
    // The echo of its own create, its status, then a drift of its spec: all for the pending write.
    s.cache(BuiltinTypes.Deployment, applied);
    expect(await s.queued()).toEqual([]);
    const later = (rv: string, patch: object): KubeObject => ({
      ...applied,
      ...patch,
      metadata: { ...applied.metadata, resourceVersion: rv },
    });
    s.cache(BuiltinTypes.Deployment, later('2', { status: { replicas: 1 } }));
    expect(await s.queued()).toEqual([]);
    s.cache(
      BuiltinTypes.Deployment,
      later('3', { spec: { ...(applied as any).spec, replicas: 5 }, status: { replicas: 1 } }),
    );
    expect(await s.queued()).toEqual([]);
    s.uncache(BuiltinTypes.Deployment, 'ns/w');
    expect(await s.queued()).toEqual(['ns/w']);
    s.controller.queue.shutDown();
  });

  test('what a kind reads (a Pod it maps to its resource) is queued for when the status write may come, and at once when it may be now', async () => {
    const reading: ControllerDeclaration = {
      ...widgetController,
      reads: [BuiltinTypes.Pod],
      mapReads: { Pod: (o) => o.metadata.labels?.widget },
    };
    const s = setup(60_000, reading);
    const pod = (rv: string, phase: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'w-1', namespace: 'ns', resourceVersion: rv, labels: { widget: 'w' } },
      status: { phase },
    });
    s.cache(BuiltinTypes.Pod, pod('1', 'Pending'));
    expect(await s.queued()).toEqual(['ns/w']);
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    expect(await s.queued()).toEqual(['ns/w']);
    expect(await s.reconcile()).toEqual({ requeueAfterMs: 60_000 });
    s.cache(BuiltinTypes.Pod, pod('2', 'Running'));
    expect(await s.queued()).toEqual([]);
    s.controller.queue.shutDown();
  });

  test('prunes an owned child of a deletable kind the construct no longer renders, and only that', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: 1, config: false }, 2));
    const owner = [{ apiVersion: 'test.example.com/v1', kind: 'Widget', name: 'w', uid: 'u-w', controller: true }];
    s.cache(BuiltinTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w', namespace: 'ns', ownerReferences: owner },
    });
    s.cache(BuiltinTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'someone-elses', namespace: 'ns' },
    });
    await s.reconcile();
    expect(s.writes).toContain('delete ConfigMap w');
    expect(s.writes.filter((w) => w.startsWith('delete'))).toEqual(['delete ConfigMap w']);
  });

  test('a child the API server refuses: Degraded with its message, one Warning, no retry until the generation changes', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3));
    await expect(s.reconcile()).resolves.toBeUndefined();
    expect(s.writes).toEqual(['apply Deployment w', 'apply Widget/status w']);
    expect(s.events).toEqual(['Warning/InvalidChildren']);
    // The stored status now says Degraded (and, derived by the runtime, Stalled); a resync neither
    // re-applies nor records again.
    const degraded = s.statuses.at(-1) as { ready: boolean; conditions: { type: string }[] };
    expect(degraded.ready).toBe(false);
    expect(degraded.conditions).toEqual(
      expect.arrayContaining([
        {
          type: 'Degraded',
          status: 'True',
          reason: 'InvalidChildren',
          message:
            'Deployment.apps "w" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
          lastTransitionTime: 't',
          observedGeneration: 3,
        },
        expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'InvalidChildren' }),
      ]),
    );
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3, degraded));
    s.writes.length = 0;
    s.events.length = 0;
    await s.reconcile();
    expect(s.writes).toEqual([]);
    expect(s.events).toEqual([]);
    // A new spec is tried again.
    s.cache(s.widgetType, s.widget({ replicas: 2 }, 4, degraded));
    await s.reconcile();
    expect(s.writes).toEqual(['apply Deployment w', 'apply Widget/status w']);
  });

  test('conditions the runtime adds keep their transition time while their status stays: a resync seconds later writes nothing', async () => {
    const s = setup();
    s.clock.advance(Date.UTC(2026, 10, 27, 12, 0, 0));
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3));
    await s.reconcile();
    const written = s.statuses.at(-1) as { conditions: { type: string; lastTransitionTime: string }[] };
    // The kind's status function sets Degraded alone; the runtime adds Available, Stalled, Reconciling and Ready.
    expect(written.conditions.map((c) => c.type)).toEqual(
      expect.arrayContaining(['Degraded', 'Available', 'Stalled', 'Reconciling', 'Ready']),
    );
    expect(written.conditions.find((c) => c.type === 'Stalled')?.lastTransitionTime).toBe('2026-11-27T12:00:00Z');
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3, written));
    s.writes.length = 0;
    s.clock.advance(5_000);
    await s.reconcile();
    expect(s.writes).toEqual([]);
  });

  test('a refused child (an immutable field): the others are applied, status neither Available nor Ready and says what to do; deleted by hand, it comes back at once', async () => {
    const s = setup();
    const existing = appliedDeployment();
    s.cache(BuiltinTypes.Deployment, {
      ...existing,
      metadata: { ...existing.metadata, uid: 'immutable-uid', resourceVersion: '1' },
    });
    s.cache(s.widgetType, s.widget({ replicas: 2, config: true }, 2));
    await s.reconcile();
    expect(s.writes).toEqual(['apply Deployment w', 'apply ConfigMap w', 'apply Widget/status w']);
    const status = s.statuses.at(-1) as {
      conditions: { type: string; status: string; reason: string; message: string }[];
    };
    const condition = (type: string) => status.conditions.find((c) => c.type === type);
    expect(condition('Available')).toMatchObject({ status: 'False', reason: 'ChildRefused' });
    expect(condition('Available')?.message).toContain('spec.selector');
    expect(condition('Ready')).toMatchObject({ status: 'False', reason: 'InvalidChildren' });
    expect(condition('Stalled')).toMatchObject({ status: 'True', reason: 'InvalidChildren' });
    expect(condition('Degraded')?.message).toContain('delete the Deployment (kubectl delete deployment w -n ns)');
    expect(s.events).toEqual(['Normal/Created', 'Warning/InvalidChildren']);

    // A resync with the Deployment as it was: the refused child is not sent again.
    s.cache(s.widgetType, s.widget({ replicas: 2, config: true }, 2, status));
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes.filter((w) => w.includes('Deployment'))).toEqual([]);

    // Deleted by hand (the documented way through an immutable change): made again at once.
    s.uncache(BuiltinTypes.Deployment, 'ns/w');
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes).toContain('apply Deployment w');
    const after = s.statuses.at(-1) as typeof status;
    expect(after.conditions.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'False' });
    expect(after.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  });

  test('one Warning when Degraded turns True, even when the next reconcile reads the resource from before the status write', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3));
    await s.reconcile();
    expect(s.events).toEqual(['Warning/InvalidChildren']);
    // The cache has not seen the status write yet (a busy API server): the same resource again.
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 3));
    await s.reconcile();
    expect(s.events).toEqual(['Warning/InvalidChildren']);
    // Once it is no longer Degraded, turning True again is a new Warning.
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 4));
    await s.reconcile();
    s.cache(s.widgetType, s.widget({ replicas: -1 }, 5));
    await s.reconcile();
    expect(s.events.filter((e) => e.startsWith('Warning'))).toEqual([
      'Warning/InvalidChildren',
      'Warning/InvalidChildren',
    ]);
  });

  test('never adopts: a child name taken by an object it does not control is left alone, Degraded ChildNotOwned, one Warning', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: 1, config: true }, 1));
    // Someone else's Deployment (no owner at all) and a ConfigMap another controller owns.
    s.cache(BuiltinTypes.Deployment, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'w', namespace: 'ns', uid: 'theirs' },
      spec: { replicas: 4 },
    });
    const other = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-rs', controller: true }];
    s.cache(BuiltinTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w', namespace: 'ns', uid: 'cm', ownerReferences: other },
    });
    await s.reconcile();
    // No apply and no delete of either object: only the status is written.
    expect(s.writes).toEqual(['apply Widget/status w']);
    const status = s.statuses[0] as {
      conditions: { type: string; status: string; reason: string; message: string }[];
    };
    const degraded = status.conditions.find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'ChildNotOwned' });
    expect(degraded!.message).toContain('Deployment w');
    expect(degraded!.message).toContain('ConfigMap w');
    expect(degraded!.message).toContain('ReplicaSet rs');
    expect(s.events).toEqual(['Warning/ChildNotOwned']);
  });

  test('a blocked resource is reconciled again when the object in its way goes, and then creates its child', async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    s.cache(BuiltinTypes.Deployment, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'w', namespace: 'ns', uid: 'theirs' },
    });
    await s.reconcile();
    expect(s.writes).toEqual(['apply Widget/status w']);
    await s.queued();
    // The user deletes their Deployment: the widget is queued again, and its child made.
    s.uncache(BuiltinTypes.Deployment, 'ns/w');
    expect(await s.queued()).toEqual(['ns/w']);
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes[0]).toBe('apply Deployment w');
  });

  test("applies to its own child carry the child's uid (a precondition), and prunes delete with it", async () => {
    const s = setup();
    s.cache(s.widgetType, s.widget({ replicas: 2, config: false }, 2));
    const owner = [{ apiVersion: 'test.example.com/v1', kind: 'Widget', name: 'w', uid: 'u-w', controller: true }];
    s.cache(BuiltinTypes.Deployment, {
      ...appliedDeployment(),
      metadata: { ...appliedDeployment().metadata, uid: 'd-uid' },
    });
    s.cache(BuiltinTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w', namespace: 'ns', uid: 'cm-uid', ownerReferences: owner },
    });
    await s.reconcile();
    expect(s.applied.find((o) => o.kind === 'Deployment')?.metadata.uid).toBe('d-uid');
    expect(s.deletes).toEqual([{ name: 'w', uid: 'cm-uid' }]);
  });

  test('a TerminalError from a step: Degraded with its reason, one Warning, counted, not retried until the generation changes', async () => {
    let renders = 0;
    const decl: ControllerDeclaration = {
      ...widgetController,
      render: (scope, w, ctx) => {
        renders++;
        if (w.spec.replicas > 5)
          throw new TerminalError('replicas above 5 need a licence: lower spec.replicas', 'LicenceRequired');
        widgetController.render!(scope, w, ctx);
      },
    };
    const s = setup(0, decl);
    s.cache(s.widgetType, s.widget({ replicas: 9 }, 1));
    await expect(s.reconcile()).resolves.toBeUndefined();
    expect(s.writes).toEqual(['apply Widget/status w']);
    const degraded = (s.statuses[0] as any).conditions.find((c: any) => c.type === 'Degraded');
    expect(degraded).toMatchObject({
      status: 'True',
      reason: 'LicenceRequired',
      message: 'replicas above 5 need a licence: lower spec.replicas',
    });
    expect(s.events).toEqual(['Warning/LicenceRequired']);
    const counted = async () =>
      (await s.metrics.registry.getSingleMetric('controller_runtime_terminal_reconcile_errors_total')!.get()).values[0]
        ?.value;
    expect(await counted()).toBe(1);
    // Same generation: not rendered again, nothing written or recorded.
    s.cache(s.widgetType, s.widget({ replicas: 9 }, 1, s.statuses[0] as object));
    s.writes.length = 0;
    await s.reconcile();
    expect(renders).toBe(1);
    expect(s.writes).toEqual([]);
    expect(await counted()).toBe(1);
    // A new spec is tried again.
    s.cache(s.widgetType, s.widget({ replicas: 2 }, 2, s.statuses[0] as object));
    await s.reconcile();
    expect(renders).toBe(2);
    expect(s.writes[0]).toBe('apply Deployment w');
  });

  test('a TerminalError from the external step is reported, and the step asked again next time', async () => {
    let calls = 0;
    const decl: ControllerDeclaration = {
      ...widgetController,
      external: async () => {
        calls++;
        if (calls === 1) throw new TerminalError('the outside system refuses this spec', 'Refused');
        return { facts: {} };
      },
    };
    const s = setup(0, decl);
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    await s.reconcile();
    expect(s.writes).toEqual(['apply Widget/status w']);
    expect(s.events).toEqual(['Warning/Refused']);
    await s.reconcile();
    expect(calls).toBe(2);
    expect(s.writes).toContain('apply Deployment w');
  });

  test('a deleted resource, or one being deleted, is left to the garbage collector', async () => {
    const s = setup();
    await s.reconcile();
    s.cache(s.widgetType, {
      ...s.widget({ replicas: 1 }, 1),
      metadata: { name: 'w', namespace: 'ns', uid: 'u', deletionTimestamp: 'now' },
    });
    await s.reconcile();
    expect(s.writes).toEqual([]);
  });
});

describe('the finalize step', () => {
  const finalizer = 'test.example.com/finalizer';
  /** A widget that must release something outside Kubernetes, when its spec says so (`config`). */
  function finalizing(finalize: ControllerDeclaration['finalize']): ControllerDeclaration {
    return { ...widgetController, finalize, needsFinalizer: (w) => w.spec.config === true };
  }
  const conditions = [{ type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'ok' }];
  const deleted = (s: ReturnType<typeof setup>, finalizers = [finalizer, 'someone.else/keep']) => ({
    ...s.widget({ replicas: 1, config: true }, 2, { conditions }),
    metadata: {
      name: 'w',
      namespace: 'ns',
      uid: 'u-w',
      generation: 2,
      resourceVersion: '7',
      deletionTimestamp: '2026-11-23T10:00:00Z',
      finalizers,
    },
  });

  test('puts the finalizer on a resource that needs it before any child is made, keeping the resourceVersion as precondition', async () => {
    const s = setup(
      0,
      finalizing(async () => ({ done: true })),
    );
    s.cache(s.widgetType, {
      ...s.widget({ replicas: 1, config: true }, 1),
      metadata: { name: 'w', namespace: 'ns', uid: 'u-w', generation: 1, resourceVersion: '5', finalizers: ['a/b'] },
    });
    await s.reconcile();
    expect(s.writes[0]).toBe(`patch Widget w finalizers=["a/b","${finalizer}"]`);
    expect(s.patches[0].metadata.resourceVersion).toBe('5');
    expect(s.writes.slice(1)).toEqual(['apply Deployment w', 'apply ConfigMap w', 'apply Widget/status w']);
  });

  test('takes it off a resource that no longer needs it, and never puts it on one that does not', async () => {
    const s = setup(
      0,
      finalizing(async () => ({ done: true })),
    );
    s.cache(s.widgetType, {
      ...s.widget({ replicas: 1, config: false }, 2),
      metadata: { name: 'w', namespace: 'ns', uid: 'u-w', generation: 2, finalizers: [finalizer, 'a/b'] },
    });
    await s.reconcile();
    expect(s.writes[0]).toBe('patch Widget w finalizers=["a/b"]');
    s.writes.length = 0;
    s.cache(s.widgetType, s.widget({ replicas: 1, config: false }, 3));
    await s.reconcile();
    expect(s.writes.filter((w) => w.startsWith('patch'))).toEqual([]);
  });

  test('a deleted resource is finalized, not reconciled: while the step waits, Finalizing says for what; when done, only our finalizer goes', async () => {
    let answer: Awaited<ReturnType<NonNullable<ControllerDeclaration['finalize']>>> = {
      done: false,
      reason: 'SnapshotRunning',
      message: 'waiting for Job w-final',
      events: [{ type: 'Normal', reason: 'SnapshotStarted', message: 'created Job w-final' }],
      requeueAfterMs: 5000,
    };
    const seen: { children: number; owner: string }[] = [];
    const s = setup(
      0,
      finalizing(async (_w, ctx) => {
        seen.push({ children: ctx.children.size, owner: ctx.owner.uid });
        return answer;
      }),
    );
    s.cache(s.widgetType, deleted(s));
    expect(await s.reconcile()).toEqual({ requeueAfterMs: 5000 });
    // No child applied or pruned: only the status, with the step's reason.
    expect(s.writes).toEqual(['apply Widget/status w']);
    const status = s.statuses[0] as { conditions: { type: string; status: string; reason: string }[] };
    expect(status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Finalizing', status: 'True', reason: 'SnapshotRunning' }),
        expect.objectContaining({ type: 'Degraded', status: 'False', reason: 'Finalizing' }),
      ]),
    );
    expect(s.events).toEqual(['Normal/SnapshotStarted']);
    expect(seen).toEqual([{ children: 0, owner: 'u-w' }]);
    // Asked again with that status stored: nothing new to write or record.
    s.cache(s.widgetType, { ...deleted(s), status: s.statuses[0] });
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes).toEqual([]);
    expect(s.events).toEqual(['Normal/SnapshotStarted']);
    answer = { done: true, events: [{ type: 'Normal', reason: 'SnapshotTaken', message: 'final snapshot taken' }] };
    await expect(s.reconcile()).resolves.toBeUndefined();
    expect(s.writes).toEqual(['patch Widget w finalizers=["someone.else/keep"]']);
    expect(s.patches.at(-1).metadata.resourceVersion).toBe('7');
    expect(s.events).toEqual(['Normal/SnapshotStarted', 'Normal/SnapshotTaken']);
  });

  test('a failing step: Degraded with its reason and one Warning, the error thrown for a retry with backoff (a TerminalError too), the finalizer kept', async () => {
    const s = setup(
      0,
      finalizing(async () => {
        throw new TerminalError('Job w-final failed', 'SnapshotFailed');
      }),
    );
    s.cache(s.widgetType, deleted(s));
    const err = await s.reconcile().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(TerminalError);
    expect(s.writes).toEqual(['apply Widget/status w']);
    const degraded = (s.statuses[0] as any).conditions.find((c: any) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'SnapshotFailed' });
    expect(degraded.message).toContain('Job w-final failed');
    expect(degraded.message).toContain(finalizer);
    expect(s.events).toEqual(['Warning/SnapshotFailed']);
    // The retry fails the same way: no second Warning, no second status write.
    s.cache(s.widgetType, { ...deleted(s), status: s.statuses[0] });
    s.writes.length = 0;
    await expect(s.reconcile()).rejects.toThrow('Job w-final failed');
    expect(s.writes).toEqual([]);
    expect(s.events).toEqual(['Warning/SnapshotFailed']);
  });

  test('deleted before its first status was written: the conditions are written all the same', async () => {
    const s = setup(
      0,
      finalizing(async () => {
        throw new Error('the outside system is down');
      }),
    );
    s.cache(s.widgetType, { ...deleted(s), status: undefined });
    await expect(s.reconcile()).rejects.toThrow('the outside system is down');
    expect(s.writes).toEqual(['apply Widget/status w']);
    expect((s.statuses[0] as any).conditions).toEqual([
      expect.objectContaining({ type: 'Degraded', status: 'True', reason: 'FinalizeFailed' }),
      // Being deleted, it is not available.
      expect.objectContaining({ type: 'Available', status: 'False', reason: 'Deleting' }),
    ]);
    expect(s.events).toEqual(['Warning/FinalizeFailed']);
  });

  test('a resource being deleted without our finalizer is not finalized: deletion is never held up', async () => {
    let calls = 0;
    const s = setup(
      0,
      finalizing(async () => {
        calls++;
        return { done: true };
      }),
    );
    s.cache(s.widgetType, deleted(s, ['someone.else/keep']));
    await s.reconcile();
    expect(calls).toBe(0);
    expect(s.writes).toEqual([]);
  });
});

describe('children that wait (waitsFor) and the health status functions read', () => {
  const seen: Observed[] = [];
  /** A migration Job, and a Deployment that waits for it. */
  const waiting: ControllerDeclaration = {
    name: 'widget',
    for: widgetKind,
    owns: [BuiltinTypes.Job, BuiltinTypes.Deployment],
    deletes: [BuiltinTypes.Job, BuiltinTypes.Deployment],
    render: (scope, w, { owner }) => {
      const meta = { namespace: w.metadata.namespace, ownerReferences: [owner] };
      const job = new k8s.KubeJob(scope, 'j', {
        metadata: { ...meta, name: 'migrate' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'x' }] } } },
      });
      const web = new k8s.KubeDeployment(scope, 'd', {
        metadata: { ...meta, name: 'w' },
        spec: {
          replicas: w.spec.replicas,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      });
      waitsFor(web, job);
    },
    status: (_w, observed) => {
      seen.push(observed);
      return {};
    },
  };
  const job = (conditions: object[]): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'migrate',
      namespace: 'ns',
      uid: 'u-job',
      ownerReferences: [{ apiVersion: 'test.example.com/v1', kind: 'Widget', name: 'w', uid: 'u-w', controller: true }],
    },
    status: { conditions },
  });

  test('a child is applied only once what it waits for is ready; until then it is held, not pruned, and said so', async () => {
    seen.length = 0;
    const s = setup(0, waiting);
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    await s.reconcile();
    expect(s.writes.filter((w) => !w.includes('/status'))).toEqual(['apply Job migrate']);
    const held = seen.at(-1)!.health;
    expect(held.ready).toBe(false);
    expect(held.notReady.find((c) => c.kind === 'Deployment')).toMatchObject({
      reason: 'Waiting',
      message: 'waits for Job migrate (0 running, 0 succeeded, 0 failed)',
    });

    // The Job runs: still held. A Deployment already there (from before) is neither changed nor pruned.
    s.cache(BuiltinTypes.Job, job([]));
    const before = appliedDeployment();
    s.cache(BuiltinTypes.Deployment, {
      ...before,
      metadata: { ...before.metadata, uid: 'u-d' },
      spec: { replicas: 5, selector: { matchLabels: { a: 'b' } } },
    });
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes.filter((w) => w.includes('Deployment'))).toEqual([]);
    expect(s.deletes).toEqual([]);

    // Complete: the Deployment is applied.
    s.cache(BuiltinTypes.Job, job([{ type: 'Complete', status: 'True' }]));
    s.serverStatus.set('Job/migrate', { conditions: [{ type: 'Complete', status: 'True' }] });
    s.writes.length = 0;
    await s.reconcile();
    expect(s.writes.filter((w) => w.includes('Deployment'))).toEqual(['apply Deployment w']);
    expect(seen.at(-1)!.health.notReady.map((c) => `${c.kind}/${c.reason}`)).not.toContain('Deployment/Waiting');
  });

  test("a workload's pods reach the status as its health: a crash-looping pod of the Deployment names it", async () => {
    seen.length = 0;
    const s = setup(0, {
      ...waiting,
      render: (scope, w, context) => widgetController.render?.(scope, w, context),
      owns: [BuiltinTypes.Deployment],
    });
    s.cache(s.widgetType, s.widget({ replicas: 1 }, 1));
    const before = appliedDeployment();
    const deployment = {
      ...before,
      metadata: { ...before.metadata, uid: 'u-d', generation: 2 },
      status: { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 },
    };
    s.cache(BuiltinTypes.Deployment, deployment);
    const pod = (name: string, rs: string, hash: string, state: object): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'ns',
        labels: { a: 'b', 'pod-template-hash': hash },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: `u-${rs}`, controller: true }],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', state }] },
    });
    s.cache(BuiltinTypes.Pod, pod('w-old-1', 'w-old', 'old', { running: {} }));
    s.cache(BuiltinTypes.Pod, pod('w-new-1', 'w-new', 'new', { waiting: { reason: 'CrashLoopBackOff' } }));
    // Another Deployment's pod with the same labels is not the widget's.
    s.cache(BuiltinTypes.Pod, pod('x-new-1', 'x-new', 'new', { waiting: { reason: 'ImagePullBackOff' } }));
    expect(await s.queued()).toContain('ns/w');
    await s.reconcile();
    expect(seen.at(-1)!.health.failure).toEqual({
      reason: 'PodFailing',
      message: 'Deployment w: pod w-new-1: container c is waiting: CrashLoopBackOff',
      object: { kind: 'Deployment', name: 'w' },
    });
  });
});
