import { databaseOfChild } from '../../../constructs/database/controller';
import { etcdClusterOfChild } from '../../../constructs/etcd/controller';
import { livePodNames, podFailure } from '../../../constructs/core/pods';

test('livePodNames: live pods only (not terminating, succeeded or failed), sorted', () => {
  const pod = (name: string, phase: string, extra: object = {}) => ({
    metadata: { name, ...extra },
    status: { phase },
  });
  expect(
    livePodNames([
      pod('c', 'Running'),
      pod('a', 'Pending'),
      pod('b', 'Failed'),
      pod('d', 'Succeeded'),
      pod('e', 'Running', { deletionTimestamp: 'x' }),
    ]),
  ).toEqual(['a', 'c']);
});

describe('podFailure', () => {
  const podInformer = (pods: object[]) => pods as never[];
  const pod = (name: string, phase: string, state: object) => ({
    metadata: { name, namespace: 'ns' },
    status: { phase, containerStatuses: [{ name: 'main', state }] },
  });

  test('a failed pod whose container exited non-zero, or a container stuck in a back-off, is a failure', () => {
    expect(
      podFailure(
        podInformer([
          pod('b', 'Running', { running: {} }),
          pod('a', 'Failed', { terminated: { exitCode: 1, reason: 'Error', message: 'boom' } }),
        ]),
      ),
    ).toEqual({ reason: 'PodFailing', message: 'pod a: container main exited with code 1 (Error): boom' });
    expect(
      podFailure(
        podInformer([pod('c', 'Pending', { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } })]),
      )?.message,
    ).toBe('pod c: container main is waiting: ImagePullBackOff: no such image');
  });

  test('starting, running, succeeded and terminating pods are not', () => {
    const terminating = {
      ...pod('d', 'Failed', { terminated: { exitCode: 137 } }),
      metadata: { name: 'd', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    expect(
      podFailure(
        podInformer([
          pod('a', 'Pending', { waiting: { reason: 'ContainerCreating' } }),
          pod('b', 'Running', { running: {} }),
          pod('c', 'Succeeded', { terminated: { exitCode: 0 } }),
          terminating,
        ]),
      ),
    ).toBeUndefined();
  });
});

describe('which custom resource a failure Event is about', () => {
  test('etcd: the StatefulSet named after the cluster, or a member claim data-<name>-<ordinal>', () => {
    expect(etcdClusterOfChild({ kind: 'StatefulSet', name: 'kv' })).toBe('kv');
    expect(etcdClusterOfChild({ kind: 'PersistentVolumeClaim', name: 'data-my-kv-12' })).toBe('my-kv');
    expect(etcdClusterOfChild({ kind: 'PersistentVolumeClaim', name: 'logs-kv' })).toBeUndefined();
    expect(etcdClusterOfChild({ kind: 'Pod', name: 'kv-0' })).toBeUndefined();
  });

  test('database: the StatefulSet, its data claim, or its backup claim', () => {
    expect(databaseOfChild({ kind: 'StatefulSet', name: 'db' })).toBe('db');
    expect(databaseOfChild({ kind: 'PersistentVolumeClaim', name: 'data-db-0' })).toBe('db');
    expect(databaseOfChild({ kind: 'PersistentVolumeClaim', name: 'db-backup' })).toBe('db');
  });
});
