import type { KubeObject } from '../../../../constructs/contract';
import { IndexedStore } from '../../../../operator/runtime/cache/store';
import { obj } from '../support/fake-client';

/** A ConfigMap with labels, and a controller owner when `owner` is given. */
function labelled(name: string, namespace: string, labels: Record<string, string>, owner?: string): KubeObject {
  const o = obj(name, '1', namespace);
  return {
    ...o,
    metadata: {
      ...o.metadata,
      labels,
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: owner, uid: owner, controller: true }] }
        : {}),
    },
  };
}

const names = (objects: KubeObject[]) => objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('IndexedStore', () => {
  test('lists by namespace, by labels within a namespace or across all, and by controller owner', () => {
    const store = new IndexedStore<KubeObject>();
    store.put('a/1', labelled('1', 'a', { app: 'web', tier: 'front' }, 'owner-x'));
    store.put('a/2', labelled('2', 'a', { app: 'web', tier: 'back' }));
    store.put('b/3', labelled('3', 'b', { app: 'web' }, 'owner-x'));
    expect(store.size).toBe(3);
    expect(names(store.list('a'))).toEqual(['a/1', 'a/2']);
    expect(names(store.list(undefined, { app: 'web' }))).toEqual(['a/1', 'a/2', 'b/3']);
    expect(names(store.list('a', { app: 'web', tier: 'back' }))).toEqual(['a/2']);
    expect(names(store.list('b', { tier: 'front' }))).toEqual([]);
    expect(names(store.listControlledBy('owner-x'))).toEqual(['a/1', 'b/3']);
    expect(store.listControlledBy('nobody')).toEqual([]);
  });

  test('a put that changes labels or owner moves the object between index entries; a remove takes it out of all', () => {
    const store = new IndexedStore<KubeObject>();
    store.put('a/1', labelled('1', 'a', { app: 'web' }, 'owner-x'));
    expect(names(store.list('a', { app: 'web' }))).toEqual(['a/1']); // the label index now exists
    store.put('a/1', labelled('1', 'a', { app: 'db' }, 'owner-y'));
    expect(store.list('a', { app: 'web' })).toEqual([]);
    expect(names(store.list(undefined, { app: 'db' }))).toEqual(['a/1']);
    expect(store.listControlledBy('owner-x')).toEqual([]);
    expect(names(store.listControlledBy('owner-y'))).toEqual(['a/1']);
    store.remove('a/1');
    expect(store.size).toBe(0);
    expect(store.get('a/1')).toBeUndefined();
    expect(store.list('a')).toEqual([]);
    expect(store.list(undefined, { app: 'db' })).toEqual([]);
    expect(store.listControlledBy('owner-y')).toEqual([]);
  });

  test('a label first listed by indexes what is already stored, and what comes after', () => {
    const store = new IndexedStore<KubeObject>();
    store.put('a/1', labelled('1', 'a', { team: 'x' }));
    expect(names(store.list(undefined, { team: 'x' }))).toEqual(['a/1']);
    store.put('b/2', labelled('2', 'b', { team: 'x' }));
    expect(names(store.list(undefined, { team: 'x' }))).toEqual(['a/1', 'b/2']);
  });

  test('keysOf is a copy: removing while walking it removes every one', () => {
    const store = new IndexedStore<KubeObject>();
    for (const n of ['1', '2', '3']) store.put(`a/${n}`, labelled(n, 'a', {}));
    store.put('b/4', labelled('4', 'b', {}));
    for (const key of store.keysOf('a')) store.remove(key);
    expect(names([...store.values()])).toEqual(['b/4']);
    expect(store.keysOf(undefined)).toEqual(['b/4']);
  });
});
