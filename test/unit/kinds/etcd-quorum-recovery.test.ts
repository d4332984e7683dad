import { ChildMap, type CacheReads, type KubeObject } from '../../../constructs/contract';
import { etcdClusterController } from '../../../constructs/etcd/controller';
import {
  beginRecovery,
  forcingRecovery,
  RECOVERING_QUORUM,
  recoveryObstacles,
} from '../../../constructs/etcd/quorum-recovery';
import { RECOVER_FROM_ANNOTATION } from '../../../constructs/etcd/quorum-recovery-names';
import { bootstrapTopology, type EtcdTopology, observedTopology } from '../../../constructs/etcd/topology';
import type { WithoutMemberList } from '../../../constructs/etcd/without-member-list';
import { renderDeclaration } from '../../../operator/runtime/children/render';

const renderChildren = (decl: any, c: any, facts: object) => renderDeclaration(decl, c, facts).objects;
import { etcdResource } from '../../support/data-resources';

/** A cluster kv of 3 that last listed kv-0..2 healthy on claims c-0..2, annotated to recover from `from`. */
const cluster = (from?: string) => {
  const c = etcdResource(
    {},
    {
      phase: 'Running',
      etcdMembers: [0, 1, 2].map((i) => ({ name: `kv-${i}`, id: `${i + 1}`, healthy: true, claimUID: `c-${i}` })),
    },
  );
  if (from) c.metadata.annotations = { [RECOVER_FROM_ANNOTATION]: from };
  return c;
};

/** Cache reads holding these claims (name → uid) and pods (name → uid). */
const reads = (claims: Record<string, string>, pods: Record<string, string> = {}): CacheReads => ({
  read: ((type: { kind: string }) => {
    const meta = (name: string, uid: string) => ({ metadata: { name, uid, namespace: 'db' } }) as KubeObject;
    if (type.kind === 'PersistentVolumeClaim') return Object.entries(claims).map(([n, u]) => meta(n, u));
    if (type.kind === 'Pod') return Object.entries(pods).map(([n, u]) => meta(n, u));
    return [];
  }) as CacheReads['read'],
});

const quorumLost: WithoutMemberList = {
  answering: ['kv-0'],
  step: { reason: 'QuorumLost', message: 'quorum lost: only kv-0 of 3 members answers' },
};
const formed: EtcdTopology = {
  ...bootstrapTopology('kv', 'db', 3, '3.5.21', 'TLS'),
  clusterState: 'existing',
};
const allLost = { 'data-kv-0': 'c-0', 'data-kv-1': 'new-1', 'data-kv-2': 'new-2' };

describe('recovering a lost quorum from a survivor: when it is safe', () => {
  test('every other member on a new claim (or none), the survivor on its own: safe', () => {
    expect(recoveryObstacles(cluster(), 'kv-0', ['kv-0'], new Map(Object.entries(allLost)))).toBeUndefined();
    expect(recoveryObstacles(cluster(), 'kv-0', ['kv-0'], new Map([['data-kv-0', 'c-0']]))).toBeUndefined();
  });

  test.each([
    [
      'a member that keeps its claim',
      'kv-0',
      ['kv-0'],
      { ...allLost, 'data-kv-2': 'c-2' },
      /kv-2 still runs on the claim it last ran on healthy.*delete claim data-kv-2 and its pod/,
    ],
    [
      'two that keep theirs',
      'kv-0',
      ['kv-0'],
      { 'data-kv-0': 'c-0', 'data-kv-1': 'c-1', 'data-kv-2': 'c-2' },
      /kv-1, kv-2 still run on the claim/,
    ],
    ['a survivor that does not answer', 'kv-1', ['kv-0'], allLost, /kv-1 does not answer/],
    [
      "a survivor on a claim of another uid (its data not the cluster's)",
      'kv-0',
      ['kv-0'],
      { ...allLost, 'data-kv-0': 'other' },
      /kv-0 does not run on the claim it last ran on healthy/,
    ],
    ['a name that is no member', 'web-0', ['kv-0'], allLost, /web-0 is not a member of kv/],
  ] as const)('refused: %s', (_, survivor, answering, claims, message) => {
    expect(recoveryObstacles(cluster(), survivor, answering, new Map(Object.entries(claims)))).toMatch(message);
  });
});

