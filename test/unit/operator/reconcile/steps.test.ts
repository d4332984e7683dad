/**
 * The first steps of a reconcile on their own: observe (the resource, or nothing for one gone or
 * being deleted, forgetting what was remembered of it), the terminal error standing for a
 * generation, and render (reused while its input is the same, the bookkeeping aside).
 */
import { ApiObject } from 'cdk8s';
import type { RenderedChildren } from '../../../../constructs/contract/render';
import pino from 'pino';
import { customResourceType } from '../../../../constructs';
import { memcachedKind } from '../../../../constructs/memcached/api';
import { RenderCache } from '../../../../operator/runtime/children';
import { TerminalError } from '../../../../operator/runtime/controller';
import { Metrics } from '../../../../operator/runtime/observability';
import { Blockers } from '../../../../operator/runtime/reconcile/blockers';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { StatusPacer } from '../../../../operator/runtime/reconcile/status-pacing';
import { ApiError } from '../../../../operator/runtime/client';
import {
  knownTerminal,
  observe,
  recordTerminal,
  renderDesired,
  runExternal,
} from '../../../../operator/runtime/reconcile/steps';
import { WrittenChildren } from '../../../../operator/runtime/children';

const type = customResourceType<Resource>(memcachedKind);

function memcached(generation = 1, extra: Partial<Resource['metadata']> = {}): Resource {
  return {
    apiVersion: memcachedKind.apiVersion,
    kind: memcachedKind.kind,
    metadata: { name: 'm', namespace: 'ns', uid: 'u1', generation, resourceVersion: '1', ...extra },
    spec: { size: 1 },
  };
}

function setUp(
  cached: Resource | undefined,
  render?: (scope: never, r: Resource) => void,
  renderReadsStatus?: readonly string[],
) {
  const renders = { count: 0 };
  const parts = {
    decl: {
      name: 'memcached',
      for: memcachedKind,
      renderReadsStatus,
      render: render
        ? (scope: never, r: Resource) => {
            renders.count++;
            render(scope, r);
          }
        : undefined,
    },
    type,
    resources: { get: (key: string) => (key === 'ns/m' ? cached : undefined) },
    refused: new Map(),
    refusedChildren: new Map(),
    written: new WrittenChildren(),
    pacer: new StatusPacer(0),
    clock: { now: () => Date.UTC(2026, 0, 1) },
    blockers: new Blockers(),
    renders: new RenderCache<RenderedChildren>(8),
    metrics: new Metrics(),
  };
  const target = (r: Resource): Target =>
    ({
      key: 'ns/m',
      resource: r,
      uid: r.metadata.uid,
      generation: r.metadata.generation,
      namespace: 'ns',
      ctx: { logger: pino({ level: 'silent' }) },
    }) as unknown as Target;
  return { parts, target, renders };
}

describe('observe', () => {
  test('the cached resource is the one reconciled', () => {
    const { parts } = setUp(memcached());
    expect(observe(parts, { namespace: 'ns', name: 'm' })?.metadata.uid).toBe('u1');
  });

  test('one gone, or being deleted, is not reconciled, and what was remembered of it goes', () => {
    for (const cached of [undefined, memcached(1, { deletionTimestamp: '2026-11-27T00:00:00Z' })]) {
      const { parts, target } = setUp(cached);
      recordTerminal(parts, target(memcached()), new TerminalError('bad spec', 'Invalid'), true);
      expect(observe(parts, { namespace: 'ns', name: 'm' })).toBeUndefined();
      expect(parts.refused.has('ns/m')).toBe(false);
    }
  });
});

test('a terminal error stands for its generation only: a new generation tries again', () => {
  const { parts, target } = setUp(memcached());
  const error = new TerminalError('size must be at most 10', 'Invalid');
  recordTerminal(parts, target(memcached(1)), error, true);
  expect(knownTerminal(parts, target(memcached(1)))).toBe(error);
  expect(knownTerminal(parts, target(memcached(2)))).toBeUndefined();
  // Not remembered (an external step's error): the next reconcile asks again.
  recordTerminal(parts, target(memcached(2)), error, false);
  expect(knownTerminal(parts, target(memcached(2)))).toBeUndefined();
});

test("a refusal is one log line: the API server's words once, its reason, no stack", () => {
  const { parts, target } = setUp(memcached());
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const said = 'Deployment.apps "m" is invalid: spec.selector: Invalid value: {}: field is immutable';
  const refusal = new TerminalError(said, 'Invalid', { cause: new ApiError(422, 'Invalid', said) });
  recordTerminal(parts, { ...target(memcached()), ctx: { logger } } as unknown as Target, refusal, true);
  expect(lines).toHaveLength(1);
  const entry = JSON.parse(lines[0]!);
  expect(entry).toMatchObject({ reason: 'Invalid', refusal: said });
  expect(lines[0]!.split('field is immutable')).toHaveLength(2);
  expect(lines[0]).not.toContain('stack');
});

test('render is reused while the resource and facts are the same, bookkeeping aside; a change renders again', () => {
  const { parts, target, renders } = setUp(memcached(), (scope, r) => {
    new ApiObject(scope, 'cm', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: r.metadata.name },
      data: { size: String((r.spec as { size: number }).size) },
    });
  });
  const first = renderDesired(parts, target(memcached()), undefined);
  expect(first.objects.map((o) => o.metadata.name)).toEqual(['m']);
  // A write bumps the resourceVersion and managedFields: the input is the same.
  renderDesired(parts, target(memcached(1, { resourceVersion: '2', managedFields: [] })), undefined);
  expect(renders.count).toBe(1);
  renderDesired(parts, target({ ...memcached(), spec: { size: 2 } }), undefined);
  renderDesired(parts, target({ ...memcached(), spec: { size: 2 } }), { endpoint: 'x' });
  expect(renders.count).toBe(3);
});

