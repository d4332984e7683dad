/**
 * Every write of a reconcile goes through one gate (#79): the stuck pods it deletes, the claims it
 * grows and the StatefulSet it makes again as much as the children it applies. Whole reconciles of
 * a kind rendering a StatefulSet with claims, a ConfigMap and (on request) a Job the StatefulSet
 * waits for, over the in-memory client with real informers, and a client that refuses what the API
 * server refuses: a ConfigMap asking `bad`, a StatefulSet spec change other than the few it takes
 * in place, and the claim patches a quota would refuse.
 */
import pino from 'pino';
import { k8s } from 'cdk8s-plus-27';
import {
  BuiltinTypes,
  type ControllerDeclaration,
  CustomResourceKind,
  type KubeObject,
  type PersistentVolumeClaim,
  type PodLabels,
  type PodRestart,
  type ResourceType,
  t,
  waitsFor,
} from '../../../../constructs';
import { buildController } from '../../../../operator/runtime/reconcile/builder';
import { ApiError } from '../../../../operator/runtime/client/errors';
import type { MergePatchOptions } from '../../../../operator/runtime/client';
import type { ReconcileContext } from '../../../../operator/runtime/controller/controller';
import { Manager } from '../../../../operator/runtime/controller/manager';
import { EventRecorder, Metrics } from '../../../../operator/runtime/observability';
import type { Informer } from '../../../../operator/runtime/cache';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const logger = pino({ level: 'silent' });
const NS = 'ns';

const storeKind = new CustomResourceKind({
  group: 'gate.example.com',
  kind: 'Store',
  versions: ['v1'],
  description: 'A store: a StatefulSet with claims, its ConfigMap, and perhaps a Job it waits for.',
  spec: t.object({
    replicas: t.integer({ required: true }),
    size: t.string({ required: true }),
    config: t.string({ required: true }),
    app: t.string(),
    init: t.boolean(),
  }),
  status: t.object({
    notReady: t.array(t.string()),
    applyError: t.string(),
    conditions: t.array(t.object({ type: t.string() })),
  }),
});

interface StoreSpec {
  replicas: number;
  size: string;
  config: string;
  app?: string;
  init?: boolean;
}

/** The pods the store's external step asks to start again, as a test sets them. */
let restartAsked: PodRestart[] = [];
/** The labels the store's external step asks for on pods, as a test sets them. */
let labelsAsked: PodLabels[] = [];

const storeController: ControllerDeclaration = {
  name: 'store',
  for: storeKind,
  owns: [BuiltinTypes.StatefulSet, BuiltinTypes.ConfigMap, BuiltinTypes.Job],
  external: () => Promise.resolve({ facts: {}, restartPods: restartAsked, labelPods: labelsAsked }),
  render: (scope, s, { owner }) => {
    const spec = s.spec as StoreSpec;
    const meta = (name: string) => ({ name, namespace: s.metadata.namespace, ownerReferences: [owner] });
    const labels = { app: spec.app ?? 'kv' };
    const sts = new k8s.KubeStatefulSet(scope, 'sts', {
      metadata: meta(s.metadata.name ?? ''),
      spec: {
        replicas: spec.replicas,
        serviceName: 'kv',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'kv', image: 'kv:1' }] } },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: k8s.Quantity.fromString(spec.size) } },
            },
          },
        ],
      },
    });
    if (spec.init) {
      const job = new k8s.KubeJob(scope, 'init', {
        metadata: meta(`${s.metadata.name}-init`),
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'init', image: 'kv:1' }] } } },
      });
      waitsFor(sts, job);
    }
    // Rendered last: its write is the last of a reconcile that changes it.
    new k8s.KubeConfigMap(scope, 'config', {
      metadata: meta(`${s.metadata.name}-config`),
      data: { config: spec.config },
    });
  },
  status: (_s, o) => ({
    notReady: o.health.notReady.map((h) => `${h.kind}/${h.name} ${h.reason}: ${h.message}`),
    ...(o.applyError ? { applyError: o.applyError } : {}),
  }),
};

/** Fields of a StatefulSet's spec the API server changes in place; it refuses a change of any other. */
const IN_PLACE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

