/**
 * Storage growth on its own, with the in-memory client and a real informer over it: claims grown
 * only where their StorageClass allows it, the StatefulSet deleted with its pods orphaned and held
 * until it is made again, and every refusal (no expansion, no class, a shrink) writing nothing.
 */
import pino from 'pino';
import type { TerminalError } from '../../../../operator/runtime/controller';
import {
  BuiltinTypes,
  type ChildHealth,
  type KubeObject,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../../../../constructs/contract';
import { Informer } from '../../../../operator/runtime/cache';
import { type ControllerParts, targetOf, type Target } from '../../../../operator/runtime/reconcile/controller-parts';
import {
  growsStorage,
  isChildRefusal,
  type PlannedChild,
  planReconcile,
  STORAGE_CLASS_RECHECK_MS,
} from '../../../../operator/runtime/plan';
import { PlanExecution } from '../../../../operator/runtime/reconcile/executor';
import { WrittenChildren } from '../../../../operator/runtime/children';
import { EventRecorder, Metrics } from '../../../../operator/runtime/observability';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const logger = pino({ level: 'silent' });
const SELECTOR = { app: 'kv' };

function statefulSet(size: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'kv', namespace: 'ns', uid: 'sts-1', resourceVersion: '7', ...extra.metadata },
    spec: {
      replicas: 2,
      selector: { matchLabels: SELECTOR },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: size } } } }],
    },
  };
}

function claim(
  name: string,
  size: string,
  storageClassName: string | undefined,
  phase = 'Bound',
): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'ns', labels: SELECTOR },
    spec: { storageClassName, resources: { requests: { storage: size } } },
    status: { phase, capacity: { storage: size } },
  };
}

function storageClass(name: string, allowVolumeExpansion?: boolean): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'example.com/disk',
    allowVolumeExpansion,
  };
}

/** The client holding the claims, classes and StatefulSet; a synced informer of its claims; a target. */
async function setUp(options: { claims: PersistentVolumeClaim[]; classes?: StorageClass[]; current: KubeObject }) {
  const client = new FakeKubeClient();
  client.seed(BuiltinTypes.PersistentVolumeClaim, ...options.claims);
  client.seed(BuiltinTypes.StorageClass, ...(options.classes ?? []));
  client.seed(BuiltinTypes.StatefulSet, options.current);
  const claims = new Informer<PersistentVolumeClaim>(client, BuiltinTypes.PersistentVolumeClaim, { logger });
  const stop = new AbortController();
  const running = claims.run(stop.signal);
  await claims.waitForSync();
  const resource = {
    apiVersion: 'kv.example.com/v1',
    kind: 'KeyValueStore',
    metadata: { name: 'kv', namespace: 'ns', uid: 'r-1', generation: 2 },
    spec: {},
  };
  const ctx = {
    client,
    logger,
    recorder: new EventRecorder(client, 'test', 'test-0', logger),
    signal: new AbortController().signal,
  };
  const t = targetOf('ns/kv', resource, ctx);
  const done = async () => {
    stop.abort();
    await running;
  };
  return { client, claims, t, done };
}

const planned = (desired: KubeObject, current: KubeObject): PlannedChild => ({
  desired,
  current,
  owned: { type: BuiltinTypes.StatefulSet },
  waitsFor: [],
});

/**
 * What the plan of these children and its execution made of each StatefulSet's storage growth, by
 * `Kind/name`: held (while it is made again) or refused; none when it was applied as any other child.
 */
async function growStorage(
  parts: Pick<ControllerParts, 'claims'>,
  t: Target,
  children: readonly PlannedChild[],
): Promise<Map<string, { held?: ChildHealth; refused?: TerminalError; recheckAfterMs?: number }>> {
  const plan = await planReconcile({ claims: parts.claims, deletable: [] }, t, children);
  const execution = new PlanExecution(
    {
      decl: { name: 'kv' } as never,
      metrics: new Metrics(),
      refusedChildren: new Map(),
      written: new WrittenChildren(),
    },
    t,
    plan,
  );
  await execution.children();
  const { applied } = execution.result();
  expect(applied.error).toBeUndefined();
  const steps = new Map<string, { held?: ChildHealth; refused?: TerminalError; recheckAfterMs?: number }>();
  for (const [key, held] of applied.held) steps.set(key, { held });
  for (const [key, { refused }] of applied.refused)
    steps.set(key, {
      refused,
      ...(applied.recheckAfterMs === undefined ? {} : { recheckAfterMs: applied.recheckAfterMs }),
    });
  return steps;
}

const writes = (client: FakeKubeClient) => client.writes.map((w) => `${w.verb} ${w.kind ?? ''}/${w.name}`);

