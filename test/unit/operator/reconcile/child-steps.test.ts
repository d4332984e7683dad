/**
 * A plan's children and prunes executed on their own, with the in-memory client: each phase
 * returns what it did — written, held, refused, deleted — and, stopped by an error it cannot take,
 * what it did before together with the error, so the status and Events can still tell it.
 */
import pino from 'pino';
import { BuiltinTypes, type ControllerDeclaration, type KubeObject, type ResourceType } from '../../../../constructs';
import { ApiError } from '../../../../operator/runtime/client';
import { WrittenChildren } from '../../../../operator/runtime/children';
import type { Informer } from '../../../../operator/runtime/cache';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { type AppliedChildren, ChildWrites, claimChildren } from '../../../../operator/runtime/reconcile/child-steps';
import { isChildRefusal, type PlannedChild, planReconcile } from '../../../../operator/runtime/plan';
import { PlanExecution } from '../../../../operator/runtime/reconcile/executor';
import { Metrics } from '../../../../operator/runtime/observability';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const UID = 'owner-uid';

/** What the API server answers when an admission plugin refuses a write: the spec asks what cannot be done. */
const ADMISSION_REFUSAL = new ApiError(
  403,
  'Forbidden',
  'persistentvolumeclaims "a" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
);
/** What it answers when the operator lacks the right: not the spec's fault, retried. */
const RBAC_DENIAL = new ApiError(
  403,
  'Forbidden',
  'configmaps "c" is forbidden: User "system:serviceaccount:x:y" cannot patch resource "configmaps" in API group "" in the namespace "ns"',
);

/** A client that refuses (422) or fails (500) the apply of the children named. */
class ChoosyClient extends FakeKubeClient {
  constructor(private readonly answers: Record<string, ApiError> = {}) {
    super();
  }
  override apply<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject, options?: { subresource?: string }) {
    const answer = this.answers[obj.metadata.name ?? ''];
    return answer ? Promise.reject(answer) : super.apply(type, obj, options);
  }
}

function configMap(name: string, owned = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'ns',
      ...(owned ? { ownerReferences: [{ apiVersion: 'x/v1', kind: 'X', name: 'x', uid: UID, controller: true }] } : {}),
    },
    data: { name },
  };
}

/** Parts and target with just what apply and prune read; the cache is the objects given. */
function setUp(client: FakeKubeClient, cached: KubeObject[] = []) {
  const informer = {
    listControlledBy: (uid: string) => (uid === UID ? cached : []),
    get: (key: string) => cached.find((o) => `${o.metadata.namespace}/${o.metadata.name}` === key),
    seenResourceVersion: () => undefined,
  } as unknown as Informer;
  const owned = { type: BuiltinTypes.ConfigMap, informer };
  const parts = {
    owned: new Map([['ConfigMap', owned]]),
    deletable: [owned],
    refusedChildren: new Map(),
    written: new WrittenChildren(),
    decl: { name: 'x' } as ControllerDeclaration<Resource>,
    metrics: new Metrics(),
  };
  const ctx = { client, logger: pino({ level: 'silent' }), signal: new AbortController().signal };
  const t = { key: 'ns/x', uid: UID, generation: 1, namespace: 'ns', ctx } as unknown as Target;
  return { parts, t };
}

type Parts = ReturnType<typeof setUp>['parts'];

/** The children's phase of the plan of these children, executed: what it did to them. */
async function applyChildren(parts: Parts, t: Target, planned: readonly PlannedChild[]): Promise<AppliedChildren> {
  const execution = new PlanExecution(parts, t, await planReconcile(parts, t, planned));
  await execution.children();
  return execution.result().applied;
}

/** The plan of these children executed up to its prunes: what they deleted. */
async function pruneChildren(parts: Parts, t: Target, planned: readonly PlannedChild[]) {
  const execution = new PlanExecution(parts, t, await planReconcile(parts, t, planned));
  await execution.children();
  await execution.prune();
  return execution.result();
}

const plan = (desired: KubeObject, waitsFor: string[] = [], current?: KubeObject): PlannedChild => ({
  desired,
  owned: { type: BuiltinTypes.ConfigMap },
  current,
  waitsFor,
});

