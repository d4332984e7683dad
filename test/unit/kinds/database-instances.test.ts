import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChildMap, childKey, type Pod } from '../../../constructs/contract';
import { renderChildren, renderDeclaration } from '../../../operator/runtime/children';
import { databaseController, desiredDatabaseStatus } from '../../../constructs/database/controller';
import { databaseInstancesStep } from '../../../constructs/database/instances-step';
import {
  decideInstances,
  type DatabaseFacts,
  type InstanceObservation,
  type InstancesInput,
  lsnBytes,
  refreshMs,
} from '../../../constructs/database/instances';
import type { InstanceAnswer } from '../../../constructs/database/instance-queries';
import { NotStreamingClock } from '../../../constructs/database/stuck-standbys';
import { databaseResource } from '../../support/data-resources';

const pod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: `uid-${name}` } });
const primaryAnswer = (lsn: string, timeline = 1): InstanceAnswer => ({ standby: false, lsn, timeline });
const standbyAnswer = (lsn: string, replayed = lsn, timeline = 1, streaming = true): InstanceAnswer => ({
  standby: true,
  lsn,
  replayed,
  timeline,
  streaming,
});
const instance = (name: string, ready: boolean, answer?: InstanceAnswer): InstanceObservation => ({
  name,
  pod: pod(name),
  ready,
  ...(answer ? { answer } : {}),
});

const NOW = new Date('2026-12-06T12:00:00Z');
const input = (observations: InstanceObservation[], over: Partial<InstancesInput> = {}): InstancesInput => ({
  database: 'orders',
  designated: 'orders-0',
  count: 3,
  observations,
  configuredPrimary: 'orders-0',
  failoverDelayMs: 30_000,
  now: NOW,
  ...over,
});
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);
const roleLabel = (d: ReturnType<typeof decideInstances>) =>
  Object.fromEntries(d.labels.map((l) => [l.name, l.labels['database.example.com/role']]));

