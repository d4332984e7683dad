/**
 * One copy of the string values the cache holds over and over. JSON.parse and the protobuf decoder
 * make a new string for every value, so a thousand cached Deployments held a thousand
 * `RuntimeDefault`s, `IfNotPresent`s and namespace names, and a thousand Memcacheds as many
 * condition reasons and messages: at N = 1000 about 2 of the cache's 5 MiB of strings were copies.
 *
 * The pool remembers the strings it saw in two generations of `generation` each: a value seen again
 * within them is replaced by the copy seen first; values seen once (uids, times, resourceVersions)
 * fall out when their generation is dropped, so the pool holds at most twice `generation` strings,
 * all of which the cache holds anyway.
 */
export class StringPool {
  private current = new Map<string, string>();
  private previous = new Map<string, string>();

  /**
   * @param generation how many strings a generation holds
   * @param maxLength longer strings are never pooled: rarely equal, and costly to hash
   */
  constructor(
    private readonly generation = 4096,
    private readonly maxLength = 128,
  ) {}

  /** The pool's copy of `text`: the first equal one it saw, or `text` from now on. */
  intern(text: string): string {
    if (text.length > this.maxLength) return text;
    const known = this.current.get(text);
    if (known !== undefined) return known;
    const kept = this.previous.get(text) ?? text;
    this.current.set(kept, kept);
    if (this.current.size >= this.generation) {
      this.previous = this.current;
      this.current = new Map();
    }
    return kept;
  }

  /**
   * Replaces, in place, every string value in `value`'s objects and arrays with the pool's copy:
   * for an object just decoded, before anything else holds it. Frozen parts are left as they are
   * (they are shared already).
   */
  internIn(value: object): void {
    if (Object.isFrozen(value)) return;
    const fields = value as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      const field = fields[key];
      // Written whatever it is: equal strings are ===, so whether the pool's is another copy cannot be told.
      if (typeof field === 'string') fields[key] = this.intern(field);
      else if (field !== null && typeof field === 'object') this.internIn(field);
    }
  }

  /** How many strings the pool holds (for tests). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/**
 * The pool every informer shares unless given another: the same values (namespaces, labels,
 * images, condition reasons) recur across the types a process caches.
 */
export const CACHED_STRINGS = new StringPool();
