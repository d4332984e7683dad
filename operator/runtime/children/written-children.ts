/**
 * The children a controller has written that its cache has not shown yet. The resource's own
 * status write brings its watch event back at once, and the reconcile it starts may run before
 * the child's watch event arrives: reading the cache, it would see the child as it was before
 * the write, or not there at all, and apply it again — a second write, a second "Created"
 * Event. (client-go's controllers keep "expectations" for the same reason.) Until the cache has
 * seen up to the version written, the child as written stands for it.
 *
 * Kubernetes' resourceVersions compare as numbers (decimal strings, as etcd's revisions are);
 * where one does not, nothing is remembered and the cache is read as it is.
 *
 * A child is forgotten as soon as the cache shows it (`follow`), not at the resource's next
 * reconcile: a written object is a whole one, managedFields and all, and while a thousand
 * resources converged a quarter of them held theirs long after their watch events came.
 */
import type { KubeObject } from '../../../constructs/contract';
import { childKey } from '../../../constructs/contract';
import type { Informer } from '../cache';

/** `a` is at or after `b`; undefined when either is not a decimal revision. */
export function atOrAfter(a: string, b: string): boolean | undefined {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  return a.length !== b.length ? a.length > b.length : a >= b;
}

export class WrittenChildren {
  /** By resource key, then by child key. */
  private readonly byResource = new Map<string, Map<string, KubeObject>>();
  /** The resource each remembered child was written for, by the child's kind, namespace and name. */
  private readonly resourceOf = new Map<string, string>();

  /** Remembers a child as the API server returned it after this controller's write. */
  note(resource: string, child: string, written: KubeObject): void {
    if (atOrAfter(written.metadata.resourceVersion ?? '', '0') === undefined) return;
    const children = this.byResource.get(resource) ?? new Map<string, KubeObject>();
    this.byResource.set(resource, children);
    children.set(child, written);
    this.resourceOf.set(identity(child, written.metadata.namespace), resource);
  }

  /** Forgets each child of `kind` written as soon as `informer` shows it at or after the write. */
  follow(kind: string, informer: Pick<Informer, 'addHandler'>): void {
    const shown = (obj: KubeObject) => {
      this.shown(kind, obj);
    };
    informer.addHandler({
      onAdd: shown,
      onUpdate: (_old, obj) => {
        shown(obj);
      },
      onDelete: shown,
    });
  }

  private shown(kind: string, obj: KubeObject): void {
    const child = childKey(kind, obj.metadata.name ?? '');
    const resource = this.resourceOf.get(identity(child, obj.metadata.namespace));
    const written = resource === undefined ? undefined : this.byResource.get(resource)?.get(child);
    if (resource === undefined || !written) return;
    if (atOrAfter(obj.metadata.resourceVersion ?? '', written.metadata.resourceVersion ?? '') === true)
      this.drop(resource, child);
  }

  /**
   * What stands for a child: the cached copy, or the one written while the cache has not seen up
   * to it (`seen`: the cache's resourceVersion for the child's namespace).
   */
  current(resource: string, child: string, cached: KubeObject | undefined, seen: string): KubeObject | undefined {
    const children = this.byResource.get(resource);
    const written = children?.get(child);
    if (!children || !written) return cached;
    const version = written.metadata.resourceVersion ?? '';
    const caughtUp =
      atOrAfter(seen, version) !== false || atOrAfter(cached?.metadata.resourceVersion ?? '', version) === true;
    if (!caughtUp) return written;
    this.drop(resource, child);
    return cached;
  }

  /** Forgets a resource's children (it is gone). */
  forget(resource: string): void {
    for (const [child, written] of this.byResource.get(resource) ?? [])
      this.resourceOf.delete(identity(child, written.metadata.namespace));
    this.byResource.delete(resource);
  }

  private drop(resource: string, child: string): void {
    const children = this.byResource.get(resource);
    const written = children?.get(child);
    if (!children || !written) return;
    children.delete(child);
    if (children.size === 0) this.byResource.delete(resource);
    this.resourceOf.delete(identity(child, written.metadata.namespace));
  }

  /** How many children are remembered (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const children of this.byResource.values()) n += children.size;
    return n;
  }
}

/** A child's identity among all resources' children: its `Kind/name` and namespace. */
function identity(child: string, namespace: string | undefined): string {
  return `${namespace ?? ''}/${child}`;
}