describe('the instances of a replicated Database', () => {
  test('LSNs as bytes: the high word counts 4 GiB', () => {
    expect(lsnBytes('0/3000060')).toBe(0x3000060n);
    expect(lsnBytes('1/0') - lsnBytes('0/FFFFFFFF')).toBe(1n);
  });

  test('all well: the primary stays, the standbys are labelled for <name>-ro (the primary not), each lag from the primary', () => {
    const d = decideInstances(
      input([
        instance('orders-0', true, primaryAnswer('0/3000100')),
        instance('orders-1', true, standbyAnswer('0/3000100', '0/3000000')),
        instance('orders-2', false),
      ]),
    );
    expect(d.primary).toBe('orders-0');
    expect(d.promote).toBeUndefined();
    expect(d.fence).toEqual([]);
    expect(roleLabel(d)).toEqual({ 'orders-0': null, 'orders-1': 'standby', 'orders-2': null });
    expect(d.instances).toEqual([
      { name: 'orders-0', role: 'primary', ready: true, lsn: '0/3000100', timeline: 1 },
      { name: 'orders-1', role: 'standby', ready: true, lsn: '0/3000100', lagBytes: 0x100, timeline: 1 },
      { name: 'orders-2', role: 'unknown', ready: false },
    ]);
    expect(d.requeueAfterMs).toBe(15_000);
  });

  test('the primary gone for less than failoverDelay: no promotion, looked at again when the delay ends', () => {
    const d = decideInstances(
      input(
        [
          instance('orders-0', false),
          instance('orders-1', true, standbyAnswer('0/3000100')),
          instance('orders-2', true, standbyAnswer('0/3000200')),
        ],
        { unavailableSince: secondsAgo(20) },
      ),
    );
    expect(d.promote).toBeUndefined();
    expect(d.primary).toBe('orders-0');
    expect(d.requeueAfterMs).toBe(10_100);
  });

  test('the primary gone for failoverDelay: the ready standby that received the most WAL is promoted (never one not ready, nor one being scaled away)', () => {
    const d = decideInstances(
      input(
        [
          instance('orders-0', false),
          instance('orders-1', true, standbyAnswer('0/3000100')),
          instance('orders-2', true, standbyAnswer('0/3000200')),
          instance('orders-3', false, standbyAnswer('0/4000000')),
          instance('orders-4', true, standbyAnswer('0/5000000')),
        ],
        { unavailableSince: secondsAgo(31), count: 4 },
      ),
    );
    expect(d.promote).toEqual({
      name: 'orders-2',
      reason: 'the primary orders-0 has not been ready for 31 s; orders-2 has received the most WAL (0/3000200)',
      by: 'failover',
    });
    expect(d.primary).toBe('orders-2');
    // The promoted standby leaves <name>-ro at once.
    expect(roleLabel(d)['orders-2']).toBeNull();
    expect(d.instances.find((i) => i.name === 'orders-2')?.role).toBe('primary');
  });

  test('a primary whose pod is ready but that answers nothing while its standbys do has hung (a frozen container: the kubelet probe hangs with it): replaced after failoverDelay', () => {
    const d = decideInstances(
      input(
        [
          instance('orders-0', true),
          instance('orders-1', true, standbyAnswer('0/3000100')),
          instance('orders-2', true, standbyAnswer('0/3000200')),
        ],
        { unavailableSince: secondsAgo(31) },
      ),
    );
    expect(d.promote?.name).toBe('orders-2');
  });

  test('asked again at half the failover delay while all is well (between 2 and 30 s): a hung server changes nothing watched', () => {
    expect([0, 3_000, 10_000, 30_000, 60_000, 3_600_000].map(refreshMs)).toEqual([
      2000, 2000, 5000, 15_000, 30_000, 30_000,
    ]);
  });

  test("the standby with the most WAL is promoted whatever timeline it reports: cut off from a primary that hung, a standby reports its last restartpoint's", () => {
    const d = decideInstances(
      input(
        [
          instance('orders-0', false),
          instance('orders-1', true, standbyAnswer('0/3000100', '0/3000100', 2, false)),
          instance('orders-2', true, standbyAnswer('0/3000200', '0/3000200', 1, false)),
        ],
        { unavailableSince: secondsAgo(31) },
      ),
    );
    expect(d.promote?.name).toBe('orders-2');
  });

  test('a primary that answers as one is alive, only not ready: never a second primary', () => {
    const d = decideInstances(
      input(
        [
          instance('orders-0', false, primaryAnswer('0/3000100')),
          instance('orders-1', true, standbyAnswer('0/3000100')),
        ],
        {
          unavailableSince: secondsAgo(300),
        },
      ),
    );
    expect(d.promote).toBeUndefined();
    expect(d.primary).toBe('orders-0');
  });

  test('no standby ready to promote: the primary stays, nothing written', () => {
    const d = decideInstances(
      input([instance('orders-0', false), instance('orders-1', false, standbyAnswer('0/3000100'))], {
        unavailableSince: secondsAgo(300),
      }),
    );
    expect(d.promote).toBeUndefined();
    expect(d.primary).toBe('orders-0');
  });

  test('two instances answer as primaries: the later timeline is the primary (a status not yet written after a promotion); the former one is restarted once the ConfigMap names the primary', () => {
    const observations = [
      instance('orders-0', false, primaryAnswer('0/3000100', 1)),
      instance('orders-1', true, primaryAnswer('0/3000300', 2)),
    ];
    const before = decideInstances(input(observations));
    expect(before.primary).toBe('orders-1');
    // The ConfigMap still names orders-0: a restart now would start it as the primary again.
    expect(before.fence).toEqual([]);
    const after = decideInstances(input(observations, { configuredPrimary: 'orders-1' }));
    expect(after.fence).toEqual([
      {
        name: 'orders-0',
        uid: 'uid-orders-0',
        reason: 'it runs as a primary (timeline 1) while orders-1 is the primary: it rejoins as a standby',
      },
    ]);
  });
});

describe('a failover with synchronous standbys loses no acknowledged commit', () => {
  const lost = (standbys: InstanceObservation[], synchronous = 1) =>
    decideInstances(
      input([instance('orders-0', false), ...standbys], { unavailableSince: secondsAgo(31), synchronous }),
    );

  test('every standby heard: the most advanced ready one is promoted, as without', () => {
    const d = lost([
      instance('orders-1', true, standbyAnswer('0/3000100')),
      instance('orders-2', true, standbyAnswer('0/3000200')),
    ]);
    expect(d.promote?.name).toBe('orders-2');
    expect(d.failoverHeld).toBeUndefined();
  });

  test('a standby not ready that received more WAL than every ready one: held, saying which, and looked at again soon', () => {
    const d = lost([
      instance('orders-1', true, standbyAnswer('0/3000100')),
      instance('orders-2', false, standbyAnswer('0/3000200')),
    ]);
    expect(d.promote).toBeUndefined();
    expect(d.primary).toBe('orders-0');
    expect(d.failoverHeld).toBe(
      'orders-2 has received more WAL (0/3000200) than orders-1, the most advanced ready standby, and is not ready: promoting orders-1 could lose acknowledged commits',
    );
    expect(d.requeueAfterMs).toBe(5000);
    // Without synchronous standbys the ready one is promoted: the last writes may be lost, as documented.
    expect(
      lost(
        [
          instance('orders-1', true, standbyAnswer('0/3000100')),
          instance('orders-2', false, standbyAnswer('0/3000200')),
        ],
        0,
      ).promote?.name,
    ).toBe('orders-1');
  });

  test('too few standbys heard to be sure one holds every acknowledged commit: held; enough heard: promoted', () => {
    // 1 synchronous of 2 standbys: the one not heard may be the only one holding the last commit.
    const d = lost([instance('orders-1', true, standbyAnswer('0/3000100')), instance('orders-2', false)]);
    expect(d.promote).toBeUndefined();
    expect(d.failoverHeld).toBe(
      'each acknowledged commit is on 1 standby(s), and only 1 of the 2 answer (2 needed to be sure to promote one holding them all)',
    );
    // 2 synchronous of 2: every commit is on both, so either one heard is enough.
    expect(
      lost([instance('orders-1', true, standbyAnswer('0/3000100')), instance('orders-2', false)], 2).promote?.name,
    ).toBe('orders-1');
  });
});

