import { createHash } from 'node:crypto';
import { deepFreeze } from '../client';

/**
 * The latest render of each reconciled resource, kept with a digest of the input it was rendered
 * from. A resource is reconciled several times in a row with the same input (its Deployment's
 * status moves, its pods start), and rendering a construct tree was a sixth of a reconciler's CPU
 * at 1000 resources; an unchanged input returns the earlier render. Bounded by the size of what it
 * keeps rather than by a count, so that a burst over every resource finds each one's render (a
 * count of 256 was cycled through at N = 1000 and rendered again). Renders are frozen, since they
 * are shared between reconciles.
 */
export class RenderCache<T extends object> {
  private readonly entries = new Map<string, { digest: string; value: T; bytes: number }>();
  private keptBytes = 0;

  /**
   * @param maxBytes how much to keep, counted as the renders' JSON length; the least recently
   *   used are dropped first
   * @param sizeOf a render's size in that count
   */
  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: T) => number = jsonLength,
  ) {}

  /** The render of `key` for `input`: the one kept if its input was the same, else `render()`'s. */
  get(key: string, input: string, render: () => T): T {
    const digest = createHash('sha256').update(input).digest('base64');
    const kept = this.entries.get(key);
    if (kept) this.drop(key, kept);
    const entry = kept?.digest === digest ? kept : this.rendered(digest, render);
    this.entries.set(key, entry);
    this.keptBytes += entry.bytes;
    for (const [oldKey, old] of this.entries) {
      if (this.keptBytes <= this.maxBytes || oldKey === key) break;
      this.drop(oldKey, old);
    }
    return entry.value;
  }

  /** How many resources' renders are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** The size of what is kept, in the count `sizeOf` gives. */
  get bytes(): number {
    return this.keptBytes;
  }

  /** Forgets a resource's render (deleted). */
  delete(key: string): void {
    const kept = this.entries.get(key);
    if (kept) this.drop(key, kept);
  }

  private rendered(digest: string, render: () => T): { digest: string; value: T; bytes: number } {
    const value = deepFreeze(render());
    // The digest is kept too.
    return { digest, value, bytes: this.sizeOf(value) + digest.length };
  }

  private drop(key: string, entry: { bytes: number }): void {
    this.entries.delete(key);
    this.keptBytes -= entry.bytes;
  }
}

function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}
