import type { KubeObject } from '../../../constructs/contract';
import { controllerOf } from '../client';

/**
 * The informer's cache of one resource type, with its indexes (client-go's thread-safe store and
 * indexer, apart from the reflector that fills it): objects by key, and keys by namespace, by
 * controller owner uid, and by label=value for the label names someone has listed by.
 *
 * Labels are indexed lazily: indexing every label of every object cost more memory (a set per
 * distinct value: thousands of them) than the objects' own labels.
 */
export class IndexedStore<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly byNamespace = new Map<string, Set<string>>();
  /** Keys by namespace and label=value, and by label=value across namespaces (see labelKey). */
  private readonly byLabel = new Map<string, Set<string>>();
  private readonly indexedLabels = new Set<string>();
  /** Keys by the uid of their controller owner. */
  private readonly byOwner = new Map<string, Set<string>>();

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  get size(): number {
    return this.objects.size;
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  /** The keys of one namespace's objects (of all, `undefined`), a copy: safe to remove while walking it. */
  keysOf(namespace: string | undefined): string[] {
    return [...(namespace === undefined ? this.objects.keys() : (this.byNamespace.get(namespace) ?? []))];
  }

  /**
   * Objects, optionally of one namespace and matching all the given labels. With labels, it starts
   * from the smallest set the label index holds for one of them, so listing one resource's pods
   * costs what they are, not what the namespace holds.
   */
  list(namespace?: string, labels?: Record<string, string>): T[] {
    let keys: Iterable<string>;
    const pairs = Object.entries(labels ?? {});
    if (pairs.length) {
      for (const [l] of pairs) this.indexLabel(l);
      const sets = pairs.map(([l, v]) => this.byLabel.get(labelKey(namespace, l, v)) ?? new Set<string>());
      keys = sets.reduce((a, b) => (b.size < a.size ? b : a));
    } else {
      keys = namespace === undefined ? this.objects.keys() : (this.byNamespace.get(namespace) ?? []);
    }
    const out: T[] = [];
    for (const k of keys) {
      const obj = this.objects.get(k);
      if (!obj) continue;
      if (namespace !== undefined && (obj.metadata.namespace ?? '') !== namespace) continue;
      if (!pairs.every(([l, v]) => obj.metadata.labels?.[l] === v)) continue;
      out.push(obj);
    }
    return out;
  }

  /** Objects whose controller owner has this uid (an index: no scan of the store). */
  listControlledBy(ownerUid: string): T[] {
    const out: T[] = [];
    for (const k of this.byOwner.get(ownerUid) ?? []) {
      const obj = this.objects.get(k);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Stores the object under `key`, replacing (and unindexing) what was there. */
  put(key: string, obj: T): void {
    this.unindex(key);
    this.objects.set(key, obj);
    const owner = controllerOf(obj)?.uid;
    if (owner) addTo(this.byOwner, owner, key);
    for (const l of this.indexedLabels) this.indexLabelOf(key, obj, l);
    addTo(this.byNamespace, obj.metadata.namespace ?? '', key);
  }

  remove(key: string): void {
    const obj = this.objects.get(key);
    this.unindex(key);
    this.objects.delete(key);
    if (obj) this.byNamespace.get(obj.metadata.namespace ?? '')?.delete(key);
  }

  /** Starts indexing by label `l`: from now on, and every object already stored. */
  private indexLabel(l: string): void {
    if (this.indexedLabels.has(l)) return;
    this.indexedLabels.add(l);
    for (const [key, obj] of this.objects) this.indexLabelOf(key, obj, l);
  }

  private indexLabelOf(key: string, obj: T, l: string): void {
    const v = obj.metadata.labels?.[l];
    if (v === undefined) return;
    for (const k of [labelKey(obj.metadata.namespace ?? '', l, v), labelKey(undefined, l, v)])
      addTo(this.byLabel, k, key);
  }

  /** Takes the stored object of `key` out of its owner index and each label index it is in. */
  private unindex(key: string): void {
    const old = this.objects.get(key);
    if (!old) return;
    const owner = controllerOf(old)?.uid;
    if (owner) removeFrom(this.byOwner, owner, key);
    const ns = old.metadata.namespace ?? '';
    for (const [l, v] of Object.entries(old.metadata.labels ?? {})) {
      if (!this.indexedLabels.has(l)) continue;
      removeFrom(this.byLabel, labelKey(ns, l, v), key);
      removeFrom(this.byLabel, labelKey(undefined, l, v), key);
    }
  }
}

function labelKey(namespace: string | undefined, label: string, value: string): string {
  return `${namespace ?? '*'}\u0000${label}=${value}`;
}

function addTo(index: Map<string, Set<string>>, entry: string, key: string): void {
  let set = index.get(entry);
  if (!set) index.set(entry, (set = new Set()));
  set.add(key);
}

/** Removes `key` from the entry's set, and the entry once it is empty. */
function removeFrom(index: Map<string, Set<string>>, entry: string, key: string): void {
  const set = index.get(entry);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) index.delete(entry);
}