describe('growStorage', () => {
  test('claims of an expandable class grow; the StatefulSet is deleted with its pods orphaned and held, saying so', async () => {
    const current = statefulSet('2Gi');
    const { client, claims, t, done } = await setUp({
      claims: [
        claim('data-kv-0', '2Gi', 'fast'),
        claim('data-kv-1', '2Gi', 'fast'),
        claim('data-other-0', '2Gi', 'fast'),
      ],
      classes: [storageClass('fast', true)],
      current,
    });
    try {
      const steps = await growStorage({ claims }, t, [planned(statefulSet('5Gi'), current)]);
      expect(steps.get('StatefulSet/kv')?.held).toMatchObject({
        readiness: 'InProgress',
        reason: 'Recreating',
        message: 'made again with larger claims (data 2Gi → 5Gi), its pods kept',
      });
      for (const name of ['data-kv-0', 'data-kv-1'])
        expect(client.peek(BuiltinTypes.PersistentVolumeClaim, name, 'ns')?.spec?.resources?.requests?.storage).toBe(
          '5Gi',
        );
      // Another StatefulSet's claim is not touched.
      expect(
        client.peek(BuiltinTypes.PersistentVolumeClaim, 'data-other-0', 'ns')?.spec?.resources?.requests?.storage,
      ).toBe('2Gi');
      expect(writes(client).filter((w) => !w.includes('Event'))).toEqual([
        'patch PersistentVolumeClaim/data-kv-0',
        'patch PersistentVolumeClaim/data-kv-1',
        'delete StatefulSet/kv',
      ]);
      expect(client.writes.find((w) => w.verb === 'delete')).toMatchObject({ propagationPolicy: 'Orphan' });
    } finally {
      await done();
    }
  });

  test('a class that does not allow expansion (or none, or a missing one): refused, nothing written, checked again later', async () => {
    for (const [storageClassName, classes, said] of [
      [
        'standard',
        [storageClass('standard')],
        /StorageClass standard does not allow volume expansion .*nothing was changed/,
      ],
      [undefined, [], /claim data-kv-0 has no StorageClass/],
      ['gone', [], /StorageClass gone of claim data-kv-0 does not exist/],
    ] as const) {
      const current = statefulSet('1Gi');
      const { client, claims, t, done } = await setUp({
        claims: [claim('data-kv-0', '1Gi', storageClassName), claim('data-kv-1', '1Gi', storageClassName)],
        classes: [...classes],
        current,
      });
      try {
        const step = (await growStorage({ claims }, t, [planned(statefulSet('3Gi'), current)])).get('StatefulSet/kv');
        expect(step?.refused?.message).toMatch(said);
        expect(isChildRefusal(step?.refused?.cause)).toBe(true);
        expect(step).toMatchObject(storageClassName === 'standard' ? { recheckAfterMs: STORAGE_CLASS_RECHECK_MS } : {});
        expect(client.writes).toEqual([]);
      } finally {
        await done();
      }
    }
  });

  test('a smaller template is refused up front, whatever the class', async () => {
    const current = statefulSet('2Gi');
    const { client, claims, t, done } = await setUp({
      claims: [claim('data-kv-0', '2Gi', 'fast')],
      classes: [storageClass('fast', true)],
      current,
    });
    try {
      const step = (await growStorage({ claims }, t, [planned(statefulSet('1Gi'), current)])).get('StatefulSet/kv');
      expect(step?.refused?.message).toBe(
        'StatefulSet kv: its claim template data would ask 1Gi, less than the 2Gi it asks now: a volume cannot shrink, so nothing was changed. Set it back to 2Gi or more; to start smaller, move the data to a new resource',
      );
      expect(client.writes).toEqual([]);
    } finally {
      await done();
    }
  });

  test('the same size in another spelling is no change; a StatefulSet being deleted is held until it is gone, made again by us only when we orphaned it', async () => {
    const current = statefulSet('2Gi');
    const { client, claims, t, done } = await setUp({ claims: [claim('data-kv-0', '2Gi', 'fast')], current });
    try {
      const same = await planReconcile({ claims, deletable: [] }, t, [planned(statefulSet('2048Mi'), current)]);
      expect(same.children.filter((c) => growsStorage(c) || c.decided)).toEqual([]);
      const deleting = (finalizers: string[]) =>
        statefulSet('2Gi', { metadata: { name: 'kv', deletionTimestamp: '2026-11-29T00:00:00Z', finalizers } });
      const ours = (await growStorage({ claims }, t, [planned(statefulSet('5Gi'), deleting(['orphan']))])).get(
        'StatefulSet/kv',
      );
      expect(ours?.held?.reason).toBe('Recreating');
      const theirs = (await growStorage({ claims }, t, [planned(statefulSet('5Gi'), deleting([]))])).get(
        'StatefulSet/kv',
      );
      expect(theirs?.held).toMatchObject({
        reason: 'Deleting',
        message: expect.stringContaining('not by this operator'),
      });
      expect(client.writes).toEqual([]);
    } finally {
      await done();
    }
  });

  test('a claim not bound yet is left for when it is; a claim already grown (a retry) is not patched again', async () => {
    const current = statefulSet('2Gi');
    const { client, claims, t, done } = await setUp({
      claims: [claim('data-kv-0', '5Gi', 'fast'), claim('data-kv-1', '2Gi', 'fast', 'Pending')],
      classes: [storageClass('fast', true)],
      current,
    });
    try {
      const step = (await growStorage({ claims }, t, [planned(statefulSet('5Gi'), current)])).get('StatefulSet/kv');
      expect(step?.held?.reason).toBe('Recreating');
      expect(writes(client)).toEqual(['delete StatefulSet/kv']);
    } finally {
      await done();
    }
  });

  test('without a claims informer (a kind owning no StatefulSet) nothing is taken', async () => {
    const current = statefulSet('2Gi');
    const { t, done } = await setUp({ claims: [], current });
    try {
      expect((await growStorage({}, t, [planned(statefulSet('5Gi'), current)])).size).toBe(0);
    } finally {
      await done();
    }
  });
});
