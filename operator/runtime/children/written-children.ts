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
 */
import type { KubeObject } from '../../../constructs/contract';

/** `a` is at or after `b`; undefined when either is not a decimal revision. */
export function atOrAfter(a: string, b: string): boolean | undefined {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  return a.length !== b.length ? a.length > b.length : a >= b;
}

export class WrittenChildren {
  /** By resource key, then by child key. */
  private readonly byResource = new Map<string, Map<string, KubeObject>>();

  /** Remembers a child as the API server returned it after this controller's write. */
  note(resource: string, child: string, written: KubeObject): void {
    if (atOrAfter(written.metadata.resourceVersion ?? '', '0') === undefined) return;
    const children = this.byResource.get(resource) ?? new Map<string, KubeObject>();
    this.byResource.set(resource, children);
    children.set(child, written);
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
    children.delete(child);
    if (children.size === 0) this.byResource.delete(resource);
    return cached;
  }

  /** Forgets a resource's children (it is gone). */
  forget(resource: string): void {
    this.byResource.delete(resource);
  }

  /** How many children are remembered (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const children of this.byResource.values()) n += children.size;
    return n;
  }
}
