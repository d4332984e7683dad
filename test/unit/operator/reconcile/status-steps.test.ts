/**
 * The status step on its own: what the kind's status function makes of the steps' outputs, with
 * `Degraded=True` where the runtime knows better (a child name taken by another's object, a
 * terminal error), the API server's refusal said as `Available=False ChildRefused` (the kind's
 * own status says `Degraded` from `applyError`) and a child not owned as `Available=False
 * ChildNotOwned`, and the kstatus summary derived from the conditions.
 */
import pino from 'pino';
import { ChildMap, customResourceType, type Observed } from '../../../../constructs';
import { memcachedKind } from '../../../../constructs/memcached/api';
import { ApiError } from '../../../../operator/runtime/client';
import { TerminalError } from '../../../../operator/runtime/controller';
import { ChildWrites } from '../../../../operator/runtime/reconcile/child-steps';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { computeStatus } from '../../../../operator/runtime/reconcile/status-steps';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration: number;
}

const resource: Resource = {
  apiVersion: memcachedKind.apiVersion,
  kind: memcachedKind.kind,
  metadata: { name: 'm', namespace: 'ns', uid: 'u1', generation: 3 },
  spec: { size: 1 },
};

/** A kind whose status function says it is available, and what it was given. */
function setUp() {
  const seen: Observed[] = [];
  const parts = {
    decl: {
      name: 'memcached',
      for: memcachedKind,
      status: (_r: Resource, observed: Observed) => {
        seen.push(observed);
        return {
          conditions: [
            {
              type: 'Available',
              status: 'True' as const,
              reason: 'Ready',
              message: 'all ready',
              observedGeneration: 3,
              lastTransitionTime: '2026-11-27T00:00:00Z',
            },
          ],
        };
      },
    },
    type: customResourceType<Resource>(memcachedKind),
    reads: new Map(),
    clock: { now: () => Date.UTC(2026, 10, 27, 1) },
  };
  const t = {
    key: 'ns/m',
    resource,
    uid: 'u1',
    generation: 3,
    namespace: 'ns',
    ctx: { logger: pino({ level: 'silent' }) },
  } as unknown as Target;
  return { parts, t, seen };
}

const conditionsOf = (status: object | undefined) =>
  Object.fromEntries(((status as { conditions?: Condition[] }).conditions ?? []).map((c) => [c.type, c]));

test("the kind's status, with the kstatus summary at the resource's generation", () => {
  const { parts, t, seen } = setUp();
  const { status } = computeStatus(parts, t, { writes: new ChildWrites(), children: new ChildMap(), notOwned: [] });
  const c = conditionsOf(status);
  expect(c.Available?.status).toBe('True');
  expect(c.Ready).toMatchObject({ status: 'True', observedGeneration: 3 });
  expect(c.Stalled?.status ?? 'False').toBe('False');
  expect(seen[0]?.applyError).toBeUndefined();
});

test('a child name taken by another object: Degraded=True ChildNotOwned, naming it and what to do', () => {
  const { parts, t } = setUp();
  const notOwned = [
    {
      object: { kind: 'Deployment', metadata: { name: 'm', namespace: 'ns' } },
      key: 'Deployment/m',
      reason: 'Deployment m is not controlled by this Memcached',
    },
  ];
  const { status } = computeStatus(parts, t, { writes: new ChildWrites(), children: new ChildMap(), notOwned });
  const degraded = conditionsOf(status).Degraded;
  expect(degraded).toMatchObject({ status: 'True', reason: 'ChildNotOwned', observedGeneration: 3 });
  expect(degraded?.message).toContain('Deployment m is not controlled by this Memcached');
  expect(degraded?.message).toContain('never takes over an object it did not create');
  // Nothing of it was applied (all or nothing): whatever the kind made of the children it has,
  // what runs is not what the spec asks (a scaffolded Website said Available=True, "no children to wait for").
  const c = conditionsOf(status);
  expect(c.Available).toMatchObject({ status: 'False', reason: 'ChildNotOwned', observedGeneration: 3 });
  expect(c.Available?.message).toContain('Deployment m is not controlled by this Memcached');
  expect(c.Ready?.status).toBe('False');
});

test('a terminal error the kind does not report: Degraded=True with its reason and message', () => {
  const { parts, t } = setUp();
  const terminal = new TerminalError('size 0 leaves nothing to run', 'InvalidSpec');
  const { status } = computeStatus(parts, t, {
    writes: new ChildWrites(),
    children: new ChildMap(),
    notOwned: [],
    terminal,
  });
  expect(conditionsOf(status).Degraded).toMatchObject({
    status: 'True',
    reason: 'InvalidSpec',
    message: 'size 0 leaves nothing to run',
  });
});

test("the API server's refusal of a child: given to the kind as applyError; Available=False ChildRefused, so not Ready", () => {
  const { parts, t, seen } = setUp();
  const refused = new ApiError(422, 'Invalid', 'Deployment.apps "m" is invalid: spec.selector: field is immutable');
  const terminal = new TerminalError(refused.message, 'Invalid', { cause: refused });
  const { status } = computeStatus(parts, t, {
    writes: new ChildWrites(),
    children: new ChildMap(),
    notOwned: [],
    terminal,
  });
  expect(seen[0]?.applyError).toContain('field is immutable');
  const c = conditionsOf(status);
  expect(c.Available).toMatchObject({ status: 'False', reason: 'ChildRefused' });
  expect(c.Available?.message).toContain('a child was refused: ');
  expect(c.Ready?.status).toBe('False');
});