describe('a recovery begun, forced and finished', () => {
  test('nothing without the annotation, nor without a quorum loss', () => {
    expect(beginRecovery(cluster(), formed, quorumLost, reads(allLost, { 'kv-0': 'p-0' }))).toBeUndefined();
    const electing = { answering: ['kv-0', 'kv-1'], step: { reason: 'MembersUnreachable', message: '' } };
    expect(beginRecovery(cluster('kv-0'), formed, electing, reads(allLost, { 'kv-0': 'p-0' }))).toBeUndefined();
  });

  test('refused: Degraded RecoveryRefused (through report.refused), the topology unchanged, no restart', () => {
    const r = beginRecovery(
      cluster('kv-0'),
      formed,
      quorumLost,
      reads({ ...allLost, 'data-kv-1': 'c-1' }, { 'kv-0': 'p-0' }),
    )!;
    expect(r.report.refused).toMatchObject({ reason: 'RecoveryRefused' });
    expect(r.report.step?.reason).toBe('QuorumLost');
    expect(r.topology).toBe(formed);
    expect(r.restartPods).toBeUndefined();
    const status = etcdClusterController.status!(cluster('kv-0'), {
      external: { topology: r.topology, report: r.report },
      children: new ChildMap(),
      before: new ChildMap(),
      changes: [],
      health: { ready: true, children: [] },
      read: () => [],
      now: new Date(0),
    } as any) as any;
    expect(status.conditions.find((c: any) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'RecoveryRefused',
    });
    // The members as last listed stay, none healthy: what the next decision is judged by.
    expect(status.etcdMembers.map((m: any) => [m.name, m.claimUID, m.healthy])).toEqual([
      ['kv-0', 'c-0', false],
      ['kv-1', 'c-1', false],
      ['kv-2', 'c-2', false],
    ]);
  });

  test('begun: the ConfigMap forces a new cluster naming the survivor and its pod, no ordinal above it is kept; the pod is restarted only once the ConfigMap says so', () => {
    const c = cluster('kv-0');
    const begun = beginRecovery(c, formed, quorumLost, reads(allLost, { 'kv-0': 'p-0' }))!;
    expect(begun.report.step?.reason).toBe(RECOVERING_QUORUM);
    expect(begun.topology).toMatchObject({ forcedStart: { member: 'kv-0', podUID: 'p-0' }, replicas: 1 });
    expect(begun.restartPods).toBeUndefined();
    expect(begun.events.map((e) => e.reason)).toEqual(['QuorumRecoveryStarted']);

    // Rendered: the flag and what it started from, read back by the next reconcile.
    const children = renderChildren(etcdClusterController, c, { topology: begun.topology, report: begun.report });
    const cm = children.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'kv-members') as any;
    expect(cm.data.ETCD_FORCE_NEW_CLUSTER).toBe('true');
    const sts = children.find((o) => o.kind === 'StatefulSet') as any;
    expect(sts.spec.replicas).toBe(1);
    const observed = new ChildMap();
    observed.set('ConfigMap/kv-members', cm);
    observed.set('StatefulSet/kv', sts);
    const again = observedTopology(c, observed);
    expect(again.forcedStart).toEqual({ member: 'kv-0', podUID: 'p-0' });

    // The same pod still: restarted, by its uid.
    const forcing = forcingRecovery(c, again, again.forcedStart!, reads(allLost, { 'kv-0': 'p-0' }));
    expect(forcing.restartPods).toEqual([expect.objectContaining({ name: 'kv-0', uid: 'p-0' })]);
    expect(forcing.topology.forcedStart).toEqual(again.forcedStart);
    // Made again since: it has read the flag; waited for, never restarted twice.
    const started = forcingRecovery(c, again, again.forcedStart!, reads(allLost, { 'kv-0': 'p-0b' }));
    expect(started.restartPods).toBeUndefined();
    expect(started.report.step?.message).toContain('waiting for kv-0 to start as a cluster of one');
    expect(started.topology.forcedStart).toBeDefined();
  });

  test('withdrawn before the restart (the annotation removed): the flag goes, nothing restarted', () => {
    const forced = { ...formed, forcedStart: { member: 'kv-0', podUID: 'p-0' } };
    const r = forcingRecovery(cluster(), forced, forced.forcedStart, reads(allLost, { 'kv-0': 'p-0' }));
    expect(r.topology.forcedStart).toBeUndefined();
    expect(r.restartPods).toBeUndefined();
    const children = renderChildren(etcdClusterController, cluster(), { topology: r.topology, report: r.report });
    const cm = children.find((o) => o.kind === 'ConfigMap') as any;
    expect(cm.data.ETCD_FORCE_NEW_CLUSTER).toBeUndefined();
    expect(cm.metadata.annotations ?? {}).toEqual({});
  });

  test('a ConfigMap without the flag, or the flag without the names, forces nothing', () => {
    const cm = (data: object, annotations?: object) => {
      const m = new ChildMap();
      m.set('ConfigMap/kv-members', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kv-members', ...(annotations ? { annotations } : {}) },
        data: { ETCD_INITIAL_CLUSTER: formed.initialCluster, ETCD_INITIAL_CLUSTER_STATE: 'existing', ...data },
      } as any);
      m.set('StatefulSet/kv', {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'kv' },
        spec: { replicas: 3 },
      });
      return m as any;
    };
    expect(observedTopology(cluster(), cm({})).forcedStart).toBeUndefined();
    expect(observedTopology(cluster(), cm({ ETCD_FORCE_NEW_CLUSTER: 'true' })).forcedStart).toBeUndefined();
  });
});
