/**
 * The objects one list returned, read as an informer's cache is read: by key, by namespace and
 * labels, by controller. What a preview (`diff`, `plan`) gives the reconciler's planner in place
 * of informers, so the preview is planned by the reconciler's own code, not a copy of it.
 */
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import { objectKey } from '../client';
import type { Informer } from './informer';
import { IndexedStore } from './store';

/** What the planner reads of a cache: an informer's reads, which listed objects answer as well. */
export type ObjectReads<T extends KubeObject = KubeObject> = Pick<Informer<T>, 'get' | 'list' | 'listControlledBy'>;

export class ListedObjects<T extends KubeObject = KubeObject> implements ObjectReads<T> {
  private readonly store = new IndexedStore<T>();

  /** `items` of `type`, typed as the cache types them (a list's items lack apiVersion and kind). */
  constructor(type: ResourceType, items: Iterable<T>) {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    for (const o of items) this.store.put(objectKey(o.metadata), { ...o, apiVersion, kind: type.kind });
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(namespace?: string, labels?: Record<string, string>): T[] {
    return this.store.list(namespace, labels);
  }

  listControlledBy(ownerUid: string): T[] {
    return this.store.listControlledBy(ownerUid);
  }
}
