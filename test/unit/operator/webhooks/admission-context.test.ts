/**
 * What a `validate` hook may read of a resource under review (operator/runtime/webhooks/
 * admission-context.ts): its owned children and its declared reads, from the controller's own
 * caches (real informers over the in-memory client); refused while those caches have not synced,
 * and by a sharded replica for a namespace it does not cache.
 */
import pino from 'pino';
import { BuiltinTypes, type ConfigMap, type KubeObject, type ResourceType } from '../../../../constructs/contract';
import { Informer } from '../../../../operator/runtime/cache';
import { admissionContextFor } from '../../../../operator/runtime/webhooks/admission-context';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const logger = pino({ level: 'silent' });
const OWNER_UID = 'store-uid';

const owned = (name: string, uid?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'shop',
    ...(uid ? { ownerReferences: [{ apiVersion: 'x/v1', kind: 'Store', name: 'store', uid, controller: true }] } : {}),
  },
});

const secret = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'shop', labels },
});

async function setUp(options: { synced?: boolean; owns?: (ns: string | undefined) => boolean } = {}) {
  const client = new FakeKubeClient();
  client.seed(BuiltinTypes.ConfigMap, owned('store-config', OWNER_UID), owned('someone-elses', 'other'));
  client.seed(BuiltinTypes.Secret, secret('tls', { app: 'store' }), secret('other', { app: 'blog' }));
  const informers = new Map<string, Informer>();
  const stop = new AbortController();
  const manager = {
    informer: (t: ResourceType) => {
      const inf = informers.get(t.kind) ?? new Informer(client, t, { logger });
      informers.set(t.kind, inf);
      return inf;
    },
    synced: options.synced ?? true,
    owns: options.owns ?? (() => true),
  };
  const decl = {
    name: 'store',
    for: { group: 'x', kind: 'Store' },
    owns: [BuiltinTypes.ConfigMap],
    reads: [BuiltinTypes.Secret],
  } as never;
  const contextOf = admissionContextFor(manager as never, decl);
  const running = [...informers.values()].map((i) => i.run(stop.signal));
  await Promise.all([...informers.values()].map((i) => i.waitForSync()));
  return { contextOf, done: async () => (stop.abort(), await Promise.all(running)) };
}

const store = { apiVersion: 'x/v1', kind: 'Store', metadata: { name: 'store', namespace: 'shop', uid: OWNER_UID } };

describe('admissionContextFor', () => {
  test('the children it controls (no one else’s), and what it declares it reads, from the caches', async () => {
    const { contextOf, done } = await setUp();
    try {
      const context = contextOf(store);
      expect([...context.children.keys()]).toEqual(['ConfigMap/store-config']);
      expect(context.read(BuiltinTypes.Secret, { app: 'store' }).map((s) => s.metadata.name)).toEqual(['tls']);
      // A new resource (no uid yet) has no children.
      expect(contextOf({ ...store, metadata: { name: 'new', namespace: 'shop' } }).children.size).toBe(0);
    } finally {
      await done();
    }
  });

  test('a read it does not declare is an error naming it', async () => {
    const { contextOf, done } = await setUp();
    try {
      expect(() => contextOf(store).read<ConfigMap>(BuiltinTypes.ConfigMap)).toThrow(
        'controller store reads ConfigMap but does not declare it in reads',
      );
    } finally {
      await done();
    }
  });

  test('refused (fail-closed) until the caches have synced, and by a replica not caching that namespace', async () => {
    const starting = await setUp({ synced: false });
    try {
      expect(() => starting.contextOf(store)).toThrow(/caches have not synced yet/);
    } finally {
      await starting.done();
    }
    const sharded = await setUp({ owns: (ns) => ns !== 'shop' });
    try {
      expect(() => sharded.contextOf(store)).toThrow(/caches one shard of the namespaces, not shop's/);
    } finally {
      await sharded.done();
    }
  });
});
