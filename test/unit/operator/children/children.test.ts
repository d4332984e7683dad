import { databaseOfChild } from '../../../../constructs/database/controller';
import { etcdClusterOfChild } from '../../../../constructs/etcd/controller';
import { livePodNames, podFailure } from '../../../../constructs/core/pods';

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

  // A kubelet restarts a container that exits under restartPolicy Always (every Deployment's and
  // StatefulSet's pod): the pod stays Running, the container waits in CrashLoopBackOff, and why
  // it stopped is only in lastState.
  test('a crash loop says how the container last exited', () => {
    const crashLooping = {
      metadata: { name: 'kv-0', namespace: 'ns' },
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'etcd',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container' } },
            lastState: { terminated: { exitCode: 2, reason: 'Error' } },
          },
        ],
      },
    };
    expect(podFailure(podInformer([crashLooping]))).toEqual({
      reason: 'PodFailing',
      message:
        'pod kv-0: container etcd exited with code 2 (Error) and is waiting: CrashLoopBackOff: back-off 10s restarting failed container',
    });
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