describe('a standby left behind by a failover (its WAL receiver hanging on the former primary) is restarted, once', () => {
  const madeAt = (o: InstanceObservation, iso: string, notStreamingSince?: Date): InstanceObservation => ({
    ...o,
    pod: { ...pod(o.name), metadata: { ...pod(o.name).metadata, creationTimestamp: iso } },
    ...(notStreamingSince ? { notStreamingSince } : {}),
  });
  const servingSince = secondsAgo(60);
  const before = new Date(NOW.getTime() - 600_000).toISOString();
  const primary = madeAt(instance('orders-0', true, primaryAnswer('0/3000100', 3)), before);
  const stuck = (made: string, since: Date) =>
    madeAt(instance('orders-2', true, standbyAnswer('0/3000000', '0/3000000', 2, false)), made, since);
  const streaming = madeAt(instance('orders-1', true, standbyAnswer('0/3000100', '0/3000100', 3)), before);

  test('not streaming for 20 s from a primary that serves, its pod made before the primary began serving: restarted', () => {
    const d = decideInstances(input([primary, streaming, stuck(before, secondsAgo(25))], { servingSince }));
    expect(d.fence).toEqual([
      {
        name: 'orders-2',
        uid: 'uid-orders-2',
        reason:
          'it has not streamed from the primary orders-0 for 25 s (its WAL receiver may hang on a former primary): restarted, to connect to the primary again',
      },
    ]);
  });

  test('not for a shorter while, nor a pod made since the primary began serving (restarted already), nor with no primary serving', () => {
    expect(decideInstances(input([primary, streaming, stuck(before, secondsAgo(10))], { servingSince })).fence).toEqual(
      [],
    );
    const since = new Date(NOW.getTime() - 30_000).toISOString();
    expect(decideInstances(input([primary, streaming, stuck(since, secondsAgo(25))], { servingSince })).fence).toEqual(
      [],
    );
    expect(decideInstances(input([primary, streaming, stuck(before, secondsAgo(25))])).fence).toEqual([]);
  });

  test("the operator's clock: a standby's first moment not streaming is kept until it streams or goes", () => {
    const clock = new NotStreamingClock();
    const t0 = new Date('2026-12-06T12:00:00Z');
    const t1 = new Date('2026-12-06T12:00:10Z');
    expect(clock.observe('shop/orders', [{ uid: 'a', streaming: false }], t0)('a')).toEqual(t0);
    expect(clock.observe('shop/orders', [{ uid: 'a', streaming: false }], t1)('a')).toEqual(t0);
    expect(clock.observe('shop/orders', [{ uid: 'a', streaming: true }], t1)('a')).toBeUndefined();
    expect(clock.observe('shop/orders', [{ uid: 'a', streaming: false }], t1)('a')).toEqual(t1);
    // Another Database's standbys are its own.
    expect(clock.observe('shop/other', [{ uid: 'a', streaming: false }], t1)('a')).toEqual(t1);
  });
});

