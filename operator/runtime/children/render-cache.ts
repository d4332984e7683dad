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
 *
 * The resource's status is a part of the input apart: our own status writes change it after
 * nearly every reconcile, and most renders never read it. A render is told how to say it read it
 * (`readStatus`); one that did not is reused whatever the status, one that did only for the same.
 */
export class RenderCache<T extends object> {
  private readonly entries = new Map<string, Entry<T>>();
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

  /**
   * The render of `key` for `input` and `status`: the one kept if its input was the same (and its
   * status, when that render read it), else `render()`'s.
   */
  get(key: string, input: string, render: (readStatus: () => void) => T, status = ''): T {
    const digest = sha256(input);
    const kept = this.entries.get(key);
    if (kept) this.drop(key, kept);
    // The status is hashed only where it counts: for a kept render that read it.
    const reusable =
      kept?.digest === digest && (kept.statusDigest === undefined || kept.statusDigest === sha256(status));
    const entry = kept && reusable ? kept : this.rendered(digest, status, render);
    this.entries.set(key, entry);
    this.keptBytes += entry.bytes;
    for (const [oldKey, old] of this.entries) {
      if (this.keptBytes <= this.maxBytes || oldKey === key) break;
      this.drop(oldKey, old);
    }
    return entry.value;
  }

  /** Whether the kept render of `key` read the resource's status: then a change of the status may change it. */
  readStatus(key: string): boolean {
    return this.entries.get(key)?.statusDigest !== undefined;
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

  private rendered(digest: string, status: string, render: (readStatus: () => void) => T): Entry<T> {
    const read = { status: false };
    const value = deepFreeze(
      render(() => {
        read.status = true;
      }),
    );
    // The digests are kept too.
    const kept = read.status ? sha256(status) : undefined;
    return { digest, statusDigest: kept, value, bytes: this.sizeOf(value) + digest.length + (kept?.length ?? 0) };
  }

  private drop(key: string, entry: { bytes: number }): void {
    this.entries.delete(key);
    this.keptBytes -= entry.bytes;
  }
}

interface Entry<T> {
  /** Of the input but the status. */
  readonly digest: string;
  /** Of the status, when the render read it. */
  readonly statusDigest: string | undefined;
  readonly value: T;
  readonly bytes: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}
