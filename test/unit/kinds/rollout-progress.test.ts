/**
 * A Database or EtcdCluster whose pods are all ready is not as its spec asks while its StatefulSet
 * has not rolled out that spec (a new version) or its claims have not grown: `Progressing=True`
 * from the StatefulSet's verdict, so the runtime's `Ready` (and kstatus, and `helm --wait`) waits.
 * Found on the real node: `helm upgrade --wait` to a version whose image could not be pulled
 * returned success in a second, the old server still ready.
 */
import type { StatefulSet, Verdict } from '../../../constructs/contract';
import { ConditionList } from '../../../constructs/contract/conditions';
import { desiredDatabaseStatus } from '../../../constructs/database/controller';
import { desiredEtcdStatus } from '../../../constructs/etcd/controller';

const condition = (status: { conditions?: { type: string }[] }, type: string) =>
  status.conditions?.find((c) => c.type === type);

const readyStatefulSet = (replicas: number): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'x', generation: 2 },
  spec: { replicas },
  status: { observedGeneration: 1, replicas, readyReplicas: replicas, updatedReplicas: replicas },
});

const rollingOut: Verdict = {
  readiness: 'InProgress',
  reason: 'RolloutPending',
  message: 'its controller has not yet seen generation 2',
};
const current: Verdict = { readiness: 'Current', reason: 'Current', message: '1 pod(s) ready' };

describe('Progressing follows the StatefulSet’s rollout', () => {
  const database = {
    apiVersion: 'database.example.com/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop', uid: 'u-orders', generation: 2 },
    spec: {
      type: 'postgresql',
      version: '16',
      storage: { size: '1Gi' },
      backup: { enabled: false, schedule: '0 2 * * *', finalSnapshot: false },
      tls: { enabled: true, required: false },
      deletionPolicy: 'Retain',
    },
  } as any;

  test('Database: the old server still ready is Available, and Progressing until the StatefulSet runs the new spec', () => {
    const input = { statefulSet: readyStatefulSet(1), hasCredentials: true };
    const moving = desiredDatabaseStatus(database, { ...input, statefulSetHealth: rollingOut });
    expect(condition(moving, 'Available')).toMatchObject({ status: 'True' });
    expect(condition(moving, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'RolloutPending',
      message: 'StatefulSet: its controller has not yet seen generation 2',
    });
    const done = desiredDatabaseStatus(database, { ...input, statefulSetHealth: current });
    expect(condition(done, 'Progressing')).toMatchObject({ status: 'False', reason: 'Complete' });
    // Rendered statically (no verdict): by the ready server, as before.
    expect(condition(desiredDatabaseStatus(database, input), 'Progressing')).toMatchObject({ status: 'False' });
  });

  test('EtcdCluster: every member ready of the old version is Progressing, not Complete, until the StatefulSet rolled out', () => {
    const cluster = {
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'kv', namespace: 'db', uid: 'u-kv', generation: 2 },
      spec: { replicas: 3, version: '3.6.0', storage: '2Gi' },
    } as any;
    const input = { statefulSet: readyStatefulSet(3), members: ['kv-0', 'kv-1', 'kv-2'] };
    const moving = desiredEtcdStatus(cluster, { ...input, statefulSetHealth: rollingOut });
    expect(condition(moving, 'Progressing')).toMatchObject({ status: 'True', reason: 'RolloutPending' });
    expect(moving.phase).not.toBe('Running');
    const done = desiredEtcdStatus(cluster, { ...input, statefulSetHealth: current });
    expect(condition(done, 'Progressing')).toMatchObject({ status: 'False', reason: 'Complete' });
    expect(done.phase).toBe('Running');
  });
});

describe('a pod failure reported stands only for the spec it was seen under', () => {
  test('Degraded PodFailing holds between failures at one generation, and is not carried to the next (an image set back)', () => {
    const failing = {
      type: 'Degraded',
      status: 'True' as const,
      reason: 'PodFailing',
      message: 'StatefulSet db: pod db-0: ErrImagePull',
      observedGeneration: 2,
      lastTransitionTime: '2026-11-29T00:00:00Z',
    };
    expect(new ConditionList([failing], 2).reported('PodFailing')).toEqual({
      reason: 'PodFailing',
      message: 'StatefulSet db: pod db-0: ErrImagePull',
    });
    expect(new ConditionList([failing], 3).reported('PodFailing')).toBeUndefined();
    expect(new ConditionList([failing], 2).reported('CrashLoop')).toBeUndefined();
  });
});
