import { deepFreeze } from '../client';

/**
 * The latest renders of the most recently reconciled resources, each kept with the input it was
 * rendered from. A resource is reconciled several times in a row with the same input (its
 * Deployment's status moves, its pods start), and rendering a construct tree was a sixth of a
 * reconciler's CPU at 1000 resources; an unchanged input now returns the earlier render. Renders
 * are frozen, since they are shared between reconciles.
 */
export class RenderCache<T extends object> {
  private readonly entries = new Map<string, { input: string; value: T }>();

  /** @param capacity how many resources' renders to keep, least recently used dropped first */
  constructor(private readonly capacity: number) {}

  /** The render of `key` for `input`: the one kept if its input was the same, else `render()`'s. */
  get(key: string, input: string, render: () => T): T {
    const kept = this.entries.get(key);
    this.entries.delete(key);
    const entry = kept?.input === input ? kept : { input, value: deepFreeze(render()) };
    this.entries.set(key, entry);
    const oldest = this.entries.keys().next();
    if (this.entries.size > this.capacity && !oldest.done) this.entries.delete(oldest.value);
    return entry.value;
  }

  get size(): number {
    return this.entries.size;
  }
}