/** The in-memory client, refusing what the API server would refuse here. */
class StrictClient extends FakeKubeClient {
  /** Claims whose patch is refused, as a quota on requests.storage refuses it. */
  readonly refusePatches = new Set<string>();
  /** Called after each write that is not a dry run (e.g. to lose the lease in between). */
  afterWrite: (kind: string, name: string) => void = () => undefined;

  override async apply<T extends KubeObject>(
    type: ResourceType<T>,
    obj: KubeObject,
    options: { subresource?: string; force?: boolean; dryRun?: boolean } = {},
  ): Promise<T> {
    if (type.kind === 'ConfigMap' && (obj as { data?: { config?: string } }).data?.config === 'bad')
      throw new ApiError(
        422,
        'Invalid',
        `ConfigMap "${obj.metadata.name}" is invalid: data.config: Invalid value: "bad"`,
      );
    if (type.kind === 'StatefulSet' && !options.subresource) {
      const current = this.peek(type, obj.metadata.name ?? '', obj.metadata.namespace);
      const changed = current && fixedFieldsChanged(current, obj);
      if (changed)
        throw new ApiError(
          422,
          'Invalid',
          `StatefulSet.apps "${obj.metadata.name}" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`,
        );
    }
    const out = await super.apply(type, obj, options);
    if (!options.dryRun) this.afterWrite(type.kind, obj.metadata.name ?? '');
    return out;
  }

  override async mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options?: MergePatchOptions,
  ): Promise<T> {
    if (type.kind === 'PersistentVolumeClaim' && this.refusePatches.has(name))
      throw new ApiError(
        403,
        'Forbidden',
        `persistentvolumeclaims "${name}" is forbidden: exceeded quota: storage, requested: requests.storage=3Gi, used: requests.storage=4Gi, limited: requests.storage=6Gi`,
      );
    const out = await super.mergePatch(type, name, namespace, patch, options);
    if (!options?.dryRun) this.afterWrite(type.kind, name);
    return out;
  }
}

/** Whether `desired` changes a field of `current`'s spec that a StatefulSet does not change in place. */
function fixedFieldsChanged(current: KubeObject, desired: KubeObject): boolean {
  const a = (current.spec ?? {}) as Record<string, unknown>;
  const b = (desired.spec ?? {}) as Record<string, unknown>;
  return Object.keys(b).some((k) => !IN_PLACE.includes(k) && JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

const UPDATE_REVISION = 'kv-new';

function stuckPod(sts: KubeObject, ordinal: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `kv-${ordinal}`,
      namespace: NS,
      labels: { app: 'kv', 'controller-revision-hash': 'kv-old' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'kv', uid: sts.metadata.uid ?? '', controller: true },
      ],
    },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [
        { name: 'kv', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "kv:0"' } } },
      ],
    },
  };
}

function claim(ordinal: number, size: string): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `data-kv-${ordinal}`, namespace: NS, labels: { app: 'kv' } },
    spec: { storageClassName: 'fast', resources: { requests: { storage: size } } },
    status: { phase: 'Bound', capacity: { storage: size } },
  };
}