/** The ConfigMaps `names` made in `client`, each planned with changed data: a change of existing children together. */
async function changedExisting(client: FakeKubeClient, ...names: string[]): Promise<PlannedChild[]> {
  for (const n of names) await client.create(BuiltinTypes.ConfigMap, configMap(n));
  return Promise.all(
    names.map(async (n) =>
      plan({ ...configMap(n), data: { name: n, v: '2' } }, [], await client.get(BuiltinTypes.ConfigMap, n, 'ns')),
    ),
  );
}

describe("a plan's children, executed", () => {
  test('applies each child in order and returns them as written, with what changed', async () => {
    const client = new ChoosyClient();
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b'))]);
    expect(applied.error).toBeUndefined();
    expect([...applied.written.keys()]).toEqual(['ConfigMap/a', 'ConfigMap/b']);
    expect(applied.changes).toEqual([
      { verb: 'Created', kind: 'ConfigMap', name: 'a' },
      { verb: 'Created', kind: 'ConfigMap', name: 'b' },
    ]);
    expect(client.writes.map((w) => `${w.verb} ${w.name}`)).toEqual(['apply a', 'apply b']);
  });

  test('holds a child whose prerequisite is not made yet, and writes nothing of it', async () => {
    const client = new ChoosyClient();
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [plan(configMap('b'), ['Deployment/missing'])]);
    expect(applied.held.get('ConfigMap/b')).toMatchObject({ reason: 'Waiting', readiness: 'InProgress' });
    expect(applied.written.size).toBe(0);
    expect(client.writes).toEqual([]);
  });

  test('records a refused child and applies the rest; at the same generation the refusal stands without asking again', async () => {
    const client = new ChoosyClient({ a: new ApiError(422, 'Invalid', 'data: Invalid value') });
    const { parts, t } = setUp(client);
    const first = await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b'))]);
    expect(first.refused.get('ConfigMap/a')).toMatchObject({ fresh: true });
    expect(first.refused.get('ConfigMap/a')?.refused.message).toContain('data: Invalid value');
    expect([...first.written.keys()]).toEqual(['ConfigMap/b']);

    const b = await client.get(BuiltinTypes.ConfigMap, 'b', 'ns');
    const again = await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b'), [], b)]);
    expect(again.refused.get('ConfigMap/a')).toMatchObject({ fresh: false });
    expect(again.changes).toEqual([]);
  });

  test('a change is written whole or not at all: two children to update, one refused (asked by dry run first), neither written; the other held, naming it; a new child is still made', async () => {
    const seeded = new ChoosyClient();
    const { parts: seedParts, t: seedT } = setUp(seeded);
    await applyChildren(seedParts, seedT, [plan(configMap('a')), plan(configMap('b'))]);
    const [a, b] = await Promise.all(['a', 'b'].map((n) => seeded.get(BuiltinTypes.ConfigMap, n, 'ns')));
    const changed = (name: string) => ({ ...configMap(name), data: { name, v: '2' } });

    const client = new ChoosyClient({ a: new ApiError(422, 'Invalid', 'data: Forbidden: not in place') });
    for (const o of [a, b]) if (o) await client.create(BuiltinTypes.ConfigMap, o);
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [
      plan(changed('a'), [], await client.get(BuiltinTypes.ConfigMap, 'a', 'ns')),
      plan(changed('b'), [], await client.get(BuiltinTypes.ConfigMap, 'b', 'ns')),
      plan(configMap('c')),
    ]);
    expect(applied.refused.get('ConfigMap/a')?.refused.message).toContain('not in place');
    expect(applied.held.get('ConfigMap/b')).toMatchObject({ reason: 'Blocked', readiness: 'InProgress' });
    expect(applied.held.get('ConfigMap/b')?.message).toContain('ConfigMap a would be refused');
    // Only the new child was written: b keeps its old data.
    expect(client.writes.filter((w) => w.verb === 'apply').map((w) => w.name)).toEqual(['c']);
    expect((await client.get(BuiltinTypes.ConfigMap, 'b', 'ns')).data).toEqual({ name: 'b' });
  });

  test('a child marked to apply on its own (applyIndependently) is written though another of the change is refused', async () => {
    const client = new ChoosyClient({ a: new ApiError(422, 'Invalid', 'data: Forbidden: not in place') });
    const [a, b] = await changedExisting(client, 'a', 'b');
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [a!, { ...b!, independent: true }]);
    expect(applied.refused.has('ConfigMap/a')).toBe(true);
    expect([...applied.written.keys()]).toEqual(['ConfigMap/b']);
  });

  test('remembers nothing of a resource none of whose children was refused, and forgets a refusal once the child is taken', async () => {
    // One entry per resource reconciled, empty, was 1000 Maps held at N = 1000 (bench/RESULTS.md).
    const client = new ChoosyClient({ a: new ApiError(422, 'Invalid', 'data: Invalid value') });
    const { parts, t } = setUp(client);
    await applyChildren(parts, t, [plan(configMap('b'))]);
    expect(parts.refusedChildren.size).toBe(0);

    await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b'))]);
    expect([...(parts.refusedChildren.get('ns/x')?.children.keys() ?? [])]).toEqual(['ConfigMap/a']);

    // The spec fixed: a new generation, and the API server takes the child.
    delete (client as unknown as { answers: Record<string, ApiError> }).answers.a;
    const a = { ...configMap('a'), data: { name: 'fixed' } };
    const taken = await applyChildren(parts, { ...t, generation: 2 }, [plan(a), plan(configMap('b'))]);
    expect(taken.refused.size).toBe(0);
    expect(parts.refusedChildren.size).toBe(0);
  });

  test('a child an admission plugin refuses (403, not a missing right) is refused as an invalid one is; a missing right stops the step, to be retried', async () => {
    const client = new ChoosyClient({ a: ADMISSION_REFUSAL, c: RBAC_DENIAL });
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b')), plan(configMap('c'))]);
    expect(applied.refused.get('ConfigMap/a')?.refused.message).toContain(
      'only dynamically provisioned pvc can be resized',
    );
    expect(isChildRefusal(applied.refused.get('ConfigMap/a')?.refused.cause)).toBe(true);
    expect([...applied.written.keys()]).toEqual(['ConfigMap/b']);
    expect(applied.error).toMatchObject({ status: 403, message: expect.stringContaining('cannot patch resource') });
  });

  test('a change whose dry run an admission plugin refuses is written by none of its children', async () => {
    const client = new ChoosyClient({ a: ADMISSION_REFUSAL });
    const changed = await changedExisting(client, 'a', 'b');
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, changed);
    expect(applied.error).toBeUndefined();
    expect(applied.refused.get('ConfigMap/a')?.refused.message).toContain('only dynamically provisioned');
    expect(applied.held.get('ConfigMap/b')).toMatchObject({ reason: 'Blocked' });
    expect(client.writes.filter((w) => w.verb === 'apply')).toEqual([]);
  });

  test('stopped by an error it cannot take, it returns that error and what it did before', async () => {
    const client = new ChoosyClient({ b: new ApiError(500, 'InternalError', 'etcd is down') });
    const { parts, t } = setUp(client);
    const applied = await applyChildren(parts, t, [plan(configMap('a')), plan(configMap('b')), plan(configMap('c'))]);
    expect(applied.error).toMatchObject({ status: 500 });
    expect([...applied.written.keys()]).toEqual(['ConfigMap/a']);
    expect(applied.changes).toEqual([{ verb: 'Created', kind: 'ConfigMap', name: 'a' }]);
    expect(client.writes.map((w) => w.name)).toEqual(['a']);
  });
});

