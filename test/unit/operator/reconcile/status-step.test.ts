/**
 * The write step on its own: a resource deleted while it was reconciled has no status to write,
 * and that is not an error (the reconcile ends; its deletion's event forgets it), as
 * controller-runtime's reconcilers ignore NotFound.
 */
import pino from 'pino';
import { customResourceType } from '../../../../constructs';
import { memcachedKind } from '../../../../constructs/memcached/api';
import type { Resource, Target } from '../../../../operator/runtime/reconcile/controller-parts';
import { StatusPacer, writeStatus } from '../../../../operator/runtime/reconcile/status-pacing';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const type = customResourceType<Resource>(memcachedKind);

function setUp(client: FakeKubeClient, resource: Resource) {
  const pacer = new StatusPacer(0);
  const parts = { type, pacer };
  const ctx = { client, logger: pino({ level: 'silent' }), signal: new AbortController().signal };
  const t = {
    key: 'ns/m',
    resource,
    ctx,
    uid: resource.metadata.uid,
    generation: 1,
    namespace: 'ns',
  } as unknown as Target;
  return { parts, t, paced: pacer.begin('ns/m') };
}

const memcached = (): Resource => ({
  apiVersion: memcachedKind.apiVersion,
  kind: memcachedKind.kind,
  metadata: { name: 'm', namespace: 'ns', uid: 'u1', generation: 1 },
  spec: { size: 1 },
});

test('writes a changed status', async () => {
  const client = new FakeKubeClient();
  const stored = await client.create(type, memcached());
  const { parts, t, paced } = setUp(client, stored);
  await writeStatus(parts, t, { status: { observedGeneration: 1 }, childrenChanged: false, paced });
  expect((await client.get(type, 'm', 'ns')).status).toEqual({ observedGeneration: 1 });
});

test('a resource deleted while it was reconciled: nothing to write, and no error', async () => {
  const client = new FakeKubeClient();
  const { parts, t, paced } = setUp(client, memcached());
  await expect(
    writeStatus(parts, t, { status: { observedGeneration: 1 }, childrenChanged: false, paced }),
  ).resolves.toBeUndefined();
});