/** A store's controller over the strict client, its informers running; `reconcile()` runs one reconcile. */
async function setUp() {
  const client = new StrictClient();
  client.seed(BuiltinTypes.StorageClass, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast' },
    provisioner: 'example.com/disk',
    allowVolumeExpansion: true,
  });
  const metrics = new Metrics();
  const mgr = new Manager({ client, logger, metrics });
  const recorder = new EventRecorder(client, 'store', 'store-0', logger);
  const controller = buildController(mgr, storeController, { client, logger, metrics, recorder, statusCoalesceMs: 0 });
  const stop = new AbortController();
  const types: ResourceType[] = [
    { group: storeKind.group, version: 'v1', kind: 'Store', resource: 'stores', namespaced: true },
    BuiltinTypes.StatefulSet,
    BuiltinTypes.ConfigMap,
    BuiltinTypes.Job,
    BuiltinTypes.Pod,
    BuiltinTypes.PersistentVolumeClaim,
  ];
  const informers: Informer[] = types.map((type) => mgr.informer(type));
  const running = informers.map((i) => i.run(stop.signal));
  await Promise.all(informers.map((i) => i.waitForSync()));
  const storeType = types[0]!;

  /** Waits until every informer holds what the client holds (watch events arrive a turn later). */
  const caughtUp = async () => {
    for (let turn = 0; ; turn++) {
      const behind = types.some((type, i) =>
        client
          .peekAll(type)
          .some(
            (o) =>
              informers[i]!.get(`${o.metadata.namespace}/${o.metadata.name}`)?.metadata.resourceVersion !==
              o.metadata.resourceVersion,
          ),
      );
      if (!behind) return;
      if (turn > 10_000) throw new Error('the informers never caught up with the client');
      await new Promise((r) => setImmediate(r));
    }
  };
  const signal = new AbortController();
  const ctx: ReconcileContext = {
    client,
    logger,
    recorder,
    signal: signal.signal,
  };
  const reconcile = async () => {
    await caughtUp();
    return (controller as any).options.reconciler({ namespace: NS, name: 'kv' }, ctx);
  };
  /** The user's write of the store's spec (merge-patched once it exists, as `kubectl patch` would). */
  const store = async (spec: StoreSpec) => {
    if (client.peek(storeType, 'kv', NS)) await client.mergePatch(storeType, 'kv', NS, { spec });
    else
      await client.create(
        storeType,
        { apiVersion: 'gate.example.com/v1', kind: 'Store', metadata: { name: 'kv', namespace: NS }, spec },
        NS,
      );
  };
  /** Writes since `from`, but Events and the store's own status. */
  const writesSince = (from: number) =>
    client.writes
      .slice(from)
      .filter((w) => w.kind !== 'Event' && w.kind !== 'Store')
      .map((w) => `${w.verb} ${w.kind}/${w.name}${w.propagationPolicy ? ` (${w.propagationPolicy})` : ''}`);
  const status = () =>
    client.peek(storeType, 'kv', NS)?.status as { notReady?: string[]; applyError?: string } | undefined;
  const events = () =>
    client
      .peekAll(BuiltinTypes.Event)
      .map((e) => `${(e as { reason?: string }).reason ?? ''}: ${(e as { note?: string }).note ?? ''}`);
  const writeCount = async (action: string) =>
    (await metrics.registry.getSingleMetric('opkit_reconcile_writes_total')?.get())?.values.find(
      (v) => v.labels.action === action,
    )?.value ?? 0;

  /** The store made and settled: its children written, its StatefulSet seen by its controller. */
  const settled = async (spec: StoreSpec, claims: number[] = [0, 1]) => {
    await store(spec);
    await reconcile();
    const sts = client.peek(BuiltinTypes.StatefulSet, 'kv', NS)!;
    await client.mergePatch(
      BuiltinTypes.StatefulSet,
      'kv',
      NS,
      {
        status: {
          observedGeneration: sts.metadata.generation,
          updateRevision: UPDATE_REVISION,
          currentRevision: 'kv-old',
          replicas: spec.replicas,
        },
      },
      { subresource: 'status' },
    );
    for (const ordinal of claims) client.seed(BuiltinTypes.PersistentVolumeClaim, claim(ordinal, spec.size));
    return client.peek(BuiltinTypes.StatefulSet, 'kv', NS)!;
  };
  const done = async () => {
    stop.abort();
    await Promise.all(running);
  };
  return { client, signal, reconcile, store, settled, writesSince, status, events, writeCount, done };
}

/** Runs a test over a set-up store controller, its informers stopped after. */
async function withSetUp(run: (s: Awaited<ReturnType<typeof setUp>>) => Promise<void>): Promise<void> {
  const s = await setUp();
  try {
    await run(s);
  } finally {
    await s.done();
  }
}

const claimSize = (client: FakeKubeClient, ordinal: number) =>
  client.peek(BuiltinTypes.PersistentVolumeClaim, `data-kv-${ordinal}`, NS)?.spec?.resources?.requests?.storage;

