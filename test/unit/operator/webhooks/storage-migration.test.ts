/**
 * Storage migration (operator/runtime/webhooks/storage-migration.ts), with the in-memory client:
 * after a storage version change every object is written once again and `storedVersions` trimmed
 * to the storage version; with nothing to migrate, nothing is written.
 */
import pino from 'pino';
import { BuiltinTypes, customResourceType, memcachedKind } from '../../../../constructs';
import { migrateStorage } from '../../../../operator/runtime/webhooks/storage-migration';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const logger = pino({ level: 'silent' });

function cluster(storedVersions: string[]): FakeKubeClient {
  const client = new FakeKubeClient();
  client.seed(BuiltinTypes.CustomResourceDefinition, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: memcachedKind.crdName },
    status: { storedVersions },
  });
  const type = customResourceType(memcachedKind);
  for (const [namespace, name] of [
    ['shop', 'a'],
    ['shop', 'b'],
    ['blog', 'c'],
  ] as const)
    client.seed(type, {
      apiVersion: `${memcachedKind.group}/${memcachedKind.storageVersion}`,
      kind: 'Memcached',
      metadata: { name, namespace },
      spec: { size: 1 },
    });
  return client;
}

describe('migrateStorage', () => {
  test('objects stored in an older version: each written once again, then storedVersions is the storage version alone', async () => {
    const older = memcachedKind.versions.find((v) => v !== memcachedKind.storageVersion) ?? '';
    const client = cluster([older, memcachedKind.storageVersion]);
    const result = await migrateStorage(client, memcachedKind, logger);
    expect(result).toEqual({ storedVersions: [older, memcachedKind.storageVersion], rewritten: 3 });
    expect(
      client.writes
        .map((w) => `${w.verb} ${w.kind} ${w.namespace ?? ''}/${w.name}${w.subresource ? ` ${w.subresource}` : ''}`)
        .sort(),
    ).toEqual([
      'patch CustomResourceDefinition /memcacheds.cache.example.com status',
      'patch Memcached blog/c',
      'patch Memcached shop/a',
      'patch Memcached shop/b',
    ]);
    expect(client.peek(BuiltinTypes.CustomResourceDefinition, memcachedKind.crdName)?.status?.storedVersions).toEqual([
      memcachedKind.storageVersion,
    ]);
  });

  test('nothing stored in another version: it reads the CRD and writes nothing', async () => {
    const client = cluster([memcachedKind.storageVersion]);
    expect(await migrateStorage(client, memcachedKind, logger)).toEqual({
      storedVersions: [memcachedKind.storageVersion],
      rewritten: 0,
    });
    expect(client.writes).toEqual([]);
  });

  test('stopping (shutdown) ends it before the next object, with storedVersions left as they were', async () => {
    const older = memcachedKind.versions.find((v) => v !== memcachedKind.storageVersion) ?? '';
    const client = cluster([older, memcachedKind.storageVersion]);
    const stop = new AbortController();
    stop.abort();
    await expect(migrateStorage(client, memcachedKind, logger, stop.signal)).rejects.toThrow(/shutting down/);
    expect(client.peek(BuiltinTypes.CustomResourceDefinition, memcachedKind.crdName)?.status?.storedVersions).toEqual([
      older,
      memcachedKind.storageVersion,
    ]);
  });
});