describe('a pod template change rolled: the standbys first, one at a time, then a switchover', () => {
  const at = (o: InstanceObservation, revision: string): InstanceObservation => ({
    ...o,
    pod: {
      ...pod(o.name),
      metadata: { ...pod(o.name).metadata, labels: { 'controller-revision-hash': revision } },
    },
  });
  const roll = (observations: InstanceObservation[], over: Partial<InstancesInput> = {}) =>
    decideInstances(input(observations, { updateRevision: 'new', ...over }));

  test('every instance ready: one outdated standby restarted (the first), the primary kept, looked at again soon', () => {
    const d = roll([
      at(instance('orders-0', true, primaryAnswer('0/3000100')), 'old'),
      at(instance('orders-1', true, standbyAnswer('0/3000100')), 'old'),
      at(instance('orders-2', true, standbyAnswer('0/3000100')), 'old'),
    ]);
    expect(d.fence).toEqual([
      {
        name: 'orders-1',
        uid: 'uid-orders-1',
        reason:
          "its pod runs revision old of the StatefulSet's template, which is at new: the standbys are updated first, one at a time",
      },
    ]);
    expect(d.primary).toBe('orders-0');
    expect(d.switchover).toBeUndefined();
    expect(d.requeueAfterMs).toBe(2000);
  });

  test('an instance not ready (a standby restarting): nothing more restarted until it is back', () => {
    const d = roll([
      at(instance('orders-0', true, primaryAnswer('0/3000100')), 'old'),
      at(instance('orders-1', false, standbyAnswer('0/3000100')), 'new'),
      at(instance('orders-2', true, standbyAnswer('0/3000100')), 'old'),
    ]);
    expect(d.fence).toEqual([]);
    expect(d.switchover).toBeUndefined();
  });

  test('every standby updated: a switchover to the most advanced, whose step restarts the former primary on the new template', () => {
    const d = roll([
      at(instance('orders-0', true, primaryAnswer('0/3000300')), 'old'),
      at(instance('orders-1', true, standbyAnswer('0/3000100')), 'new'),
      at(instance('orders-2', true, standbyAnswer('0/3000200')), 'new'),
    ]);
    expect(d.switchover).toEqual({
      from: 'orders-0',
      to: 'orders-2',
      reason:
        'the pod template changed (revision new); every standby runs it, so the primary moves to orders-2 and orders-0 restarts on it',
    });
    expect(d.primary).toBe('orders-2');
    expect(d.fence).toEqual([]);
  });

  test('all updated, an unknown revision (the StatefulSet not settled), or a failover due: nothing rolled', () => {
    const updated = [
      at(instance('orders-0', true, primaryAnswer('0/3000100')), 'new'),
      at(instance('orders-1', true, standbyAnswer('0/3000100')), 'new'),
      at(instance('orders-2', true, standbyAnswer('0/3000100')), 'new'),
    ];
    expect(roll(updated)).toMatchObject({ fence: [], requeueAfterMs: 15_000 });
    const outdated = updated.map((o) => at(o, 'old'));
    expect(roll(outdated, { updateRevision: undefined })).toMatchObject({ fence: [], requeueAfterMs: 15_000 });
    const lost = [at(instance('orders-0', false), 'old'), ...outdated.slice(1)];
    const d = roll(lost, { unavailableSince: secondsAgo(31) });
    expect(d.promote?.name).toBe('orders-1');
    expect(d.fence).toEqual([]);
  });
});

describe('a planned switchover, a step per reconcile', () => {
  const healthy = () => [
    instance('orders-0', true, primaryAnswer('0/3000100')),
    instance('orders-1', true, standbyAnswer('0/3000100', '0/3000080')),
    instance('orders-2', true, standbyAnswer('0/3000100')),
  ];

  test('asked (the annotation): the target named primary at once — a standby still, out of <name>-ro — and nothing promoted or restarted yet', () => {
    const d = decideInstances(input(healthy(), { switchoverTo: 'orders-1' }));
    expect(d.primary).toBe('orders-1');
    expect(d.switchover).toEqual({
      from: 'orders-0',
      to: 'orders-1',
      reason: 'asked by database.example.com/switchover-to',
    });
    expect(d.promote).toBeUndefined();
    // The ConfigMap still names orders-0: restarted now, it would start as the primary again.
    expect(d.fence).toEqual([]);
    expect(roleLabel(d)['orders-1']).toBeNull();
    expect(d.requeueAfterMs).toBe(2000);
  });

  test('the ConfigMap names the target: the former primary (same timeline) is restarted, the target stays the primary', () => {
    const d = decideInstances(input(healthy(), { designated: 'orders-1', configuredPrimary: 'orders-1' }));
    expect(d.primary).toBe('orders-1');
    expect(d.fence.map((f) => f.name)).toEqual(['orders-0']);
    expect(d.promote).toBeUndefined();
  });

  test('promoted only once the former primary has stopped: not while its pod is shutting down (it sends its last WAL)', () => {
    const [, one, two] = healthy();
    const stopping = { ...instance('orders-0', false), terminating: true };
    const waiting = decideInstances(
      input([stopping, one!, two!], { designated: 'orders-1', configuredPrimary: 'orders-1' }),
    );
    expect(waiting.promote).toBeUndefined();
    expect(waiting.requeueAfterMs).toBe(2000);
    const gone = decideInstances(
      input([instance('orders-0', false), one!, two!], { designated: 'orders-1', configuredPrimary: 'orders-1' }),
    );
    expect(gone.promote).toEqual({
      name: 'orders-1',
      reason:
        'the switchover to orders-1: the former primary has stopped, and orders-1 has received its WAL (0/3000100)',
      by: 'switchover',
    });
  });

  test('never to a standby more than 16 MiB behind, one not ready, one not streaming from the primary on its timeline, or one beyond the instances asked', () => {
    const behind = healthy();
    behind[1] = instance('orders-1', true, standbyAnswer('0/3000100', '0/0'));
    expect(decideInstances(input(behind, { switchoverTo: 'orders-1' })).switchover).toBeUndefined();
    const notReady = healthy();
    notReady[1] = instance('orders-1', false, standbyAnswer('0/3000100'));
    expect(decideInstances(input(notReady, { switchoverTo: 'orders-1' })).switchover).toBeUndefined();
    expect(decideInstances(input(healthy(), { switchoverTo: 'orders-2', count: 2 })).switchover).toBeUndefined();
    // Level with the primary, but on the timeline before its promotion: it does not follow it.
    const forked = [
      instance('orders-0', true, primaryAnswer('0/3000100', 2)),
      instance('orders-1', true, standbyAnswer('0/3000100', '0/3000100', 1)),
      instance('orders-2', true, standbyAnswer('0/3000100', '0/3000100', 2)),
    ];
    expect(decideInstances(input(forked, { switchoverTo: 'orders-1' })).switchover).toBeUndefined();
    expect(decideInstances(input(forked, { switchoverTo: 'orders-2' })).switchover?.to).toBe('orders-2');
    // Not streaming now (restarted, or cut off): not until it streams from the primary again.
    const cutOff = healthy();
    cutOff[1] = instance('orders-1', true, standbyAnswer('0/3000100', '0/3000100', 1, false));
    expect(decideInstances(input(cutOff, { switchoverTo: 'orders-1' })).switchover).toBeUndefined();
  });

  test('a scale-down below the primary: switched over to the most advanced standby that stays', () => {
    const list = [
      instance('orders-0', true, standbyAnswer('0/3000100', '0/3000000')),
      instance('orders-1', true, standbyAnswer('0/3000100')),
      instance('orders-2', true, primaryAnswer('0/3000100')),
    ];
    const d = decideInstances(input(list, { designated: 'orders-2', configuredPrimary: 'orders-2', count: 2 }));
    expect(d.switchover).toEqual({
      from: 'orders-2',
      to: 'orders-0',
      reason: 'orders-2 is beyond the 2 instances asked',
    });
  });
});