describe("pods the external step asks to restart are deleted through the gate, after the children's writes", () => {
  afterEach(() => {
    restartAsked = [];
    labelsAsked = [];
  });
  const runningPod = (sts: KubeObject, ordinal: number, owner = sts.metadata.uid ?? ''): KubeObject => ({
    ...stuckPod(sts, ordinal),
    metadata: {
      name: `kv-${ordinal}`,
      namespace: NS,
      labels: { app: 'kv', 'controller-revision-hash': UPDATE_REVISION },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'kv', uid: owner, controller: true }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const uidOf = (s: Awaited<ReturnType<typeof setUp>>, name: string) =>
    s.client.peek(BuiltinTypes.Pod, name, NS)?.metadata.uid ?? '';
  /** The store settled with its pod kv-0 running, then its config changed to `config` and kv-0 asked to restart. */
  const restartAskedWith = async (s: Awaited<ReturnType<typeof setUp>>, config: string) => {
    const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
    s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
    await s.store({ replicas: 2, size: '2Gi', config });
    restartAsked = [{ name: 'kv-0', uid: uidOf(s, 'kv-0'), reason: `to read config ${config}` }];
    return s.client.writes.length;
  };

  test('a pod of its StatefulSet at the uid asked: deleted after the ConfigMap it must read, counted, with an Event', () =>
    withSetUp(async (s) => {
      const from = await restartAskedWith(s, 'b');
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['apply ConfigMap/kv-config', 'delete Pod/kv-0']);
      expect(await s.writeCount('RestartPod')).toBe(1);
      expect(s.events()).toContain('PodRestarted: Restarted pod kv-0: to read config b');
    }));

  test('never a pod made again since (another uid), nor one its StatefulSet does not control', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 1, 'someone-elses-statefulset'));
      restartAsked = [
        { name: 'kv-0', uid: 'the-pod-before', reason: 'x' },
        { name: 'kv-1', uid: uidOf(s, 'kv-1'), reason: 'x' },
      ];
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect(await s.writeCount('RestartPod')).toBe(0);
    }));

  const claimUid = (s: Awaited<ReturnType<typeof setUp>>, name: string) =>
    s.client.peek(BuiltinTypes.PersistentVolumeClaim, name, NS)?.metadata.uid ?? '';
  /** kv-0 asked to restart "to start empty", with `claims` (name → uid) to discard. */
  const restartDiscarding = (s: Awaited<ReturnType<typeof setUp>>, claims: [string, string][]) => {
    restartAsked = [
      {
        name: 'kv-0',
        uid: uidOf(s, 'kv-0'),
        reason: 'to start empty',
        discardClaims: claims.map(([name, uid]) => ({ name, uid })),
      },
    ];
  };

  test("a claim to discard with the pod (its own, of its StatefulSet's template, at the uid asked): deleted by its uid just before the pod, counted, with an Event", () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
      const from = s.client.writes.length;
      restartDiscarding(s, [['data-kv-0', claimUid(s, 'data-kv-0')]]);
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['delete PersistentVolumeClaim/data-kv-0', 'delete Pod/kv-0']);
      expect(s.client.peek(BuiltinTypes.PersistentVolumeClaim, 'data-kv-0', NS)).toBeUndefined();
      expect(s.client.peek(BuiltinTypes.PersistentVolumeClaim, 'data-kv-1', NS)).toBeDefined();
      expect(await s.writeCount('DeleteClaim')).toBe(1);
      expect(await s.writeCount('RestartPod')).toBe(1);
      expect(s.events()).toContain(
        'ClaimDiscarded: Deleted claim data-kv-0 of pod kv-0, to be made again empty: to start empty',
      );
    }));

  test("never a claim of another uid, another pod's, or one its StatefulSet did not make; the pod is still restarted", () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      // Named after the pod, but of no claim template of its StatefulSet (a user's own claim).
      s.client.seed(BuiltinTypes.PersistentVolumeClaim, {
        ...claim(0, '1Gi'),
        metadata: { name: 'backups-kv-0', namespace: NS },
      });
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
      const from = s.client.writes.length;
      restartDiscarding(s, [
        ['data-kv-0', 'the-claim-before'],
        ['data-kv-1', claimUid(s, 'data-kv-1')],
        ['backups-kv-0', claimUid(s, 'backups-kv-0')],
      ]);
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['delete Pod/kv-0']);
      expect(await s.writeCount('DeleteClaim')).toBe(0);
    }));

  test('labels asked on a pod of its StatefulSet at its uid: one patch after the children, counted; none once it has them', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
      labelsAsked = [
        { name: 'kv-0', uid: uidOf(s, 'kv-0'), labels: { 'gate.example.com/role': 'primary' }, reason: 'x' },
      ];
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['patch Pod/kv-0']);
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)?.metadata.labels).toEqual({
        app: 'kv',
        'controller-revision-hash': UPDATE_REVISION,
        'gate.example.com/role': 'primary',
      });
      expect(await s.writeCount('LabelPod')).toBe(1);
      const again = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(again)).toEqual([]);
      // Taken off again when asked with null.
      labelsAsked = [{ name: 'kv-0', uid: uidOf(s, 'kv-0'), labels: { 'gate.example.com/role': null }, reason: 'x' }];
      await s.reconcile();
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)?.metadata.labels).not.toHaveProperty('gate.example.com/role');
    }));

  test("never a pod of another uid or StatefulSet, its StatefulSet's selector label, nor one of Kubernetes' own", () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 0));
      s.client.seed(BuiltinTypes.Pod, runningPod(sts, 1, 'someone-elses-statefulset'));
      labelsAsked = [
        { name: 'kv-0', uid: 'the-pod-before', labels: { 'gate.example.com/role': 'primary' }, reason: 'x' },
        { name: 'kv-1', uid: uidOf(s, 'kv-1'), labels: { 'gate.example.com/role': 'primary' }, reason: 'x' },
        {
          name: 'kv-0',
          uid: uidOf(s, 'kv-0'),
          labels: {
            app: 'other',
            'controller-revision-hash': 'x',
            'statefulset.kubernetes.io/pod-name': 'kv-9',
            'apps.kubernetes.io/pod-index': '9',
          },
          reason: 'x',
        },
      ];
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect(await s.writeCount('LabelPod')).toBe(0);
    }));

  test('not while a child the pod would read is refused', () =>
    withSetUp(async (s) => {
      const from = await restartAskedWith(s, 'bad');
      await s.reconcile();
      expect(s.status()?.applyError).toContain('data.config: Invalid value');
      expect(s.writesSince(from)).toEqual([]);
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)).toBeDefined();
    }));
});