describe("a plan's prunes, executed", () => {
  test('deletes the owned children that apply neither wrote, held nor saw refused, and returns them', async () => {
    const client = new ChoosyClient({ r: new ApiError(422, 'Invalid', 'refused') });
    for (const name of ['keep', 'stale', 'held', 'r']) await client.create(BuiltinTypes.ConfigMap, configMap(name));
    const cached = await Promise.all(
      ['keep', 'stale', 'held', 'r'].map((n) => client.get(BuiltinTypes.ConfigMap, n, 'ns')),
    );
    const { parts, t } = setUp(client, cached);
    const { applied, pruned } = await pruneChildren(parts, t, [
      plan(configMap('keep'), [], cached[0]),
      plan(configMap('held'), ['Deployment/missing'], cached[2]),
      plan(configMap('r'), [], cached[3]),
    ]);
    expect(pruned.error).toBeUndefined();
    expect(pruned.changes).toEqual([{ verb: 'Deleted', kind: 'ConfigMap', name: 'stale' }]);
    expect([...pruned.before.keys()]).toEqual(['ConfigMap/stale']);
    await expect(client.get(BuiltinTypes.ConfigMap, 'stale', 'ns')).rejects.toMatchObject({ status: 404 });

    // Together, the writes tell the status what was done: deleted children are not current.
    const writes = new ChildWrites(applied, pruned);
    expect(writes.wasDeleted('ConfigMap/stale')).toBe(true);
    expect(writes.wasDeleted('ConfigMap/keep')).toBe(false);
    expect(writes.before.has('ConfigMap/stale')).toBe(true);
  });

  test('a child already gone counts as deleted; another error stops it, with what it deleted before', async () => {
    const client = new ChoosyClient();
    const gone = { ...configMap('gone'), metadata: { ...configMap('gone').metadata, uid: 'u-gone' } };
    const stuck = { ...configMap('stuck'), metadata: { ...configMap('stuck').metadata, uid: 'u-stuck' } };
    client.delete = (_type, name) =>
      name === 'gone'
        ? Promise.reject(new ApiError(404, 'NotFound', 'gone'))
        : Promise.reject(new ApiError(403, 'Forbidden', 'no'));
    const { parts, t } = setUp(client, [gone, stuck]);
    const { pruned } = await pruneChildren(parts, t, []);
    expect(pruned.changes).toEqual([{ verb: 'Deleted', kind: 'ConfigMap', name: 'gone' }]);
    expect(pruned.error).toMatchObject({ status: 403 });
  });
});