describe('a replicated Database rendered and judged', () => {
  const three = (status?: object, spec: object = {}) =>
    databaseResource({ instances: 3, failoverDelay: 30, ...spec }, status);
  const objects = (db: object, external?: { primary: string }) =>
    (external
      ? renderDeclaration(databaseController, db as any, external).objects
      : renderChildren(databaseController, db as any)) as any[];
  const find = (list: any[], kind: string, name: string) =>
    list.find((o) => o.kind === kind && o.metadata.name === name);

  /** The status a Database that was Available gets, its StatefulSet with `readyReplicas` and its instances as found. */
  const statusOnceAvailable = (readyReplicas: number, instances: DatabaseFacts) =>
    desiredDatabaseStatus(
      three({ primary: 'orders-0', conditions: [{ type: 'Available', status: 'True', reason: 'ServerReady' }] }),
      {
        hasCredentials: true,
        statefulSet: {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'orders' },
          status: { readyReplicas },
        },
        instances,
      },
    );

  test('three instances: a StatefulSet of 3 started by the start script, updated only as the operator restarts its pods, a disruption budget of one, the first instance the primary', () => {
    const list = objects(three());
    const sts = find(list, 'StatefulSet', 'orders');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    // One instance: the StatefulSet's own rolling update, as before.
    expect(
      find(objects(three(undefined, { instances: 1 })), 'StatefulSet', 'orders').spec.updateStrategy,
    ).toBeUndefined();
    expect(sts.spec.template.spec.containers[0].command).toEqual(['sh', '/etc/postgresql/operator/start.sh']);
    expect(find(list, 'PodDisruptionBudget', 'orders').spec.maxUnavailable).toBe(1);
    const config = find(list, 'ConfigMap', 'orders-config');
    expect(config.data.primary).toBe('orders-0');
    // Never held data yet: its primary may initialize one.
    expect(config.data.initialize).toBe('yes');
    expect(find(list, 'Service', 'orders-rw').spec.selector['statefulset.kubernetes.io/pod-name']).toBe('orders-0');
  });

  test('after a failover to orders-2: the Services and the ConfigMap name it; a scale to 1 keeps its StatefulSet at 3 until a switchover', () => {
    const list = objects(three({ primary: 'orders-0' }, { instances: 1 }), { primary: 'orders-2' });
    expect(find(list, 'Service', 'orders').spec.selector['statefulset.kubernetes.io/pod-name']).toBe('orders-2');
    expect(find(list, 'ConfigMap', 'orders-config').data).toMatchObject({ primary: 'orders-2' });
    expect(find(list, 'StatefulSet', 'orders').spec.replicas).toBe(3);
  });

  test('once it has served, a primary found without data may not start an empty one (3 instances); one instance alone still may', () => {
    expect(find(objects(three({ primary: 'orders-0' })), 'ConfigMap', 'orders-config').data.initialize).toBe('no');
    const single = databaseResource({ instances: 1, failoverDelay: 30 }, { primary: 'orders-0' });
    expect(
      find(renderChildren(databaseController, single) as any[], 'ConfigMap', 'orders-config').data.initialize,
    ).toBe('yes');
  });

  test('synchronous standbys: every instance started with the setting naming any instance the Database may have; none without', () => {
    const args = (spec: object) =>
      find(objects(three(undefined, spec)), 'StatefulSet', 'orders').spec.template.spec.containers[0].args as string[];
    const names = Array.from({ length: 9 }, (_, i) => `"orders-${String(i)}"`).join(', ');
    expect(args({ synchronousStandbys: 1 })).toEqual(
      expect.arrayContaining([`synchronous_standby_names=ANY 1 (${names})`]),
    );
    expect(args({}).join(' ')).not.toContain('synchronous_standby_names');
    // The list is the same at any scale: a scale changes no pod template.
    expect(args({ synchronousStandbys: 1, instances: 5 })).toEqual(args({ synchronousStandbys: 1 }));
  });

  test("backups dumped from a standby (<name>-ro), from the primary when none dumps it; one instance's from its server", () => {
    const dumpCommand = (spec: object = {}) =>
      find(objects(three(undefined, { backup: { enabled: true }, ...spec })), 'CronJob', 'orders-backup').spec
        .jobTemplate.spec.template.spec.containers[0].command[2] as string;
    expect(dumpCommand({ instances: 1 })).not.toContain('orders-ro');
    // Run by a shell, a pg_dump standing for the server each host names: the standby refuses first.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-dump-'));
    try {
      fs.mkdirSync(path.join(dir, 'bin'));
      fs.writeFileSync(
        path.join(dir, 'bin', 'pg_dump'),
        `#!/bin/sh\necho "$2" >> ${dir}/asked\ncase "$2" in orders-ro.*) [ -f ${dir}/standby-up ] || exit 1 ;; esac\necho "-- dump of $2"\n`,
        { mode: 0o755 },
      );
      // The Job's log (its stderr), the script having succeeded.
      const run = () => {
        const r = spawnSync(
          'sh',
          [
            '-c',
            dumpCommand()
              .replaceAll('/backup/', `${dir}/`)
              .replaceAll('/dev/termination-log', `${dir}/termination-log`),
          ],
          { env: { ...process.env, PATH: `${dir}/bin:${process.env.PATH ?? ''}` }, encoding: 'utf8' },
        );
        expect(r.status).toBe(0);
        return r.stderr;
      };
      expect(run()).toBe('no standby dumped it: dumping the primary through orders\n');
      const dumps = () => fs.readdirSync(dir).filter((f) => f.endsWith('.sql'));
      expect(dumps()).toHaveLength(1);
      expect(fs.readFileSync(path.join(dir, dumps()[0] ?? ''), 'utf8')).toBe('-- dump of orders.shop.svc\n');
      fs.writeFileSync(path.join(dir, 'standby-up'), '');
      for (const f of dumps()) fs.rmSync(path.join(dir, f));
      expect(run()).toBe('dumped from a standby through orders-ro\n');
      expect(fs.readFileSync(path.join(dir, dumps()[0] ?? ''), 'utf8')).toBe('-- dump of orders-ro.shop.svc\n');
      expect(fs.readFileSync(path.join(dir, 'asked'), 'utf8').trim().split('\n')).toEqual([
        'orders-ro.shop.svc',
        'orders.shop.svc',
        'orders-ro.shop.svc',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a standby leaves a silent primary after 5 s (not 60), to stream from the primary <name>-rw names now; its queries (a dump) hold back the rows they read (hot_standby_feedback)', () => {
    const start = find(objects(three()), 'ConfigMap', 'orders-config').data['start.sh'] as string;
    expect(start).toMatch(/exec docker-entrypoint\.sh .* -c wal_receiver_timeout=5s -c hot_standby_feedback=on\n/);
  });

  test('Available: a primary whose pod is ready but that did not answer the operator is not available (a hung server keeps its pod Ready)', () => {
    const status = statusOnceAvailable(3, {
      primary: 'orders-0',
      instances: [
        { name: 'orders-0', role: 'unknown', ready: true },
        { name: 'orders-1', role: 'standby', ready: true },
        { name: 'orders-2', role: 'standby', ready: true },
      ],
    });
    expect(status.conditions?.find((c) => c.type === 'Available')).toMatchObject({
      status: 'False',
      reason: 'ServerUnavailable',
    });
  });

  test('a failover held for a synchronous standby says why in Available', () => {
    const status = statusOnceAvailable(1, {
      primary: 'orders-0',
      instances: [{ name: 'orders-0', role: 'unknown', ready: false }],
      failoverHeld: 'orders-2 has received more WAL',
    });
    expect(status.conditions?.find((c) => c.type === 'Available')?.message).toBe(
      'the primary orders-0 was ready and is not ready now: writes are refused until it is back or, after 30 s, a standby is promoted; the failover waits: orders-2 has received more WAL',
    );
  });

  test('Available follows the primary: standbys ready while it is not is ServerUnavailable, with when a standby is promoted', () => {
    const status = statusOnceAvailable(2, {
      primary: 'orders-0',
      instances: [
        { name: 'orders-0', role: 'unknown', ready: false },
        { name: 'orders-1', role: 'standby', ready: true },
        { name: 'orders-2', role: 'standby', ready: true },
      ],
    });
    expect(status.phase).toBe('Unavailable');
    expect(status.conditions?.find((c) => c.type === 'Available')).toMatchObject({
      status: 'False',
      reason: 'ServerUnavailable',
      message:
        'the primary orders-0 was ready and is not ready now: writes are refused until it is back or, after 30 s, a standby is promoted',
    });
    expect(status.primary).toBe('orders-0');
    expect(status.instances).toHaveLength(3);
  });

  test('status.lastSwitchover: the annotation once the primary is the instance it names (every reconcile after says so), kept while it asks, dropped with it', () => {
    const annotated = (status: object) => ({
      ...three(status),
      metadata: { ...three().metadata, annotations: { 'database.example.com/switchover-to': 'orders-1' } },
    });
    const judged = (db: object, primary: string) =>
      desiredDatabaseStatus(db as any, { hasCredentials: true, instances: { primary, instances: [] } });
    expect(judged(annotated({ primary: 'orders-0' }), 'orders-0').lastSwitchover).toBeUndefined();
    expect(judged(annotated({ primary: 'orders-0' }), 'orders-1').lastSwitchover).toBe('orders-1');
    // A failover later moves the primary elsewhere: the switchover stays recorded, not asked again.
    expect(judged(annotated({ primary: 'orders-1', lastSwitchover: 'orders-1' }), 'orders-2').lastSwitchover).toBe(
      'orders-1',
    );
    expect(
      judged(three({ primary: 'orders-1', lastSwitchover: 'orders-1' }), 'orders-2').lastSwitchover,
    ).toBeUndefined();
  });

  test('the primary is recorded only once it has been ready: until then a new primary may initialize', () => {
    const status = desiredDatabaseStatus(three(), { hasCredentials: true });
    expect(status.primary).toBeUndefined();
  });
});

jest.mock('../../../constructs/database/instance-queries', () => ({
  askInstance: jest.fn(),
  promoteInstance: jest.fn(),
}));

describe('the external step over a replicated Database', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the mocked module, as the step loads it
  const queries = require('../../../constructs/database/instance-queries') as {
    askInstance: jest.Mock;
    promoteInstance: jest.Mock;
  };
  const runningPod = (name: string, ready: boolean): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orders', uid: 'sts-1', controller: true }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  const children = (primary = 'orders-0', stsStatus?: object, generation = 1) =>
    new ChildMap([
      [
        childKey('StatefulSet', 'orders'),
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'orders', uid: 'sts-1', generation },
          spec: { replicas: 3 },
          ...(stsStatus ? { status: stsStatus } : {}),
        },
      ],
      [
        childKey('ConfigMap', 'orders-config'),
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orders-config' }, data: { primary } },
      ],
    ]);
  const context = (pods: Pod[]) => {
    const writes: string[] = [];
    return {
      writes,
      context: {
        signal: new AbortController().signal,
        write: async (what: { action: string; target: string }, run: () => Promise<unknown>) => {
          writes.push(`${what.action} ${what.target}`);
          return run();
        },
        getOwn: async () => ({
          state: 'own' as const,
          object: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'orders-replication' },
            data: { password: Buffer.from('pw').toString('base64') },
          },
        }),
        getMadeFor: async () => ({ state: 'absent' as const }),
        read: () => pods,
      } as any,
    };
  };
  const answers = (byHost: Record<string, InstanceAnswer | undefined>) => {
    queries.askInstance.mockImplementation(async (host: string) => {
      const answer = byHost[host.split('.')[0] ?? ''];
      if (!answer) throw new Error('connection refused');
      return answer;
    });
  };
  beforeEach(() => {
    queries.askInstance.mockReset();
    queries.promoteInstance.mockReset();
  });

  test('one instance: nothing asked, the first instance the primary', async () => {
    const { context: c } = context([]);
    const step = await databaseInstancesStep(databaseResource({ instances: 1 }), new ChildMap(), c);
    expect(step).toEqual({ facts: { primary: 'orders-0' } });
    expect(queries.askInstance).not.toHaveBeenCalled();
  });

  test('three instances: each asked as the replication role by its name under the headless Service; standbys labelled', async () => {
    answers({
      'orders-0': primaryAnswer('0/3000100'),
      'orders-1': standbyAnswer('0/3000100'),
      'orders-2': standbyAnswer('0/3000000'),
    });
    const { context: c, writes } = context(['orders-0', 'orders-1', 'orders-2'].map((n) => runningPod(n, true)));
    const step = await databaseInstancesStep(
      databaseResource({ instances: 3, failoverDelay: 30 }, { primary: 'orders-0' }),
      children(),
      c,
    );
    expect(queries.askInstance).toHaveBeenCalledWith(
      'orders-1.orders-headless.shop.svc',
      expect.objectContaining({ password: 'pw', tls: true }),
    );
    expect(step.facts.primary).toBe('orders-0');
    expect(step.labelPods?.map((l) => [l.name, l.labels['database.example.com/role']])).toEqual([
      ['orders-0', null],
      ['orders-1', 'standby'],
      ['orders-2', 'standby'],
    ]);
    expect(writes).toEqual([]);
  });

  test('no instance answers (the operator cannot reach them, or plan runs outside the cluster): out of reach, nothing labelled or promoted', async () => {
    answers({});
    const { context: c } = context(['orders-0', 'orders-1'].map((n) => runningPod(n, true)));
    const step = await databaseInstancesStep(
      databaseResource({ instances: 3, failoverDelay: 30 }, { primary: 'orders-0' }),
      children(),
      c,
    );
    expect(step.outOfReach).toBe('no instance answered (asked orders-0, orders-1)');
    expect(step.labelPods).toBeUndefined();
  });

  test('mid-switchover, the ConfigMap naming the target while the status (written later, paced) still names the former primary: the target stays the primary, and is promoted once the former one is gone', async () => {
    answers({ 'orders-0': standbyAnswer('0/3000100'), 'orders-2': standbyAnswer('0/3000100') });
    const stopping = {
      ...runningPod('orders-1', false),
      metadata: { ...runningPod('orders-1', false).metadata, deletionTimestamp: '2026-12-06T12:00:00Z' },
    };
    const db = databaseResource({ instances: 3, failoverDelay: 30 }, { primary: 'orders-1' });
    const during = context([runningPod('orders-0', true), stopping, runningPod('orders-2', true)]);
    const step = await databaseInstancesStep(db, children('orders-0'), during.context);
    expect(step.facts.primary).toBe('orders-0');
    expect(during.writes).toEqual([]);
    const after = context([runningPod('orders-0', true), runningPod('orders-2', true)]);
    const done = await databaseInstancesStep(db, children('orders-0'), after.context);
    expect(after.writes).toEqual(['Promote orders-0']);
    expect(done.facts.primary).toBe('orders-0');
    expect(done.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'SwitchedOver' })]);
  });

  test('the primary gone past failoverDelay: the most advanced standby promoted through the gate, with its Event', async () => {
    answers({ 'orders-1': standbyAnswer('0/3000100'), 'orders-2': standbyAnswer('0/3000200') });
    const { context: c, writes } = context([
      runningPod('orders-0', false),
      runningPod('orders-1', true),
      runningPod('orders-2', true),
    ]);
    const since = new Date(Date.now() - 60_000).toISOString();
    const db = databaseResource(
      { instances: 3, failoverDelay: 30 },
      {
        primary: 'orders-0',
        conditions: [{ type: 'Available', status: 'False', reason: 'ServerUnavailable', lastTransitionTime: since }],
      },
    );
    const step = await databaseInstancesStep(db, children(), c);
    expect(writes).toEqual(['Promote orders-2']);
    expect(queries.promoteInstance).toHaveBeenCalledWith('orders-2.orders-headless.shop.svc', expect.anything());
    expect(step.facts.primary).toBe('orders-2');
    expect(step.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'FailedOver',
        message: expect.stringMatching(
          /^Promoted orders-2 to primary: the primary orders-0 has not been ready for 6\d s/,
        ),
      }),
    ]);
  });

  test("a template change: the StatefulSet's settled revision compared with each pod's, an outdated standby restarted; none while the StatefulSet has not seen its spec", async () => {
    answers({
      'orders-0': primaryAnswer('0/3000100'),
      'orders-1': standbyAnswer('0/3000100'),
      'orders-2': standbyAnswer('0/3000100'),
    });
    const pods = ['orders-0', 'orders-1', 'orders-2'].map((n) => {
      const p = runningPod(n, true);
      return { ...p, metadata: { ...p.metadata, labels: { 'controller-revision-hash': 'orders-old' } } };
    });
    const { context: c } = context(pods);
    const db = databaseResource({ instances: 3, failoverDelay: 30 }, { primary: 'orders-0' });
    const settled = await databaseInstancesStep(
      db,
      children('orders-0', { observedGeneration: 2, updateRevision: 'orders-new' }, 2),
      c,
    );
    expect(settled.restartPods?.map((r) => r.name)).toEqual(['orders-1']);
    const unsettled = await databaseInstancesStep(
      db,
      // A status of the generation before: its revision is not the template's now.
      children('orders-0', { observedGeneration: 1, updateRevision: 'orders-new' }, 2),
      c,
    );
    expect(unsettled.restartPods).toEqual([]);
  });
});