describe('stuck pods are deleted through the gate', () => {
  test('with nothing standing in the way: deleted, counted as a write of the reconcile, with an Event', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, stuckPod(sts, 0));
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['delete Pod/kv-0']);
      expect(await s.writeCount('DeleteStuckPod')).toBe(1);
      expect(s.events().some((e) => e.startsWith('StuckPodReplaced: Deleted pod kv-0'))).toBe(true);
    }));

  test('not while a terminal error stands: a child the API server refuses', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, stuckPod(sts, 0));
      await s.store({ replicas: 2, size: '2Gi', config: 'bad' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.status()?.applyError).toContain('data.config: Invalid value');
      expect(s.writesSince(from)).toEqual([]);
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)).toBeDefined();
    }));

  test('not while a child’s name is taken by an object this resource does not control', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, stuckPod(sts, 0));
      // The ConfigMap deleted, and one of the name made by someone else.
      await s.client.delete(BuiltinTypes.ConfigMap, 'kv-config', NS);
      s.client.seed(BuiltinTypes.ConfigMap, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kv-config', namespace: NS },
        data: { mine: 'yes' },
      });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)).toBeDefined();
    }));

  test('not once the lease is lost: the replica stops writing mid-reconcile', () =>
    withSetUp(async (s) => {
      const sts = await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.seed(BuiltinTypes.Pod, stuckPod(sts, 0));
      await s.store({ replicas: 2, size: '2Gi', config: 'b' });
      // Leadership lost right after the ConfigMap's write: nothing after it may be written.
      s.client.afterWrite = (kind) => {
        if (kind === 'ConfigMap') s.signal.abort(new Error('leader election lost'));
      };
      const from = s.client.writes.length;
      await expect(s.reconcile()).rejects.toThrow();
      expect(s.writesSince(from)).toEqual(['apply ConfigMap/kv-config']);
      expect(s.client.peek(BuiltinTypes.Pod, 'kv-0', NS)).toBeDefined();
    }));
});

