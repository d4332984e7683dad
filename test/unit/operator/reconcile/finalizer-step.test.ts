/**
 * The finalizer steps on their own, with the in-memory client: the finalizer put on (keeping
 * everyone else's, guarded by the resourceVersion read), and a deleted resource finalized — done,
 * waiting, or failing — as the declaration's `finalize` answers.
 */
import type { RenderedChildren } from '../../../../constructs/contract/render';
import pino from 'pino';
import { customResourceType, type FinalizeOutcome, finalizerName } from '../../../../constructs';
import { memcachedKind } from '../../../../constructs/memcached/api';
import type { Informer } from '../../../../operator/runtime/cache';
import { RenderCache, WrittenChildren } from '../../../../operator/runtime/children';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { finalizeResource, keepFinalizer } from '../../../../operator/runtime/reconcile/finalizer';
import { StatusPacer } from '../../../../operator/runtime/reconcile/status-pacing';
import { Blockers } from '../../../../operator/runtime/reconcile/blockers';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const type = customResourceType<Resource>(memcachedKind);
const FINALIZER = finalizerName(memcachedKind);

async function setUp(finalize: () => Promise<FinalizeOutcome>, finalizers: string[] = ['someone.else/keep']) {
  const client = new FakeKubeClient();
  const resource = await client.create(type, {
    apiVersion: memcachedKind.apiVersion,
    kind: memcachedKind.kind,
    metadata: { name: 'm', namespace: 'ns', finalizers },
    spec: { size: 1 },
  });
  const events: string[] = [];
  const empty = { listControlledBy: () => [], get: () => undefined } as unknown as Informer;
  const parts = {
    decl: { name: 'memcached', for: memcachedKind, finalize },
    type,
    owned: new Map(),
    reads: new Map(),
    refused: new Map(),
    refusedChildren: new Map(),
    written: new WrittenChildren(),
    pacer: new StatusPacer(0),
    clock: { now: () => Date.UTC(2026, 0, 1) },
    renders: new RenderCache<RenderedChildren>(1 << 20),
    blockers: new Blockers(),
    resources: empty,
  };
  const recorder = {
    record: async (_o: unknown, kind: string, reason: string) => {
      events.push(`${kind} ${reason}`);
    },
  };
  const ctx = { client, recorder, logger: pino({ level: 'silent' }), signal: new AbortController().signal };
  const target = (r: Resource): Target =>
    ({ key: 'ns/m', resource: r, ctx, uid: r.metadata.uid, generation: 1, namespace: 'ns' }) as unknown as Target;
  return { client, resource, parts, target, events };
}

test('keepFinalizer adds ours beside the others, guarded by the resourceVersion it read; then writes nothing', async () => {
  const { client, resource, parts, target } = await setUp(async () => ({ done: true }));
  await keepFinalizer(parts, target(resource));
  const now = await client.get(type, 'm', 'ns');
  expect(now.metadata.finalizers).toEqual(['someone.else/keep', FINALIZER]);
  await keepFinalizer(parts, target(now));
  expect(client.writes.map((w) => w.verb)).toEqual(['create', 'patch']);
  // A resource changed since it was read is a 409 Conflict, not a lost finalizer of someone's.
  await client.mergePatch(type, 'm', 'ns', { metadata: { labels: { changed: 'yes' } } });
  await expect(
    keepFinalizer(parts, target({ ...now, metadata: { ...now.metadata, finalizers: [] } })),
  ).rejects.toMatchObject({
    status: 409,
  });
});

test('finalize done: its Events recorded, our finalizer off, the others kept', async () => {
  const { client, resource, parts, target, events } = await setUp(
    async () => ({ done: true, events: [{ type: 'Normal', reason: 'Cleaned', message: 'all gone' }] }),
    ['someone.else/keep', FINALIZER],
  );
  expect(await finalizeResource(parts, target(resource))).toBeUndefined();
  expect(events).toEqual(['Normal Cleaned']);
  expect((await client.get(type, 'm', 'ns')).metadata.finalizers).toEqual(['someone.else/keep']);
});

test('finalize waiting: Finalizing says for what, Available is False, the finalizer stays, and it comes back when asked', async () => {
  const { client, resource, parts, target } = await setUp(
    async () => ({ done: false, reason: 'BackupRunning', message: 'the last backup runs', requeueAfterMs: 5000 }),
    [FINALIZER],
  );
  expect(await finalizeResource(parts, target(resource))).toEqual({ requeueAfterMs: 5000 });
  const now = await client.get(type, 'm', 'ns');
  expect(now.metadata.finalizers).toEqual([FINALIZER]);
  const conditions = Object.fromEntries((now.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]));
  expect(conditions).toEqual({
    Finalizing: ['True', 'BackupRunning'],
    Degraded: ['False', 'Finalizing'],
    Available: ['False', 'Deleting'],
  });
});

test('finalize failing: Degraded with a Warning Event, the finalizer stays, and the error is retried, never terminal', async () => {
  const { client, resource, parts, target, events } = await setUp(async () => {
    throw new Error('the bucket is unreachable');
  }, [FINALIZER]);
  await expect(finalizeResource(parts, target(resource))).rejects.toThrow('finalize: the bucket is unreachable');
  expect(events).toEqual(['Warning FinalizeFailed']);
  const now = await client.get(type, 'm', 'ns');
  expect(now.metadata.finalizers).toEqual([FINALIZER]);
  expect(now.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
    status: 'True',
    reason: 'FinalizeFailed',
  });
});