describe('claimChildren', () => {
  const rendered = (...objects: KubeObject[]) => ({ objects, waits: new Map([['ConfigMap/b', ['ConfigMap/a']]]) });

  test("plans each desired child with the cache's copy under its name and what it waits for", async () => {
    const client = new ChoosyClient();
    await client.create(BuiltinTypes.ConfigMap, configMap('a'));
    const cachedA = await client.get(BuiltinTypes.ConfigMap, 'a', 'ns');
    const { parts, t } = setUp(client, [cachedA]);
    const claim = claimChildren(parts, t, rendered(configMap('a'), configMap('b')));
    expect(claim.notOwned).toBeUndefined();
    expect(claim.planned?.map((p) => [p.desired.metadata.name, p.current?.metadata.name, p.waitsFor])).toEqual([
      ['a', 'a', []],
      ['b', undefined, ['ConfigMap/a']],
    ]);
  });

  test('never adopts: a name taken by an object it does not control plans nothing, and says which', async () => {
    const client = new ChoosyClient();
    await client.create(BuiltinTypes.ConfigMap, configMap('a', false));
    const theirs = await client.get(BuiltinTypes.ConfigMap, 'a', 'ns');
    const { parts, t } = setUp(client, [theirs]);
    const claim = claimChildren(parts, t, rendered(configMap('a'), configMap('b')));
    expect(claim.planned).toBeUndefined();
    expect(claim.notOwned?.map((n) => `${n.object.kind}/${n.object.metadata.name}`)).toEqual(['ConfigMap/a']);
    expect(claim.notOwned?.[0]?.reason).toMatch(/ConfigMap/);
  });

  test('a rendered kind the controller does not own is a mistake of the declaration, said at once', () => {
    const { parts, t } = setUp(new ChoosyClient());
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } };
    expect(() => claimChildren(parts, t, rendered(secret))).toThrow(/renders a Secret but does not own Secrets/);
  });
});