describe('storage grows through the gate: all of the change or none of it', () => {
  test('grown when nothing else is refused: every claim patched, the StatefulSet deleted with its pods kept, each write counted', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      await s.store({ replicas: 2, size: '5Gi', config: 'a' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([
        'patch PersistentVolumeClaim/data-kv-0',
        'patch PersistentVolumeClaim/data-kv-1',
        'delete StatefulSet/kv (Orphan)',
      ]);
      expect(await s.writeCount('GrowClaim')).toBe(2);
      expect(await s.writeCount('RecreateStatefulSet')).toBe(1);
      expect(s.status()?.notReady).toEqual([
        'StatefulSet/kv Recreating: made again with larger claims (data 2Gi → 5Gi), its pods kept',
      ]);
    }));

  test('no claim grown and no StatefulSet deleted when another child of the change is refused', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      await s.store({ replicas: 2, size: '5Gi', config: 'bad' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect([claimSize(s.client, 0), claimSize(s.client, 1)]).toEqual(['2Gi', '2Gi']);
      expect(s.status()?.applyError).toContain('data.config: Invalid value');
      expect(s.status()?.notReady).toContainEqual(
        expect.stringMatching(/^StatefulSet\/kv Blocked: not updated: ConfigMap kv-config would be refused/),
      );
    }));

  test('no claim grown and no StatefulSet deleted while the StatefulSet waits for a child not ready', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      // The Job made with the StatefulSet's growth: it has not completed.
      await s.store({ replicas: 2, size: '5Gi', config: 'a', init: true });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual(['apply Job/kv-init']);
      expect([claimSize(s.client, 0), claimSize(s.client, 1)]).toEqual(['2Gi', '2Gi']);
      expect(s.client.peek(BuiltinTypes.StatefulSet, 'kv', NS)).toBeDefined();
    }));

  test('a change the StatefulSet cannot take in place, made with a storage increase, is refused as a whole, naming the field', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      await s.store({ replicas: 2, size: '5Gi', config: 'a', app: 'kv2' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect([claimSize(s.client, 0), claimSize(s.client, 1)]).toEqual(['2Gi', '2Gi']);
      expect(s.status()?.applyError).toContain('spec.selector');
      expect(s.status()?.applyError).toContain('updates to statefulset spec for fields other than');
    }));

  test('a refused claim patch leaves every claim as it was', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      s.client.refusePatches.add('data-kv-1');
      await s.store({ replicas: 2, size: '5Gi', config: 'a' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      expect([claimSize(s.client, 0), claimSize(s.client, 1)]).toEqual(['2Gi', '2Gi']);
      expect(s.status()?.applyError).toContain('exceeded quota');
    }));

  test('claims of ordinals beyond replicas (a scale-down’s) are left alone', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' }, [0, 1, 2]);
      await s.store({ replicas: 2, size: '5Gi', config: 'a' });
      await s.reconcile();
      expect([claimSize(s.client, 0), claimSize(s.client, 1), claimSize(s.client, 2)]).toEqual(['5Gi', '5Gi', '2Gi']);
    }));

  test('a StatefulSet a user deletes in the foreground is not reported as made again by the operator', () =>
    withSetUp(async (s) => {
      await s.settled({ replicas: 2, size: '2Gi', config: 'a' });
      await s.client.mergePatch(BuiltinTypes.StatefulSet, 'kv', NS, {
        metadata: { deletionTimestamp: '2026-12-01T00:00:00Z', finalizers: ['foregroundDeletion'] },
      });
      await s.store({ replicas: 2, size: '5Gi', config: 'a' });
      const from = s.client.writes.length;
      await s.reconcile();
      expect(s.writesSince(from)).toEqual([]);
      const said = s.status()?.notReady?.find((n) => n.startsWith('StatefulSet/kv'));
      expect(said).toBe(
        'StatefulSet/kv Deleting: being deleted (foreground deletion, not by this operator); it is made again once it is gone',
      );
    }));
});
