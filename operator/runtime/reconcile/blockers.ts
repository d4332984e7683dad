import type { Request } from '../controller';
import { objectKey, splitKey } from '../client';

/**
 * Objects in the way of resources' children (not theirs: see `notOwnedReason`), so that a change
 * to one of them — deleted, or renamed away — reconciles the resources it blocks. By
 * `Kind|namespace/name` of the object, and the reverse, to clear a resource's entries.
 */
export class Blockers {
  private readonly byObject = new Map<string, Set<string>>();
  private readonly byResource = new Map<string, string[]>();

  /** The identity of an object of `kind`, as `set` takes it. */
  static key(kind: string | undefined, o: { metadata: { namespace?: string; name?: string } }): string {
    return `${kind}|${objectKey(o.metadata)}`;
  }

  /** Records which objects block `resource` now, replacing what blocked it before (none: clears). */
  set(resource: string, objects: readonly string[]): void {
    for (const k of this.byResource.get(resource) ?? []) {
      const set = this.byObject.get(k);
      set?.delete(resource);
      if (set?.size === 0) this.byObject.delete(k);
    }
    if (objects.length === 0) {
      this.byResource.delete(resource);
      return;
    }
    this.byResource.set(resource, [...objects]);
    for (const k of objects) {
      let set = this.byObject.get(k);
      if (!set) this.byObject.set(k, (set = new Set()));
      set.add(resource);
    }
  }

  /** The resources an object of `kind` blocks, as requests. */
  blockedBy(kind: string, o: { metadata: { namespace?: string; name?: string } }): Request[] {
    return [...(this.byObject.get(Blockers.key(kind, o)) ?? [])].map(splitKey);
  }
}
