import { createHash } from 'node:crypto';
import { deepFreeze } from '../client';
import { shareEqualParts } from './shared-parts';

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
 * nearly every reconcile, and most renders never read it, or read one field of it (a restore's
 * `conditions`, a listing's `backupsListedFrom`). A render is told how to say what it read
 * (`readStatus(field)`, or `readStatus()` for all of it); one that read nothing is reused whatever
 * the status, one that read fields only while they are the same.
 *
 * A new render shares the parts equal to the last render's (see shareEqualParts): renders of one
 * kind are alike, and the parts they have in common are kept once. The byte budget still counts
 * each render whole.
 */
export class RenderCache<T extends object> {
  private readonly entries = new Map<string, Entry<T>>();
  private keptBytes = 0;
  /** The last render made: what the next one shares its equal parts with. */
  private lastRender: T | undefined;

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
   * The render of `key` for `input` and `status`: the one kept if its input was the same (and the
   * status fields that render read), else `render()`'s.
   */
  get(key: string, input: string, render: (readStatus: ReadStatus) => T, status?: unknown): T {
    const digest = sha256(input);
    const kept = this.entries.get(key);
    if (kept) this.drop(key, kept);
    // The status is hashed only where it counts: the fields a kept render read.
    const reusable =
      kept?.digest === digest && (!kept.statusRead || kept.statusDigest === statusDigest(kept.statusRead, status));
    const entry = kept && reusable ? kept : this.rendered(digest, status, render);
    this.entries.set(key, entry);
    this.keptBytes += entry.bytes;
    for (const [oldKey, old] of this.entries) {
      if (this.keptBytes <= this.maxBytes || oldKey === key) break;
      this.drop(oldKey, old);
    }
    return entry.value;
  }

  /**
   * Whether a change of the resource's status from `before` to `after` may change the kept render
   * of `key`: it changed a field that render read.
   */
  statusChanged(key: string, before: unknown, after: unknown): boolean {
    const read = this.entries.get(key)?.statusRead;
    return read !== undefined && statusInput(read, before) !== statusInput(read, after);
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

  private rendered(digest: string, status: unknown, render: (readStatus: ReadStatus) => T): Entry<T> {
    const seen = { all: false, fields: new Set<string>() };
    const rendered = render((field) => {
      if (field === undefined) seen.all = true;
      else seen.fields.add(field);
    });
    const value = deepFreeze(shareEqualParts(rendered, this.lastRender));
    this.lastRender = value;
    const read: StatusRead | undefined = seen.all ? 'all' : seen.fields.size ? seen.fields : undefined;
    // The digests are kept too.
    const kept = read && statusDigest(read, status);
    return {
      digest,
      statusRead: read,
      statusDigest: kept,
      value,
      bytes: this.sizeOf(value) + digest.length + (kept?.length ?? 0),
    };
  }

  private drop(key: string, entry: { bytes: number }): void {
    this.entries.delete(key);
    this.keptBytes -= entry.bytes;
  }
}

/** Tells the cache a render read the status's `field`, or (no field) all of it. */
export type ReadStatus = (field?: string) => void;

/** What of the status a render read: some top-level fields, or all of it. */
type StatusRead = ReadonlySet<string> | 'all';

/** The part of `status` a render that read `read` depends on, as text. */
function statusInput(read: StatusRead, status: unknown): string {
  if (read === 'all') return JSON.stringify(status ?? null);
  // No status yet: each field read is absent.
  const fields = (status !== null && typeof status === 'object' ? status : {}) as Record<string, unknown>;
  return JSON.stringify([...read].sort().map((f) => [f, fields[f] ?? null]));
}

function statusDigest(read: StatusRead, status: unknown): string {
  return sha256(statusInput(read, status));
}

interface Entry<T> {
  /** Of the input but the status. */
  readonly digest: string;
  /** What of the status the render read, if anything. */
  readonly statusRead: StatusRead | undefined;
  /** Of that part of the status. */
  readonly statusDigest: string | undefined;
  readonly value: T;
  readonly bytes: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}
