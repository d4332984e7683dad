import pino from 'pino';
import { ApiError } from '../../../operator/runtime/client';
import { podFailure, rejectionOf } from '../../../operator/runtime/children';
import { databaseOfChild } from '../../../operator/controllers/database';
import { etcdClusterOfChild } from '../../../operator/controllers/etcdcluster';
import type { Informer } from '../../../operator/runtime/informer';
import type { ReconcileContext } from '../../../operator/runtime/controller';

function fakeContext() {
  const events: string[] = [];
  const ctx = {
    client: {},
    logger: pino({ level: 'silent' }),
    recorder: { record: async (_o: unknown, type: string, reason: string) => { events.push(`${type}/${reason}`); } },
  } as unknown as ReconcileContext;
  return { ctx, events };
}

const owner = (degraded: boolean) => ({
  metadata: { name: 'x', namespace: 'ns', uid: 'u' },
  status: { conditions: [{ type: 'Degraded', status: degraded ? 'True' : 'False', reason: 'r', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
});

describe('rejectionOf', () => {
  test('an invalid request becomes a message and one Warning Event, not a retry', async () => {
    const { ctx, events } = fakeContext();
    const msg = await rejectionOf(ctx, owner(false), 'InvalidThing', async () => { throw new ApiError(422, 'Invalid', 'PATCH x: 422 Invalid: spec.replicas: must be >= 0'); });
    expect(msg).toContain('spec.replicas');
    expect(events).toEqual(['Warning/InvalidThing']);
  });

  test('no second Warning while the object is already Degraded (a resync writes nothing)', async () => {
    const { ctx, events } = fakeContext();
    await rejectionOf(ctx, owner(true), 'InvalidThing', async () => { throw new ApiError(400, 'BadRequest', 'bad'); });
    expect(events).toEqual([]);
  });

  test('other errors are thrown, to be retried with backoff; success returns nothing', async () => {
    const { ctx } = fakeContext();
    await expect(rejectionOf(ctx, owner(false), 'X', async () => { throw new ApiError(500, 'InternalError', 'boom'); })).rejects.toThrow('boom');
    await expect(rejectionOf(ctx, owner(false), 'X', async () => { throw new Error('ECONNRESET'); })).rejects.toThrow('ECONNRESET');
    expect(await rejectionOf(ctx, owner(false), 'X', async () => undefined)).toBeUndefined();
  });
});

describe('podFailure', () => {
  const podInformer = (pods: object[]) => ({ list: () => pods }) as unknown as Informer;
  const pod = (name: string, phase: string, state: object) => ({ metadata: { name, namespace: 'ns' }, status: { phase, containerStatuses: [{ name: 'main', state }] } });

  test('a failed pod whose container exited non-zero, or a container stuck in a back-off, is a failure', () => {
    expect(podFailure(podInformer([pod('b', 'Running', { running: {} }), pod('a', 'Failed', { terminated: { exitCode: 1, reason: 'Error', message: 'boom' } })]), 'ns', {}))
      .toEqual({ reason: 'PodFailing', message: 'pod a: container main exited with code 1 (Error): boom' });
    expect(podFailure(podInformer([pod('c', 'Pending', { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } })]), 'ns', {})?.message)
      .toBe('pod c: container main is waiting: ImagePullBackOff: no such image');
  });

  test('starting, running, succeeded and terminating pods are not', () => {
    const terminating = { ...pod('d', 'Failed', { terminated: { exitCode: 137 } }), metadata: { name: 'd', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' } };
    expect(podFailure(podInformer([
      pod('a', 'Pending', { waiting: { reason: 'ContainerCreating' } }),
      pod('b', 'Running', { running: {} }),
      pod('c', 'Succeeded', { terminated: { exitCode: 0 } }),
      terminating,
    ]), 'ns', {})).toBeUndefined();
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
