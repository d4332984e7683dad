/**
 * The Events step on its own: one Normal per changed child unless the kind says its own; the
 * external step's first; a Warning when `Degraded` turns True (once per reason, whatever the
 * cached status still shows), and no Event twice while a status write waits.
 */
import { ChildMap, type EventSpec, type Observed } from '../../../../constructs';
import { memcachedKind } from '../../../../constructs/memcached/api';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { StatusPacer } from '../../../../operator/runtime/reconcile/status-pacing';
import { recordEvents } from '../../../../operator/runtime/reconcile/status-steps';

interface Recorded {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

const degraded = (reason: string, message: string) => ({
  conditions: [
    {
      type: 'Degraded',
      status: 'True',
      reason,
      message,
      observedGeneration: 1,
      lastTransitionTime: '2026-11-27T00:00:00Z',
    },
  ],
});

function resourceWith(status?: object): Resource {
  return {
    apiVersion: memcachedKind.apiVersion,
    kind: memcachedKind.kind,
    metadata: { name: 'm', namespace: 'ns', uid: 'u1', generation: 1 },
    spec: { size: 1 },
    ...(status ? { status } : {}),
  };
}

function observedWith(changes: Observed['changes']): Observed {
  return { children: new ChildMap(), before: new ChildMap(), changes, read: () => [] } as unknown as Observed;
}

/** A target whose recorder keeps what it records, and the kind (with its own events, if given). */
function setUp(
  options: { events?: (r: Resource, o: Observed, s: object | undefined) => EventSpec[]; status?: object } = {},
) {
  const recorded: Recorded[] = [];
  const parts = {
    decl: { name: 'memcached', for: memcachedKind, events: options.events },
  };
  const t = {
    key: 'ns/m',
    resource: resourceWith(options.status),
    ctx: {
      recorder: {
        record: (_r: Resource, type: string, reason: string, message: string) => {
          recorded.push({ type, reason, message });
          return Promise.resolve();
        },
      },
    },
  } as unknown as Target;
  return { parts, t, recorded };
}

const created: Observed['changes'][number] = { verb: 'Created', kind: 'Deployment', name: 'm' };

test('without events of its own, a kind records one Normal Event per changed child, after the external step’s', async () => {
  const { parts, t, recorded } = setUp();
  const paced = new StatusPacer(0).begin('ns/m');
  const external = {
    facts: {},
    events: [{ type: 'Normal' as const, reason: 'Registered', message: 'registered at the DNS' }],
  };
  await recordEvents(parts, t, { observed: observedWith([created]), status: undefined, external, paced });
  expect(recorded).toEqual([
    { type: 'Normal', reason: 'Registered', message: 'registered at the DNS' },
    { type: 'Normal', reason: 'Created', message: 'Created Deployment m' },
  ]);
});

test("a kind's own events replace the per-child ones, and see the status computed", async () => {
  const seen: (object | undefined)[] = [];
  const { parts, t, recorded } = setUp({
    events: (_r, _o, status) => {
      seen.push(status);
      return [{ type: 'Normal', reason: 'Scaled', message: 'scaled to 1' }];
    },
  });
  const status = { replicas: 1 };
  await recordEvents(parts, t, { observed: observedWith([created]), status, paced: new StatusPacer(0).begin('ns/m') });
  expect(recorded).toEqual([{ type: 'Normal', reason: 'Scaled', message: 'scaled to 1' }]);
  expect(seen).toEqual([status]);
});

test('Degraded turning True is a Warning with its reason and message; not again for the same reason', async () => {
  const pacer = new StatusPacer(0);
  const { parts, t, recorded } = setUp();
  const first = pacer.begin('ns/m');
  await recordEvents(parts, t, {
    observed: observedWith([]),
    status: degraded('PodFailing', 'pod m-0: crash'),
    paced: first,
  });
  first.end();
  // The next reconcile: the cached resource does not show the status written yet, the words
  // changed (a restart count), the reason did not: no second Warning.
  const second = pacer.begin('ns/m');
  await recordEvents(parts, t, {
    observed: observedWith([]),
    status: degraded('PodFailing', 'pod m-0: crash (2)'),
    paced: second,
  });
  second.end();
  expect(recorded).toEqual([{ type: 'Warning', reason: 'PodFailing', message: 'pod m-0: crash' }]);
  // Another reason is another Warning.
  await recordEvents(parts, t, {
    observed: observedWith([]),
    status: degraded('ClaimRefused', 'pvc refused'),
    paced: pacer.begin('ns/m'),
  });
  expect(recorded.map((e) => e.reason)).toEqual(['PodFailing', 'ClaimRefused']);
});

test('no Warning when the stored status already says Degraded for that reason (a restarted reconciler)', async () => {
  const { parts, t, recorded } = setUp({ status: degraded('PodFailing', 'pod m-0: crash') });
  const status = degraded('PodFailing', 'pod m-0: crash (3)');
  await recordEvents(parts, t, { observed: observedWith([]), status, paced: new StatusPacer(0).begin('ns/m') });
  expect(recorded).toEqual([]);
  // Stored as Degraded for another reason: this one is news.
  const other = setUp({ status: degraded('ClaimRefused', 'pvc refused') });
  await recordEvents(other.parts, other.t, {
    observed: observedWith([]),
    status,
    paced: new StatusPacer(0).begin('ns/m'),
  });
  expect(other.recorded).toEqual([{ type: 'Warning', reason: 'PodFailing', message: 'pod m-0: crash (3)' }]);
});

test('while a status write waits, an Event computed again is not recorded again', async () => {
  const pacer = new StatusPacer(60_000);
  const { parts, t, recorded } = setUp();
  for (let i = 0; i < 3; i++) {
    const paced = pacer.begin('ns/m');
    await recordEvents(parts, t, { observed: observedWith([created]), status: undefined, paced });
    // Children just changed: the write waits, so the reconcile ends with Events held back.
    expect(paced.waitBeforeWrite(true)).toBeGreaterThan(0);
    paced.end();
  }
  expect(recorded).toEqual([{ type: 'Normal', reason: 'Created', message: 'Created Deployment m' }]);
});