/** A status our reconciler might write: Available, with the listed pods in its message. */
const available = (pods: string[]) => ({
  conditions: [
    {
      type: 'Available',
      status: 'True' as const,
      reason: 'PodsReady',
      message: pods.join(','),
      lastTransitionTime: 't',
    },
  ],
});

test('a status write does not render again when the render never read the status; it does when it did', () => {
  const ignoresStatus = setUp(memcached(), (scope, r) => {
    new ApiObject(scope, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: r.metadata.name } });
  });
  const first = renderDesired(ignoresStatus.parts, ignoresStatus.target(memcached()), undefined);
  // Our own status writes: the pod listed, then ready.
  for (const nodes of [['m-1'], ['m-1', 'm-2']]) {
    expect(
      renderDesired(ignoresStatus.parts, ignoresStatus.target({ ...memcached(), status: available(nodes) }), undefined),
    ).toBe(first);
  }
  expect(ignoresStatus.renders.count).toBe(1);

  const readsStatus = setUp(memcached(), (scope, r) => {
    const nodes = r.status?.conditions?.[0]?.message ?? '';
    new ApiObject(scope, 'cm', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: r.metadata.name },
      data: { nodes },
    });
  });
  renderDesired(readsStatus.parts, readsStatus.target(memcached()), undefined);
  const listed = renderDesired(
    readsStatus.parts,
    readsStatus.target({ ...memcached(), status: available(['m-1']) }),
    undefined,
  );
  expect(listed.objects[0]).toMatchObject({ data: { nodes: 'm-1' } });
  // The same status again: the render that read it is reused.
  renderDesired(readsStatus.parts, readsStatus.target({ ...memcached(), status: available(['m-1']) }), undefined);
  expect(readsStatus.renders.count).toBe(2);
  // A render that reads the whole resource (a spread, JSON) reads its status too.
  const copiesAll = setUp(memcached(), (scope, r) => {
    new ApiObject(scope, 'cm', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: r.metadata.name },
      data: { copy: JSON.stringify({ ...r }) },
    });
  });
  renderDesired(copiesAll.parts, copiesAll.target(memcached()), undefined);
  renderDesired(copiesAll.parts, copiesAll.target({ ...memcached(), status: available(['m-1']) }), undefined);
  expect(copiesAll.renders.count).toBe(2);
});

test('a render that names the status fields it reads sees those alone, and renders again only when one it read changes', () => {
  const seen: unknown[] = [];
  const readsDone = setUp(
    memcached(),
    (scope, r) => {
      const status = r.status as { done?: boolean } | undefined;
      seen.push({ ...status });
      new ApiObject(scope, 'cm', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: r.metadata.name },
        data: { done: String(status?.done === true) },
      });
    },
    ['done'],
  );
  const before = renderDesired(readsDone.parts, readsDone.target(memcached()), undefined);
  // Our status writes: the conditions move, `done` stays as it was.
  for (const nodes of [['m-1'], ['m-1', 'm-2']])
    expect(
      renderDesired(readsDone.parts, readsDone.target({ ...memcached(), status: available(nodes) }), undefined),
    ).toBe(before);
  const done = renderDesired(
    readsDone.parts,
    readsDone.target({ ...memcached(), status: { ...available(['m-1']), done: true } as never }),
    undefined,
  );
  expect(done.objects[0]).toMatchObject({ data: { done: 'true' } });
  expect(readsDone.renders.count).toBe(2);
  // A status of the named fields alone, even where the resource has none yet.
  expect(seen).toEqual([{ done: undefined }, { done: true }]);
  expect(readsDone.parts.renders.statusChanged('ns/m', available(['m-1']), available(['m-2']))).toBe(false);
  expect(readsDone.parts.renders.statusChanged('ns/m', available(['m-1']), { done: false })).toBe(true);
});

describe('the external step', () => {
  const addMember = { system: 'etcd', action: 'AddMember', target: 'm-3', reason: 'the spec asks for 4 members' };
  const externalOf = (ran: string[]) => ({
    name: 'memcached',
    for: memcachedKind,
    external: async (_r: unknown, _children: unknown, context: any) => {
      await context.write(addMember, async () => {
        ran.push('member add');
        return 'm-3';
      });
      return { facts: { added: true } };
    },
  });
  const target = (signal: AbortSignal) =>
    ({
      key: 'ns/m',
      resource: memcached(),
      uid: 'u1',
      ctx: { signal, logger: pino({ level: 'silent' }) },
    }) as unknown as Target;
  const parts = (decl: object) => ({ decl, owned: [], metrics: new Metrics() }) as any;

  test("writes through the gate: each recorded in the reconcile's writes and the writes metric", async () => {
    const ran: string[] = [];
    const p = parts(externalOf(ran));
    const step = await runExternal(p, target(new AbortController().signal));
    expect(ran).toEqual(['member add']);
    expect(step?.facts).toEqual({ added: true });
    expect(step?.written).toEqual([addMember]);
    expect(await p.metrics.registry.getSingleMetricAsString('opkit_reconcile_writes_total')).toContain(
      'opkit_reconcile_writes_total{controller="memcached",action="External:etcd:AddMember"} 1',
    );
  });

  test('makes no write once the stop signal says stop (shutdown, or the lease lost)', async () => {
    const ran: string[] = [];
    const stop = new AbortController();
    stop.abort(new Error('leadership lost'));
    await expect(runExternal(parts(externalOf(ran)), target(stop.signal))).rejects.toThrow('leadership lost');
    expect(ran).toEqual([]);
  });
});
